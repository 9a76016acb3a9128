"""OpenAI Responses request (``POST /v1/responses``) -> the chat request the engine is sent.

Stdlib only: this file ships in the Lambda asset. The Responses API is served on top of the
chat path: a Responses request is translated into the Chat Completions request it stands for
(``input`` and ``instructions`` into ``messages``, flat function tools into chat tools,
``text.format`` into ``response_format``, ``max_output_tokens`` into
``max_completion_tokens``, the logprobs ``include`` into ``logprobs``), which the chat
validation (``chat/request.py``) checks against the route's engine and turns into the engine's
body. What becomes of each field is one row of ``fields.py``; this module walks the table. An
error that the chat validation raises is reported under the Responses field it came from
(``input[2]``, ``text.format``, ``tools[0].name``), never under a chat name the client did not
send.

The input items are read in ``input.py``, the tools in ``tools.py``. On a generate-API route
(``REQUEST_FORMAT=generate``) ``input`` must be one user message (the templated prompt),
without ``instructions``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..chat.request import ChatRequest, build_chat_request
from ..chat.target import ChatTarget
from ..http.errors import RequestError, unrecognized, unsupported_value
from .fields import FIELDS, OMIT, Context
from .input import Conversation

_BY_NAME = {row.name: row for row in FIELDS}
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


def build_responses_request(data: dict[str, Any], target: ChatTarget) -> ResponsesRequest:
    """Validate a decoded Responses request and build its chat request for ``target`` (as
    ``build_chat_request`` does). Raises ``RequestError`` naming the Responses field at fault.
    """
    _check_names(data)
    ctx = Context(data=data)
    for row in FIELDS:
        value = data.get(row.name)
        if row.check is not None and (value is not None or row.always):
            ctx.values[row.name] = row.check(value, ctx)
        elif value is not None:
            ctx.values[row.name] = value
    values = ctx.values
    talk: Conversation = values["input"]
    if target.generate:
        _check_generate(talk)
    chat: dict[str, Any] = {}
    for row in FIELDS:
        value = values.get(row.name)
        if row.chat is None or value is None:
            continue
        if isinstance(row.chat, str):
            chat[row.chat] = value
        else:
            chat.update(row.chat(value))
    try:
        request = build_chat_request(chat, target)
    except RequestError as err:
        raise _in_responses_terms(err, talk) from None
    echo: dict[str, Any] = {}
    for row in FIELDS:
        if row.echo is not None:
            shown = row.echo(data.get(row.name), values.get(row.name))
            if shown is not OMIT:
                echo[row.name] = shown
    return ResponsesRequest(
        chat=request, stream=request.stream, logprobs=request.logprobs, echo=echo
    )


def _check_names(data: dict[str, Any]) -> None:
    """Raise ``RequestError`` for a field set to what is refused, or a field outside the schema."""
    for name, value in data.items():
        row = _BY_NAME.get(name)
        if row is None:
            raise unrecognized(name, "Responses")
        if row.neutral is not None and not row.neutral(value):
            raise unsupported_value(
                f"'{name}' {_shown(value)} is not supported by this endpoint: {row.why}", param=name
            )


def _shown(value: Any) -> str:
    """``value`` as the client wrote it (JSON), cut to a readable length."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


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
    if param == "reasoning_effort":
        return "reasoning.effort"
    return _CHAT_TOOL.sub(r"tools[\1].", param)
