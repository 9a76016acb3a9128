"""request_head: the request line and header fields read as ``http.server`` reads them (the
``email`` parser behind ``http.client.parse_headers``), for every line the framing checks let
through: the same fields in the same order, the same statuses and messages."""

from __future__ import annotations

import http.client
import io
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_llm.streaming.runtime.http.framing import FramingError, read_header_block
from constructs_llm.streaming.runtime.http.request_head import (
    HeadError,
    header_fields,
    parse_request_line,
)


def stdlib_fields(lines: list[bytes]) -> list[tuple[str, str]] | tuple[int, str]:
    """What ``parse_request`` reads of ``lines``: the fields, or its 431 and message."""
    try:
        return http.client.parse_headers(io.BytesIO(b"".join(lines))).items()
    except http.client.LineTooLong:
        return 431, "Line too long"
    except http.client.HTTPException:
        return 431, "Too many headers"


def ours(lines: list[bytes]) -> list[tuple[str, str]] | tuple[int, str]:
    try:
        return header_fields(lines).items()
    except HeadError as refused:
        return refused.status, refused.message


def checked(block: bytes) -> list[bytes] | None:
    """The block's lines as the runtime reads them, or None if the framing checks refuse it."""
    try:
        return read_header_block(io.BytesIO(block))
    except FramingError:
        return None


@pytest.mark.parametrize(
    "block",
    [
        b"Host: x\r\n\r\n",
        b"Host:x\r\nContent-Length:  12  \r\n\r\n",  # no space, then spaces kept at the end
        b"Host: x\r\nX-A:\t\ttabbed\t\r\nX-Empty:\r\nX-Empty2: \r\n\r\n",
        b"Host: x\r\nAccept: a\r\naccept: b\r\nACCEPT: c\r\n\r\n",  # repeated, any case
        b"Host: x\r\nX-Colons: a:b::c\r\nX-Latin: caf\xe9 \x85 \xff\r\n\r\n",
        b"Host: x\nX-Lf: bare LF endings\n\n",
        b"Host: x\r\nX-End: no blank line, the input ends",  # EOF ends the block
        b"Host: x\r\nFrom: someone\r\nContent-Type: multipart/form-data; boundary=z\r\n\r\n",
        b"\r\n",
        b"",
        b"X-Long: " + b"a" * 65600 + b"\r\n\r\n",  # 431: a line over 65536 bytes
        b"".join(b"X-%d: v\r\n" % n for n in range(99)) + b"\r\n",  # 99 fields: served
        b"".join(b"X-%d: v\r\n" % n for n in range(100)) + b"\r\n",  # 100: 431
        b"".join(b"X-%d: v\r\n" % n for n in range(100)) + b"X-Long: " + b"a" * 65600,
    ],
)
def test_the_fields_are_those_the_email_parser_reads(block: bytes) -> None:
    lines = checked(block)
    assert lines is not None
    assert ours(lines) == stdlib_fields(lines)


# Field lines the framing checks let through (names are tokens, values any byte but controls),
# in blocks that end with a blank line, with LF alone, or with the end of the input.
_NAME = st.text("!#$%&'*+-.^_`|~09AZaz", min_size=1, max_size=8)
_VALUE = st.binary(max_size=12).map(lambda b: bytes(c for c in b if c > 0x1F and c != 0x7F))
_SPACE = st.sampled_from([b"", b" ", b"\t", b"  \t"])
_FIELD = st.builds(
    lambda name, before, value, after, end: name.encode() + b":" + before + value + after + end,
    _NAME,
    _SPACE,
    _VALUE,
    _SPACE,
    st.sampled_from([b"\r\n", b"\n"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_FIELD, max_size=6), st.sampled_from([b"\r\n", b"\n", b""]))
def test_any_checked_block_reads_as_the_email_parser_reads_it(
    fields: list[bytes], end: bytes
) -> None:
    lines = checked(b"".join(fields) + end)
    assert lines is not None
    assert ours(lines) == stdlib_fields(lines)


class _Handler(BaseHTTPRequestHandler):
    """``parse_request`` of the standard library, on a request line and no header fields,
    recording the error it answers instead of writing it."""

    protocol_version = "HTTP/1.1"

    def __init__(self, raw: bytes) -> None:  # no socket: parse_request alone
        self.raw_requestline = raw
        self.rfile = io.BytesIO(b"\r\n")
        self.refused: tuple[int, str] | None = None

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.refused = (int(code), str(message))


def stdlib_line(raw: bytes) -> Any:
    handler = _Handler(raw)
    parsed = handler.parse_request()
    if handler.refused is not None:
        return (*handler.refused, handler.request_version)
    if not parsed:
        return None
    return (handler.command, handler.path, handler.request_version, not handler.close_connection)


def our_line(raw: bytes) -> Any:
    try:
        line = parse_request_line(raw, "HTTP/0.9")
    except HeadError as refused:
        return (refused.status, refused.message, refused.version or "HTTP/0.9")
    return None if line is None else tuple(line)


@pytest.mark.parametrize(
    "raw",
    [
        b"POST /v1/chat/completions HTTP/1.1\r\n",
        b"GET /health HTTP/1.0\r\n",
        b"GET //evil.example/x HTTP/1.1\r\n",
        b"GET /a?b=c HTTP/1.01\r\n",
        b"GET / HTTP/1.1 extra\r\n",
        b"GET / X HTTP/1.1\r\n",
        b"GET / HTTP/9.9\r\n",
        b"GET / HTTP/2.0\r\n",
        b"GET / HTTP/1\r\n",
        b"GET / HTTP/1.1.1\r\n",
        b"GET / HTTP/1.x\r\n",
        b"GET / HTTP/\xb2.1\r\n",  # a Unicode digit that is no ASCII digit
        b"GET / HTTP/1.12345678901\r\n",
        b"GET / FTP/1.1\r\n",
        b"GARBAGE\r\n",
        b"GET /\r\n",
        b"POST /\r\n",
        b"\r\n",
        b"  \t\r\n",
    ],
)
def test_the_request_line_reads_as_parse_request_reads_it(raw: bytes) -> None:
    assert our_line(raw) == stdlib_line(raw)
