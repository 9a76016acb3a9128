"""The sampling parameters of a chat request, validated, and the typed field readers every
part of the request uses. Stdlib only: this file ships in the Lambda asset.

``max_tokens`` and ``max_completion_tokens`` are counts from 1 to the model's
``max_total_tokens`` when its route knows it (the engine takes the prompt and the completion
together within that many tokens, so a larger count can never be served), else to
``MAX_TOKENS_CEILING`` (2**31 - 1). ``stop`` holds at most 4 sequences, as OpenAI's API takes
("Up to 4 sequences", the openai SDK's ``CompletionCreateParams.stop``), which is also TGI's
default ``--max-stop-sequences``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .request_errors import RequestError
from .routing import MAX_TOKENS_CEILING

__all__ = ["Sampling", "optional_bool", "optional_int", "optional_number", "sampling"]

_MAX_STOP_SEQUENCES = 4


@dataclass(frozen=True, kw_only=True)
class Sampling:
    """The request's validated sampling parameters (None: not given)."""

    max_tokens: int | None
    temperature: float | None
    top_p: float | None
    stop: list[str] | None
    seed: int | None
    logprobs: bool
    top_logprobs: int | None
    frequency_penalty: float | None
    presence_penalty: float | None


def sampling(data: dict[str, Any], *, max_total_tokens: int | None = None) -> Sampling:
    """The sampling parameters; ``max_completion_tokens`` wins over ``max_tokens``, and both
    are checked against ``max_total_tokens``, the model's limit when it is known."""
    completion = _token_count(data, "max_completion_tokens", max_total_tokens)
    legacy = _token_count(data, "max_tokens", max_total_tokens)
    max_tokens = legacy if completion is None else completion
    logprobs = optional_bool(data, "logprobs") or False
    top_logprobs = optional_int(data, "top_logprobs", minimum=0, maximum=20)
    if top_logprobs:
        raise RequestError(
            f"'top_logprobs' > 0 is not supported (got {top_logprobs}): the runtime relays "
            "only the sampled token's log-probability; use 'logprobs': true alone",
            param="top_logprobs",
            code="unsupported_parameter",
        )
    if top_logprobs is not None and not logprobs:
        raise RequestError("'top_logprobs' requires 'logprobs': true", param="top_logprobs")
    return Sampling(
        max_tokens=max_tokens,
        temperature=optional_number(data, "temperature", 0.0, 2.0),
        top_p=optional_number(data, "top_p", 0.0, 1.0),
        stop=_stop(data.get("stop")),
        seed=optional_int(data, "seed"),
        logprobs=logprobs,
        top_logprobs=top_logprobs,
        frequency_penalty=optional_number(data, "frequency_penalty", -2.0, 2.0),
        presence_penalty=optional_number(data, "presence_penalty", -2.0, 2.0),
    )


def _token_count(data: dict[str, Any], name: str, max_total_tokens: int | None) -> int | None:
    value = optional_int(data, name, minimum=1)
    if value is None:
        return None
    if max_total_tokens is not None and value > max_total_tokens:
        raise RequestError(
            f"'{name}' is {_shown(value)}, above this model's max_total_tokens "
            f"({max_total_tokens}): prompt and completion together take at most that many "
            f"tokens; send a smaller '{name}' (at most {max_total_tokens} less the prompt's "
            "tokens) or leave it out",
            param=name,
        )
    if value > MAX_TOKENS_CEILING:
        raise RequestError(
            f"'{name}' must be at most {MAX_TOKENS_CEILING}, got {_shown(value)}", param=name
        )
    return value


def _shown(value: int) -> str:
    """An integer for a message; one of thousands of digits is cut short."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} digits)"


def optional_bool(data: dict[str, Any], name: str, where: str | None = None) -> bool | None:
    value = data.get(name)
    if value is None or isinstance(value, bool):
        return value
    where = where or name
    raise RequestError(f"'{where}' must be a boolean, got {value!r}", param=where)


def optional_int(
    data: dict[str, Any], name: str, *, minimum: int | None = None, maximum: int | None = None
) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{name}' must be an integer, got {value!r}", param=name)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise RequestError(f"'{name}' must be {bounds}, got {value}", param=name)
    return value


def optional_number(data: dict[str, Any], name: str, low: float, high: float) -> float | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RequestError(f"'{name}' must be a number, got {value!r}", param=name)
    if not low <= value <= high:
        raise RequestError(
            f"'{name}' must be between {low:g} and {high:g}, got {value}", param=name
        )
    return float(value)


def _stop(value: Any) -> list[str] | None:
    if value is None:
        return None
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise RequestError(
            "'stop' must be a non-empty string or an array of non-empty strings", param="stop"
        )
    if len(stops) > _MAX_STOP_SEQUENCES:
        raise RequestError(
            f"'stop' has {len(stops)} sequences; at most {_MAX_STOP_SEQUENCES} are allowed",
            param="stop",
        )
    return stops or None
