"""Stream events -> OpenAI Chat Completions wire objects (SSE chunks, completion JSON, errors).

Stdlib only: this file ships in the Lambda asset. Token chunks are built from a pre-encoded
template because they are the hot path (one per generated token); everything else goes
through ``json.dumps``.

Tool calls: the first chunk of each call carries its ``index``, ``id`` (the engine's, else a
new ``call_…`` one: TGI's is empty), ``type`` and ``name``; later chunks carry argument
pieces only, as OpenAI streams them. A reply with tool calls that stopped normally finishes
with ``"tool_calls"`` (TGI says ``"stop"``; vLLM and SGLang say ``"tool_calls"`` already), and
a non-streamed one carries ``message.tool_calls`` with ``content`` null unless text came too.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .events import DoneEvent, TokenEvent, ToolCallEvent

__all__ = [
    "DONE",
    "KEEP_ALIVE",
    "ChunkEncoder",
    "CompletionBuilder",
    "error_object",
    "finish_reason",
    "new_completion_id",
    "new_tool_call_id",
    "sse",
    "usage_object",
]

DONE = b"data: [DONE]\n\n"
KEEP_ALIVE = b": keep-alive\n\n"  # an SSE comment: clients skip it, proxies see bytes flow

# Engines' finish reasons -> OpenAI's. TGI says eos_token/stop_sequence, LMI may say eos.
_FINISH_REASONS = {
    "stop": "stop",
    "eos_token": "stop",
    "eos": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}


def finish_reason(raw: str | None, *, tool_calls: bool = False) -> str:
    """OpenAI finish reason for an engine's one; unknown or missing means a normal stop,
    which is ``"tool_calls"`` when the reply made tool calls."""
    reason = _FINISH_REASONS.get(raw or "stop", "stop")
    return "tool_calls" if tool_calls and reason == "stop" else reason


def new_completion_id() -> str:
    return "chatcmpl-" + os.urandom(12).hex()


def new_tool_call_id() -> str:
    """An id for a tool call whose engine gave none (OpenAI's ``call_`` form)."""
    return "call_" + os.urandom(12).hex()


def sse(obj: Any) -> bytes:
    """One server-sent event carrying ``obj`` as compact JSON."""
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def error_object(
    message: str,
    *,
    error_type: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    """The OpenAI error envelope: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def usage_object(done: DoneEvent) -> dict[str, int] | None:
    """OpenAI's ``usage`` object, or None unless the engine reported both counts: the SDK's
    ``CompletionUsage`` requires all three as integers, and a guess would mislead billing."""
    prompt, completion = done.prompt_tokens, done.completion_tokens
    if prompt is None or completion is None:
        return None
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _logprobs(event: TokenEvent) -> dict[str, Any] | None:
    if event.log_prob is None:
        return None
    entry = {
        "token": event.text,
        "logprob": event.log_prob,
        "bytes": list(event.text.encode()),
        "top_logprobs": [],
    }
    return {"content": [entry], "refusal": None}


class ChunkEncoder:
    """Builds the ``chat.completion.chunk`` SSE events of one streamed response."""

    def __init__(self, *, completion_id: str, created: int, model: str, logprobs: bool) -> None:
        self._base = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
        }
        self._logprobs = logprobs
        self._calls: set[int] = set()
        head = json.dumps(self._base, separators=(",", ":"))[:-1]
        self._token_prefix = (
            b"data: " + head.encode() + b',"choices":[{"index":0,"delta":{"content":'
        )
        self._token_suffix = b'},"logprobs":null,"finish_reason":null}]}\n\n'

    def _chunk(self, delta: dict[str, Any], *, reason: str | None, logprobs: Any = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": reason}
        return sse({**self._base, "choices": [choice]})

    def role(self) -> bytes:
        """The first chunk: the assistant role with empty content, as OpenAI sends it."""
        return self._chunk({"role": "assistant", "content": ""}, reason=None)

    def token(self, event: TokenEvent) -> bytes:
        if self._logprobs and event.log_prob is not None:
            return self._chunk({"content": event.text}, reason=None, logprobs=_logprobs(event))
        return self._token_prefix + json.dumps(event.text).encode() + self._token_suffix

    def tool_call(self, event: ToolCallEvent) -> bytes:
        """One ``delta.tool_calls`` chunk: the call's id, type and name on its first one."""
        entry: dict[str, Any] = {"index": event.index}
        if event.index not in self._calls:
            self._calls.add(event.index)
            entry["id"] = event.id or new_tool_call_id()
            entry["type"] = "function"
        function: dict[str, str] = {}
        if event.name is not None:
            function["name"] = event.name
        function["arguments"] = event.arguments
        entry["function"] = function
        return self._chunk({"tool_calls": [entry]}, reason=None)

    @property
    def tool_calls(self) -> int:
        """How many tool calls were streamed."""
        return len(self._calls)

    def finish(self, done: DoneEvent) -> bytes:
        """The last chunk: empty delta and the finish reason."""
        reason = finish_reason(done.finish_reason, tool_calls=bool(self._calls))
        return self._chunk({}, reason=reason)

    def usage(self, done: DoneEvent) -> bytes:
        """The ``stream_options.include_usage`` chunk (empty ``choices``), or nothing when the
        engine did not report the counts."""
        counts = usage_object(done)
        if counts is None:
            return b""
        return sse({**self._base, "choices": [], "usage": counts})


class CompletionBuilder:
    """Aggregates a stream into one ``chat.completion`` object (for ``stream: false``)."""

    def __init__(self, *, completion_id: str, created: int, model: str, logprobs: bool) -> None:
        self._id, self._created, self._model = completion_id, created, model
        self._want_logprobs = logprobs
        self._texts: list[str] = []
        self._logprobs: list[dict[str, Any]] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self.tokens = 0
        """Events added: tokens and tool-call pieces, counted as the streamed answer counts
        them (its ``tokens``, the ``OutputTokens`` metric)."""

    def add(self, event: TokenEvent) -> None:
        self._texts.append(event.text)
        self.tokens += 1
        if self._want_logprobs and event.log_prob is not None:
            lp = _logprobs(event)
            if lp is not None:
                self._logprobs.extend(lp["content"])

    def add_tool_call(self, event: ToolCallEvent) -> None:
        self.tokens += 1
        call = self._calls.get(event.index)
        if call is None:
            call = {"id": event.id or new_tool_call_id(), "name": "", "arguments": []}
            self._calls[event.index] = call
        if event.name is not None:
            call["name"] = event.name
        call["arguments"].append(event.arguments)

    @property
    def tool_calls(self) -> int:
        """How many tool calls the reply makes."""
        return len(self._calls)

    def build(self, done: DoneEvent) -> dict[str, Any]:
        text: str | None = "".join(self._texts)
        if not text and done.generated_text:
            text = done.generated_text
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if self._calls:
            message["content"] = text or None  # OpenAI's null content beside tool calls
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(self._calls.items())
            ]
        logprobs = {"content": self._logprobs, "refusal": None} if self._want_logprobs else None
        completion: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion",
            "created": self._created,
            "model": self._model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": logprobs,
                    "finish_reason": finish_reason(
                        done.finish_reason, tool_calls=bool(self._calls)
                    ),
                }
            ],
        }
        counts = usage_object(done)
        if counts is not None:  # omitted when unknown (ChatCompletion.usage is optional)
            completion["usage"] = counts
        return completion
