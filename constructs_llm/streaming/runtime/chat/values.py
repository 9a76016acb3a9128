"""Typed readers of request values: each takes a value that is set (not null) and where it
stands in the request, and returns it checked, or raises ``RequestError`` naming it. Chat's
and Responses' field tables (``chat/fields.py``, ``responses/fields.py``) check with them.

Stdlib only: this file ships in the Lambda asset.

Token counts run from 1 to the model's ``max_total_tokens`` when its route knows it (the engine
takes the prompt and the completion together within that many tokens, so a larger count can
never be served), else to ``MAX_TOKENS_CEILING`` (2**31 - 1). ``stop`` holds at most 4
sequences, as OpenAI's API takes ("Up to 4 sequences", the openai SDK's
``CompletionCreateParams.stop``), which is also TGI's default ``--max-stop-sequences``.
"""

from __future__ import annotations

import math
from typing import Any

from ..http.errors import RequestError
from ..routing import MAX_TOKENS_CEILING

_MAX_STOP_SEQUENCES = 4


def boolean(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    raise RequestError(f"'{where}' must be a boolean, got {value!r}", param=where)


def stream_options(value: Any, *, streaming: bool, options: frozenset[str]) -> dict[str, bool]:
    """``stream_options``: with ``stream: true`` only, an object of the boolean ``options``."""
    if not streaming:
        raise RequestError(
            "'stream_options' is only allowed with 'stream': true", param="stream_options"
        )
    if not isinstance(value, dict):
        raise RequestError("'stream_options' must be an object", param="stream_options")
    for key, option in value.items():
        if key not in options:
            raise RequestError(
                f"unrecognized stream option 'stream_options.{key}'",
                param=f"stream_options.{key}",
                code="unknown_parameter",
            )
        if option is not None:
            boolean(option, f"stream_options.{key}")
    return value


def string(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    raise RequestError(f"'{where}' must be a string", param=where)


def integer(
    value: Any, where: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{where}' must be an integer, got {value!r}", param=where)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise RequestError(f"'{where}' must be {bounds}, got {value}", param=where)
    return value


def number(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RequestError(f"'{where}' must be a number, got {value!r}", param=where)
    if not low <= value <= high:
        raise RequestError(
            f"'{where}' must be between {low:g} and {high:g}, got {value}", param=where
        )
    return float(value)


def token_count(value: Any, where: str, max_total_tokens: int | None) -> int:
    """A count of tokens to generate, within the model's limit when it is known."""
    count = integer(value, where, minimum=1)
    if max_total_tokens is not None and count > max_total_tokens:
        raise RequestError(
            f"'{where}' is {_shown(count)}, above this model's max_total_tokens "
            f"({max_total_tokens}): prompt and completion together take at most that many "
            f"tokens; send a smaller '{where}' (at most {max_total_tokens} less the prompt's "
            "tokens) or leave it out",
            param=where,
        )
    if count > MAX_TOKENS_CEILING:
        raise RequestError(
            f"'{where}' must be at most {MAX_TOKENS_CEILING}, got {_shown(count)}", param=where
        )
    return count


def _shown(value: int) -> str:
    """An integer for a message; one of thousands of digits is cut short."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} digits)"


def stop_sequences(value: Any, where: str) -> list[str] | None:
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise RequestError(
            f"'{where}' must be a non-empty string or an array of non-empty strings", param=where
        )
    if len(stops) > _MAX_STOP_SEQUENCES:
        raise RequestError(
            f"'{where}' has {len(stops)} sequences; at most {_MAX_STOP_SEQUENCES} are allowed",
            param=where,
        )
    return stops or None
