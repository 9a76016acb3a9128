"""payload_frames: the PayloadPart frames of boto3's body, read without botocore's per-frame
decoding, and exactly what botocore's own ``EventStream`` gives for every other frame.

The reference is botocore itself: the same bytes, in every split, through a second body that is
iterated as botocore iterates it.
"""

from __future__ import annotations

import binascii
import struct
from typing import Any

import pytest

from constructs_llm.streaming.runtime.parsing.payload_frames import payload_frames
from constructs_llm.streaming.runtime.parsing.sagemaker_stream import iter_payload_parts
from tests.streaming.test_sagemaker_stream import RawStream, boto_body, response_parser
from tests.support.eventstream import (
    encode_error,
    encode_event,
    encode_exception,
    encode_headers,
    encode_message,
    encode_payload_part,
)

__all__ = ["boto_body", "response_parser"]  # fixtures shared with test_sagemaker_stream

_PARTS = [b'data:{"token":{"text":"a"}}\n\n', "é🚀".encode(), b"", b"x" * 300]


def _botocore(body: Any) -> list[Any]:
    """What iterating the body gives, through botocore alone: each event, or the exception."""
    try:
        return list(body)
    except Exception as exc:
        return [type(exc), str(exc)]


def _ours(body: Any) -> list[Any]:
    frames = payload_frames(body)
    assert frames is not None
    try:
        return [
            {"PayloadPart": {"Bytes": item}} if type(item) is bytes else item for item in frames
        ]
    except Exception as exc:
        return [type(exc), str(exc)]


def _with_bad_message_crc(frame: bytes) -> bytes:
    return frame[:-4] + struct.pack("!I", (int.from_bytes(frame[-4:], "big") + 1) & 0xFFFFFFFF)


def _with_bad_prelude_crc(frame: bytes) -> bytes:
    return frame[:8] + struct.pack("!I", (int.from_bytes(frame[8:12], "big") + 1) & 0xFFFFFFFF)


def _frame(headers: bytes, payload: bytes) -> bytes:
    """A frame of these header bytes as they are (``encode_message`` takes a dict)."""
    prelude = struct.pack("!II", 12 + len(headers) + len(payload) + 4, len(headers))
    body = prelude + struct.pack("!I", binascii.crc32(prelude)) + headers + payload
    return body + struct.pack("!I", binascii.crc32(body))


_PAYLOAD_PART = {":message-type": "event", ":event-type": "PayloadPart"}
_STREAMS = {
    "parts": b"".join(encode_payload_part(p) for p in _PARTS),
    "parts, another event, parts": (
        encode_payload_part(b"one")
        + encode_event("SomethingNew", b"ignored")
        + encode_payload_part(b"two")
    ),
    "parts, then an exception frame": (
        encode_payload_part(b"one")
        + encode_exception("ModelStreamError", "broke", error_code="Broken")
        + encode_payload_part(b"never")
    ),
    "parts, then an error frame": encode_payload_part(b"one") + encode_error("Boom", "it broke"),
    "a bad message CRC after a part": (
        encode_payload_part(b"one") + _with_bad_message_crc(encode_payload_part(b"two"))
    ),
    "a bad prelude CRC after a part": (
        encode_payload_part(b"one") + _with_bad_prelude_crc(encode_payload_part(b"two"))
    ),
    "headers in another order, then a header added": (
        encode_message({":event-type": "PayloadPart", ":message-type": "event"}, b"one")
        + encode_message({**_PAYLOAD_PART, "x-extra": "1"}, b"two")
        + encode_payload_part(b"three")
    ),
    "a part without :message-type": (
        encode_payload_part(b"one") + encode_message({":event-type": "PayloadPart"}, b"two")
    ),
    # :event-type twice in one header block: botocore raises DuplicateHeader
    "a duplicate header": encode_payload_part(b"one")
    + _frame(encode_headers(_PAYLOAD_PART) + encode_headers({":event-type": "PayloadPart"}), b"2"),
}


@pytest.mark.parametrize("name", list(_STREAMS))
def test_the_same_events_and_errors_as_botocore_at_every_split(name: str, boto_body: Any) -> None:
    data = _STREAMS[name]
    for size in range(1, len(data) + 1):
        expected = _botocore(boto_body(RawStream(data, size)))
        assert _ours(boto_body(RawStream(data, size))) == expected, (name, size)


def test_payload_parts_skip_botocores_decoding(boto_body: Any) -> None:
    # GIVEN a stream of 200 PayloadPart frames, then an event of another type
    frames = b"".join(encode_payload_part(b"%d" % i) for i in range(200))
    body = boto_body(RawStream(frames + encode_event("SomethingNew", b"x"), 64))
    parsed = []
    parse = body._parse_event

    def counted(message: Any) -> Any:
        parsed.append(message)
        return parse(message)

    body._parse_event = counted
    # WHEN read THEN every part arrives, and botocore parsed only the other event's frame
    assert list(iter_payload_parts(body)) == [b"%d" % i for i in range(200)]
    assert len(parsed) == 1


def test_a_body_that_is_not_botocores_event_stream_is_iterated_as_it_is() -> None:
    events = [{"PayloadPart": {"Bytes": b"a"}}]
    assert payload_frames(events) is None
    assert list(iter_payload_parts(events)) == [b"a"]


# -- the chunked HTTP body, read past urllib3's per-chunk calls ------------------------------

_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\n"
_CHUNKED = _HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
_BODIES = {
    "chunks": [
        _CHUNKED,
        b"3\r\nabc\r\n",
        b"5\r\nhello\r\n1A\r\n" + b"z" * 26 + b"\r\n",
        b"0\r\n\r\n",
    ],
    "upper-and-lower-hex": [
        _CHUNKED,
        b"1a\r\n" + b"y" * 26 + b"\r\nA\r\n" + b"w" * 10 + b"\r\n0\r\n\r\n",
    ],
    "split-chunk": [_CHUNKED, b"4\r\nab", b"cd\r\n", b"2\r\n", b"ef\r\n0\r\n\r\n"],
    "extension": [_CHUNKED, b"3;name=value\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"],
    "trailers": [_CHUNKED, b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n"],
    "bad-size": [_CHUNKED, b"3\r\nabc\r\nzz\r\nabc\r\n0\r\n\r\n"],
    "signed-size": [_CHUNKED, b"3\r\nabc\r\n+3\r\ndef\r\n0\r\n\r\n"],
    "negative-size": [_CHUNKED, b"3\r\nabc\r\n-3\r\ndef\r\n0\r\n\r\n"],
    "ends-inside-a-chunk": [_CHUNKED, b"3\r\nabc\r\n9\r\nabc"],
    "ends-before-a-size-line": [_CHUNKED, b"3\r\nabc\r\n"],
    "gzip": [_HEAD + b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", b"0\r\n\r\n"],
    "content-length": [_HEAD + b"Content-Length: 3\r\n\r\nabc"],
}


def _serve_once(pieces: list[bytes]) -> tuple[int, Any]:
    """A one-answer HTTP server on loopback: the whole request read (urllib3 sends its body
    apart from its head, and a socket closed with bytes unread resets the connection instead
    of ending it), each piece sent with its own ``sendall``, then the connection closed."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        connection, _ = listener.accept()
        with connection:
            received = b""
            while b"\r\n\r\n" not in received:
                received += connection.recv(65536)
            head, _, body = received.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(body) < length:
                body += connection.recv(65536)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for piece in pieces:
                connection.sendall(piece)
        listener.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


def _read(pieces: list[bytes], read: Any) -> list[Any]:
    """``read`` over a urllib3 response to ``pieces``: the bytes it gave, or the exception."""
    import urllib3

    port, thread = _serve_once(pieces)
    pool = urllib3.HTTPConnectionPool("127.0.0.1", port, retries=False, timeout=30)
    response = pool.request("POST", "/", body=b"{}", preload_content=False)
    data: list[bytes] = []
    try:
        for chunk in read(response):
            data.append(chunk)
    except Exception as exc:
        return [b"".join(data), type(exc), str(exc)]
    finally:
        thread.join(timeout=30)
    return [b"".join(data)]


@pytest.mark.parametrize("name", list(_BODIES))
def test_the_http_body_reads_as_urllib3_reads_it(name: str) -> None:
    from constructs_llm.streaming.runtime.parsing.payload_frames import _body_chunks

    pieces = _BODIES[name]
    assert _read(pieces, _body_chunks) == _read(pieces, lambda response: response.stream())


def test_whole_chunks_already_received_skip_urllib3s_per_chunk_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import urllib3

    from constructs_llm.streaming.runtime.parsing.payload_frames import _body_chunks

    sizes: list[int | None] = []
    original = urllib3.response.HTTPResponse._update_chunk_length

    def counted(self: Any) -> None:
        original(self)
        sizes.append(self.chunk_left)

    monkeypatch.setattr(urllib3.response.HTTPResponse, "_update_chunk_length", counted)
    pieces = [_CHUNKED, b"3\r\nabc\r\n5\r\nhello\r\n0\r\n\r\n"]
    assert _read(pieces, _body_chunks) == [b"abchello"]
    assert sizes == [0]  # urllib3 read the last chunk only
