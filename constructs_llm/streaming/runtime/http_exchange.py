"""One HTTP exchange of the runtime server: reading the request within its deadline, the
per-request state, its JSON log line, writes that notice a client gone, JSON and error answers,
and the request body.

Stdlib + boto3 only: this file ships in the Lambda asset. ``ServerBase`` is what every
exchange reads of its server (settings, routes, API-key auth, the sagemaker-runtime client,
the log sink), and it serves at most ``MAX_CONNECTIONS`` connections at once
(``connection_slots.py``). On top of ``Exchange``, ``chat_answers.py`` writes a chat answer,
``chat_flow.py`` serves a chat request and ``server.py`` routes every request.

``Exchange`` reads each request as ``BaseHTTPRequestHandler`` does, with three differences:
the request line, headers and body must arrive within ``REQUEST_DEADLINE`` of its first byte
(408 and close past it, ``request_deadline.py``); an HTTP/0.9 request line (``GET /``, no
version) gets a 400 at once, where the base class would wait for headers such a client never
sends; and a method no handler knows gets a 501 naming it (``server.py`` lists the methods).
"""

from __future__ import annotations

import contextlib
import io
import json
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .auth import ApiKeyAuth
from .connection_slots import ConnectionSlots
from .metrics import UNROUTED, with_metrics
from .openai_format import error_object
from .request_body import BodyTooLarge, read_body
from .request_deadline import DeadlinePassed, DeadlineReader
from .request_errors import RequestError
from .routing import Route
from .settings import Settings, sagemaker_client

__all__ = [
    "ClientGone",
    "Exchange",
    "LogSink",
    "ServerBase",
    "chunk",
    "emit_log_line",
    "lambda_request_id",
    "peer_closed",
]

LogSink = Callable[[dict[str, Any]], None]

_log_lock = threading.Lock()


def emit_log_line(record: dict[str, Any]) -> None:
    """Write one JSON log line to stdout (CloudWatch Logs in Lambda)."""
    line = json.dumps(record, separators=(",", ":"), default=str) + "\n"
    with _log_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


class ServerBase(ThreadingHTTPServer):
    """One thread per connection, at most ``MAX_CONNECTIONS`` of them (a connection past it
    gets a 503); daemon threads so a stuck client never blocks exit.

    ``handler`` is the request handler class (``server.py``'s, an ``Exchange``)."""

    daemon_threads = True
    block_on_close = False  # idle keep-alive connections must not delay shutdown
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        settings: Settings,
        handler: type[BaseHTTPRequestHandler],
        *,
        client: Any = None,
        log: LogSink = emit_log_line,
        address: tuple[str, int] | None = None,
    ) -> None:
        self.settings = settings
        self.routes = settings.routing()
        self.log = log
        self._client = client
        self.auth = _api_key_auth(settings)
        self.slots = ConnectionSlots(settings.max_connections)
        super().__init__(address or (settings.bind_address, settings.port), handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection if a slot is free; else a 503, from this thread."""
        if not self.slots.take():
            self.log(  # before the answer, as every log line (Lambda may freeze after it)
                {
                    "msg": "connection_refused",
                    "status": 503,
                    "error_code": "too_many_connections",
                    "max_connections": self.slots.limit,
                }
            )
            self.slots.refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: its slot is free again
            self.slots.give_back()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.give_back()

    def service_actions(self) -> None:
        """Each turn of the server loop: read and drop what refused clients still send."""
        super().service_actions()
        self.slots.drain()

    def server_close(self) -> None:
        super().server_close()
        self.slots.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection reset or timed out between requests is routine (the adapter's pool)."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    @property
    def client(self) -> Any:
        """The sagemaker-runtime client: the one given, else the container-wide one."""
        if self._client is None:
            self._client = sagemaker_client(self.settings)
        return self._client

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class ClientGone(Exception):
    """The HTTP client went away (reset, broken pipe or socket timeout)."""


class Exchange(BaseHTTPRequestHandler):
    """The request handler's plumbing, shared by every route; subclasses answer requests."""

    server: ServerBase
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each token event is a small write: send it now
    server_version = "constructs-llm-runtime"
    sys_version = ""

    # per-request state (a handler serves every request of one keep-alive connection)
    _record: dict[str, Any]
    _headers_sent: bool
    _must_close: bool
    _logged: bool
    _started: float
    _metered: bool  # a chat request: its log line carries its metrics
    _routed: Route | None  # the route its metrics are counted under, once known
    _reader: DeadlineReader  # under rfile: keeps the request deadline
    _buffered: io.BufferedReader[DeadlineReader]  # rfile

    def setup(self) -> None:
        # socket timeout for every read and write towards the client
        timeout = self.server.settings.client_timeout
        self.request.settimeout(timeout)
        super().setup()
        self.rfile.close()  # the base class's reader; this one keeps the request deadline
        self._reader = DeadlineReader(self.connection, timeout)
        self._buffered = self.rfile = io.BufferedReader(self._reader)

    # -- reading a request --------------------------------------------------------------------

    def handle_one_request(self) -> None:
        """Read one request of the connection and dispatch it (see the module docstring)."""
        self._reader.disarm()
        self.command, self.requestline, self.request_version = "", "", "HTTP/1.0"
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
        if not self.parse_request():  # it answered the error itself
            return
        handler = getattr(self, "do_" + str(self.command), None)
        if handler is None:
            self._unknown_method()
            return
        handler()
        self.wfile.flush()

    def _unknown_method(self) -> None:
        """A method no ``do_*`` handler serves: 501 (``server.py`` names the methods served)."""
        self._protocol_error(
            501, f"the method {self.command!r:.40} is not implemented", "http_error"
        )

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log; ``_dispatch`` logs JSON instead."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's protocol errors (a bad request line or version, headers too long)
        as OpenAI-shaped JSON.

        Always with a status line: a request line that cannot be parsed leaves the handler
        at HTTP/0.9, whose responses have none, and a body alone is no answer."""
        text = message or self.responses.get(code, ("error",))[0]
        self._protocol_error(code, text, "http_error")

    def _protocol_error(self, status: int, message: str, code: str) -> None:
        """An error answered before (or instead of) routing; the connection then closes."""
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
        self._record = {"msg": "request", "method": getattr(self, "command", None) or None}
        self._metered, self._routed = False, None
        self._started = time.perf_counter()
        self._headers_sent, self._must_close, self._logged = False, True, False
        with contextlib.suppress(ClientGone):
            self._send_error(status, message, code=code)

    # -- request body -------------------------------------------------------------------------

    def _read_body(self, limit: int) -> bytes:
        try:
            data = read_body(self.rfile, self.headers, limit=limit)
        except BodyTooLarge as err:
            self._must_close = not err.drained  # a drained body leaves the connection usable
            raise
        except DeadlinePassed as late:  # the rest of the body is unread: close after the 408
            self._must_close = True
            raise RequestError(str(late), status=408, code="request_timeout") from None
        except (OSError, EOFError) as exc:  # a client that stopped sending, or went away
            raise ClientGone from exc
        self._reader.disarm()  # the request has arrived
        self._must_close = False
        return data

    # -- writing ------------------------------------------------------------------------------

    def _log(self) -> None:
        """Write the request's log line, once."""
        if not self._logged:
            self._logged = True
            self._record["duration_ms"] = self._elapsed_ms()
            record = self._record
            if self._metered:
                target, model = _dimensions(self._routed)
                namespace = self.server.settings.metrics_namespace
                record = with_metrics(record, target=target, model=model, namespace=namespace)
            self.server.log(record)

    def _elapsed_ms(self) -> float:
        return round((time.perf_counter() - self._started) * 1000, 3)

    def _end_headers(self) -> None:
        try:
            self.end_headers()
        except OSError as exc:
            raise ClientGone from exc
        self._headers_sent = True

    def _write(self, data: bytes) -> None:
        self._headers_sent = True  # from here on, a failure can only close the connection
        try:
            self.wfile.write(data)
        except OSError as exc:
            raise ClientGone from exc

    def _send_json(self, status: int, obj: Any, *, allow: str | None = None) -> None:
        data = json.dumps(obj, separators=(",", ":")).encode()
        self._record["status"] = status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if allow is not None:
            self.send_header("Allow", allow)
        if self._must_close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self._log()  # before the last byte: Lambda may freeze the process right after it
        self._end_headers()
        if self.command != "HEAD":
            self._write(data)

    def _send_error(
        self,
        status: int,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        allow: str | None = None,
    ) -> None:
        self._record["error_code"] = code
        body = error_object(message, error_type=error_type, param=param, code=code)
        self._send_json(status, body, allow=allow)

    def _try_send_error(self, status: int, message: str, error_type: str) -> None:
        self._must_close = True
        with contextlib.suppress(ClientGone):
            self._send_error(status, message, error_type=error_type, code=error_type)


def _dimensions(route: Route | None) -> tuple[str, str]:
    """A chat request's metric dimensions: its route's target and model; a request refused
    before a runtime serving several models knew its model is counted under ``-``."""
    if route is None:
        return UNROUTED, UNROUTED
    return route.inference_component_name or route.endpoint_name, route.model


def chunk(data: bytes) -> bytes:
    """One HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def peer_closed(sock: socket.socket) -> bool:
    """True when the client has closed its end (readable with nothing to read)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def lambda_request_id(header: str | None) -> str | None:
    """The Lambda request id from the adapter's ``x-amzn-lambda-context`` header."""
    if not header:
        return None
    try:
        value = json.loads(header).get("request_id")
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None


def _api_key_auth(settings: Settings) -> ApiKeyAuth | None:
    if settings.api_keys_secret_id is None:
        return None
    return ApiKeyAuth(settings.api_keys_secret_id, ttl=settings.api_keys_ttl)
