"""At most ``MAX_CONNECTIONS`` connections served at once. Stdlib only: ships in the Lambda.

The server starts one thread per connection, and a connection holds its thread until it
closes, so without a bound a crowd of slow or idle clients holds any number of threads. A
connection past the bound is answered by the accepting thread itself, which never blocks: a
503 (``Retry-After: 1``, ``Connection: close``) written without waiting, the sending side shut,
then the socket set aside for up to ``_LINGER_SECONDS`` while whatever the client still sends
is read and dropped (``drain``, from the server loop). Closing a socket with unread input
resets the connection, and a client still sending its request would see the reset instead of
the 503; so the socket is closed once the client closes its side, or when the time is up.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque

from .errors import error_object

_LINGER_SECONDS = 2.0
"""How long a refused connection's input is read and dropped before it is closed."""
_MAX_LINGERING = 256  # refused sockets set aside at once; past it the oldest is closed
_PIECE = 64 * 1024
_READS_PER_DRAIN = 16  # 1 MB per socket and server-loop turn, so a flood cannot hold the loop


class ConnectionSlots:
    """``limit`` slots: a connection takes one (``take``) or is refused (``refuse``), and gives
    it back when its thread ends (``give_back``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._free = threading.BoundedSemaphore(limit)
        self._lingering: deque[tuple[float, socket.socket]] = deque()
        body = error_object(
            f"the server is serving its limit of {limit} connections (MAX_CONNECTIONS); "
            "retry shortly",
            error_type="server_error",
            code="too_many_connections",
        )
        self._body = json.dumps(body, separators=(",", ":")).encode()

    def take(self) -> bool:
        """A slot for a new connection, if one is free (never waits)."""
        return self._free.acquire(blocking=False)

    def give_back(self) -> None:
        self._free.release()

    def refuse(self, sock: socket.socket, request_id: str) -> None:
        """Answer a connection past the limit with a 503 (its ``x-request-id`` given) and set
        it aside to be closed."""
        refusal = (
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nRetry-After: 1\r\nx-request-id: %s\r\n"
            b"Connection: close\r\n\r\n%s" % (len(self._body), request_id.encode(), self._body)
        )
        try:
            sock.setblocking(False)
            sock.send(refusal)  # a few hundred bytes into an empty send buffer
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            sock.close()
            return
        if len(self._lingering) >= _MAX_LINGERING:
            self._lingering.popleft()[1].close()
        self._lingering.append((time.monotonic() + _LINGER_SECONDS, sock))

    def drain(self) -> None:
        """Read and drop what refused clients send; close each once it closes, or times out."""
        now = time.monotonic()
        kept: deque[tuple[float, socket.socket]] = deque()
        for expiry, sock in self._lingering:
            if now >= expiry or _input_ended(sock):
                sock.close()
            else:
                kept.append((expiry, sock))
        self._lingering = kept

    def close(self) -> None:
        """Close every refused connection still set aside (the server is closing)."""
        while self._lingering:
            self._lingering.popleft()[1].close()


def _input_ended(sock: socket.socket) -> bool:
    """Reads what has arrived (without waiting); True once the client closed or reset."""
    try:
        for _ in range(_READS_PER_DRAIN):
            if not sock.recv(_PIECE):
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    return False
