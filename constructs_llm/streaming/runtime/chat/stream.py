"""A streamed chat answer: ``chat.completion.chunk`` server-sent events, one per token.

Stdlib only: this file ships in the Lambda asset. A role chunk opens the stream, a chunk with
``finish_reason`` ends it (then the usage chunk when ``stream_options.include_usage`` asks and
the engine reported both counts), then ``data: [DONE]``. A failure ends it with
``data: {"error": {...}}`` then ``data: [DONE]``. Token chunks are built from a pre-encoded
template because they are the hot path (one per generated token); everything else goes through
``json.dumps``.

Tool calls: the first chunk of each call carries its ``index``, ``id`` (the engine's, else a
new ``call_…`` one: TGI's is empty), ``type`` and ``name``; later chunks carry argument pieces
only, as OpenAI streams them.
"""

from __future__ import annotations

import json
from typing import Any

from ..http.errors import error_object
from ..parsing.events import DoneEvent, TokenEvent, ToolCallEvent
from ..upstream import UpstreamFailure
from .wire import DONE, finish_reason, logprobs_object, new_tool_call_id, sse, usage_object

__all__ = ["ChunkStream"]


class ChunkStream:
    """The ``chat.completion.chunk`` SSE events of one streamed response.

    :param completion_id: the chunks' ``id``.
    :param created: their ``created`` time (seconds).
    :param model: the served model's name.
    :param logprobs: whether tokens carry their log-probabilities.
    :param include_usage: whether the stream ends with the usage chunk.
    """

    def __init__(
        self,
        *,
        completion_id: str,
        created: int,
        model: str,
        logprobs: bool,
        include_usage: bool = False,
    ) -> None:
        self._include_usage = include_usage
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

    def start(self) -> bytes:
        """The first chunk: the assistant role with empty content, as OpenAI sends it."""
        return self._chunk({"role": "assistant", "content": ""}, reason=None)

    def token(self, event: TokenEvent) -> bytes:
        if self._logprobs and event.log_prob is not None:
            return self._chunk(
                {"content": event.text}, reason=None, logprobs=logprobs_object(event)
            )
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
        """The last chunk (empty delta and the finish reason), the usage chunk when asked for,
        and ``[DONE]``."""
        reason = finish_reason(done.finish_reason, tool_calls=bool(self._calls))
        last = self._chunk({}, reason=reason)
        if self._include_usage:
            last += self._usage(done)
        return last + DONE

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
