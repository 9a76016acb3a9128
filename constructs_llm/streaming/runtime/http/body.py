"""Reading a request body within its size limit. Stdlib only: this file ships in the Lambda.

A body over the limit gets a 413, and the client must be able to read it: a client still
sending when the server closes sees a broken pipe (or, through the Lambda Web Adapter, a
502) instead. So a body up to ``DRAIN_LIMIT`` bytes is read to its end and dropped before the
413 goes out, and the connection stays usable; a larger one could never have passed the
function URL (its request payload limit is 6 MB), so the server answers at once and closes.

``Content-Length`` given more than once (two header fields, or one field holding a list such as
``42, 42``) is read as one length when every value is the same, as RFC 9112 (section 6.3) and
RFC 9110 (section 8.6) allow a recipient to; values that differ are a 400 naming them, since
reading either one would leave the rest of the body to be parsed as another request.

Chunked bodies are read strictly: a chunk size is 1-16 hex digits (``int(..., 16)`` alone
would take ``-1``, ``+5``, ``0x5`` or ``1_0``, and a negative size would read to the end of
the connection), and each chunk ends with CRLF.
"""

from __future__ import annotations

import re
from typing import Protocol

from ...formats import MAX_REQUEST_BYTES
from .errors import RequestError

DRAIN_LIMIT = MAX_REQUEST_BYTES
"""Bytes of an oversized body read and dropped so the client can read its 413: a Lambda
function URL's request payload limit (6 MB)."""

_MAX_CHUNK_LINE = 1024  # a chunk-size line, extensions included
_PIECE = 64 * 1024
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")


class _Reader(Protocol):
    def read(self, size: int, /) -> bytes: ...

    def readline(self, size: int, /) -> bytes: ...


class _Headers(Protocol):
    def get(self, name: str, /) -> str | None: ...

    def get_all(self, name: str, /) -> list[str] | None: ...


class BodyTooLarge(RequestError):
    """413. ``drained``: the body was read to its end, so the connection can be kept."""

    def __init__(self, size: str, limit: int, *, drained: bool) -> None:
        super().__init__(
            f"request body is {size}; the limit is {limit} bytes (MAX_BODY_BYTES)",
            status=413,
            code="request_too_large",
        )
        self.drained = drained


def read_body(rfile: _Reader, headers: _Headers, *, limit: int) -> bytes:
    """The body announced by ``headers`` (``Content-Length`` or chunked), at most ``limit``
    bytes. Raises ``RequestError`` (400, 411, 413 as ``BodyTooLarge``); a connection that ends
    early raises ``EOFError``, a stalled one the socket's ``OSError``."""
    encoding = headers.get("Transfer-Encoding")
    if encoding is None:
        return _read_sized(rfile, _content_length(headers.get_all("Content-Length")), limit)
    if encoding.strip().lower() != "chunked":
        raise RequestError(
            f"unsupported Transfer-Encoding {encoding!r}; send Content-Length",
            code="unsupported_transfer_encoding",
        )
    return _read_chunked(rfile, limit)


def _content_length(fields: list[str] | None) -> str | None:
    """The one Content-Length of ``fields`` (every value of every field the same), or None."""
    if not fields:
        return None
    values = [value.strip() for field in fields for value in field.split(",")]
    if len(set(values)) > 1 and all(_is_length(value) for value in values):
        shown = ", ".join(repr(value) for value in dict.fromkeys(values))
        raise RequestError(
            f"conflicting Content-Length values {shown[:200]}; send one Content-Length",
            code="invalid_content_length",
        )
    return values[0] if len(set(values)) == 1 else ", ".join(fields)


def _is_length(text: str) -> bool:
    """ASCII decimal digits only: ``str.isdigit()`` also takes "²" (a latin-1 header byte),
    which ``int()`` refuses."""
    return text.isascii() and text.isdecimal()


def _read_sized(rfile: _Reader, raw: str | None, limit: int) -> bytes:
    if raw is None:
        raise RequestError(
            "the request needs a JSON body with a Content-Length header",
            status=411,
            code="length_required",
        )
    digits = raw.strip()
    length = int(digits) if _is_length(digits) else -1
    if length < 0:
        raise RequestError(f"invalid Content-Length {raw!r}", code="invalid_content_length")
    if length > limit:
        drained = length <= DRAIN_LIMIT
        if drained:
            _discard(rfile, length)
        raise BodyTooLarge(f"{length} bytes", limit, drained=drained)
    return _read_exactly(rfile, length)


def _read_chunked(rfile: _Reader, limit: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while size := _chunk_size(rfile):
        total += size
        if total > DRAIN_LIMIT:
            raise BodyTooLarge(f"more than {DRAIN_LIMIT} bytes", limit, drained=False)
        if total > limit:
            _discard(rfile, size)
            parts.clear()
        else:
            parts.append(_read_exactly(rfile, size))
        if rfile.readline(_MAX_CHUNK_LINE) not in (b"\r\n", b"\n"):
            raise _malformed("a chunk does not end with CRLF")
    while rfile.readline(_MAX_CHUNK_LINE) not in (b"\r\n", b"\n", b""):
        pass  # trailers
    if total > limit:
        raise BodyTooLarge(f"{total} bytes", limit, drained=True)
    return b"".join(parts)


def _chunk_size(rfile: _Reader) -> int:
    line = rfile.readline(_MAX_CHUNK_LINE)
    if not line:
        raise EOFError("the connection ended inside the chunked body")
    token = line.split(b";", 1)[0].strip()
    if not _CHUNK_SIZE.fullmatch(token):
        raise _malformed(f"bad chunk size {token[:20]!r}")
    return int(token, 16)


def _read_exactly(rfile: _Reader, size: int) -> bytes:
    data = rfile.read(size)
    if len(data) != size:
        raise EOFError("the connection ended inside the body")
    return data


def _discard(rfile: _Reader, size: int) -> None:
    while size > 0:
        piece = rfile.read(min(size, _PIECE))
        if not piece:
            raise EOFError("the connection ended inside the body")
        size -= len(piece)


def _malformed(detail: str) -> RequestError:
    return RequestError(f"malformed chunked request body: {detail}", code="invalid_body")
