"""A server-sent events answer: its head (status line and headers) goes out with its first
events, each write is sent at once, and the last one ends the body.

Stdlib only: this file ships in the Lambda asset. The body is chunked for HTTP/1.1 clients and
ends with the connection for HTTP/1.0 ones. While the first event is awaited a ``Heartbeat``
(``HEARTBEAT_SECONDS``) may send the head early, with ``: keep-alive`` comments; once it has,
no error status can be sent any more, and a failure must end the stream in its own events.
"""

from __future__ import annotations

from .exchange import ClientGone, Exchange, chunk
from .heartbeat import Heartbeat

_KEEP_ALIVE = b": keep-alive\n\n"  # an SSE comment: clients skip it, proxies see bytes flow
_HEADERS = [
    ("Content-Type", "text/event-stream; charset=utf-8"),
    ("Cache-Control", "no-cache"),
    ("X-Accel-Buffering", "no"),
]


class EventStream:
    """The SSE answer of ``exchange``."""

    def __init__(self, exchange: Exchange) -> None:
        self._exchange = exchange
        self._chunked = exchange.chunked
        self._head_sent = False
        self._heartbeat: Heartbeat | None = None
        if not self._chunked:
            exchange.close_after()

    def _head(self) -> bytes:
        headers = list(_HEADERS)
        if self._chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        return self._exchange.response_head("200 OK", headers)

    def _frame(self, data: bytes) -> bytes:
        return chunk(data) if self._chunked else data

    def start_heartbeat(self, interval: float) -> None:
        """Keep-alive comments (after the head) every ``interval`` until ``stop_heartbeat``."""
        self._heartbeat = Heartbeat(
            self._exchange.raw_write,
            head=self._head(),
            beat=self._frame(_KEEP_ALIVE),
            interval=interval,
        )

    def hold(self, interval: float) -> None:
        """Keep-alive comments every ``interval`` while the request is held
        (``capacity_wait.py``), unless a heartbeat already sends them."""
        if self._heartbeat is None and not self._head_sent:
            self.start_heartbeat(interval)

    def stop_heartbeat(self) -> bool:
        """Stop the heartbeat, if any; True when the head is out (no error status any more).
        ``ClientGone`` if a beat found the client gone."""
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is None:
            return self._head_sent
        sent, failed = heartbeat.stop()
        exchange = self._exchange
        if sent or failed:
            exchange.headers_sent = True
        if sent:
            self._head_sent = True
            exchange.record["status"] = 200
            exchange.record["heartbeats"] = sent
        if failed:  # noticed only now: the upstream call is closed on the way out
            raise ClientGone
        return self._head_sent

    def close(self) -> None:
        """Stop the heartbeat, if any, without a word (the answer failed in some other way)."""
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is not None:
            heartbeat.stop()

    def send(self, *writes: bytes) -> None:
        """Send events, after the head if it is not out yet: each of ``writes`` in a chunk of
        its own, as if sent alone, and all of them in one write."""
        if self._head_sent and len(writes) == 1:  # a token's event: one call fewer per token
            self._exchange.write(chunk(writes[0]) if self._chunked else writes[0])
            return
        self._exchange.write(self._head_once() + self._frames(writes))

    def end(self, *writes: bytes) -> None:
        """Send the last events (as ``send``: a chunk each, one write) and end the body; the
        log line is written first."""
        head = self._head_once()
        self._exchange.log()  # before the last byte: Lambda may freeze the process right after it
        last = b"0\r\n\r\n" if self._chunked else b""
        self._exchange.write(head + self._frames(writes) + last)

    def _head_once(self) -> bytes:
        """The head, recorded as a 200, if it is not out yet; else nothing."""
        if self._head_sent:
            return b""
        head, self._head_sent = self._head(), True
        self._exchange.record["status"] = 200
        return head

    def _frames(self, writes: tuple[bytes, ...]) -> bytes:
        if not self._chunked:
            return b"".join(writes)
        if len(writes) == 1:
            return chunk(writes[0])
        return b"".join([chunk(data) for data in writes])
