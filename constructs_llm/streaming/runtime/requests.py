"""OpenAI Chat Completions request -> the serving container's request body.

Stdlib only: this file ships in the Lambda asset. Validation is strict about what the runtime
can honour and names the limitation in the error, so a client learns what to change instead of
getting a silently different answer.

Two request formats (``RequestFormat``):

- ``MESSAGES``: the container has an OpenAI-style chat API (TGI Messages API, vLLM, SGLang,
  LMI). Messages are forwarded as-is; sampling parameters keep their OpenAI names.
- ``GENERATE``: the container only has the TGI/LMI generate API (``{"inputs", "parameters"}``).
  No chat template is applied, so exactly one user message whose content is the already
  templated prompt is accepted.

Whatever the client asks, the engine is always asked to stream (``"stream": true``): a
``stream: false`` client is served by aggregating the stream, which keeps time to first token
low on the engine side and uses one code path.

Every field of the OpenAI schema is honoured, ignored because it cannot change the answer,
or refused with a 400 naming it (``request_fields.py``). Honoured beyond the sampling
parameters: tools (``request_tools.py``), ``response_format`` (``response_format.py``), and
usage: a MESSAGES engine is always asked for its usage chunk
(``stream_options: {"include_usage": true}``, which TGI, vLLM, SGLang and LMI's vLLM backend
all accept), so ``stream: false`` replies carry ``usage`` too; a streaming client gets the
usage chunk only when it asks for it, as with OpenAI. GENERATE engines report counts in
``details`` anyway.

Refused (400 naming the field): ``n`` > 1, ``top_logprobs`` > 0 (only the sampled token's
log-probability is relayed), and in GENERATE format anything but a single user message,
tools, ``response_format`` and ``presence_penalty`` (TGI's generate API has no such
parameter). In GENERATE format ``frequency_penalty`` is forwarded (TGI and LMI's generate
parameters both take it) and ``logprobs`` is served from the token log-probs the generate
streams always carry (TGI ``token.logprob``, LMI ``token.log_prob``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .events import RequestFormat
from .request_errors import RequestError, unsupported
from .request_fields import check_fields
from .request_tools import check_tool_message, tool_fields
from .response_format import engine_response_format

__all__ = [
    "ChatRequest",
    "RequestError",
    "build_chat_request",
    "load_request",
    "parse_chat_request",
]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_CONTENT_PART_TYPES = frozenset({"text", "image_url"})
_STREAM_OPTIONS = frozenset({"include_usage", "include_obfuscation"})
_MAX_STOP_SEQUENCES = 16
_MAX_MESSAGES = 10_000
_GENERATE_NO_TOOLS = (
    "its engine takes the generate API (REQUEST_FORMAT=generate), which has no tool calling; "
    "deploy the model with a messages (chat) API"
)
_TOOLS_OFF = (
    "tool calling is off for this endpoint (TOOLS=off): deploy the engine with tool calling "
    "on and set TOOLS=on"
)


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    """A validated chat request and the body to send to the engine."""

    stream: bool
    model: str | None
    logprobs: bool
    engine_body: bytes
    include_usage: bool = False  # stream_options.include_usage: end the stream with usage


@dataclass(frozen=True, kw_only=True)
class _Sampling:
    max_tokens: int | None
    temperature: float | None
    top_p: float | None
    stop: list[str] | None
    seed: int | None
    logprobs: bool
    top_logprobs: int | None
    frequency_penalty: float | None
    presence_penalty: float | None


def parse_chat_request(
    body: bytes, request_format: RequestFormat | str, *, tools: bool | None = None
) -> ChatRequest:
    """Validate an OpenAI chat request body and build the engine request for ``request_format``.

    ``tools`` says whether the engine serves tool calls. @default True for the messages
    format, False for generate (which has none). Raises ``RequestError`` (status 400) naming
    the offending field.
    """
    return build_chat_request(load_request(body), request_format, tools=tools)


def build_chat_request(
    data: dict[str, Any], request_format: RequestFormat | str, *, tools: bool | None = None
) -> ChatRequest:
    """As :func:`parse_chat_request`, from a body already decoded by :func:`load_request`
    (the router reads its ``model`` first to learn the engine's format)."""
    fmt = RequestFormat(request_format)
    generate = fmt is RequestFormat.GENERATE
    served = (not generate) if tools is None else tools
    why_not = _GENERATE_NO_TOOLS if generate else _TOOLS_OFF
    check_fields(data)
    _check_choices_and_modalities(data)
    messages = _messages(data.get("messages"), served=served, why_not=why_not)
    stream = _optional_bool(data, "stream") or False
    include_usage = _include_usage(data, stream)
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise RequestError("'model' must be a string", param="model")
    sampling = _sampling(data)
    tool_body = tool_fields(data, served=served, why_not=why_not)
    response_format = engine_response_format(data.get("response_format"), generate=generate)
    if generate:
        engine: dict[str, Any] = _generate_body(messages, sampling)
    else:
        engine = _messages_body(messages, sampling)
        engine.update(tool_body)
        if response_format is not None:
            engine["response_format"] = response_format
        engine["stream_options"] = {"include_usage": True}  # usage for stream:false too
    return ChatRequest(
        stream=stream,
        model=model,
        logprobs=sampling.logprobs,
        engine_body=_encode(engine, data),
        include_usage=include_usage,
    )


def _check_choices_and_modalities(data: dict[str, Any]) -> None:
    n = data.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):
        raise RequestError(
            f"only n=1 is supported (got {n!r}); send separate requests for several choices",
            param="n",
            code="unsupported_parameter",
        )
    modalities = data.get("modalities")
    if modalities is not None and modalities != ["text"]:
        raise unsupported(
            "modalities",
            f"the runtime answers with text only (got {modalities!r}); send "
            "['text'] or leave it out",
        )


def _encode(engine: dict[str, Any], data: dict[str, Any]) -> bytes:
    """The engine body as UTF-8 JSON. A lone surrogate escape (``"\\udce9"``) parses as JSON
    but has no UTF-8 form: that is the client's error, named like any other."""
    text = json.dumps(engine, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        where = _surrogate_path(data, "") or "the request body"
        raise RequestError(
            f"'{where}' holds an unpaired UTF-16 surrogate escape (such as \\udce9), which is "
            "not a character; send valid Unicode text",
            param=where if where != "the request body" else None,
        ) from None


def _surrogate_path(value: Any, where: str) -> str | None:
    """The path of the first string in ``value`` that has no UTF-8 form."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return where
        return None
    items: Any = ()
    if isinstance(value, dict):
        items = ((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    for path, item in items:
        found = _surrogate_path(item, path)
        if found is not None:
            return found
    return None


def _include_usage(data: dict[str, Any], stream: bool) -> bool:
    """``stream_options.include_usage``; ``stream_options`` needs ``stream: true``."""
    options = data.get("stream_options")
    if options is None:
        return False
    if not stream:
        raise RequestError(
            "'stream_options' is only allowed with 'stream': true", param="stream_options"
        )
    if not isinstance(options, dict):
        raise RequestError("'stream_options' must be an object", param="stream_options")
    for key in options:
        if key not in _STREAM_OPTIONS:
            raise RequestError(
                f"unrecognized stream option 'stream_options.{key}'",
                param=f"stream_options.{key}",
                code="unknown_parameter",
            )
    # include_obfuscation pads OpenAI's own chunks; it cannot change the answer: ignored.
    return _optional_bool(options, "include_usage", "stream_options.include_usage") or False


def load_request(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object; ``RequestError`` (400 ``invalid_json``) otherwise."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError) as err:
        raise RequestError(
            f"request body is not valid JSON: {err}", code="invalid_json", param=None
        ) from None
    if not isinstance(data, dict):
        raise RequestError(
            f"request body must be a JSON object, got {type(data).__name__}", code="invalid_json"
        )
    return data


def _messages(value: Any, *, served: bool, why_not: str) -> list[dict[str, Any]]:
    if value is None:
        raise RequestError("'messages' is required", param="messages", code="missing_required")
    if not isinstance(value, list) or not value:
        raise RequestError("'messages' must be a non-empty array", param="messages")
    if len(value) > _MAX_MESSAGES:
        raise RequestError(f"'messages' has more than {_MAX_MESSAGES} items", param="messages")
    for index, message in enumerate(value):
        _check_message(message, f"messages[{index}]", served=served, why_not=why_not)
    return value


def _check_message(message: Any, where: str, *, served: bool, why_not: str) -> None:
    if not isinstance(message, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    role = message.get("role")
    if role not in _ROLES:
        raise RequestError(
            f"'{where}.role' must be one of {sorted(_ROLES)}, got {role!r}", param=f"{where}.role"
        )
    check_tool_message(message, where, served=served, why_not=why_not)
    content = message.get("content")
    if content is None:
        if role == "assistant":  # an assistant turn may carry only tool calls
            return
        raise RequestError(f"'{where}.content' is required", param=f"{where}.content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise RequestError(
            f"'{where}.content' must be a string or an array of content parts, "
            f"got {type(content).__name__}",
            param=f"{where}.content",
        )
    for index, part in enumerate(content):
        _check_part(part, f"{where}.content[{index}]")


def _check_part(part: Any, where: str) -> None:
    if not isinstance(part, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    kind = part.get("type")
    if kind not in _CONTENT_PART_TYPES:
        raise RequestError(
            f"'{where}.type' must be one of {sorted(_CONTENT_PART_TYPES)}, got {kind!r}",
            param=f"{where}.type",
        )
    if kind == "text" and not isinstance(part.get("text"), str):
        raise RequestError(f"'{where}.text' must be a string", param=f"{where}.text")


def _sampling(data: dict[str, Any]) -> _Sampling:
    max_tokens = _optional_int(data, "max_completion_tokens", minimum=1)
    if max_tokens is None:
        max_tokens = _optional_int(data, "max_tokens", minimum=1)
    logprobs = _optional_bool(data, "logprobs") or False
    top_logprobs = _optional_int(data, "top_logprobs", minimum=0, maximum=20)
    if top_logprobs:
        raise RequestError(
            f"'top_logprobs' > 0 is not supported (got {top_logprobs}): the runtime relays "
            "only the sampled token's log-probability; use 'logprobs': true alone",
            param="top_logprobs",
            code="unsupported_parameter",
        )
    if top_logprobs is not None and not logprobs:
        raise RequestError("'top_logprobs' requires 'logprobs': true", param="top_logprobs")
    return _Sampling(
        max_tokens=max_tokens,
        temperature=_optional_number(data, "temperature", 0.0, 2.0),
        top_p=_optional_number(data, "top_p", 0.0, 1.0),
        stop=_stop(data.get("stop")),
        seed=_optional_int(data, "seed"),
        logprobs=logprobs,
        top_logprobs=top_logprobs,
        frequency_penalty=_optional_number(data, "frequency_penalty", -2.0, 2.0),
        presence_penalty=_optional_number(data, "presence_penalty", -2.0, 2.0),
    )


def _optional_bool(data: dict[str, Any], name: str, where: str | None = None) -> bool | None:
    value = data.get(name)
    if value is None or isinstance(value, bool):
        return value
    where = where or name
    raise RequestError(f"'{where}' must be a boolean, got {value!r}", param=where)


def _optional_int(
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


def _optional_number(data: dict[str, Any], name: str, low: float, high: float) -> float | None:
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


def _messages_body(messages: list[dict[str, Any]], s: _Sampling) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": messages, "stream": True}
    optional = {
        "max_tokens": s.max_tokens,
        "temperature": s.temperature,
        "top_p": s.top_p,
        "stop": s.stop,
        "seed": s.seed,
        "frequency_penalty": s.frequency_penalty,
        "presence_penalty": s.presence_penalty,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if s.logprobs:
        body["logprobs"] = True
    return body


def _generate_body(messages: list[dict[str, Any]], s: _Sampling) -> dict[str, Any]:
    prompt = _single_prompt(messages)
    if s.presence_penalty is not None:
        raise unsupported(
            "presence_penalty",
            "the generate API (REQUEST_FORMAT=generate) has no presence penalty (TGI's "
            "generate parameters do not take it); use frequency_penalty, or a messages API",
        )
    params: dict[str, Any] = {"details": True}  # details carry the finish reason
    if s.max_tokens is not None:
        params["max_new_tokens"] = s.max_tokens
    # TGI rejects temperature 0 and top_p 1: 0 means greedy, 1 means "no nucleus filter".
    if s.temperature is not None and s.temperature > 0:
        params["do_sample"] = True
        params["temperature"] = s.temperature
    elif s.temperature == 0:
        params["do_sample"] = False
    if s.top_p is not None and 0 < s.top_p < 1:
        params["top_p"] = s.top_p
    if s.stop:
        params["stop"] = s.stop
    if s.seed is not None:
        params["seed"] = s.seed
    if s.frequency_penalty is not None:  # TGI and LMI take it, in OpenAI's -2..2 range
        params["frequency_penalty"] = s.frequency_penalty
    return {"inputs": prompt, "parameters": params, "stream": True}


def _single_prompt(messages: list[dict[str, Any]]) -> str:
    limitation = (
        "this endpoint uses the generate API (REQUEST_FORMAT=generate): no chat template is "
        "applied, so send exactly one 'user' message whose content is the fully templated "
        "prompt, or deploy the model with a messages (chat) API"
    )
    if len(messages) != 1 or messages[0].get("role") != "user":
        roles = [m.get("role") for m in messages]
        raise RequestError(
            f"{limitation} (got roles {roles})", param="messages", code="unsupported_messages"
        )
    content = messages[0].get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    if len(parts) == 1 and parts[0].get("type") == "text":
        return str(parts[0]["text"])
    raise RequestError(
        f"{limitation} (got {len(parts)} content parts; only one text part is accepted)",
        param="messages[0].content",
        code="unsupported_messages",
    )
