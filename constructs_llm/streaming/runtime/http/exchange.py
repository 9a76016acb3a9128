"""One request and its answer: the request's log line, what has been sent, the body, and the
writes (JSON, errors, raw bytes) that notice a client gone.

Stdlib only: this file ships in the Lambda asset. A ``Connection`` (``connection.py``) reads
each request of a client connection and makes an ``Exchange`` of it; the server's handler for
the request's path (``runtime/server.py``) answers through it. Every answer goes out after its
log line is written: Lambda may freeze the process right after the last byte.

Every answer, success or error, streamed or not, carries ``x-request-id``, as OpenAI's do (the
``openai`` SDK exposes it as ``_request_id`` and on its errors as ``request_id``), and the
request's log line holds the same id as ``request_id``: the Lambda request id of the
invocation (from the Lambda Web Adapter's ``x-amzn-lambda-context`` header, so the id also
finds Lambda's own log lines of it), else a new ``req_…`` one.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from email.message import Message
from typing import Any, Protocol, TypeVar

from ...formats import ModelKind
from ..metrics import UNROUTED, with_metrics
from ..routing import VARIANT_HEADER, Route, RoutingTable, accept_route
from ..settings import Settings
from .auth import ApiKeyAuth
from .body import BodyTooLarge, read_body
from .deadline import DeadlinePassed
from .errors import RequestError, error_object
from .json_body import load_request
from .origin_secret import OriginSecret

Checked = TypeVar("Checked")

_REQUEST_ID_HEADER = "x-request-id"

LogSink = Callable[[dict[str, Any]], None]

_log_lock = threading.Lock()
# json.dumps(record, separators=(",", ":"), default=str), without a new encoder per line: the
# same encoder settings, so the same bytes (an encoder keeps no state between calls).
_LOG_ENCODER = json.JSONEncoder(separators=(",", ":"), default=str)


def emit_log_line(record: dict[str, Any]) -> None:
    """Write one JSON log line to stdout (CloudWatch Logs in Lambda)."""
    line = _LOG_ENCODER.encode(record) + "\n"
    with _log_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


class ClientGone(Exception):
    """The HTTP client went away (reset, broken pipe or socket timeout)."""


class _ServerView(Protocol):
    """What a request reads of its server (``server.HttpServer``)."""

    settings: Settings
    routes: RoutingTable
    auth: ApiKeyAuth | None
    origin: OriginSecret | None
    log: LogSink

    @property
    def client(self) -> Any:
        """The sagemaker-runtime client."""
        ...


class ConnectionView(Protocol):
    """What a request reads and writes of its connection (``connection.Connection``)."""

    server: Any  # a ServerView
    command: str
    headers: Message
    request_version: str
    protocol_version: str
    close_connection: bool
    connection: socket.socket
    rfile: Any
    wfile: io.BufferedIOBase

    def request_arrived(self) -> None: ...

    def version_string(self) -> str: ...

    def date_time_string(self, timestamp: float | None = None) -> str: ...

    def send_response(self, code: int, message: str | None = None) -> None: ...

    def send_header(self, keyword: str, value: str) -> None: ...

    def end_headers(self) -> None: ...


class Exchange:
    """One request of a connection and the state of its answer.

    :param connection: the connection the request came on (its headers, socket and writer).
    :param path: the request's path, without its query.
    """

    def __init__(self, connection: ConnectionView, path: str) -> None:
        self._connection = connection
        #: The server: its routes, auth, sagemaker-runtime client and log sink.
        self.server: _ServerView = connection.server
        self.settings: Settings = self.server.settings
        self.path = path
        self.command = connection.command
        self.headers = connection.headers
        self.request_version = connection.request_version
        #: Whether its log line carries its metrics (chat, responses, embeddings; the dispatch
        #: sets it by path).
        self.metered = False
        #: The route its metrics are counted under, once known.
        self.route: Route | None = None
        #: The id the answer's ``x-request-id`` and the log line carry.
        self.request_id = (
            _lambda_request_id(self.headers.get("x-amzn-lambda-context")) or new_request_id()
        )
        self.record: dict[str, Any] = {
            "msg": "request",
            "method": self.command or None,
            "request_id": self.request_id,
        }
        self.headers_sent = False
        #: Headers every answer to this request carries (CORS, ``http/cors.py``).
        self.extra_headers: list[tuple[str, str]] = []
        # A body we do not read would be parsed as the next request: close unless consumed.
        self.must_close = bool(
            self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length", "0") != "0"
        )
        self.logged = False
        self._started = time.perf_counter()

    # -- the request ------------------------------------------------------------------------

    def read_json(self) -> dict[str, Any]:
        """The request body (at most ``MAX_BODY_BYTES``) as a JSON object; ``RequestError``
        otherwise."""
        return load_request(self.read_body(self.settings.max_body_bytes))

    def read_routed(
        self, kind: ModelKind, check: Callable[[dict[str, Any], Route], Checked]
    ) -> tuple[Checked, Route, str | None] | None:
        """Read the request, route it by ``model`` to a model of ``kind`` (``pick_route``) and
        check it for its route: the checked request, the route and the variant it pins; None
        once a 4xx naming what is wrong has answered it."""
        try:
            data = self.read_json()
            route, variant = self.pick_route(data, kind)
            return check(data, route), route, variant
        except RequestError as err:
            self.refuse(err)
            return None

    def pick_route(self, data: dict[str, Any], kind: ModelKind) -> tuple[Route, str | None]:
        """The route the request's ``model`` names, kept for the log line, and the variant the
        request pins; ``RequestError`` for an unknown model, one of the other ``kind`` or a
        bad variant."""
        self.route = route = self.server.routes.pick(data.get("model"))
        return route, accept_route(route, kind, self.headers.get(VARIANT_HEADER))

    def read_body(self, limit: int) -> bytes:
        try:
            data = read_body(self._connection.rfile, self.headers, limit=limit)
        except BodyTooLarge as err:
            self.must_close = not err.drained  # a drained body leaves the connection usable
            raise
        except DeadlinePassed as late:  # the rest of the body is unread: close after the 408
            self.must_close = True
            raise RequestError(str(late), status=408, code="request_timeout") from None
        except (OSError, EOFError) as exc:  # a client that stopped sending, or went away
            raise ClientGone from exc
        self._connection.request_arrived()
        self.must_close = False
        return data

    # -- the log line -----------------------------------------------------------------------

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self._started) * 1000, 3)

    def log(self) -> None:
        """Write the request's log line, once."""
        if self.logged:
            return
        self.logged = True
        self.record["duration_ms"] = self.elapsed_ms()
        record = self.record
        if self.metered:
            target, model = _dimensions(self.route)
            namespace = self.settings.metrics_namespace
            record = with_metrics(record, target=target, model=model, namespace=namespace)
        self.server.log(record)

    # -- the answer -------------------------------------------------------------------------

    @property
    def chunked(self) -> bool:
        """Whether a streamed body is chunked (HTTP/1.1); HTTP/1.0 clients get a body that
        ends when the connection closes."""
        return self.request_version != "HTTP/1.0"

    def close_after(self) -> None:
        """Close the connection once this answer is out."""
        self._connection.close_connection = True

    def write(self, data: bytes) -> None:
        """Send bytes of the answer; ``ClientGone`` if the client is not there to take them."""
        self.headers_sent = True  # from here on, a failure can only close the connection
        try:
            send_all(self._connection.connection, data)
        except OSError as exc:
            raise ClientGone from exc

    def raw_write(self, data: bytes) -> None:
        """Send bytes from another thread (the heartbeat's): an ``OSError`` is the caller's."""
        self._connection.wfile.write(data)

    def client_left(self) -> bool:
        """True when the client has closed its end (readable with nothing to read)."""
        sock = self._connection.connection
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def response_head(self, status_line: str, headers: list[tuple[str, str]]) -> bytes:
        """The status line and headers of an answer, as bytes to send with its first data."""
        lines = [
            f"{self._connection.protocol_version} {status_line}",
            f"Server: {self._connection.version_string()}",
            f"Date: {self._connection.date_time_string()}",
            f"{_REQUEST_ID_HEADER}: {self.request_id}",
            *(f"{name}: {value}" for name, value in [*headers, *self.extra_headers]),
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    @property
    def query(self) -> str:
        """The request target's query string (after ``?``), or ``""``."""
        target = str(getattr(self._connection, "path", ""))
        return target.split("?", 1)[1] if "?" in target else ""

    def send_json(
        self,
        status: int,
        obj: Any,
        *,
        allow: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_bytes(status, data, "application/json", allow=allow, headers=headers)

    def send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        *,
        allow: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """A whole answer of ``data`` (a JSON body, a file's bytes)."""
        self.record["status"] = status
        connection = self._connection
        connection.send_response(status)
        connection.send_header("Content-Type", content_type)
        connection.send_header("Content-Length", str(len(data)))
        connection.send_header(_REQUEST_ID_HEADER, self.request_id)
        if allow is not None:
            connection.send_header("Allow", allow)
        for name, value in (*self.extra_headers, *headers):
            connection.send_header(name, value)
        if self.must_close:
            connection.send_header("Connection", "close")
            connection.close_connection = True
        self.log()  # before the last byte: Lambda may freeze the process right after it
        try:
            connection.end_headers()
        except OSError as exc:
            raise ClientGone from exc
        self.headers_sent = True
        if self.command != "HEAD":
            self.write(data)

    def send_no_content(self) -> None:
        """A ``204`` without a body (a CORS preflight's answer)."""
        self.record["status"] = 204
        connection = self._connection
        connection.send_response(204)
        connection.send_header(_REQUEST_ID_HEADER, self.request_id)
        for name, value in self.extra_headers:
            connection.send_header(name, value)
        if self.must_close:
            connection.send_header("Connection", "close")
            connection.close_connection = True
        self.log()  # before the last byte: Lambda may freeze the process right after it
        try:
            connection.end_headers()
        except OSError as exc:
            raise ClientGone from exc
        self.headers_sent = True

    def send_error(
        self,
        status: int,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        allow: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.record["error_code"] = code
        body = error_object(message, error_type=error_type, param=param, code=code)
        self.send_json(status, body, allow=allow, headers=headers)

    def refuse(self, err: RequestError) -> None:
        """Answer a request that cannot be served with its 4xx."""
        self.send_error(
            err.status, err.message, error_type=err.error_type, param=err.param, code=err.code
        )

    def try_send_error(self, status: int, message: str, *, code: str, error_type: str) -> None:
        """Answer with an error and close, if the client is still there to read it."""
        self.must_close = True
        with contextlib.suppress(ClientGone):
            self.send_error(status, message, error_type=error_type, code=code)


def _dimensions(route: Route | None) -> tuple[str, str]:
    """A request's metric dimensions: its route's target and model; a request refused before
    a runtime serving several models knew its model is counted under ``-``."""
    if route is None:
        return UNROUTED, UNROUTED
    return route.inference_component_name or route.endpoint_name, route.model


def send_all(sock: socket.socket, data: bytes) -> None:
    """``sock.sendall(data)``, without the ``poll`` CPython makes before every send on a socket
    with a timeout (``sock_call_ex`` in ``Modules/socketmodule.c``): one ``write`` takes what
    the socket's buffer has room for (a socket with a timeout is non-blocking underneath), and
    ``sendall``, with its timeout, sends the rest, if any. A streamed answer writes once per
    token, so this is one system call fewer per token."""
    try:
        sent = os.write(sock.fileno(), data)
    except BlockingIOError:  # the buffer is full: sendall waits for room, within the timeout
        sent = 0
    if sent < len(data):
        sock.sendall(memoryview(data)[sent:])


def chunk(data: bytes) -> bytes:
    """One HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def new_request_id() -> str:
    """An id in OpenAI's form, ``req_`` and 32 hex digits."""
    return "req_" + os.urandom(16).hex()


def _lambda_request_id(header: str | None) -> str | None:
    """The Lambda request id from the adapter's ``x-amzn-lambda-context`` header."""
    if not header:
        return None
    try:
        value = json.loads(header).get("request_id")
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None
