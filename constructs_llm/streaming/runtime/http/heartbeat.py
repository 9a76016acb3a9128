"""SSE keep-alive comments while a stream waits for its first token (``HEARTBEAT_SECONDS``).

Stdlib only: this file ships in the Lambda asset.

The handler thread keeps reading the upstream stream exactly as it does without a heartbeat;
a ``Heartbeat`` runs on its own thread and only writes to the client, and only until the
handler calls ``stop()`` (at the first event). So the upstream body never changes threads, the
per-token path is untouched, and the one cost is a thread per ``stream: true`` request while
the feature is on. A lock makes ``stop()`` a hand-over: once it returns, the heartbeat will
never write again and the handler owns the socket.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Heartbeat:
    """Writes ``head + beat`` after ``interval`` seconds, then ``beat`` every ``interval``
    seconds, until ``stop()``. Starts at once; a failed write (client gone) ends it."""

    __slots__ = ("_beat", "_head", "_interval", "_lock", "_stopped", "_write", "failed", "sent")

    def __init__(
        self, write: Callable[[bytes], object], *, head: bytes, beat: bytes, interval: float
    ) -> None:
        self._write = write
        self._head = head
        self._beat = beat
        self._interval = interval
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self.sent = 0  # beats written (the first one carried the head)
        self.failed = False  # a write raised OSError: the client is gone or stuck
        threading.Thread(target=self._run, name="sse-heartbeat", daemon=True).start()

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            with self._lock:
                if self._stopped.is_set():  # stop() won the race for the lock
                    return
                data = self._beat if self.sent else self._head + self._beat
                try:
                    self._write(data)
                except OSError:
                    self.failed = True
                    return
                self.sent += 1

    def stop(self) -> tuple[int, bool]:
        """Stop beating; returns ``(sent, failed)``. Nothing is written after this returns."""
        with self._lock:  # waits for a write in progress
            self._stopped.set()
        return self.sent, self.failed
