"""A streamed chat answer: ``chat.completion.chunk`` server-sent events, one per token.

Stdlib only: this file ships in the Lambda asset. A role chunk opens each choice (the first
before its first event, the others, with ``n`` > 1, before theirs), a chunk with
``finish_reason`` ends each, then the usage chunk when ``stream_options.include_usage`` asks
and the engine reported both counts, then ``data: [DONE]``. A failure ends the stream with
``data: {"error": {...}}`` then ``data: [DONE]``. Token chunks of the first choice are built
from a pre-encoded template because they are the hot path (one per generated token), and so
is the finish chunk of a one-choice answer: written once, after the stream, when the JSON
encoder's code has gone cold, it cost 0.3-0.37 ms of CPU, now 0.03 ms (timed in the runtime's
process; part of that moved to the log line, now the first JSON encoded after the stream).
Everything else goes through the JSON encoder.

Reasoning (the thinking a reasoning model's engine separates from its answer) streams as
``delta.reasoning``, or under the name(s) the shape's ``reasoning_field`` gives (``wire.py``
says which clients read which). Tool calls: the first chunk of each call carries its
``index``, ``id`` (the engine's, else a new ``call_…`` one: TGI's is empty), ``type`` and
``name``; later chunks carry argument pieces only, as OpenAI streams them.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii as _quoted
from typing import Any

from ..http.errors import error_object
from ..parsing.events import DoneEvent, ReasoningEvent, TokenEvent, ToolCallEvent
from ..upstream import UpstreamFailure
from .wire import (
    DONE,
    CompletionShape,
    finish_reason,
    logprobs_object,
    new_tool_call_id,
    reasoning_delta,
    sse,
    usage_object,
)


class ChunkStream:
    """The ``chat.completion.chunk`` SSE events of one streamed response.

    :param shape: the chunks' ``id``, ``created`` and ``model``, and how they are written.
    :param include_usage: whether the stream ends with the usage chunk. @default False
    """

    def __init__(self, shape: CompletionShape, *, include_usage: bool = False) -> None:
        self._include_usage = include_usage
        self._chose_tools = shape.chose_tools
        self._base = {
            "id": shape.completion_id,
            "object": "chat.completion.chunk",
            "created": shape.created,
            "model": shape.model,
        }
        self._logprobs = shape.logprobs
        self._reasoning_field = shape.reasoning_field
        self._calls: set[tuple[int, int]] = set()
        self._opened = {0}
        head = json.dumps(self._base, separators=(",", ":"))[:-1]
        self._token_prefix = (
            b"data: " + head.encode() + b',"choices":[{"index":0,"delta":{"content":'
        )
        self._token_suffix = b'},"logprobs":null,"finish_reason":null}]}\n\n'
        self._finish_prefix = (
            b"data: " + head.encode() + b',"choices":[{"index":0,"delta":{},"logprobs":null,'
            b'"finish_reason":'
        )

    def _chunk(
        self,
        delta: dict[str, Any],
        *,
        reason: str | None = None,
        logprobs: Any = None,
        choice: int = 0,
    ) -> bytes:
        entry = {"index": choice, "delta": delta, "logprobs": logprobs, "finish_reason": reason}
        return sse({**self._base, "choices": [entry]})

    def _open(self, choice: int) -> bytes:
        """The role chunk of a choice past the first, before its first event."""
        if choice in self._opened:
            return b""
        self._opened.add(choice)
        return self._chunk({"role": "assistant", "content": ""}, choice=choice)

    def start(self) -> bytes:
        """The first chunk: the assistant role with empty content, as OpenAI sends it."""
        return self._chunk({"role": "assistant", "content": ""})

    def token(self, event: TokenEvent) -> bytes:
        choice = event.choice
        if choice == 0 and (event.log_prob is None or not self._logprobs):
            # json.dumps of a str is this call (JSONEncoder.encode), without the two around it
            return self._token_prefix + _quoted(event.text).encode() + self._token_suffix
        logprobs = logprobs_object(event) if self._logprobs else None
        delta = {"content": event.text}
        return self._open(choice) + self._chunk(delta, logprobs=logprobs, choice=choice)

    def reasoning(self, event: ReasoningEvent) -> bytes:
        delta = reasoning_delta(event.text, self._reasoning_field)
        return self._open(event.choice) + self._chunk(delta, choice=event.choice)

    def tool_call(self, event: ToolCallEvent) -> bytes:
        """One ``delta.tool_calls`` chunk: the call's id, type and name on its first one."""
        entry: dict[str, Any] = {"index": event.index}
        key = (event.choice, event.index)
        if key not in self._calls:
            self._calls.add(key)
            entry["id"] = event.id or new_tool_call_id()
            entry["type"] = "function"
        function: dict[str, str] = {}
        if event.name is not None:
            function["name"] = event.name
        function["arguments"] = event.arguments
        entry["function"] = function
        opened = self._open(event.choice)
        return opened + self._chunk({"tool_calls": [entry]}, choice=event.choice)

    @property
    def tool_calls(self) -> int:
        """How many tool calls were streamed."""
        return len(self._calls)

    def finish(self, done: DoneEvent) -> bytes:
        """Each choice's last chunk (empty delta and its finish reason), the usage chunk when
        asked for, and ``[DONE]``."""
        reasons = done.finish_reasons or (done.finish_reason,)
        if len(reasons) == 1:  # one choice, opened by start(): its chunk from the template
            reason = _quoted(self._reason(0, reasons[0])).encode()
            last = self._finish_prefix + reason + b"}]}\n\n"
        else:
            last = b"".join(
                self._open(choice)
                + self._chunk({}, reason=self._reason(choice, raw), choice=choice)
                for choice, raw in enumerate(reasons)
            )
        if self._include_usage:
            last += self._usage(done)
        return last + DONE

    def _reason(self, choice: int, raw: str | None) -> str:
        called = self._chose_tools and any(c == choice for c, _ in self._calls)
        return finish_reason(raw, tool_calls=called)

    def _usage(self, done: DoneEvent) -> bytes:
        """The ``stream_options.include_usage`` chunk (empty ``choices``), or nothing when the
        engine did not report the counts."""
        counts = usage_object(done)
        if counts is None:
            return b""
        return sse({**self._base, "choices": [], "usage": counts})

    def fail(self, failure: UpstreamFailure) -> bytes:
        """``data: {"error": ...}`` then ``[DONE]``."""
        error = error_object(failure.message, error_type=failure.error_type, code=failure.code)
        return sse(error) + DONE

    def abort(self, failure: UpstreamFailure) -> bytes:
        """A stream that failed before its role chunk: the error and ``[DONE]`` alone."""
        return self.fail(failure)
