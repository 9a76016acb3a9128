"""A generation request from its engine body to its answer: invoke the route's endpoint, parse
the stream it returns, and answer the events in the request's API's shapes.

Stdlib + boto3 only: this file ships in the Lambda asset. Chat (``chat/handler.py``) and
Responses (``responses/handler.py``) each read, route and check their request
(``read_chat_request``), build the engine's body, and give ``generate`` a ``Generation``:
how to write their stream (``StreamWriter``) and how to build their whole answer
(``Answer``, ``whole_answer.py``). Everything else is the same for both:

- a stream's status line goes out with its first event (one write), so an engine that fails
  before its first token gets a real HTTP error status; unless a heartbeat
  (``HEARTBEAT_SECONDS``) sent it earlier, and then the failure ends the stream in the API's
  own events;
- ``stream: false`` answers once the engine is done, checking every ``PEER_CHECK_SECONDS``
  meanwhile that the client is still there;
- the log line records ``model``, ``stream``, ``target_variant``, ``overhead_ms``,
  ``ttft_ms`` (to the first token, reasoning included), ``tokens`` (the answer's tokens,
  reasoning pieces and tool-call pieces relayed), ``tool_calls``,
  ``finish_reason``, the engine's token counts, and ``upstream_error`` or ``stream_error``;
- a client that hangs up closes the upstream stream; a stream that completed gives its HTTP
  connection back to boto3's pool (``upstream.release``);
- an inference component scaled to zero holds the request up to ``CAPACITY_WAIT_SECONDS``
  while it wakes (``capacity_wait.py``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..formats import ModelKind
from . import capacity_wait
from .chat.target import ChatTarget
from .http.event_stream import EventStream
from .http.exchange import ClientGone, Exchange
from .parsing.events import (
    DoneEvent,
    ErrorEvent,
    ReasoningEvent,
    StreamEvent,
    TokenEvent,
    ToolCallEvent,
)
from .parsing.parser import parse_batches, parse_stream
from .parsing.sagemaker_stream import iter_payload_parts
from .routing import Route
from .upstream import (
    UpstreamFailure,
    describe_failure,
    describe_stream_error,
    invoke,
    release,
    send_failure,
)
from .whole_answer import Answer

PEER_CHECK_SECONDS = 0.25  # how often a stream:false request checks that its client is there


class StreamWriter(Protocol):
    """An API's events for one streamed answer, as bytes to send."""

    @property
    def tool_calls(self) -> int:
        """How many tool calls were streamed."""
        ...

    def start(self) -> bytes:
        """What opens the stream, sent with its first event."""
        ...

    def token(self, event: TokenEvent) -> bytes: ...

    def reasoning(self, event: ReasoningEvent) -> bytes: ...

    def tool_call(self, event: ToolCallEvent) -> bytes:
        """A tool-call piece's events; empty while the call waits for its name."""
        ...

    def finish(self, done: DoneEvent) -> bytes:
        """The events that end a stream that completed."""
        ...

    def fail(self, failure: UpstreamFailure) -> bytes:
        """The events that end a stream that failed after it started."""
        ...

    def abort(self, failure: UpstreamFailure) -> bytes:
        """The whole stream of an answer whose head a heartbeat sent, failed before any event."""
        ...


@dataclass(frozen=True, kw_only=True)
class Generation:
    """One checked generation request and how its API answers it.

    :param route: where it goes.
    :param variant: the production variant it pins (``X-Target-Variant``), if any.
    :param engine_body: the body the engine takes.
    :param prefix_aware_id: SageMaker's prefix-aware routing id (``prompt_cache_key``).
    :param stream: whether the client asked for a stream.
    :param writer: makes the stream's writer (``stream: true``).
    :param answer: makes the whole answer's builder (``stream: false``).
    """

    route: Route
    variant: str | None
    engine_body: bytes
    prefix_aware_id: str | None
    stream: bool
    writer: Callable[[], StreamWriter]
    answer: Callable[[], Answer]


Checked = TypeVar("Checked")


def read_chat_request(
    exchange: Exchange, check: Callable[[dict[str, Any], ChatTarget], Checked]
) -> tuple[Checked, Route, str | None] | None:
    """Read a request for a chat model, route it and check it for its route's engine
    (``ChatTarget``): the checked request, the route and the variant it pins; None once a 4xx
    has answered it (``Exchange.read_routed``)."""
    tools_for = exchange.settings.tools_for
    return exchange.read_routed(
        ModelKind.CHAT,
        lambda data, route: check(data, ChatTarget.of_route(route, tools=tools_for(route))),
    )


def generate(exchange: Exchange, generation: Generation) -> None:
    """Invoke ``generation``'s route and answer its events (see the module docstring)."""
    route, record = generation.route, exchange.record
    record["model"] = route.model
    if generation.variant is not None:
        record["target_variant"] = generation.variant
    record["stream"] = generation.stream
    stream = EventStream(exchange) if generation.stream else None
    seconds = exchange.settings.heartbeat_seconds
    if stream is not None and seconds > 0:  # the wait for SageMaker's answer is silence too
        stream.start_heartbeat(seconds)
    try:
        _invoke_and_answer(exchange, generation, stream)
    finally:
        if stream is not None:
            stream.close()  # a no-op unless something unexpected raised


def _invoke_and_answer(
    exchange: Exchange, generation: Generation, stream: EventStream | None
) -> None:
    route = generation.route
    exchange.record["overhead_ms"] = exchange.elapsed_ms()
    settings = exchange.settings

    def held() -> None:  # the first refusal for want of capacity: keep a stream alive
        if stream is not None:
            stream.hold(settings.heartbeat_seconds or capacity_wait.HOLD_BEAT_S)

    try:
        upstream = capacity_wait.call_when_capacity(
            lambda: invoke(
                exchange.server.client,
                route,
                generation.engine_body,
                target_variant=generation.variant,
                prefix_aware_id=generation.prefix_aware_id,
            ),
            wait_s=settings.capacity_wait_seconds,
            record=exchange.record,
            held=held,
            gone=exchange.client_left,
        )
    except ClientGone:
        raise
    except Exception as exc:
        failure = describe_failure(exc)
        exchange.record["upstream_error"] = failure.upstream_code or type(exc).__name__
        if stream is not None and stream.stop_heartbeat():
            _end_with(exchange, stream, generation.writer().abort(failure), failure, tokens=0)
        else:
            send_failure(exchange, failure)
        return
    parts = iter_payload_parts(upstream)
    # The parser closes an iterator it is given; the callable-iterator form has no close(),
    # so the connection's fate stays here (see upstream.release).
    source = iter(parts.__next__, None)
    completed = False
    if stream is not None:  # the events of each part in one list, sent in one write
        batches = parse_batches(source, route.stream_format)
        try:
            completed = _stream(exchange, stream, generation.writer(), terminated_batches(batches))
        finally:
            batches.close()
            release(parts, completed=completed)
        return
    events = parse_stream(source, route.stream_format)
    try:
        completed = _complete(exchange, generation.answer(), terminated(events))
    finally:
        events.close()
        release(parts, completed=completed)


def _stream(
    exchange: Exchange,
    stream: EventStream,
    writer: StreamWriter,
    batches: Iterator[list[StreamEvent]],
) -> bool:
    """Relay the events as the writer writes them, the events of one part (one list of
    ``batches``) in one write, each event still a chunk of its own: the bytes of one write
    per event, one send fewer where a part holds more than one (TGI's last token and its
    end); True when the stream ended normally."""
    try:
        first = next(batches)
    finally:
        head_sent = stream.stop_heartbeat()
    if type(first[0]) is ErrorEvent:
        failure = describe_stream_error(first[0])  # type: ignore[arg-type]
        if head_sent:  # too late for a status: end the stream with the error
            _end_with(exchange, stream, writer.abort(failure), failure, tokens=0)
        else:  # nothing sent yet: answer with a real HTTP status
            exchange.record["stream_error"] = failure.code
            send_failure(exchange, failure)
        return False
    record = exchange.record
    pending = writer.start()
    tokens = 0
    for batch in itertools.chain((first,), batches):
        writes: list[bytes] = []
        for event in batch:
            kind = type(event)
            if kind is TokenEvent or kind is ToolCallEvent or kind is ReasoningEvent:
                if kind is TokenEvent:
                    data = writer.token(event)  # type: ignore[arg-type]
                elif kind is ToolCallEvent:
                    data = writer.tool_call(event)  # type: ignore[arg-type]
                else:
                    data = writer.reasoning(event)  # type: ignore[arg-type]
                tokens += 1
                if tokens == 1:
                    record["ttft_ms"] = exchange.elapsed_ms()
                if data:  # a tool call's pieces may wait for its name: no empty chunk
                    writes.append(pending + data)
                    pending = b""
                continue
            record["tokens"] = tokens
            if writer.tool_calls:
                record["tool_calls"] = writer.tool_calls
            if type(event) is DoneEvent:
                _record_done(exchange, event)  # type: ignore[arg-type]
                stream.end(*writes, pending + writer.finish(event))  # type: ignore[arg-type]
                return True
            failure = describe_stream_error(event)  # type: ignore[arg-type]
            record["stream_error"] = failure.code
            stream.end(*writes, pending + writer.fail(failure))
            return False
        if writes:
            stream.send(*writes)
    return False


def _end_with(
    exchange: Exchange, stream: EventStream, data: bytes, failure: UpstreamFailure, *, tokens: int
) -> None:
    exchange.record["stream_error"] = failure.code
    exchange.record["tokens"] = tokens
    stream.end(data)


def _complete(exchange: Exchange, answer: Answer, events: Iterator[StreamEvent]) -> bool:
    """Answer one JSON object from every event; True when the stream ended normally."""
    record = exchange.record
    next_check = time.monotonic() + PEER_CHECK_SECONDS
    # whole_answer.answered(), inline: this loop also times the first token and checks the client
    for tokens, event in enumerate(events):  # tokens: the events before this one
        kind = type(event)
        if kind is TokenEvent:
            answer.add_text(event)  # type: ignore[arg-type]
        elif kind is ToolCallEvent:
            answer.add_call(event)  # type: ignore[arg-type]
        elif kind is ReasoningEvent:
            answer.add_reasoning(event)  # type: ignore[arg-type]
        else:
            record["tokens"] = tokens
            if answer.tool_calls:
                record["tool_calls"] = answer.tool_calls
            if kind is DoneEvent:
                _record_done(exchange, event)  # type: ignore[arg-type]
                exchange.send_json(200, answer.build(event))  # type: ignore[arg-type]
                return True
            failure = describe_stream_error(event)  # type: ignore[arg-type]
            record["stream_error"] = failure.code
            send_failure(exchange, failure)
            return False
        if tokens == 0:
            record["ttft_ms"] = exchange.elapsed_ms()
        if time.monotonic() >= next_check:
            if exchange.client_left():
                raise ClientGone
            next_check = time.monotonic() + PEER_CHECK_SECONDS
    return False


def _record_done(exchange: Exchange, done: DoneEvent) -> None:
    record = exchange.record
    record["finish_reason"] = done.finish_reason
    if done.prompt_tokens is not None:
        record["prompt_tokens"] = done.prompt_tokens
    if done.completion_tokens is not None:
        record["completion_tokens"] = done.completion_tokens


def terminated(events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """The events, guaranteed to end with one terminal event even if the source raises."""
    try:
        for event in events:
            yield event
            kind = type(event)
            if kind is not TokenEvent and kind is not ToolCallEvent and kind is not ReasoningEvent:
                return
    except Exception as exc:  # the upstream read failed in a way the parser did not map
        yield _read_failed(exc)
        return
    yield _incomplete()


def terminated_batches(batches: Iterator[list[StreamEvent]]) -> Iterator[list[StreamEvent]]:
    """``terminated`` for the lists of ``parse_batches``: the last list ends with the one
    terminal event, even if the source raises."""
    try:
        for batch in batches:
            yield batch
            kind = type(batch[-1])
            if kind is not TokenEvent and kind is not ToolCallEvent and kind is not ReasoningEvent:
                return
    except Exception as exc:  # the upstream read failed in a way the parser did not map
        yield [_read_failed(exc)]
        return
    yield [_incomplete()]


def _read_failed(exc: Exception) -> ErrorEvent:
    return ErrorEvent(message=f"reading the model stream failed: {exc}", code=type(exc).__name__)


def _incomplete() -> ErrorEvent:
    return ErrorEvent(message="the model stream ended without a final event", code="incomplete")
