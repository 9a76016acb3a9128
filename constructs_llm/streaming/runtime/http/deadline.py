"""A deadline on receiving a whole request. Stdlib only: this file ships in the Lambda asset.

``CLIENT_TIMEOUT`` bounds each read from the client, so a client that sends a header line
every few seconds ("slowloris") is never timed out, and holds a connection and its thread for
as long as it likes. ``DeadlineReader`` is the raw reader under a connection's ``rfile``: once
armed (at a request's first byte) every read waits at most until the deadline, and a read at or
past it raises ``DeadlinePassed``, which the exchange answers with a 408 and a close. Disarmed
(between requests, and once the body is read), it reads with ``CLIENT_TIMEOUT`` alone.
"""

from __future__ import annotations

import socket
import time
from typing import Any


class DeadlinePassed(Exception):
    """The request was not received within its deadline. Not an ``OSError``: a client that is
    gone and one that is too slow get different answers."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the request did not arrive within {seconds:g} s (REQUEST_DEADLINE): its request "
            "line, headers and body must all arrive within that time of its first byte"
        )
        self.seconds = seconds


class DeadlineReader(socket.SocketIO):
    """The connection's raw reader (wrap it in ``io.BufferedReader``), with an optional deadline.

    :param sock: the connection, whose timeout is ``idle_timeout`` outside of reads
    :param idle_timeout: the timeout of every read and write (``CLIENT_TIMEOUT``)
    """

    def __init__(self, sock: socket.socket, idle_timeout: float) -> None:
        super().__init__(sock, "rb")
        self._socket = sock
        self._idle_timeout = idle_timeout
        self._deadline: float | None = None
        self._seconds = 0.0

    def arm(self, seconds: float) -> None:
        """From now on, reads must be done within ``seconds``."""
        self._seconds = seconds
        self._deadline = time.monotonic() + seconds

    def disarm(self) -> None:
        self._deadline = None

    def readinto(self, buffer: Any) -> int | None:
        if self._deadline is None:
            return super().readinto(buffer)
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlinePassed(self._seconds)
        capped = remaining < self._idle_timeout
        if capped:
            self._socket.settimeout(remaining)
        try:
            return super().readinto(buffer)
        except TimeoutError:
            if capped:
                raise DeadlinePassed(self._seconds) from None
            raise
        finally:
            if capped:  # writes, and reads once disarmed, keep CLIENT_TIMEOUT
                self._socket.settimeout(self._idle_timeout)
