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
