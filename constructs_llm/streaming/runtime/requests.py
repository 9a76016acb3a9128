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
or refused with a 400 naming it (``request_fields.py``). The messages are checked in
``request_messages.py``, the sampling parameters in ``request_sampling.py``, and the engine
body is written by ``engine_bodies.py``. Honoured beyond the sampling parameters: tools
(``request_tools.py``), ``response_format`` (``response_format.py``), and usage: a MESSAGES
engine is always asked for its usage chunk (``stream_options: {"include_usage": true}``,
which TGI, vLLM, SGLang and LMI's vLLM backend all accept), so ``stream: false`` replies
carry ``usage`` too; a streaming client gets the usage chunk only when it asks for it, as
with OpenAI. GENERATE engines report counts in ``details`` anyway.

Refused (400 naming the field): ``n`` > 1, ``top_logprobs`` > 0 (only the sampled token's log-
probability is relayed), more than 4 ``stop`` sequences, a ``max_tokens`` or
``max_completion_tokens`` above the route's ``max_total_tokens`` (``request_sampling.py``), a
body nesting JSON past ``json_depth.MAX_JSON_DEPTH`` levels, and in GENERATE format anything
but a single user message, tools, ``response_format`` and ``presence_penalty`` (TGI's generate
API has no such parameter). In GENERATE format ``frequency_penalty`` is forwarded (TGI and
LMI's generate parameters both take it) and ``logprobs`` is served from the token log-probs the
generate streams always carry (TGI ``token.logprob``, LMI ``token.log_prob``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .engine_bodies import encode, generate_body, messages_body
from .events import RequestFormat
from .json_depth import check_depth, too_deep
from .request_errors import RequestError, unsupported
from .request_fields import check_fields
from .request_messages import checked_messages
from .request_sampling import optional_bool, sampling
from .request_tools import tool_fields
from .response_format import engine_response_format

__all__ = [
    "ChatRequest",
    "RequestError",
    "build_chat_request",
    "load_request",
    "parse_chat_request",
]

_STREAM_OPTIONS = frozenset({"include_usage", "include_obfuscation"})
_GENERATE_NO_TOOLS = (
    "its engine takes the generate API (REQUEST_FORMAT=generate), which has no tool calling; "
    "deploy the model with a messages (chat) API"
)
_TOOLS_OFF = (
    'tool calling is off for this model (TOOLS=off, or "tools": false in its ROUTES entry): '
    "its engine does not parse tool calls; deploy it with tool calling on (the engine's "
    "tool_calls=True, with a tool_call_parser where it needs one)"
)


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    """A validated chat request and the body to send to the engine."""

    stream: bool
    model: str | None
    logprobs: bool
    engine_body: bytes
    include_usage: bool = False  # stream_options.include_usage: end the stream with usage


def parse_chat_request(
    body: bytes,
    request_format: RequestFormat | str,
    *,
    tools: bool | None = None,
    max_total_tokens: int | None = None,
) -> ChatRequest:
    """Validate an OpenAI chat request body and build the engine request for ``request_format``.

    ``tools`` says whether the engine serves tool calls. @default True for the messages
    format, False for generate (which has none). ``max_total_tokens`` is the model's limit on
    prompt plus completion, which bounds ``max_tokens``. @default None (not known). Raises
    ``RequestError`` (status 400) naming the offending field.
    """
    return build_chat_request(
        load_request(body), request_format, tools=tools, max_total_tokens=max_total_tokens
    )


def build_chat_request(
    data: dict[str, Any],
    request_format: RequestFormat | str,
    *,
    tools: bool | None = None,
    max_total_tokens: int | None = None,
) -> ChatRequest:
    """As :func:`parse_chat_request`, from a body already decoded by :func:`load_request`
    (the router reads its ``model`` first to learn the engine's format)."""
    fmt = RequestFormat(request_format)
    generate = fmt is RequestFormat.GENERATE
    served = (not generate) if tools is None else tools
    why_not = _GENERATE_NO_TOOLS if generate else _TOOLS_OFF
    check_fields(data)
    _check_choices_and_modalities(data)
    messages = checked_messages(data.get("messages"), served=served, why_not=why_not)
    stream = optional_bool(data, "stream") or False
    include_usage = _include_usage(data, stream)
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise RequestError("'model' must be a string", param="model")
    chosen = sampling(data, max_total_tokens=max_total_tokens)
    tool_body = tool_fields(data, served=served, why_not=why_not)
    response_format = engine_response_format(data.get("response_format"), generate=generate)
    if generate:
        engine: dict[str, Any] = generate_body(messages, chosen)
    else:
        engine = messages_body(messages, chosen)
        engine.update(tool_body)
        if response_format is not None:
            engine["response_format"] = response_format
        engine["stream_options"] = {"include_usage": True}  # usage for stream:false too
    return ChatRequest(
        stream=stream,
        model=model,
        logprobs=chosen.logprobs,
        engine_body=encode(engine, data),
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
    return optional_bool(options, "include_usage", "stream_options.include_usage") or False


def load_request(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object; ``RequestError`` (400 ``invalid_json``, or
    ``json_too_deep`` past ``json_depth.MAX_JSON_DEPTH`` levels) otherwise."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise too_deep() from None
    except (UnicodeDecodeError, ValueError) as err:
        raise RequestError(
            f"request body is not valid JSON: {err}", code="invalid_json", param=None
        ) from None
    if not isinstance(data, dict):
        raise RequestError(
            f"request body must be a JSON object, got {type(data).__name__}", code="invalid_json"
        )
    check_depth(body, data)
    return data
