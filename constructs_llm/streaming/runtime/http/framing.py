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
  connection after responding to such a request" (section 6.1);
- a field line without a colon (section 2.2: a recipient SHOULD reject a malformed message),
  and an obsolete line folding (a line that starts with a space or tab: "A server that
  receives an obs-fold in a request message ... MUST either reject the message by sending a
  400 (Bad Request)" or replace it, section 5.2). The standard library's parser stops at such
  a line and leaves every line after it, ``Content-Length`` included, unread, so the body
  would be read as a second request: request smuggling;
- whitespace between a field name and its colon: "A server MUST reject, with a response
  status code of 400 (Bad Request), any received request message that contains whitespace
  between a header field name and colon" (section 5.1); a field name must be a token
  (RFC 9110, section 5.1);
- ``Transfer-Encoding`` whose final coding is not ``chunked``, read across every
  ``Transfer-Encoding`` line: "If a Transfer-Encoding header field is present in a request and
  the chunked transfer coding is not the final encoding, the message body length cannot be
  determined reliably; the server MUST respond with the 400 (Bad Request) status code and
  then close the connection" (section 6.3); ``chunked`` twice too ("A sender MUST NOT apply
  the chunked transfer coding more than once", section 7.1). A coding the server does not
  decode before ``chunked`` (``gzip, chunked``) is a 501 (section 6.1: "SHOULD respond with
  501 (Not Implemented)");
- an HTTP/1.0 request with ``Transfer-Encoding``: "A server or client that receives an
  HTTP/1.0 message containing a Transfer-Encoding header field MUST treat the message as if
  the framing is faulty, even if a Content-Length is present, and close the connection after
  processing the message" (section 6.1);
- a ``Host`` whose value is not ``uri-host [ ":" port ]`` (a space, a slash, an ``@``): "A
  server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request message
  ... that contains ... a Host header field with an invalid field value" (section 3.2).

The header lines are checked as raw bytes, before they are parsed (``request_head.py``),
because the standard library's parser drops every line after a malformed one: a check on the
parsed headers would not see them.
"""

from __future__ import annotations

import re
from email.message import Message
from typing import Protocol

_MAX_LINE = 65536  # as http.client, whose parser then reads the block
_MAX_HEADERS = 100
# Control characters other than tab, and DEL: never part of a field line. CR is checked apart.
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x0c\x0e-\x1f\x7f]")
# A field name is a token (RFC 9110, section 5.6.2: tchar).
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Host = uri-host [ ":" port ] (RFC 9112, section 3.2; RFC 3986, section 3.2.2): an IP literal
# in brackets, or a reg-name / IPv4 address (unreserved, pct-encoded, sub-delims), then an
# optional port of digits. Empty is allowed: a target without an authority sends an empty Host.
_HOST = re.compile(
    r"(?:\[[0-9A-Za-z.:\-_~!$&'()*+,;=]+\]|[0-9A-Za-z.\-_~!$&'()*+,;=%]*)(?::[0-9]*)?"
)


class FramingError(Exception):
    """A request whose framing is refused, with ``status`` (400, or 501 for a transfer coding
    the server does not decode); the message names the rule. The connection closes after."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class _Lines(Protocol):
    def readline(self, size: int, /) -> bytes: ...


def read_header_block(rfile: _Lines) -> list[bytes]:
    """The request's header lines up to and including the blank line that ends them, checked
    for bare CRs and control characters. Over-long lines and too many of them are left for
    ``request_head.header_fields`` to refuse (431), as ``http.client``'s parser does."""
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
        _check_field_line(number + 1, body)
    return lines


def _check_field_line(number: int, line: bytes) -> None:
    """Refuse a field line that is not ``name: value`` with a token for a name."""
    if line[:1] in (b" ", b"\t"):
        raise FramingError(
            f"header line {number} starts with whitespace (an obsolete line folding), which "
            "RFC 9112 (section 5.2) refuses; send each header on one line"
        )
    name, colon, _ = line.partition(b":")
    if not colon:
        raise FramingError(
            f"header line {number} has no colon, so it is no header field (RFC 9112, section "
            "2.2); send each header as Name: value"
        )
    if name != name.rstrip(b" \t"):
        raise FramingError(
            f"header line {number} has whitespace between the field name and the colon, "
            "which RFC 9112 (section 5.1) refuses; send Name: value"
        )
    if not _TOKEN.fullmatch(name):
        raise FramingError(
            f"header line {number} has a field name that is not a token: {name[:40]!r} "
            "(RFC 9110, section 5.1); send letters, digits and -"
        )


def framing_problem(request_version: str, headers: Message) -> FramingError | None:
    """Why a parsed request's headers frame it ambiguously, if they do."""
    hosts = headers.get_all("Host") or []
    if request_version == "HTTP/1.1" and not hosts:
        return FramingError(
            "an HTTP/1.1 request needs a Host header (RFC 9112, section 3.2); send "
            "Host: <the server's name>"
        )
    if len(hosts) > 1:
        return FramingError(
            "the request has more than one Host header (RFC 9112, section 3.2); send one"
        )
    if hosts and not _HOST.fullmatch(hosts[0].strip(" \t")):
        return FramingError(
            f"the Host header {hosts[0][:80]!r} is not a host name with an optional port "
            "(RFC 9112, section 3.2); send Host: name or Host: name:port"
        )
    encodings = headers.get_all("Transfer-Encoding")
    if encodings is None:
        return None
    if request_version == "HTTP/1.0":
        return FramingError(
            "an HTTP/1.0 request may not use Transfer-Encoding (RFC 9112, section 6.1); send "
            "Content-Length, or HTTP/1.1"
        )
    if headers.get("Content-Length") is not None:
        return FramingError(
            "the request has both Content-Length and Transfer-Encoding, which may frame it "
            "two ways (RFC 9112, section 6.1); send one of them"
        )
    return _coding_problem(encodings)


def _coding_problem(fields: list[str]) -> FramingError | None:
    """Why the transfer codings of every ``Transfer-Encoding`` line (in order) cannot frame
    the body, if they cannot: the final one must be ``chunked``, applied once, and no other
    is decoded here."""
    codings = [
        coding.split(";", 1)[0].strip(" \t").lower()
        for field in fields
        for coding in field.split(",")
        if coding.strip(" \t")
    ]
    listed = ", ".join(codings) or "(empty)"
    if not codings or codings[-1] != "chunked":
        return FramingError(
            f"the final transfer coding is not chunked (Transfer-Encoding: {listed}), so the "
            "body's length cannot be known (RFC 9112, section 6.3); send Transfer-Encoding: "
            "chunked or Content-Length"
        )
    if codings.count("chunked") > 1:
        return FramingError(
            f"chunked is applied more than once (Transfer-Encoding: {listed}; RFC 9112, "
            "section 7.1); send it once"
        )
    if len(codings) > 1:
        return FramingError(
            f"this server decodes no transfer coding but chunked (Transfer-Encoding: {listed});"
            " send the body uncompressed",
            status=501,
        )
    return None
