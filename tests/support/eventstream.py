"""Encoder for the ``application/vnd.amazon.eventstream`` framing SageMaker streams in.

botocore ships only a decoder; tests use this to build the exact bytes a
``InvokeEndpointWithResponseStream`` response carries, then decode them with botocore.

Frame: ``[total u32][headers_len u32][prelude_crc u32][headers][payload][message_crc u32]``,
big-endian, CRC32 as in zlib. Headers here are strings only (type 7), which is all SageMaker
sends.
"""

from __future__ import annotations

import binascii
import json
import struct

_STRING_HEADER = 7


def encode_headers(headers: dict[str, str]) -> bytes:
    """Pack string headers: ``[name_len u8][name][type=7][value_len u16][value]``."""
    out = bytearray()
    for name, value in headers.items():
        raw_name, raw_value = name.encode("utf-8"), value.encode("utf-8")
        out += struct.pack("!B", len(raw_name)) + raw_name
        out += struct.pack("!BH", _STRING_HEADER, len(raw_value)) + raw_value
    return bytes(out)


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One complete event-stream message with the given string headers and payload."""
    raw_headers = encode_headers(headers)
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack("!II", total, len(raw_headers))
    prelude_crc = binascii.crc32(prelude) & 0xFFFFFFFF
    body = prelude + struct.pack("!I", prelude_crc) + raw_headers + payload
    return body + struct.pack("!I", binascii.crc32(body) & 0xFFFFFFFF)


def encode_event(event_type: str, payload: bytes) -> bytes:
    """An event frame; ``encode_event("PayloadPart", b"...")`` is one SageMaker payload part."""
    return encode_message(
        {
            ":message-type": "event",
            ":event-type": event_type,
            ":content-type": "application/octet-stream",
        },
        payload,
    )


def encode_payload_part(payload: bytes) -> bytes:
    """Shorthand for ``encode_event("PayloadPart", payload)``."""
    return encode_event("PayloadPart", payload)


def encode_exception(exception_type: str, message: str, *, error_code: str | None = None) -> bytes:
    """A modelled exception frame such as ``ModelStreamError`` or ``InternalStreamFailure``.

    The payload is the JSON SageMaker sends: ``{"Message": ..., "ErrorCode": ...}``.
    """
    body: dict[str, str] = {"Message": message}
    if error_code is not None:
        body["ErrorCode"] = error_code
    return encode_message(
        {
            ":message-type": "exception",
            ":exception-type": exception_type,
            ":content-type": "application/json",
        },
        json.dumps(body).encode("utf-8"),
    )


def encode_error(error_code: str, error_message: str) -> bytes:
    """A generic ``:message-type=error`` frame (details in headers, empty payload)."""
    return encode_message(
        {":message-type": "error", ":error-code": error_code, ":error-message": error_message},
        b"",
    )
