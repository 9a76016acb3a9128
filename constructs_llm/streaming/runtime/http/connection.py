"""One client connection: its requests read one at a time, each within its deadline, and each
handed to the server's dispatch as an ``Exchange``.

Stdlib only: this file ships in the Lambda asset. ``Connection`` reads each request as
``BaseHTTPRequestHandler`` does, with three differences: the request line, headers and body
must arrive within ``REQUEST_DEADLINE`` of its first byte (408 and close past it,
``deadline.py``); an HTTP/0.9 request line (``GET /``, no version) gets a 400 at once, where
the base class would wait for headers such a client never sends; the header lines are checked
against HTTP/1.1's framing rules before they are parsed (without the ``email`` parser the
base class uses: ``request_head.py``), and the parsed headers after (``framing.py``: bare CR,
control characters, a line without a colon, whitespace before the colon, an invalid or
missing Host, Content-Length with Transfer-Encoding, a final transfer coding other than
chunked, Transfer-Encoding on HTTP/1.0: 400; a transfer coding it does not decode: 501);
and a method the server does not recognize gets a 501 naming it and the methods it serves
(RFC 9110, section 9.1). Every error answered here, before a request reaches its handler,
closes the connection.
"""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
from http.client import HTTPMessage
from http.server import BaseHTTPRequestHandler
from typing import Any

from .deadline import DeadlinePassed, DeadlineReader
from .exchange import ClientGone, Exchange
from .framing import FramingError, framing_problem, read_header_block
from .request_head import HeadError, header_fields, parse_request_line
from .server import HttpServer

#: Methods the server recognizes: one of them on a path that does not take it is a 405;
#: any other method a 501.
_KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})


class Connection(BaseHTTPRequestHandler):
    """Reads the requests of one client connection and dispatches each."""

    server: HttpServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each token event is a small write: send it now
    server_version = "constructs-llm-runtime"
    sys_version = ""

    _reader: DeadlineReader  # under rfile: keeps the request deadline
    _header_lines: list[bytes]  # the request's header lines, checked (framing.py)
    _buffered: io.BufferedReader[DeadlineReader]  # rfile

    def setup(self) -> None:
        # socket timeout for every read and write towards the client
        timeout = self.server.settings.client_timeout
        self.request.settimeout(timeout)
        super().setup()
        self.rfile.close()  # the base class's reader; this one keeps the request deadline
        self._reader = DeadlineReader(self.connection, timeout)
        self._buffered = self.rfile = io.BufferedReader(self._reader)

    def request_arrived(self) -> None:
        """The request's body is read: its deadline no longer applies."""
        self._reader.disarm()

    # -- reading a request --------------------------------------------------------------------

    def handle_one_request(self) -> None:
        """Read one request of the connection and dispatch it (see the module docstring)."""
        self._reader.disarm()
        self.command, self.requestline, self.request_version = "", "", "HTTP/1.0"
        self.headers = HTTPMessage()  # until this request's headers are read
        try:
            if not self._buffered.peek(1):  # the client closed the connection between requests
                self.close_connection = True
                return
        except OSError:  # idle past CLIENT_TIMEOUT, or reset: no request, nothing to answer
            self.close_connection = True
            return
        self._reader.arm(self.server.settings.request_deadline)  # from its first byte
        try:
            self._read_request_and_dispatch()
        except DeadlinePassed as late:
            self.close_connection = True
            self._protocol_error(408, str(late), "request_timeout")
        except TimeoutError:  # a read or a write waited longer than CLIENT_TIMEOUT
            self.close_connection = True
        finally:
            self._reader.disarm()

    def _read_request_and_dispatch(self) -> None:
        """``BaseHTTPRequestHandler.handle_one_request``, with HTTP/0.9 and 501 answered here."""
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.send_error(414)
            return
        if not self.raw_requestline:
            self.close_connection = True
            return
        if len(self.raw_requestline.split()) == 2:  # "GET /": no version, and no headers follow
            self.close_connection = True
            self.send_error(400, "HTTP/0.9 requests are not served; send HTTP/1.1")
            return
        try:
            self._header_lines = read_header_block(self._buffered)
        except FramingError as bad:
            self._protocol_error(bad.status, str(bad), "invalid_header")
            return
        if not self.parse_request():  # it answered the error itself
            return
        problem = framing_problem(self.request_version, self.headers)
        if problem is not None:
            self._protocol_error(problem.status, str(problem), "invalid_header")
            return
        if self.command not in _KNOWN_METHODS:
            served = ", ".join(self.server.methods)
            message = (
                f"the method {str(self.command)[:40]!r} is not implemented by this server; it "
                f"serves {served}"
            )
            self._protocol_error(501, message, "method_not_implemented")
            return
        self._dispatch()
        self.wfile.flush()

    def parse_request(self) -> bool:
        """``BaseHTTPRequestHandler.parse_request`` on the request line and the header lines
        ``read_header_block`` read and checked, with the same statuses, without the ``email``
        parser (``request_head.py``); False once an error is answered."""
        self.command = ""  # until the request line is read
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        try:
            line = parse_request_line(self.raw_requestline, self.default_request_version)
            if line is None:
                return False
            self.request_version = line.version
            self.close_connection = not line.keep_alive
            self.command, self.path = line.command, line.path
            self.headers = header_fields(self._header_lines)
        except HeadError as refused:
            self.request_version = refused.version or self.request_version
            self.send_error(refused.status, refused.message)
            return False
        # protocol_version is HTTP/1.1: the base class's checks of it always hold here
        connection = self.headers.get("Connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        expect = self.headers.get("Expect", "")
        if expect.lower() == "100-continue" and self.request_version >= "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def _dispatch(self) -> None:
        """Hand the request to the server's dispatch; a bug is a 500 if nothing was sent."""
        path = self.path.split("?", 1)[0]
        exchange = Exchange(self, path)
        try:
            self.server.dispatch(exchange)
        except ClientGone:
            self.close_connection = True
            exchange.record["client_disconnected"] = True
        except Exception as exc:  # a bug: answer 500 if the status line is not out yet
            traceback.print_exc(file=sys.stderr)
            exchange.record["exception"] = type(exc).__name__
            if exchange.headers_sent:
                self.close_connection = True
            else:
                exchange.try_send_error(
                    500,
                    f"internal error: {type(exc).__name__}",
                    code="server_error",
                    error_type="server_error",
                )
        finally:
            exchange.log()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log; each request logs one JSON line instead."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's protocol errors (a bad request line or version, headers too long)
        as OpenAI-shaped JSON.

        Always with a status line: a request line that cannot be parsed leaves the handler
        at HTTP/0.9, whose responses have none, and a body alone is no answer."""
        text = message or self.responses.get(code, ("error",))[0]
        self._protocol_error(code, text, "http_error")

    def _protocol_error(self, status: int, message: str, code: str) -> None:
        """An error answered before (or instead of) dispatch; the connection then closes."""
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
        exchange = Exchange(self, "")
        exchange.must_close = True
        with contextlib.suppress(ClientGone):
            exchange.send_error(status, message, code=code)
