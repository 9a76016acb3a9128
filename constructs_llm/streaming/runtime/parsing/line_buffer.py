"""Incremental, memory-bounded splitting of a byte stream into text lines.

Stdlib only: this file ships in the Lambda asset.

SageMaker ``PayloadPart`` boundaries are arbitrary, so a line (and a UTF-8 character) can
be split across parts, and one part can hold many lines. ``LineBuffer`` keeps the bytes of
the unfinished line and hands back every completed line as ``str``.

UTF-8 is decoded a whole line at a time. The byte ``0x0A`` never occurs inside a multibyte
UTF-8 sequence, so a completed line always holds whole characters: this gives the result
of an incremental decoder (a character split across parts is never U+FFFD) without a
decoder call per part. Bytes that are not valid UTF-8 at all become U+FFFD.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

DEFAULT_MAX_LINE_BYTES = 1024 * 1024
"""Longest line accepted by default (1 MiB); a longer line raises ``LineTooLongError``."""

_COMPACT_BYTES = 8 * 1024
"""Join the small parts of an unfinished line every this many bytes. Each held part costs a
list slot, often its own object, and ~80 bytes of buffer bookkeeping while ``bytes.join``
runs: a 512 KiB line arriving byte by byte peaked at ~90x its size without this, ~3x with."""


class LineParserError(Exception):
    """Base of the errors raised while splitting a stream into lines."""


class LineTooLongError(LineParserError):
    """A line grew past the buffer's cap; the buffer dropped it instead of holding it.

    ``lines`` holds the complete lines that came before the long one in the same ``feed``
    call, so a caller loses nothing that was well formed.
    """

    def __init__(self, limit: int, lines: list[str] | None = None) -> None:
        super().__init__(f"stream line longer than {limit} bytes (the limit); line dropped")
        self.limit = limit
        self.lines: list[str] = lines if lines is not None else []


class LineBuffer:
    """Split bytes fed in arbitrary parts into lines ending in ``\\n``; a ``\\r`` before the
    ``\\n`` is dropped too, so CRLF streams give the same lines.

    Memory stays bounded: the unfinished line never holds more than ``max_line_bytes`` (its
    ``\\r`` included) plus the last part fed, and its small parts are joined as it grows.
    When a line is longer, ``feed`` raises ``LineTooLongError``; the lines completed before
    it come with the error, the rest of that call's data is dropped, and input is then
    skipped up to the next newline, so the buffer can be fed on.
    """

    __slots__ = ("_discarding", "_joined", "_max", "_parts", "_size", "_soft")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be at least 1, got {max_line_bytes}")
        self._max = max_line_bytes
        self._parts: list[bytes] = []  # the unfinished line, in the parts it arrived in
        self._size = 0  # total bytes in _parts
        self._joined = 0  # _parts[:_joined] are already joined (large) pieces
        self._soft = min(max_line_bytes, _COMPACT_BYTES)  # size at which to compact or fail
        self._discarding = False  # inside a line already reported as too long

    @property
    def max_line_bytes(self) -> int:
        return self._max

    @property
    def pending_bytes(self) -> int:
        """Bytes held for the unfinished line."""
        return self._size

    def feed(self, data: bytes) -> list[str]:
        """Add ``data`` and return the lines it completed, without their line endings."""
        parts = self._parts
        if 10 not in data:  # no b"\n"; an int test is ~10x faster than a bytes one
            # Fast path for small parts: keep the bytes, join them once the line ends.
            parts.append(data)
            self._size += len(data)
            if self._size > self._soft:
                self._grow()
            return []
        if self._discarding:
            # The rest of a line already reported as too long: drop it, then go on.
            self._discarding = False
            parts.clear()
            data = data[data.find(b"\n") + 1 :]
            self._restart(0)
            return self.feed(data) if data else []
        if parts:
            parts.append(data)
            data = b"".join(parts)
            parts.clear()
        end = data.rfind(b"\n")
        size = len(data)
        if size > self._max:
            self._check_lengths(data, end)
        text = data[:end].decode("utf-8", "replace")
        lines = text.split("\n")
        if "\r" in text:
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        if end + 1 < size:
            parts.append(data[end + 1 :])
        self._restart(size - end - 1)
        return lines

    def iter_lines(self, chunks: Iterable[bytes]) -> Iterator[list[str]]:
        """Pull-style ``feed``: for each part of ``chunks`` that completes lines, yield them.

        The same lines as calling ``feed`` per part, faster: parts without a newline (most
        of them, when parts are a few bytes) cost no call at all, and the common newline case
        is inlined. Call ``flush()`` after the last part. A ``LineTooLongError`` ends the
        iteration.
        """
        parts, limit = self._parts, self._max
        hold, feed = parts.append, self.feed
        size, soft = self._size, self._soft
        for data in chunks:
            if 10 not in data:  # no b"\n"; an int test is ~10x faster than a bytes one
                hold(data)
                size += len(data)
                if size <= soft:
                    continue
                self._size = size
                self._grow()  # compacts, or raises unless this line was reported already
                size, soft = self._size, self._soft
                continue
            if self._discarding or size + len(data) > limit:
                self._size = size  # rare: let feed() drop or measure lines one by one
                lines = feed(data)
                size, soft = self._size, self._soft
                if lines:
                    yield lines
                continue
            # feed(), inlined: everything held fits under the cap, so every line does.
            if parts:
                hold(data)
                data = b"".join(parts)
                parts.clear()
            end = data.rfind(b"\n")
            text = data[:end].decode("utf-8", "replace")
            lines = text.split("\n")
            if "\r" in text:
                lines = [line[:-1] if line.endswith("\r") else line for line in lines]
            size = len(data) - end - 1
            if size:
                hold(data[end + 1 :])
            # self._restart(size), inlined
            soft = size + _COMPACT_BYTES
            if soft > limit:
                soft = limit
            self._size, self._joined, self._soft = size, len(parts), soft
            yield lines
        self._size = size

    def flush(self) -> str | None:
        """Return the unfinished last line (a stream need not end in a newline), or None."""
        parts, size, discarding = self._parts, self._size, self._discarding
        self._parts, self._discarding = [], False
        self._restart(0)
        if not size or discarding:
            return None
        line = b"".join(parts).decode("utf-8", "replace")
        return line[:-1] if line.endswith("\r") else line

    def _check_lengths(self, data: bytes, end: int) -> None:
        """Slow path, only for data longer than the cap: raise at the first line over it."""
        start = 0
        while start <= len(data):
            newline = data.find(b"\n", start)
            stop = len(data) if newline < 0 else newline
            if stop - start > self._max:
                before = _decode_lines(data[: start - 1]) if start else []
                self._restart(0)
                # Data ending mid-line leaves the rest of that line to skip.
                self._discarding = end + 1 < len(data)
                raise LineTooLongError(self._max, before)
            if newline < 0:
                return
            start = newline + 1

    def _restart(self, size: int) -> None:
        """A line just ended: ``_parts`` holds at most the start of the next one."""
        self._size = size
        self._joined = len(self._parts)
        self._soft = min(self._max, size + _COMPACT_BYTES)

    def _grow(self) -> None:
        """The unfinished line passed its soft limit: fail if it is over the cap, else join
        the parts held since the last compaction."""
        if self._size > self._max:
            self._overflow([])
            return
        parts, joined = self._parts, self._joined
        if len(parts) - joined > 1:
            parts[joined:] = [b"".join(parts[joined:])]
        self._joined = len(parts)
        self._soft = min(self._max, self._size + _COMPACT_BYTES)

    def _overflow(self, lines: list[str]) -> None:
        self._parts.clear()
        self._restart(0)
        if self._discarding:
            return  # the same long line keeps growing: keep dropping it, raise only once
        self._discarding = True
        raise LineTooLongError(self._max, lines)


def _decode_lines(complete: bytes) -> list[str]:
    """Decode newline-separated lines (no trailing newline) and drop each line's CR."""
    text = complete.decode("utf-8", "replace")
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines
