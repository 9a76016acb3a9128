"""From boto3's ``invoke_endpoint_with_response_stream`` body to parser input and events.

The body is a botocore ``EventStream``: iterating it gives ``{"PayloadPart": {"Bytes": b}}``
dicts and raises ``botocore.exceptions.EventStreamError`` (a ``ClientError``, code
``ModelStreamError`` or ``InternalStreamFailure``) when SageMaker reports an error inside the
stream. Reads can also fail mid-stream (read timeout, dropped connection).

``iter_payload_parts`` turns all of these into plain bytes plus one ``UpstreamStreamError``,
which ``parse_stream`` reports as the terminal ``ErrorEvent``; ``stream_events`` composes the
two. botocore is imported only when a stream is read, so this module imports with the stdlib
alone.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Mapping
from typing import Any

from ...formats import StreamFormat
from .events import StreamEvent
from .parser import UpstreamStreamError, parse_stream
from .payload_frames import payload_frames, rest_received

_ERROR_MEMBERS = ("ModelStreamError", "InternalStreamFailure")


class PayloadParts(Iterator[bytes]):
    """Iterator over the ``PayloadPart`` bytes of a SageMaker response stream.

    Raises ``UpstreamStreamError(message, code)`` for an in-stream error: code is the
    SageMaker exception name (``ModelStreamError``, ``InternalStreamFailure``, or a generic
    frame's ``:error-code``), or the exception class name for a failed read
    (``ReadTimeoutError``, ``ProtocolError`` ...). Events of other types are skipped, as
    botocore skips unknown ones.

    ``close()`` closes the body (and so the HTTP connection) unless the stream was read to its
    end; it also runs after an error. Closing works even before the first ``next()``.

    botocore's ``EventStream`` is read through ``payload_frames``: its ``PayloadPart`` frames
    as bytes, without botocore's per-frame decoding, and the same events and errors otherwise.
    """

    __slots__ = ("_body", "_done", "_errors", "_events")

    def __init__(self, body: Iterable[Mapping[str, Any]]) -> None:
        self._body = body
        frames = payload_frames(body)
        self._events: Iterator[bytes | Mapping[str, Any]] = iter(body) if frames is None else frames
        self._errors = _read_errors()
        self._done = False

    def __iter__(self) -> PayloadParts:
        return self

    def __next__(self) -> bytes:
        events = self._events
        while True:
            try:
                event = next(events)
            except StopIteration:
                self._done = True
                raise
            except self._errors as exc:
                self.close()
                raise _upstream_error(exc) from exc
            if isinstance(event, bytes):  # a PayloadPart frame, read by payload_frames
                if event:
                    return event
                continue
            part = event.get("PayloadPart")
            if part is not None:
                data = part.get("Bytes")
                if data:
                    return bytes(data)
                continue
            for member in _ERROR_MEMBERS:
                error = event.get(member)
                if error is not None:
                    # An error modelled as an event dict (not raised by this botocore).
                    self.close()
                    raise UpstreamStreamError(_member_message(error), member)

    def rest_received(self) -> bool:
        """Whether reading the rest of the stream cannot wait on the network: its HTTP body's
        end is already received (``payload_frames.rest_received``)."""
        return not self._done and rest_received(self._body)

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        close = getattr(self._body, "close", None)
        if close is not None:
            close()


def iter_payload_parts(body: Iterable[Mapping[str, Any]]) -> PayloadParts:
    """The ``PayloadPart`` bytes of ``response["Body"]``; see ``PayloadParts`` for errors."""
    return PayloadParts(body)


def stream_events(
    body: Iterable[Mapping[str, Any]], fmt: StreamFormat | str = StreamFormat.AUTO
) -> ClosableEvents:
    """``parse_stream`` over a SageMaker response body: tokens, then one terminal event.

    In-stream SageMaker errors and failed reads become the terminal ``ErrorEvent``. Calling
    ``close()`` on the result (or leaving a ``with`` block) closes the body, so a client that
    goes away stops the upstream stream.
    """
    parts = PayloadParts(body)
    return ClosableEvents(parse_stream(parts, fmt), parts)


class ClosableEvents(Iterator[StreamEvent]):
    """The event generator, plus a ``close()`` that reaches the body even if iteration never
    started (a generator that has not started ignores ``close()``)."""

    __slots__ = ("_events", "_parts")

    def __init__(self, events: Generator[StreamEvent, None, None], parts: PayloadParts) -> None:
        self._events = events
        self._parts = parts

    def __iter__(self) -> ClosableEvents:
        return self

    def __next__(self) -> StreamEvent:
        return next(self._events)

    def close(self) -> None:
        self._events.close()
        self._parts.close()

    def __enter__(self) -> ClosableEvents:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _read_errors() -> tuple[type[BaseException], ...]:
    """Exception types that mean the stream failed; botocore is imported here, lazily."""
    try:
        from botocore.exceptions import (  # type: ignore[import-untyped]
            EventStreamError,
            HTTPClientError,
        )
    except ImportError:  # no botocore: the body is some other iterable of event dicts
        return ()
    errors: tuple[type[BaseException], ...] = (EventStreamError, HTTPClientError)
    try:  # EventStream reads urllib3 directly, so its read errors arrive unwrapped
        from urllib3.exceptions import HTTPError
    except ImportError:
        return errors
    return (*errors, HTTPError)


def _upstream_error(exc: BaseException) -> UpstreamStreamError:
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        error = response.get("Error") or {}
        code = error.get("Code") or type(exc).__name__
        return UpstreamStreamError(error.get("Message") or str(exc), str(code))
    return UpstreamStreamError(str(exc) or type(exc).__name__, type(exc).__name__)


def _member_message(error: Any) -> str:
    if not isinstance(error, Mapping):
        return str(error)
    message = str(error.get("Message") or error.get("message") or "the model stream failed")
    error_code = error.get("ErrorCode")
    return message if error_code is None else f"{message} (ErrorCode {error_code})"
