"""OpenAI Chat Completions request -> the serving container's request body.

Stdlib only: this file ships in the Lambda asset. Validation is strict about what the runtime
can honour and names the limitation in the error, so a client learns what to change instead of
getting a silently different answer. What the runtime does with each field is one row of
``fields.py``; this module walks the table.

Two request formats (``RequestFormat``):

- ``MESSAGES``: the container has an OpenAI-style chat API (TGI Messages API, vLLM, SGLang,
  LMI). Messages are forwarded as-is; the other fields under the names their rows give.
- ``GENERATE``: the container only has the TGI/LMI generate API (``{"inputs", "parameters"}``).
  No chat template is applied, so exactly one user message whose content is the already
  templated prompt is accepted (``engine_body.py``).

Whatever the client asks, the engine is always asked to stream (``"stream": true``): a
``stream: false`` client is served by aggregating the stream, which keeps time to first token
low on the engine side and uses one code path. A MESSAGES engine is always asked for its usage
chunk (``stream_options: {"include_usage": true}``, which TGI, vLLM, SGLang and LMI's vLLM
backend all accept), so ``stream: false`` replies carry ``usage`` too; a streaming client gets
the usage chunk only when it asks for it, as with OpenAI. GENERATE engines report counts in
``details`` anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...formats import EngineName, RequestFormat
from ..http.errors import RequestError, unrecognized, unsupported
from ..http.json_body import load_request
from ..prefix_aware_id import prefix_aware_id
from .engine_body import encode, single_prompt
from .fields import FIELDS, ChatField, Context
from .target import ChatTarget

_BY_NAME = {row.name: row for row in FIELDS}


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    """A validated chat request and the body to send to the engine."""

    stream: bool
    model: str | None
    logprobs: bool
    engine_body: bytes
    include_usage: bool = False  # stream_options.include_usage: end the stream with usage
    chose_tools: bool = True  # tool_choice is not a named function: the model chooses
    prefix_aware_id: str | None = None  # from prompt_cache_key: SageMaker's routing id


def parse_chat_request(
    body: bytes,
    request_format: RequestFormat | str,
    *,
    tools: bool | None = None,
    max_total_tokens: int | None = None,
    engine: EngineName | None = None,
) -> ChatRequest:
    """Validate an OpenAI chat request body and build the engine request for ``request_format``.

    ``tools`` says whether the engine serves tool calls. @default True for the messages
    format, False for generate (which has none). ``max_total_tokens`` is the model's limit on
    prompt plus completion, which bounds ``max_tokens``. @default None (not known).
    ``engine`` decides which fields pass. @default None (not known: those every engine
    honours). Raises ``RequestError`` (status 400) naming the offending field.
    """
    target = ChatTarget(
        request_format=RequestFormat(request_format),
        tools=tools,
        max_total_tokens=max_total_tokens,
        engine=engine,
    )
    return build_chat_request(load_request(body), target)


def build_chat_request(data: dict[str, Any], target: ChatTarget) -> ChatRequest:
    """As :func:`parse_chat_request`, from a body already decoded (the router reads its
    ``model`` first to learn the engine's format), for ``target``."""
    _check_names(data)
    ctx = Context(data=data, target=target)
    for row in FIELDS:
        value = data.get(row.name)
        if value is None:
            if row.required:
                raise RequestError(
                    f"'{row.name}' is required", param=row.name, code="missing_required"
                )
            continue
        if row.check is not None:
            checked = row.check(value, ctx)
            engine = target.engine
            if checked is not None and row.engines is not None and engine not in row.engines:
                raise _not_honoured(row, engine)
            ctx.values[row.name] = checked
    values = ctx.values
    body = _generate_body(values) if target.generate else _messages_body(values)
    return ChatRequest(
        stream=bool(values.get("stream")),
        model=values.get("model"),
        logprobs=bool(values.get("logprobs")),
        engine_body=encode(body, data),
        include_usage=bool(values.get("stream_options")),
        chose_tools=not isinstance(values.get("tool_choice"), dict),
        prefix_aware_id=prefix_aware_id(values.get("prompt_cache_key")),
    )


def _check_names(data: dict[str, Any]) -> None:
    """Raise ``RequestError`` for a refused field that is set, or a field outside the schema."""
    for name, value in data.items():
        row = _BY_NAME.get(name)
        if row is None:
            raise unrecognized(name, "Chat Completions")
        if row.refused is not None and value not in (None, [], {}, ""):
            raise unsupported(name, row.refused)


_TGI = frozenset({EngineName.TGI, EngineName.TGI_NEURONX})


def _not_honoured(row: ChatField, engine: EngineName | None) -> RequestError:
    """The 400 for a field the route's engine does not honour (or may not: not known)."""
    takers = ", ".join(sorted(e.value for e in row.engines or ()))
    if engine is None:
        why = (
            "the model's engine is not known (a custom image, or an endpoint deployed "
            f"elsewhere), and only some engines honour it ({takers}); leave it out"
        )
    else:
        what = row.unused_by if engine in _TGI and row.unused_by else "it has no such field"
        why = (
            f"its engine, {engine.value}, does not honour it ({what}); leave it out, or serve "
            f"the model with an engine that does ({takers})"
        )
    return unsupported(row.name, why)


#: What a conversation keeps from one request to the next, written first (see _messages_body).
_STABLE = ("messages", "tools")


def _messages_body(values: dict[str, Any]) -> dict[str, Any]:
    """A messages-API body: the messages as given, each field under its row's name.

    The conversation comes first: the messages, then the tools (which engines render into
    the prompt beside the system message), then the per-request settings (``max_tokens``,
    ``temperature``, ...) and the constant ``stream`` fields. SageMaker's prefix-aware routing
    reads the first ``PrefixLength`` bytes of the body ("For the SageMaker Runtime
    InvokeEndpoint and InvokeEndpointWithResponseStream APIs, this value specifies the number
    of bytes from the beginning of the request body", ``PrefixAwareRoutingConfig``, SageMaker
    API reference), so two requests that continue one conversation with other settings share
    those bytes and reach the instance that holds their prefix in its cache."""
    body: dict[str, Any] = {name: values[name] for name in _STABLE if name in values}
    for row in FIELDS:
        value = values.get(row.name)
        if row.messages is not None and row.messages not in _STABLE and value is not None:
            body[row.messages] = value
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}  # usage for stream:false too
    return body


def _generate_body(values: dict[str, Any]) -> dict[str, Any]:
    """A generate-API body: one templated prompt, the parameters as each row gives them."""
    prompt = single_prompt(values["messages"])
    params: dict[str, Any] = {"details": True}  # details carry the finish reason
    for row in FIELDS:
        value = values.get(row.name)
        if value is None:
            continue
        if row.generate_refused is not None:
            raise unsupported(row.name, row.generate_refused)
        if isinstance(row.generate, str):
            params[row.generate] = value
        elif row.generate is not None:
            params.update(row.generate(value))
    return {"inputs": prompt, "parameters": params, "stream": True}
