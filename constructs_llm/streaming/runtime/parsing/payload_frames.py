"""The ``PayloadPart`` frames of a SageMaker response stream, read from its HTTP body.

Stdlib + botocore only: this file ships in the Lambda asset. botocore's ``EventStream`` decodes
every frame of ``application/vnd.amazon.eventstream`` in pure Python (its prelude, each header
field by field, both CRCs) and runs the protocol parser on it to build
``{"PayloadPart": {"Bytes": ...}}``: about a fifth of the runtime's CPU per streamed request.
SageMaker sends every token as the same kind of frame, whose header bytes repeat: so a frame
whose headers are byte for byte those of a ``PayloadPart`` event botocore has already decoded,
and whose two CRCs check, is one more ``PayloadPart`` with the frame's payload, taken here with
two ``crc32`` calls and two slices. Anything else (the first frame, an error or exception frame,
another event type, a bad length or CRC) goes to botocore itself, from that frame on: the same
``EventStreamBuffer`` and ``EventStream._parse_event``, so the same events and the same
exceptions as iterating the body.

The framing (boto/botocore: botocore/eventstream.py, ``EventStreamBuffer``): a 12-byte prelude
(total length, headers length, CRC32 of the first 8 bytes), the headers, the payload, then the
CRC32 of everything before it, all big-endian.
"""

from __future__ import annotations

import struct
from binascii import crc32
from collections.abc import Iterator, Mapping
from typing import Any

_PRELUDE = struct.Struct("!III")
_PRELUDE_LENGTH = 12
_MESSAGE_CRC_LENGTH = 4
# botocore's bounds (``_MAX_HEADERS_LENGTH``, ``_MAX_PAYLOAD_LENGTH``): past them, botocore raises.
_MAX_HEADERS_LENGTH = 128 * 1024
_MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024
_STRING = 7
# The value sizes of the fixed-size header types (botocore ``DecodeUtils``): 0 true, 1 false,
# 2 byte, 3 short, 4 integer, 5 long, 8 timestamp, 9 uuid; 6 (bytes) and 7 (string) carry a
# two-byte length.
_FIXED_SIZES = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


def payload_frames(body: Any) -> Iterator[bytes | Mapping[str, Any]] | None:
    """The stream of ``body`` (botocore's ``EventStream``) as each ``PayloadPart``'s bytes, or,
    for a frame botocore decodes, the event it parses (none for one it skips); raises what
    iterating the body raises. None when ``body`` is not botocore's ``EventStream`` over a
    urllib3 response: iterate it as it is."""
    raw = getattr(body, "_raw_stream", None)
    parse = getattr(body, "_parse_event", None)
    if raw is None or parse is None or not callable(getattr(raw, "stream", None)):
        return None
    return _PayloadFrames(_messages(_body_chunks(raw)), parse)


class _PayloadFrames(Iterator[bytes | Mapping[str, Any]]):
    """As botocore's ``EventStream.__iter__``: the messages come from a generator this object
    keeps, and an event's error is raised here, outside it; so an error frame leaves the
    HTTP response unread, as botocore does, and closing the body drops the connection."""

    __slots__ = ("_messages", "_parse")

    def __init__(self, messages: Iterator[Any], parse: Any) -> None:
        self._messages = messages
        self._parse = parse

    def __iter__(self) -> _PayloadFrames:
        return self

    def __next__(self) -> bytes | Mapping[str, Any]:
        while True:
            message = next(self._messages)
            if type(message) is bytes:
                return message
            event: Mapping[str, Any] = self._parse(message)
            if event:  # botocore skips an event it has no member for
                return event


def _body_chunks(raw: Any) -> Iterator[bytes]:
    """The data of each chunk of ``raw``'s chunked HTTP body (a urllib3 ``HTTPResponse``), as
    its ``stream()`` yields them, and with the same errors.

    A chunk already received whole (its size line, data and CRLF in the reader's buffer) is
    taken here with one ``peek`` and one ``read`` of the buffer, inside urllib3's own
    ``_error_catcher`` (which maps a timeout or a dropped connection to urllib3's exceptions
    and closes the connection, as its ``read_chunked`` does). urllib3 reads a chunk in four
    Python calls (``_update_chunk_length``, ``_handle_chunk`` and its two ``_safe_read``), each
    through its generators. Anything else (the last chunk and its trailers, a chunk extension,
    a size line that is not plain hex, a chunk not yet all received, a compressed body, or a
    body urllib3 does not read as chunks) is left to ``stream()`` from that chunk on: the rest
    of the body is read exactly as urllib3 reads it, and that includes its errors and giving
    the connection back to the pool. A whole chunk is only taken from the buffer, so urllib3
    always goes on from a chunk boundary."""
    fp = getattr(getattr(raw, "_fp", None), "fp", None)
    catcher = getattr(raw, "_error_catcher", None)
    if (
        fp is None
        or catcher is None
        or not getattr(raw, "chunked", False)
        or getattr(raw, "chunk_left", 0) is not None
        or getattr(raw, "_decoder", None) is not None
        or raw.headers.get("content-encoding")
        or not callable(getattr(fp, "peek", None))
    ):
        yield from raw.stream()
        return
    peek, read = fp.peek, fp.read
    with catcher():
        while True:
            ahead = peek(1)  # blocks for the next bytes, as urllib3's readline would
            line_end = ahead.find(b"\r\n", 0, _MAX_SIZE_LINE)
            if line_end < 1:
                break  # no whole size line received yet: urllib3 reads it
            try:  # as urllib3 reads it, ``int(line, 16)``; with an extension it raises
                size = int(ahead[:line_end], 16)
            except ValueError:
                break  # an extension, or not hex: urllib3 reads it (and raises its error)
            end = line_end + size + 4  # the size line's CRLF, the data, its CRLF
            if size <= 0 or len(ahead) < end:
                break  # the last chunk, a negative size, or a chunk not all received yet
            chunk = read(end)
            yield chunk[line_end + 2 : end - 2]
    yield from raw.stream()


_MAX_SIZE_LINE = 18  # 16 hex digits and CRLF: longer size lines go to urllib3
_LAST_CHUNK = b"0\r\n\r\n"  # the last chunk of a chunked body, without trailers (RFC 9112, 7.1)


def rest_received(body: Any) -> bool:
    """Whether reading ``body`` (botocore's ``EventStream`` over a urllib3 response) to its end
    cannot wait on the network: the next bytes of its chunked HTTP body, already received, are
    the body's last chunk. Looked at without blocking (the socket's timeout is 0 for one
    ``peek``, then put back), so a stream whose end has not arrived, a partly read chunk or any
    other kind of body answers False."""
    raw = getattr(body, "_raw_stream", None)
    if (
        raw is None
        or not getattr(raw, "chunked", False)
        or getattr(raw, "chunk_left", 0) is not None
    ):
        return False
    fp = getattr(getattr(raw, "_fp", None), "fp", None)
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    peek = getattr(fp, "peek", None)
    if peek is None or sock is None:
        return False
    try:
        timeout = sock.gettimeout()
        sock.settimeout(0)
        try:
            ahead: bytes = peek(len(_LAST_CHUNK))
        finally:
            sock.settimeout(timeout)
    except (OSError, ValueError):  # nothing received yet (TLS says so with an SSLError)
        return False
    return ahead.startswith(_LAST_CHUNK)


def _messages(chunks: Iterator[bytes]) -> Iterator[Any]:
    """Each PayloadPart frame's payload, or botocore's ``EventStreamMessage`` for any other."""
    known = b""  # the header bytes of a PayloadPart event, once read
    buffer = b""
    for chunk in chunks:
        buffer = buffer + chunk if buffer else chunk
        while len(buffer) >= _PRELUDE_LENGTH:
            total, headers_length, prelude_crc = _PRELUDE.unpack_from(buffer)
            headers_end = _PRELUDE_LENGTH + headers_length
            payload_end = total - _MESSAGE_CRC_LENGTH
            if (
                headers_length > _MAX_HEADERS_LENGTH
                or payload_end < headers_end
                or payload_end - headers_end > _MAX_PAYLOAD_LENGTH
                or crc32(buffer[:8]) != prelude_crc
            ):
                yield from _botocore(buffer, chunks)  # it raises what it raises
                return
            if len(buffer) < total:
                break
            if not known or buffer[_PRELUDE_LENGTH:headers_end] != known:
                known = _payload_part_headers(buffer[_PRELUDE_LENGTH:headers_end])
                if not known:  # not a PayloadPart event: botocore decodes it and the rest
                    yield from _botocore(buffer, chunks)
                    return
            if crc32(buffer[:payload_end]) != int.from_bytes(buffer[payload_end:total], "big"):
                yield from _botocore(buffer, chunks)
                return
            payload = buffer[headers_end:payload_end]
            buffer = buffer[total:]
            yield payload


def _botocore(buffer: bytes, chunks: Iterator[bytes]) -> Iterator[Any]:
    """The rest of the stream as botocore's ``EventStream`` reads it: its messages."""
    from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]

    frames = EventStreamBuffer()
    frames.add_data(buffer)
    while True:
        yield from frames
        chunk = next(chunks, None)
        if chunk is None:
            return
        frames.add_data(chunk)


def _payload_part_headers(headers: bytes) -> bytes:
    """``headers`` when they are those of a ``PayloadPart`` event (``:message-type`` ``event``,
    ``:event-type`` ``PayloadPart``, each once), else b""."""
    strings: dict[str, str] = {}
    names: set[str] = set()
    at = 0
    try:
        while at < len(headers):
            name_length = headers[at]
            raw_name = headers[at + 1 : at + 1 + name_length]
            kind = headers[at + 1 + name_length]
            at += 2 + name_length
            name = raw_name.decode("utf-8")
            if name in names or len(raw_name) != name_length:
                return b""  # botocore raises DuplicateHeader, or reads past the headers
            names.add(name)
            if kind == _STRING or kind == 6:
                size = int.from_bytes(headers[at : at + 2], "big")
                value = headers[at + 2 : at + 2 + size]
                if len(value) != size:
                    return b""
                if kind == _STRING:
                    strings[name] = value.decode("utf-8")
                at += 2 + size
            elif kind in _FIXED_SIZES:
                at += _FIXED_SIZES[kind]
            else:
                return b""
    except (IndexError, UnicodeDecodeError):
        return b""
    if at != len(headers):
        return b""
    event = strings.get(":message-type") == "event" and strings.get(":event-type") == "PayloadPart"
    return headers if event else b""
