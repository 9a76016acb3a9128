"""A chat request from its body to its answer: read and route it, validate it, invoke the
model's endpoint, parse the stream it returns and hand the events to the answer writer.

Stdlib + boto3 only: this file ships in the Lambda asset. The invoke-parse-answer step
(``_invoke_and_answer``) also serves the Responses API (``responses_flow.py``), which
builds the same engine request and answers the same events in its own shapes (``Answer``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..formats import ModelKind
from .chat_answers import AnswerWriter
from .events import ErrorEvent, StreamEvent, TokenEvent, ToolCallEvent
from .heartbeat import Heartbeat
from .parser import parse_stream
from .requests import ChatRequest, RequestError, build_chat_request, load_request
from .routing import VARIANT_HEADER, Route, accept_route
from .sagemaker_stream import iter_payload_parts
from .upstream import UpstreamFailure, describe_failure, invoke, release

__all__ = ["Answer", "ChatExchange", "terminated"]


@dataclass(frozen=True, kw_only=True)
class Answer:
    """How a request's events are answered, in its API's shapes.

    :param stream: writes the events as they come (SSE); True when the stream ended normally.
    :param complete: writes one JSON answer from all the events; True likewise.
    :param end_stream_with_error: ends a stream whose 200 a heartbeat already sent (no token
        yet) with the failure.
    """

    stream: Callable[[Iterator[StreamEvent], Heartbeat | None], bool]
    complete: Callable[[Iterator[StreamEvent]], bool]
    end_stream_with_error: Callable[[UpstreamFailure], None]


class ChatExchange(AnswerWriter):
    """Serves ``POST /v1/chat/completions`` (``_chat``)."""

    _variant: str | None  # the production variant it pins (X-Target-Variant)

    def _chat(self) -> None:
        settings = self.server.settings
        try:
            data = load_request(self._read_body(settings.max_body_bytes))
            self._target = self._routed = route = self.server.routes.pick(data.get("model"))
            self._variant = accept_route(route, ModelKind.CHAT, self.headers.get(VARIANT_HEADER))
            fmt = route.request_format
            request = build_chat_request(
                data,
                fmt,
                tools=settings.tools_for(route),
                max_total_tokens=route.max_total_tokens,
            )
        except RequestError as err:
            self._send_error(
                err.status, err.message, error_type=err.error_type, param=err.param, code=err.code
            )
            return
        heartbeat = self._begin_answer(route, stream=request.stream)
        try:
            self._invoke_and_answer(request, heartbeat)
        finally:
            if heartbeat is not None:
                heartbeat.stop()  # a no-op unless something unexpected raised

    def _begin_answer(self, route: Route, *, stream: bool) -> Heartbeat | None:
        """Records the request's route and framing, and starts the heartbeat of a stream when
        the runtime has one: before the call, as the wait for SageMaker's answer is silence
        too."""
        self._record["model"] = route.model
        if self._variant is not None:
            self._record["target_variant"] = self._variant
        self._record["stream"] = stream
        seconds = self.server.settings.heartbeat_seconds
        return self._start_heartbeat(seconds) if stream and seconds > 0 else None

    def _invoke_and_answer(
        self, request: ChatRequest, heartbeat: Heartbeat | None, answer: Answer | None = None
    ) -> None:
        """Invoke the route with ``request``'s engine body and answer its events: as a chat
        completion unless ``answer`` says otherwise."""
        if answer is None:
            answer = Answer(
                stream=lambda events, beat: self._stream(events, request, beat),
                complete=lambda events: self._complete(events, request),
                end_stream_with_error=self._end_stream_with_error,
            )
        route = self._target
        self._record["overhead_ms"] = self._elapsed_ms()
        try:
            upstream = invoke(
                self.server.client, route, request.engine_body, target_variant=self._variant
            )
        except Exception as exc:
            failure = describe_failure(exc)
            self._record["upstream_error"] = failure.upstream_code or type(exc).__name__
            if heartbeat is not None and self._stop_heartbeat(heartbeat):
                answer.end_stream_with_error(failure)
            else:
                self._send_error(
                    failure.status,
                    failure.message,
                    error_type=failure.error_type,
                    code=failure.code,
                )
            return
        parts = iter_payload_parts(upstream)
        # parse_stream closes an iterator it is given; the callable-iterator form has no
        # close(), so the connection's fate stays here (see upstream.release).
        events = parse_stream(iter(parts.__next__, None), route.stream_format)
        completed = False
        try:
            if request.stream:
                completed = answer.stream(terminated(events), heartbeat)
            else:
                completed = answer.complete(terminated(events))
        finally:
            events.close()
            release(parts, completed=completed)


def terminated(events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """The events, guaranteed to end with one terminal event even if the source raises."""
    try:
        for event in events:
            yield event
            if type(event) is not TokenEvent and type(event) is not ToolCallEvent:
                return
    except Exception as exc:  # the upstream read failed in a way the parser did not map
        yield ErrorEvent(message=f"reading the model stream failed: {exc}", code=type(exc).__name__)
        return
    yield ErrorEvent(message="the model stream ended without a final event", code="incomplete")
