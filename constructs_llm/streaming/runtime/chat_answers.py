"""The two answers to a chat request: an SSE stream of ``chat.completion.chunk`` events
(with its heartbeat while the first token is awaited), or one ``chat.completion`` JSON.

Stdlib + boto3 only: this file ships in the Lambda asset. ``server.py`` documents what a
client sees; this module writes it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from .events import DoneEvent, ErrorEvent, StreamEvent, TokenEvent, ToolCallEvent
from .heartbeat import Heartbeat
from .http_exchange import ClientGone, Exchange, chunk, peer_closed
from .openai_format import (
    DONE,
    KEEP_ALIVE,
    ChunkEncoder,
    CompletionBuilder,
    error_object,
    new_completion_id,
    sse,
)
from .requests import ChatRequest
from .routing import Route
from .upstream import UpstreamFailure, describe_stream_error

__all__ = ["PEER_CHECK_SECONDS", "AnswerWriter"]

PEER_CHECK_SECONDS = 0.25  # how often a stream:false request checks that its client is there


class Tally(Protocol):
    """What a whole answer counts as it grows: tokens (and tool-call pieces) and tool calls."""

    @property
    def tokens(self) -> int: ...

    @property
    def tool_calls(self) -> int: ...


class AnswerWriter(Exchange):
    """Writes a chat request's answer from its events; ``_target`` is its route."""

    _target: Route  # the chat request's route, once picked

    def _stream(
        self, events: Iterator[StreamEvent], request: ChatRequest, heartbeat: Heartbeat | None
    ) -> bool:
        """Relay the events as SSE; True when the stream ended normally."""
        first, head_sent = self._first_event(events, heartbeat)
        if type(first) is ErrorEvent:
            if head_sent:  # too late for a status: end the stream with the error
                self._end_stream_with_error(describe_stream_error(first))
            else:  # nothing sent yet: answer with a real HTTP status
                self._fail(first)
            return False
        encoder = ChunkEncoder(
            completion_id=new_completion_id(),
            created=int(time.time()),
            model=self._target.model,
            logprobs=request.logprobs,
        )
        chunked = self.request_version != "HTTP/1.0"  # 1.0 clients get a close-delimited body
        frame = chunk if chunked else bytes
        if not chunked:
            self.close_connection = True
        # The status line, headers and role chunk go out with the first token: one write.
        head = b"" if head_sent else self._stream_head(chunked)
        pending = head + frame(encoder.role())
        self._record["status"] = 200
        tokens = 0
        for event in itertools.chain((first,), events):
            kind = type(event)
            if kind is TokenEvent or kind is ToolCallEvent:
                if kind is TokenEvent:
                    self._write(pending + frame(encoder.token(event)))  # type: ignore[arg-type]
                else:
                    self._write(pending + frame(encoder.tool_call(event)))  # type: ignore[arg-type]
                pending = b""
                tokens += 1
                if tokens == 1:
                    self._record["ttft_ms"] = self._elapsed_ms()
                continue
            self._record["tokens"] = tokens
            if encoder.tool_calls:
                self._record["tool_calls"] = encoder.tool_calls
            if type(event) is DoneEvent:
                last = encoder.finish(event)
                if request.include_usage:
                    last += encoder.usage(event)
                last += DONE
                self._record_done(event)
            else:
                assert isinstance(event, ErrorEvent)
                failure = describe_stream_error(event)
                self._record["stream_error"] = failure.code
                error = error_object(
                    failure.message, error_type=failure.error_type, code=failure.code
                )
                last = sse(error) + DONE
            self._log()  # before the last byte: Lambda may freeze the process right after it
            self._write(pending + frame(last) + (b"0\r\n\r\n" if chunked else b""))
            return type(event) is DoneEvent
        return False

    def _first_event(
        self, events: Iterator[StreamEvent], heartbeat: Heartbeat | None
    ) -> tuple[StreamEvent, bool]:
        """The stream's first event, and whether the heartbeat (stopped once it came) already
        sent the response's head."""
        if heartbeat is None:
            return next(events), False
        try:
            first = next(events)
        finally:
            head_sent = self._stop_heartbeat(heartbeat)
        return first, head_sent

    def _start_heartbeat(self, interval: float) -> Heartbeat:
        """Keep-alive comments (after the SSE head) every ``interval`` until the first event."""
        chunked = self.request_version != "HTTP/1.0"
        beat = chunk(KEEP_ALIVE) if chunked else KEEP_ALIVE
        return Heartbeat(
            self.wfile.write, head=self._stream_head(chunked), beat=beat, interval=interval
        )

    def _stop_heartbeat(self, heartbeat: Heartbeat) -> bool:
        """Stop it; True when it already sent the status line (no error status any more)."""
        sent, failed = heartbeat.stop()
        if sent or failed:
            self._headers_sent = True
        if sent:
            self._record["status"] = 200
            self._record["heartbeats"] = sent
        if failed:  # noticed only now: the upstream call is closed on the way out
            raise ClientGone
        return sent > 0

    def _end_stream_with_error(self, failure: UpstreamFailure) -> None:
        """End an SSE stream whose head is out (and no token) with the error and ``[DONE]``."""
        self._record["stream_error"] = failure.code
        self._record["tokens"] = 0
        error = error_object(failure.message, error_type=failure.error_type, code=failure.code)
        last = sse(error) + DONE
        self._log()  # before the last byte: Lambda may freeze the process right after it
        if self.request_version == "HTTP/1.0":
            self.close_connection = True
            self._write(last)
        else:
            self._write(chunk(last) + b"0\r\n\r\n")

    def _stream_head(self, chunked: bool) -> bytes:
        """Status line and headers of an SSE response, as bytes to send with the first event."""
        lines = [
            f"{self.protocol_version} 200 OK",
            f"Server: {self.version_string()}",
            f"Date: {self.date_time_string()}",
            "Content-Type: text/event-stream; charset=utf-8",
            "Cache-Control: no-cache",
            "X-Accel-Buffering: no",
        ]
        if chunked:
            lines.append("Transfer-Encoding: chunked")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _complete(self, events: Iterator[StreamEvent], request: ChatRequest) -> bool:
        """Answer one chat.completion; True when the stream ended normally."""
        builder = CompletionBuilder(
            completion_id=new_completion_id(),
            created=int(time.time()),
            model=self._target.model,
            logprobs=request.logprobs,
        )
        end = self._gather(events, builder, builder.add, builder.add_tool_call)
        if end is None:
            return False
        if type(end) is DoneEvent:
            self._record_done(end)
            self._send_json(200, builder.build(end))
            return True
        assert isinstance(end, ErrorEvent)
        self._fail(end)
        return False

    def _gather(
        self,
        events: Iterator[StreamEvent],
        tally: Tally,
        add_text: Callable[[TokenEvent], object],
        add_call: Callable[[ToolCallEvent], object],
    ) -> StreamEvent | None:
        """Feeds the stream's tokens and tool-call pieces to a whole answer (``add_text``,
        ``add_call``), recording the first token's time and watching the client, then records
        ``tally``'s counts; returns the event that ended the stream (None: none did)."""
        next_check = time.monotonic() + PEER_CHECK_SECONDS
        for event in events:
            if type(event) is TokenEvent:
                add_text(event)
            elif type(event) is ToolCallEvent:
                add_call(event)
            else:
                self._record["tokens"] = tally.tokens
                if tally.tool_calls:
                    self._record["tool_calls"] = tally.tool_calls
                return event
            if tally.tokens == 1:
                self._record["ttft_ms"] = self._elapsed_ms()
            if time.monotonic() >= next_check:
                if peer_closed(self.connection):
                    raise ClientGone
                next_check = time.monotonic() + PEER_CHECK_SECONDS
        return None

    def _record_done(self, done: DoneEvent) -> None:
        self._record["finish_reason"] = done.finish_reason
        if done.prompt_tokens is not None:
            self._record["prompt_tokens"] = done.prompt_tokens
        if done.completion_tokens is not None:
            self._record["completion_tokens"] = done.completion_tokens

    def _fail(self, event: ErrorEvent) -> None:
        """Answer a stream that failed before anything was sent with its mapped status."""
        failure = describe_stream_error(event)
        self._record["stream_error"] = failure.code
        self._send_error(
            failure.status, failure.message, error_type=failure.error_type, code=failure.code
        )
