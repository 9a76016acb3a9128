"""The two answers to a Responses request: an SSE stream of Responses events, or one
``response`` JSON. Stdlib + boto3 only: this file ships in the Lambda asset.

They behave as the chat answers do (``chat_answers.py``) where HTTP is concerned: the status
line goes out with the first token, so an engine that fails before it gets a real HTTP error
status with an OpenAI-shaped error body; a heartbeat (``HEARTBEAT_SECONDS``) may commit the
``200`` earlier, and a failure after that ends the stream with ``response.created``,
``response.in_progress`` and ``response.failed``. ``stream: false`` answers once the engine is
done, checking meanwhile that the client is still there. The log line gets the same fields
(``ttft_ms``, ``tokens``, ``tool_calls``, ``finish_reason``, token counts, ``stream_error``),
so the request's metrics are the chat request's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from .chat_flow import ChatExchange
from .events import DoneEvent, ErrorEvent, StreamEvent, TokenEvent, ToolCallEvent
from .heartbeat import Heartbeat
from .http_exchange import chunk
from .responses_objects import ResponseShape, final_status, usage_object
from .responses_output import OutputItems
from .responses_request import ResponsesRequest
from .responses_stream import ResponseEvents
from .upstream import UpstreamFailure, describe_stream_error

__all__ = ["ResponsesAnswerWriter"]


class ResponsesAnswerWriter(ChatExchange):
    """Writes a Responses request's answer from its events; ``_target`` is its route."""

    def _shape(self, request: ResponsesRequest) -> ResponseShape:
        return ResponseShape(model=self._target.model, echo=request.echo)

    def _responses_stream(
        self, events: Iterator[StreamEvent], request: ResponsesRequest, heartbeat: Heartbeat | None
    ) -> bool:
        """Relay the events as Responses SSE; True when the stream ended normally."""
        first, head_sent = self._first_event(events, heartbeat)
        if type(first) is ErrorEvent:
            if head_sent:  # too late for a status: the stream says the response failed
                self._responses_end_with_error(request, describe_stream_error(first))
            else:  # nothing sent yet: answer with a real HTTP status
                self._fail(first)
            return False
        writer = ResponseEvents(self._shape(request), logprobs=request.logprobs)
        chunked = self.request_version != "HTTP/1.0"  # 1.0 clients get a close-delimited body
        frame = chunk if chunked else bytes
        if not chunked:
            self.close_connection = True
        # The status line, headers and opening events go out with the first token: one write.
        head = b"" if head_sent else self._stream_head(chunked)
        pending = writer.start()
        self._record["status"] = 200
        for event in itertools.chain((first,), events):
            kind = type(event)
            if kind is TokenEvent or kind is ToolCallEvent:
                data = (
                    writer.token(event)  # type: ignore[arg-type]
                    if kind is TokenEvent
                    else writer.tool_call(event)  # type: ignore[arg-type]
                )
                if writer.output.tokens == 1:
                    self._record["ttft_ms"] = self._elapsed_ms()
                if data:  # a tool call's pieces may wait for its name: no empty chunk
                    self._write(head + frame(pending + data))
                    head = pending = b""
                continue
            self._record["tokens"] = writer.output.tokens
            if writer.tool_calls:
                self._record["tool_calls"] = writer.tool_calls
            if type(event) is DoneEvent:
                last = writer.finish(event)
                self._record_done(event)
            else:
                assert isinstance(event, ErrorEvent)
                failure = describe_stream_error(event)
                self._record["stream_error"] = failure.code
                last = writer.fail(failure)
            self._log()  # before the last byte: Lambda may freeze the process right after it
            self._write(head + frame(pending + last) + (b"0\r\n\r\n" if chunked else b""))
            return type(event) is DoneEvent
        return False

    def _responses_end_with_error(
        self, request: ResponsesRequest, failure: UpstreamFailure
    ) -> None:
        """End a stream whose head is out (and no token) with ``response.failed``."""
        self._record["stream_error"] = failure.code
        self._record["tokens"] = 0
        writer = ResponseEvents(self._shape(request), logprobs=request.logprobs)
        last = writer.start() + writer.fail(failure)
        self._log()  # before the last byte: Lambda may freeze the process right after it
        if self.request_version == "HTTP/1.0":
            self.close_connection = True
            self._write(last)
        else:
            self._write(chunk(last) + b"0\r\n\r\n")

    def _responses_complete(self, events: Iterator[StreamEvent], request: ResponsesRequest) -> bool:
        """Answer one ``response`` object; True when the stream ended normally."""
        output = OutputItems(logprobs=request.logprobs)
        event = self._gather(events, output, output.add_text, output.add_call)
        if event is not None:
            if type(event) is DoneEvent:
                self._record_done(event)
                output.close(event.generated_text)
                status, incomplete = final_status(event, tool_calls=bool(output.tool_calls))
                response = self._shape(request).response(
                    status=status,
                    output=output.items("completed" if status == "completed" else "incomplete"),
                    usage=usage_object(event),
                    incomplete_details=incomplete,
                )
                self._send_json(200, response)
                return True
            assert isinstance(event, ErrorEvent)
            self._fail(event)
            return False
        return False
