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
    ``\\r`` included) plus the last part fed. When a line is longer, ``feed`` raises
    ``LineTooLongError``; the lines completed before it come with the error, the rest of that
    call's data is dropped, and input is then skipped up to the next newline, so the buffer
    can be fed on.
    """

    __slots__ = ("_discarding", "_max", "_parts", "_size")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be at least 1, got {max_line_bytes}")
        self._max = max_line_bytes
        self._parts: list[bytes] = []  # the unfinished line, in the parts it arrived in
        self._size = 0  # total bytes in _parts
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
            if self._size > self._max:
                self._overflow([])
            return []
        if self._discarding:
            # The rest of a line already reported as too long: drop it, then go on.
            self._discarding = False
            parts.clear()
            data = data[data.find(b"\n") + 1 :]
            self._size = 0
            return self.feed(data) if data else []
        if parts:
            parts.append(data)
            data = b"".join(parts)
            parts.clear()
        end = data.rfind(b"\n")
        size = len(data)
        if size > self._max:
            self._size = 0
            self._check_lengths(data, end)
        text = data[:end].decode("utf-8", "replace")
        lines = text.split("\n")
        if "\r" in text:
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        if end + 1 < size:
            parts.append(data[end + 1 :])
            self._size = size - end - 1
        else:
            self._size = 0
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
        size = self._size
        for data in chunks:
            if 10 not in data:  # no b"\n"; an int test is ~10x faster than a bytes one
                hold(data)
                size += len(data)
                if size <= limit:
                    continue
                self._size = size
                self._overflow([])
            if self._discarding or size + len(data) > limit:
                self._size = size  # rare: let feed() drop or measure lines one by one
                lines = feed(data)
                size = self._size
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
            self._size = size
            yield lines
        self._size = size

    def flush(self) -> str | None:
        """Return the unfinished last line (a stream need not end in a newline), or None."""
        parts, size, discarding = self._parts, self._size, self._discarding
        self._parts, self._size, self._discarding = [], 0, False
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
                self._size = 0
                # Data ending mid-line leaves the rest of that line to skip.
                self._discarding = end + 1 < len(data)
                raise LineTooLongError(self._max, before)
            if newline < 0:
                return
            start = newline + 1

    def _overflow(self, lines: list[str]) -> None:
        self._parts.clear()
        self._size = 0
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
