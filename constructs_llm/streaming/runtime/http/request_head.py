"""A request's line and header fields, read as ``http.server``'s ``parse_request`` reads them,
without the ``email`` package's feed parser. Stdlib only: this file ships in the Lambda asset.

``BaseHTTPRequestHandler.parse_request`` reads the header fields with
``http.client.parse_headers``, which decodes the block as ISO-8859-1 and hands it to
``email.parser.Parser``: a feed parser, a policy object per field and a check of the
message's content type, about a tenth of a millisecond of CPU per request. The runtime reads
the header lines first and refuses every line that parser treats apart (``framing.py``: a
line without a colon, whitespace before the colon, a name that is not a token, an obsolete
line folding, a bare CR, a control character), so each line left is ``name:value`` and the
email parser would store it as ``email.policy.compat32.header_source_parse`` does: the name
up to the first colon, the value with its leading spaces and tabs and its trailing CRs and
LFs stripped. ``header_fields`` stores exactly that, in order, in the same ``HTTPMessage``
class (``tests/streaming/test_request_head.py`` compares both on every shape of line the
checks let through); ``parse_request_line`` is the request-line half of ``parse_request``,
with its statuses and messages.
"""

from __future__ import annotations

from http.client import HTTPMessage
from typing import NamedTuple

#: As ``http.client``: a line longer is refused (431), and so are more lines than this,
#: counting the blank line that ends the block.
MAX_LINE = 65536
MAX_HEADERS = 100


class HeadError(Exception):
    """A request line or header block ``parse_request`` refuses: ``status``, the message it
    answers with, and the request's version by then (``version``; None: not read yet)."""

    def __init__(self, status: int, message: str, version: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.version = version


class RequestLine(NamedTuple):
    """A parsed request line.

    :param command: the method.
    :param path: the request target, a leading ``//`` reduced to ``/`` (as ``http.server``).
    :param version: the HTTP version as sent (``HTTP/1.1``).
    :param keep_alive: whether the version keeps the connection open by default (1.1 and up).
    """

    command: str
    path: str
    version: str
    keep_alive: bool


def parse_request_line(raw: bytes, default_version: str) -> RequestLine | None:
    """The request line's method, target and version, as ``parse_request`` reads them; None
    for an empty line (no answer); ``HeadError`` (400, 505) for one it refuses."""
    line = str(raw, "iso-8859-1").rstrip("\r\n")
    words = line.split()
    if not words:
        return None
    version, keep_alive = default_version, False
    if len(words) >= 3:
        version = words[-1]
        try:
            if not version.startswith("HTTP/"):
                raise ValueError
            base_version = version.split("/", 1)[1]
            numbers = base_version.split(".")
            if len(numbers) != 2:
                raise ValueError
            if any(not number.isdigit() or len(number) > 10 for number in numbers):
                raise ValueError
            major, minor = int(numbers[0]), int(numbers[1])
        except (ValueError, IndexError):
            raise HeadError(400, f"Bad request version ({version!r})") from None
        keep_alive = (major, minor) >= (1, 1)
        if major >= 2:
            raise HeadError(505, f"Invalid HTTP version ({base_version})")
    if not 2 <= len(words) <= 3:
        raise HeadError(400, f"Bad request syntax ({line!r})", version)
    command, path = words[:2]
    if len(words) == 2:
        keep_alive = False
        if command != "GET":
            raise HeadError(400, f"Bad HTTP/0.9 request type ({command!r})", version)
    if path.startswith("//"):  # gh-87389, as http.server: //path is no absolute URI here
        path = "/" + path.lstrip("/")
    return RequestLine(command, path, version, keep_alive)


def header_fields(lines: list[bytes]) -> HTTPMessage:
    """The header fields of ``lines`` (each line as read, the last one blank or empty at the
    end of the input), checked by ``framing.read_header_block``; ``HeadError`` (431) for a
    line too long or too many lines, as ``http.client.parse_headers``."""
    message = HTTPMessage()
    for count, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            raise HeadError(431, "Line too long")
        if count > MAX_HEADERS:
            raise HeadError(431, "Too many headers")
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("iso-8859-1").partition(":")
        message.set_raw(name, value.lstrip(" \t").rstrip("\r\n"))
    return message
