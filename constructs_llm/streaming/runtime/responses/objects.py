"""OpenAI Responses wire objects: ids, the ``response`` object, its output items, ``usage``,
the final status and the error of a failed response.

Stdlib only: this file ships in the Lambda asset. Shapes follow the ``openai`` SDK's typed
models (openai 3.54.0: ``Response``, ``ResponseOutputMessage``, ``ResponseOutputText``,
``ResponseReasoningItem``, ``ResponseFunctionToolCall``, ``ResponseUsage``, ``ResponseError``),
generated from OpenAI's published OpenAPI spec; the tests validate every object strictly
against them.

- A reasoning model's thinking is a ``reasoning`` item before the message: its text as one
  ``reasoning_text`` content part (the raw reasoning the engine separated from the answer),
  no summary (none is made) and no ``encrypted_content`` (nothing is encrypted).

- ``status``: ``completed`` when the engine stopped normally (or to call tools);
  ``incomplete`` when it stopped at the token limit (``incomplete_details.reason``
  ``max_output_tokens``) or on a content filter (``content_filter``), as OpenAI reports them;
  ``failed`` when the engine's stream failed after the response started (``error``).
- ``usage``: the engine's own counts (``input_tokens``, ``output_tokens``, their total), only
  when it reported both, as for chat; ``output_tokens_details.reasoning_tokens`` and
  ``input_tokens_details.cached_tokens`` are the engine's counts where it reports them
  (``completion_tokens_details.reasoning_tokens`` or SGLang's ``reasoning_tokens``; vLLM's
  ``prompt_tokens_details.cached_tokens``), else 0: ``ResponseUsage`` requires both as
  integers, so OpenAI's schema leaves no way to say "not counted". So does
  ``cache_write_tokens``, which no engine reports: 0.
- ``error.code`` is one of the codes the schema allows: ``rate_limit_exceeded`` for an
  overloaded engine (429), ``invalid_prompt`` for an engine that refused the request (4xx,
  such as a prompt longer than its context), else ``server_error``; ``error.type`` keeps the
  engine's or SageMaker's own error code.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..chat.wire import finish_reason
from ..parsing.events import DoneEvent
from ..upstream import UpstreamFailure

_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def new_item_id(prefix: str) -> str:
    """An id in OpenAI's form: ``resp_…``, ``msg_…``, ``fc_…``."""
    return f"{prefix}_" + os.urandom(12).hex()


class ResponseShape:
    """The ``response`` object of one request: its id, time, model and the request's echoed
    settings, in each state it goes through."""

    def __init__(self, *, model: str, echo: dict[str, Any]) -> None:
        self.id = new_item_id("resp")
        self._base = {
            "id": self.id,
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "background": False,
            "previous_response_id": None,
            **echo,
        }

    def response(
        self,
        *,
        status: str,
        output: list[dict[str, Any]],
        usage: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        incomplete_details: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        return {
            **self._base,
            "status": status,
            "completed_at": int(time.time()) if status == "completed" else None,
            "error": error,
            "incomplete_details": incomplete_details,
            "output": output,
            "usage": usage,
        }


def final_status(done: DoneEvent, *, tool_calls: bool) -> tuple[str, dict[str, str] | None]:
    """The status of a response whose stream ended with ``done``, and its incomplete details."""
    reason = _INCOMPLETE.get(finish_reason(done.finish_reason, tool_calls=tool_calls))
    if reason is None:
        return "completed", None
    return "incomplete", {"reason": reason}


def usage_object(done: DoneEvent) -> dict[str, Any] | None:
    """``ResponseUsage``, or None unless the engine reported both counts (a guess would
    mislead billing)."""
    prompt, completion = done.prompt_tokens, done.completion_tokens
    if prompt is None or completion is None:
        return None
    return {
        "input_tokens": prompt,
        # ResponseUsage requires these integers: 0 where the engine counted nothing
        "input_tokens_details": {"cached_tokens": done.cached_tokens or 0, "cache_write_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": done.reasoning_tokens or 0},
        "total_tokens": prompt + completion,
    }


def response_error(failure: UpstreamFailure) -> dict[str, Any]:
    """The ``error`` of a response that failed with ``failure``."""
    if failure.status == 429:
        code = "rate_limit_exceeded"
    elif 400 <= failure.status < 500:
        code = "invalid_prompt"
    else:
        code = "server_error"
    return {"code": code, "message": failure.message, "param": None, "type": failure.code}


def output_text(text: str, logprobs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": logprobs}


def reasoning_text(text: str) -> dict[str, Any]:
    return {"type": "reasoning_text", "text": text}


def reasoning_item(item_id: str, status: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "reasoning",
        "summary": [],
        "content": content,
        "status": status,
    }


def message_item(item_id: str, status: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status,
        "content": content,
    }


def function_call_item(
    item_id: str, status: str, *, call_id: str, name: str, arguments: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }
