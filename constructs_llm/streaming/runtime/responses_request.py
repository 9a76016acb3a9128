"""OpenAI Responses request (``POST /v1/responses``) -> the chat request the engine is sent.

Stdlib only: this file ships in the Lambda asset. The Responses API is served on top of the
chat path: a Responses request is translated into the Chat Completions request it stands for
(``input`` and ``instructions`` into ``messages``, flat function tools into chat tools,
``text.format`` into ``response_format``, ``max_output_tokens`` into
``max_completion_tokens``, the logprobs ``include`` into ``logprobs``), which the chat
validation (``requests.py``) checks against the route's engine and turns into the engine's
body. An error that validation raises is reported under the Responses field it came from
(``input[2]``, ``text.format``, ``tools[0].name``), never under a chat name the client did not
send.

Which top-level fields are served, ignored or refused is in ``responses_fields.py``; the
input items in ``responses_input.py``; the tools in ``responses_tools.py``.

Served: ``input`` (a string or message, function_call and function_call_output items),
``instructions``, ``model`` (routing), ``stream``, ``tools`` (function tools), ``tool_choice``
(``none``, ``auto``, ``required``, a named function), ``parallel_tool_calls``, ``text.format``
(``text``, ``json_schema`` with ``name``, ``schema``, ``strict`` and ``description``,
``json_object``), ``max_output_tokens``, ``temperature``, ``top_p``, ``metadata`` (checked
against OpenAI's limits and echoed), ``include: ["message.output_text.logprobs"]`` (the sampled
token's log-probability; ``top_logprobs`` 0 only, as for chat) and
``include: ["reasoning.encrypted_content"]``, which asks for the content of reasoning items,
of which these models produce none. ``text.verbosity`` is refused when set. On a generate-API
route (``REQUEST_FORMAT=generate``) ``input`` must be one user message (the templated
prompt), without ``instructions``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .events import RequestFormat
from .request_errors import RequestError, unsupported
from .request_sampling import optional_bool, optional_int
from .requests import ChatRequest, build_chat_request
from .responses_fields import check_fields
from .responses_input import Conversation, conversation
from .responses_tools import chat_tool_fields

__all__ = ["LOGPROBS", "ResponsesRequest", "build_responses_request"]

LOGPROBS = "message.output_text.logprobs"
_ENCRYPTED_REASONING = "reasoning.encrypted_content"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_METADATA = 16
_SCHEMA_KEYS = frozenset({"type", "name", "schema", "strict", "description"})
_CHAT_MESSAGE = re.compile(r"messages\[(\d+)\]")
_CHAT_TOOL = re.compile(r"tools\[(\d+)\]\.function\.")


@dataclass(frozen=True, kw_only=True)
class ResponsesRequest:
    """A validated Responses request: the chat request for the engine, and what the answer
    repeats of the request.

    :param chat: the chat request, whose ``engine_body`` goes to the engine.
    :param stream: whether the client asked for events.
    :param logprobs: whether output text carries its log-probabilities (``include``).
    :param echo: the request's settings as a ``response`` object states them (``tools``,
        ``tool_choice``, ``text``, ``metadata``, ...).
    """

    chat: ChatRequest
    stream: bool
    logprobs: bool
    echo: dict[str, Any]


def build_responses_request(
    data: dict[str, Any],
    request_format: RequestFormat | str,
    *,
    tools: bool | None = None,
    max_total_tokens: int | None = None,
) -> ResponsesRequest:
    """Validate a decoded Responses request and build its chat request for the engine.

    ``tools`` says whether the route's engine serves tool calls, and ``max_total_tokens`` the
    model's limit, which ``max_output_tokens`` may not exceed (both as for
    ``build_chat_request``). Raises ``RequestError`` naming the Responses field at fault.
    """
    check_fields(data)
    talk = conversation(data.get("input"), data.get("instructions"))
    stream = optional_bool(data, "stream") or False
    _check_stream_options(data.get("stream_options"), stream)
    tool_fields = chat_tool_fields(data)
    response_format, text_echo = _text(data.get("text"))
    logprobs = _logprobs(data)
    max_output_tokens = optional_int(data, "max_output_tokens", minimum=1)
    metadata = _metadata(data.get("metadata"))
    if RequestFormat(request_format) is RequestFormat.GENERATE:
        _check_generate(talk)
    chat: dict[str, Any] = {"messages": talk.messages, "stream": stream, **tool_fields}
    for name in ("model", "temperature", "top_p"):
        if data.get(name) is not None:
            chat[name] = data[name]
    if max_output_tokens is not None:
        chat["max_completion_tokens"] = max_output_tokens
    if response_format is not None:
        chat["response_format"] = response_format
    if logprobs:
        chat["logprobs"] = True
    try:
        request = build_chat_request(
            chat, request_format, tools=tools, max_total_tokens=max_total_tokens
        )
    except RequestError as err:
        raise _in_responses_terms(err, talk) from None
    echo = {
        "instructions": data.get("instructions"),
        "max_output_tokens": max_output_tokens,
        "metadata": metadata,
        "parallel_tool_calls": data.get("parallel_tool_calls") is not False,
        "temperature": _number(chat.get("temperature")),
        "text": {"format": text_echo},
        "tool_choice": data.get("tool_choice") or "auto",
        "tools": data.get("tools") or [],
        "top_logprobs": data.get("top_logprobs"),
        "top_p": _number(chat.get("top_p")),
        "truncation": "disabled",
    }
    for name in ("user", "safety_identifier", "prompt_cache_key"):
        if isinstance(data.get(name), str):
            echo[name] = data[name]
    return ResponsesRequest(chat=request, stream=stream, logprobs=logprobs, echo=echo)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _check_stream_options(options: Any, stream: bool) -> None:
    if options is None:
        return
    if not stream:
        raise RequestError(
            "'stream_options' is only allowed with 'stream': true", param="stream_options"
        )
    if not isinstance(options, dict):
        raise RequestError("'stream_options' must be an object", param="stream_options")
    for key in options:
        if key != "include_obfuscation":  # pads OpenAI's own events: nothing to do here
            raise RequestError(
                f"unrecognized stream option 'stream_options.{key}'",
                param=f"stream_options.{key}",
                code="unknown_parameter",
            )
    optional_bool(options, "include_obfuscation", "stream_options.include_obfuscation")


def _text(value: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The chat ``response_format`` for ``text`` (None for plain text), and ``text.format``
    as the response states it."""
    plain = {"type": "text"}
    if value is None:
        return None, plain
    if not isinstance(value, dict):
        raise RequestError("'text' must be an object", param="text")
    for key, setting in value.items():
        if key == "verbosity" and setting is not None:
            raise unsupported("text.verbosity", "no engine here serves it")
        if key not in ("format", "verbosity"):
            raise RequestError(
                f"unrecognized field 'text.{key}'", param=f"text.{key}", code="unknown_parameter"
            )
    spec = value.get("format")
    if spec is None:
        return None, plain
    if not isinstance(spec, dict):
        raise RequestError("'text.format' must be an object", param="text.format")
    kind = spec.get("type")
    if kind in ("text", "json_object"):
        extra = sorted(set(spec) - {"type"})
        if extra:
            raise RequestError(
                f"unrecognized field 'text.format.{extra[0]}' of a {kind!r} format",
                param=f"text.format.{extra[0]}",
                code="unknown_parameter",
            )
        return (None if kind == "text" else {"type": "json_object"}), {"type": kind}
    if kind != "json_schema":
        raise RequestError(
            f"'text.format.type' must be 'text', 'json_schema' or 'json_object', got {kind!r}",
            param="text.format.type",
        )
    return _json_schema(spec), spec


def _json_schema(spec: dict[str, Any]) -> dict[str, Any]:
    extra = sorted(set(spec) - _SCHEMA_KEYS)
    if extra:
        raise RequestError(
            f"unrecognized field 'text.format.{extra[0]}' of a 'json_schema' format",
            param=f"text.format.{extra[0]}",
            code="unknown_parameter",
        )
    name, schema = spec.get("name"), spec.get("schema")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RequestError(
            f"'text.format.name' must be 1-64 letters, digits, '_' or '-', got {name!r}",
            param="text.format.name",
        )
    if not isinstance(schema, dict):
        raise RequestError(
            "'text.format.schema' must be a JSON Schema object: the engines constrain the "
            "output to it",
            param="text.format.schema",
        )
    for key, kind in (("strict", bool), ("description", str)):
        if spec.get(key) is not None and not isinstance(spec[key], kind):
            raise RequestError(
                f"'text.format.{key}' must be a {kind.__name__}", param=f"text.format.{key}"
            )
    chat_spec = {k: v for k, v in spec.items() if k != "type" and v is not None}
    return {"type": "json_schema", "json_schema": chat_spec}


def _logprobs(data: dict[str, Any]) -> bool:
    """Whether ``include`` asks for output text log-probabilities; other values refused."""
    include = data.get("include")
    if include is None:
        include = []
    if not isinstance(include, list):
        raise RequestError("'include' must be an array", param="include")
    for index, value in enumerate(include):
        if value not in (LOGPROBS, _ENCRYPTED_REASONING):
            raise RequestError(
                f"'include[{index}]' {value!r} is not supported by this endpoint: it names "
                "output of OpenAI's built-in tools or image input, neither of which is served; "
                f"{LOGPROBS!r} and {_ENCRYPTED_REASONING!r} are",
                param=f"include[{index}]",
                code="unsupported_parameter",
            )
    top = optional_int(data, "top_logprobs", minimum=0, maximum=20)
    if top:
        raise RequestError(
            f"'top_logprobs' > 0 is not supported (got {top}): the runtime relays only the "
            f"sampled token's log-probability; use include [{LOGPROBS!r}] alone",
            param="top_logprobs",
            code="unsupported_parameter",
        )
    return LOGPROBS in include


def _metadata(value: Any) -> dict[str, str]:
    """``metadata`` within OpenAI's limits: 16 pairs, keys of 64 characters at most, string
    values of 512 at most."""
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > _MAX_METADATA:
        raise RequestError(
            f"'metadata' must be an object of at most {_MAX_METADATA} string pairs",
            param="metadata",
        )
    for key, item in value.items():
        if len(key) > 64 or not isinstance(item, str) or len(item) > 512:
            raise RequestError(
                f"'metadata.{key[:64]}': keys are at most 64 characters and values strings of "
                "at most 512",
                param=f"metadata.{key[:64]}",
            )
    return value


def _check_generate(talk: Conversation) -> None:
    if len(talk.messages) == 1 and talk.messages[0]["role"] == "user":
        return
    first_extra = "instructions" if talk.origins[0] == "instructions" else "input"
    raise RequestError(
        "this model's engine takes the generate API (REQUEST_FORMAT=generate): no chat "
        "template is applied, so send 'input' as one string (the fully templated prompt) "
        "without 'instructions', or deploy the model with a messages (chat) API",
        param=first_extra,
        code="unsupported_messages",
    )


def _in_responses_terms(err: RequestError, talk: Conversation) -> RequestError:
    """``err`` (raised about the chat request) about the Responses field it came from."""
    param = err.param
    if param is None:
        return err
    renamed = _responses_param(param, talk)
    if renamed == param:
        return err
    return RequestError(
        err.message.replace(f"'{param}'", f"'{renamed}'"),
        param=renamed,
        code=err.code,
        status=err.status,
        error_type=err.error_type,
    )


def _responses_param(param: str, talk: Conversation) -> str:
    message = _CHAT_MESSAGE.match(param)
    if message is not None:
        index = int(message.group(1))
        return talk.origins[index] if index < len(talk.origins) else "input"
    if param == "messages":
        return "input"
    if param.startswith("response_format"):
        return "text.format" + param[len("response_format") :].replace(".json_schema", "", 1)
    if param == "max_completion_tokens":
        return "max_output_tokens"
    return _CHAT_TOOL.sub(r"tools[\1].", param)
