"""The framing rules of HTTP/1.1 (RFC 9112) the server enforces before it reads a request any
further, so that a proxy in front of it and the server itself never disagree on where a
header or a request ends. Stdlib only: this file ships in the Lambda asset.

Each breach is a 400, and the connection closes after it (``connection.py``):

- a bare CR (one not followed by LF) in a header line: "a recipient of such a bare CR MUST
  consider that element to be invalid or replace each bare CR with SP" (section 2.2). The
  standard library's header parser reads a bare CR as a line break, which would let
  ``X-Note: a\\rAuthorization: ...`` smuggle a header past a proxy that reads one field;
- a NUL (or any other control character but tab) in a header line: not a field-value
  character (RFC 9110, section 5.5: "field values containing CR, LF, or NUL characters are
  invalid and dangerous");
- an HTTP/1.1 request without a Host header, or with more than one: "A server MUST respond
  with a 400 (Bad Request) status code to any HTTP/1.1 request message that lacks a Host
  header field and to any request message that contains more than one Host header field line"
  (section 3.2);
- ``Content-Length`` together with ``Transfer-Encoding``: "might indicate an attempt to perform
  request smuggling ... and ought to be handled as an error", and "the server MUST close the
  connection after responding to such a request" (section 6.1).
"""

from __future__ import annotations

import re
from email.message import Message
from typing import Protocol

_MAX_LINE = 65536  # as http.client, whose parser then reads the block
_MAX_HEADERS = 100
# Control characters other than tab, and DEL: never part of a field line. CR is checked apart.
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x0c\x0e-\x1f\x7f]")


class FramingError(Exception):
    """A request whose framing is refused with a 400; the message names the rule."""


class _Lines(Protocol):
    def readline(self, size: int, /) -> bytes: ...


def read_header_block(rfile: _Lines) -> bytes:
    """The request's header lines up to and including the blank line that ends them, checked
    for bare CRs and control characters. Over-long lines and too many of them are left for the
    standard library's parser to refuse (431) from the block returned."""
    lines = []
    for number in range(_MAX_HEADERS + 1):
        line = rfile.readline(_MAX_LINE + 1)
        lines.append(line)
        if line in (b"\r\n", b"\n", b"") or len(line) > _MAX_LINE:
            break
        body = line[:-2] if line.endswith(b"\r\n") else line.rstrip(b"\n")
        if b"\r" in body:
            raise FramingError(
                f"header line {number + 1} holds a bare CR (a CR not followed by LF), which "
                "RFC 9112 (section 2.2) makes invalid; send CRLF line endings only"
            )
        if _CONTROL.search(body):
            raise FramingError(
                f"header line {number + 1} holds a control character (such as NUL), which no "
                "header field may hold (RFC 9110, section 5.5)"
            )
    return b"".join(lines)


def framing_problem(request_version: str, headers: Message) -> str | None:
    """Why a parsed request's headers frame it ambiguously, if they do."""
    hosts = headers.get_all("Host") or []
    if request_version == "HTTP/1.1" and not hosts:
        return (
            "an HTTP/1.1 request needs a Host header (RFC 9112, section 3.2); send "
            "Host: <the server's name>"
        )
    if len(hosts) > 1:
        return "the request has more than one Host header (RFC 9112, section 3.2); send one"
    if headers.get("Transfer-Encoding") is not None and headers.get("Content-Length") is not None:
        return (
            "the request has both Content-Length and Transfer-Encoding, which may frame it "
            "two ways (RFC 9112, section 6.1); send one of them"
        )
    return None
