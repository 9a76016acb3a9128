"""The streaming Lambda's HTTP server: OpenAI Chat Completions in front of a SageMaker endpoint.

Stdlib + boto3 only: this file ships in the Lambda asset, where the Lambda Web Adapter relays
each function URL request to it over loopback HTTP/1.1 and streams the response back
(``AWS_LWA_INVOKE_MODE=response_stream``). This module is the I/O loop only: ``requests``
validates, ``upstream`` calls SageMaker, ``parser`` reads the stream, ``openai_format``
writes the answer.

Routes:

- ``POST /v1/chat/completions``: ``stream: true`` answers ``text/event-stream`` with HTTP/1.1
  chunked encoding, one ``chat.completion.chunk`` event per token, each written and sent as
  soon as it is parsed: a role chunk first, a chunk with ``finish_reason`` last, then
  ``data: [DONE]``. With ``stream_options: {"include_usage": true}`` a chunk with empty
  ``choices`` and ``usage`` comes just before ``[DONE]`` if the engine reported both token
  counts. The status line goes out with the first token (one write), so a stream that fails
  before any token gets a real error status; unless ``HEARTBEAT_SECONDS`` is set and the
  first token is slower than that: then the status line goes out with the first
  ``: keep-alive`` comment, and an early failure ends the stream like a late one (see
  ``settings.py`` and ``heartbeat.py``). ``stream: false`` answers one
  ``chat.completion`` JSON (the engine still streams; the server aggregates), with ``usage``
  on the same condition.
  Tool calls stream as ``delta.tool_calls`` chunks and come back as ``message.tool_calls``
  (``openai_format.py``).
- ``GET /health``: 200 (the adapter's readiness check); not logged.
- ``GET /v1/models``: every served model; ``GET /v1/models/{model}``: that model, or 404.

Routing (``routing.py``): with several routes, a request's ``model`` picks the endpoint and
inference component it goes to, and that route's request and stream formats; a missing
``model`` is a 400, an unknown one a 404 ``model_not_found``. ``X-Target-Variant`` pins a
production variant (SageMaker's ``TargetVariant``).

Errors: 400 invalid request, 411 no body length, 413 body over ``MAX_BODY_BYTES`` (read to
its end first when it is within the function URL's 6 MB, so the client reads the 413; see
``request_body.py``), 404, 405, and the upstream tables in ``upstream.py``; all with an
OpenAI-shaped ``{"error": {...}}`` body, and always after a status line, even for a request
line that cannot be parsed. A failure after the first token ends the stream with
``data: {"error": {...}}`` then ``data: [DONE]`` and a clean end of the body. A client that
hangs up closes the upstream stream at the next write (or, for ``stream: false``, within
``_PEER_CHECK_SECONDS``).

With ``API_KEYS_SECRET_ID`` set, every route but ``/health`` first checks the request's
``Authorization: Bearer`` key (``auth.py``): 401 ``invalid_api_key`` without a current key.

Each request except ``/health`` logs one JSON line to stdout (never the prompt, the text or a
key); a chat request's line is also a CloudWatch Embedded Metric Format record of its LLM
metrics, by the target and model it went to (``metrics.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import select
import socket
import sys
import threading
import time
import traceback
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .auth import ApiKeyAuth
from .events import DoneEvent, ErrorEvent, StreamEvent, TokenEvent, ToolCallEvent
from .heartbeat import Heartbeat
from .metrics import UNROUTED, with_metrics
from .openai_format import (
    DONE,
    KEEP_ALIVE,
    ChunkEncoder,
    CompletionBuilder,
    error_object,
    new_completion_id,
    sse,
)
from .parser import parse_stream
from .request_body import BodyTooLarge, read_body
from .requests import ChatRequest, RequestError, build_chat_request, load_request
from .routing import VARIANT_HEADER, Route, model_not_found, target_variant
from .sagemaker_stream import iter_payload_parts
from .settings import Settings, sagemaker_client
from .upstream import UpstreamFailure, describe_failure, describe_stream_error, invoke, release

__all__ = [
    "CHAT_PATH",
    "HEALTH_PATH",
    "MODELS_PATH",
    "RuntimeServer",
    "emit_log_line",
    "make_server",
]

CHAT_PATH = "/v1/chat/completions"
HEALTH_PATH = "/health"
MODELS_PATH = "/v1/models"
_MODEL_PREFIX = MODELS_PATH + "/"
_ROUTES: dict[str, tuple[str, ...]] = {
    CHAT_PATH: ("POST",),
    HEALTH_PATH: ("GET", "HEAD"),
    MODELS_PATH: ("GET", "HEAD"),
    _MODEL_PREFIX + "{model}": ("GET", "HEAD"),
}
_PEER_CHECK_SECONDS = 0.25  # how often a stream:false request checks that its client is there

LogSink = Callable[[dict[str, Any]], None]

_log_lock = threading.Lock()


def emit_log_line(record: dict[str, Any]) -> None:
    """Write one JSON log line to stdout (CloudWatch Logs in Lambda)."""
    line = json.dumps(record, separators=(",", ":"), default=str) + "\n"
    with _log_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


class RuntimeServer(ThreadingHTTPServer):
    """One thread per connection; daemon threads so a stuck client never blocks exit."""

    daemon_threads = True
    block_on_close = False  # idle keep-alive connections must not delay shutdown
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        settings: Settings,
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
        super().__init__(address or (settings.bind_address, settings.port), _Handler)

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


class _ClientGone(Exception):
    """The HTTP client went away (reset, broken pipe or socket timeout)."""


class _Handler(BaseHTTPRequestHandler):
    server: RuntimeServer
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
    _target: Route  # the chat request's route, once picked
    _variant: str | None  # the production variant it pins (X-Target-Variant)
    _metered: bool  # a chat request: its log line carries its metrics
    _routed: Route | None  # the route its metrics are counted under, once known

    def setup(self) -> None:
        # socket timeout for every read and write towards the client
        self.request.settimeout(self.server.settings.client_timeout)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log; ``_dispatch`` logs JSON instead."""

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_GET

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors (bad request line, unknown method) as OpenAI-shaped JSON.

        Always with a status line: a request line that cannot be parsed leaves the handler
        at HTTP/0.9, whose responses have none, and a body alone is no answer."""
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
        self._record = {"msg": "request", "method": getattr(self, "command", None)}
        self._metered, self._routed = False, None
        self._started = time.perf_counter()
        self._headers_sent, self._must_close, self._logged = False, True, False
        text = message or self.responses.get(code, ("error",))[0]
        with contextlib.suppress(_ClientGone):
            self._send_error(code, text, code="http_error")

    # -- routing -----------------------------------------------------------------------------

    def _dispatch(self) -> None:
        if self.request_version == "HTTP/0.9":  # "GET /": answer with a status line
            self.send_error(400, "HTTP/0.9 requests are not served; send HTTP/1.1")
            return
        self._started = time.perf_counter()
        path = self.path.split("?", 1)[0]
        self._headers_sent = False
        # A body we do not read would be parsed as the next request: close unless consumed.
        self._must_close = bool(
            self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length", "0") != "0"
        )
        self._record = {"msg": "request", "method": self.command, "path": path[:200]}
        self._logged = path == HEALTH_PATH  # readiness checks are not logged
        self._metered = path == CHAT_PATH
        routes = self.server.routes.routes  # one route counts every request, even unread ones
        self._routed = routes[0] if len(routes) == 1 else None
        request_id = _lambda_request_id(self.headers.get("x-amzn-lambda-context"))
        if request_id:
            self._record["request_id"] = request_id
        try:
            self._route(path)
        except _ClientGone:
            self.close_connection = True
            self._record["client_disconnected"] = True
        except Exception as exc:  # a bug: answer 500 if the status line is not out yet
            traceback.print_exc(file=sys.stderr)
            self._record["exception"] = type(exc).__name__
            if self._headers_sent:
                self.close_connection = True
            else:
                self._try_send_error(500, f"internal error: {type(exc).__name__}", "server_error")
        finally:
            self._log()

    def _route(self, path: str) -> None:
        auth = self.server.auth
        denial = (
            auth.check(self.headers.get("Authorization")) if auth and path != HEALTH_PATH else None
        )
        if denial is not None:
            self._record["auth"] = denial.reason
            self._send_error(
                denial.status, denial.message, error_type=denial.error_type, code=denial.code
            )
            return
        model = None
        if path.startswith(_MODEL_PREFIX):
            model, path = (
                urllib.parse.unquote(path[len(_MODEL_PREFIX) :]),
                _MODEL_PREFIX + "{model}",
            )
        allowed = _ROUTES.get(path)
        if allowed is None:
            routes = ", ".join(sorted(_ROUTES))
            message = f"no route for {path[:200]!r}; this server serves {routes}"
            self._send_error(404, message, error_type="not_found_error", code="not_found")
        elif self.command not in allowed:
            message = f"{self.command} is not allowed on {path}; use {' or '.join(allowed)}"
            self._send_error(405, message, code="method_not_allowed", allow=", ".join(allowed))
        elif path == CHAT_PATH:
            self._chat()
        elif path == HEALTH_PATH:
            self._send_json(200, {"status": "ok"})
        elif model is None:
            listed = [_model_object(name) for name in self.server.routes.models]
            self._send_json(200, {"object": "list", "data": listed})
        elif self.server.routes.find(model) is not None:
            self._send_json(200, _model_object(model))
        else:
            err = model_not_found(model, self.server.routes.models)
            self._send_error(err.status, err.message, param=err.param, code=err.code)

    # -- chat completions ---------------------------------------------------------------------

    def _chat(self) -> None:
        settings = self.server.settings
        try:
            data = load_request(self._read_body(settings.max_body_bytes))
            self._target = self._routed = route = self.server.routes.pick(data.get("model"))
            self._variant = target_variant(route, self.headers.get(VARIANT_HEADER))
            fmt = route.request_format
            request = build_chat_request(data, fmt, tools=settings.tools_for(route))
        except RequestError as err:
            self._send_error(
                err.status, err.message, error_type=err.error_type, param=err.param, code=err.code
            )
            return
        self._record["model"] = route.model
        if self._variant is not None:
            self._record["target_variant"] = self._variant
        self._record["stream"] = request.stream
        # Started before the call: the wait for SageMaker's answer is silence too.
        heartbeat = None
        if request.stream and settings.heartbeat_seconds > 0:
            heartbeat = self._start_heartbeat(settings.heartbeat_seconds)
        try:
            self._invoke_and_answer(request, heartbeat)
        finally:
            if heartbeat is not None:
                heartbeat.stop()  # a no-op unless something unexpected raised

    def _invoke_and_answer(self, request: ChatRequest, heartbeat: Heartbeat | None) -> None:
        route = self._target
        self._record["overhead_ms"] = self._elapsed_ms()
        try:
            upstream = invoke(
                self.server.client, route, request.engine_body, target_variant=self._variant
            )
        except Exception as exc:
            failure = describe_failure(exc)
            self._record["upstream_error"] = failure.upstream_code or type(exc).__name__
            if heartbeat is not None and self._stop_heartbeat(heartbeat):
                self._end_stream_with_error(failure)
            else:
                self._send_error(
                    failure.status,
                    failure.message,
                    error_type=failure.error_type,
                    code=failure.code,
                )
            return
        parts = iter_payload_parts(upstream)
        # parse_stream closes an iterator it is given; the callable-iterator form has no
        # close(), so the connection's fate stays here (see upstream.release).
        events = parse_stream(iter(parts.__next__, None), route.stream_format)
        completed = False
        try:
            if request.stream:
                completed = self._stream(_terminated(events), request, heartbeat)
            else:
                completed = self._complete(_terminated(events), request)
        finally:
            events.close()
            release(parts, completed=completed)

    def _stream(
        self, events: Iterator[StreamEvent], request: ChatRequest, heartbeat: Heartbeat | None
    ) -> bool:
        """Relay the events as SSE; True when the stream ended normally."""
        if heartbeat is None:
            first, head_sent = next(events), False
        else:
            try:
                first = next(events)
            finally:
                head_sent = self._stop_heartbeat(heartbeat)
        if type(first) is ErrorEvent:
            if head_sent:  # too late for a status: end the stream with the error
                self._end_stream_with_error(describe_stream_error(first))
            else:  # nothing sent yet: answer with a real HTTP status
                self._fail(first)
            return False
        encoder = ChunkEncoder(
            completion_id=new_completion_id(),
            created=int(time.time()),
            model=self._target.model,
            logprobs=request.logprobs,
        )
        chunked = self.request_version != "HTTP/1.0"  # 1.0 clients get a close-delimited body
        frame = _chunk if chunked else bytes
        if not chunked:
            self.close_connection = True
        # The status line, headers and role chunk go out with the first token: one write.
        head = b"" if head_sent else self._stream_head(chunked)
        pending = head + frame(encoder.role())
        self._record["status"] = 200
        tokens = 0
        for event in itertools.chain((first,), events):
            kind = type(event)
            if kind is TokenEvent or kind is ToolCallEvent:
                if kind is TokenEvent:
                    self._write(pending + frame(encoder.token(event)))  # type: ignore[arg-type]
                else:
                    self._write(pending + frame(encoder.tool_call(event)))  # type: ignore[arg-type]
                pending = b""
                tokens += 1
                if tokens == 1:
                    self._record["ttft_ms"] = self._elapsed_ms()
                continue
            self._record["tokens"] = tokens
            if encoder.tool_calls:
                self._record["tool_calls"] = encoder.tool_calls
            if type(event) is DoneEvent:
                last = encoder.finish(event)
                if request.include_usage:
                    last += encoder.usage(event)
                last += DONE
                self._record_done(event)
            else:
                assert isinstance(event, ErrorEvent)
                failure = describe_stream_error(event)
                self._record["stream_error"] = failure.code
                error = error_object(
                    failure.message, error_type=failure.error_type, code=failure.code
                )
                last = sse(error) + DONE
            self._log()  # before the last byte: Lambda may freeze the process right after it
            self._write(pending + frame(last) + (b"0\r\n\r\n" if chunked else b""))
            return type(event) is DoneEvent
        return False

    def _start_heartbeat(self, interval: float) -> Heartbeat:
        """Keep-alive comments (after the SSE head) every ``interval`` until the first event."""
        chunked = self.request_version != "HTTP/1.0"
        beat = _chunk(KEEP_ALIVE) if chunked else KEEP_ALIVE
        return Heartbeat(
            self.wfile.write, head=self._stream_head(chunked), beat=beat, interval=interval
        )

    def _stop_heartbeat(self, heartbeat: Heartbeat) -> bool:
        """Stop it; True when it already sent the status line (no error status any more)."""
        sent, failed = heartbeat.stop()
        if sent or failed:
            self._headers_sent = True
        if sent:
            self._record["status"] = 200
            self._record["heartbeats"] = sent
        if failed:  # noticed only now: the upstream call is closed on the way out
            raise _ClientGone
        return sent > 0

    def _end_stream_with_error(self, failure: UpstreamFailure) -> None:
        """End an SSE stream whose head is out (and no token) with the error and ``[DONE]``."""
        self._record["stream_error"] = failure.code
        self._record["tokens"] = 0
        error = error_object(failure.message, error_type=failure.error_type, code=failure.code)
        last = sse(error) + DONE
        self._log()  # before the last byte: Lambda may freeze the process right after it
        if self.request_version == "HTTP/1.0":
            self.close_connection = True
            self._write(last)
        else:
            self._write(_chunk(last) + b"0\r\n\r\n")

    def _stream_head(self, chunked: bool) -> bytes:
        """Status line and headers of an SSE response, as bytes to send with the first event."""
        lines = [
            f"{self.protocol_version} 200 OK",
            f"Server: {self.version_string()}",
            f"Date: {self.date_time_string()}",
            "Content-Type: text/event-stream; charset=utf-8",
            "Cache-Control: no-cache",
            "X-Accel-Buffering: no",
        ]
        if chunked:
            lines.append("Transfer-Encoding: chunked")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _complete(self, events: Iterator[StreamEvent], request: ChatRequest) -> bool:
        """Answer one chat.completion; True when the stream ended normally."""
        builder = CompletionBuilder(
            completion_id=new_completion_id(),
            created=int(time.time()),
            model=self._target.model,
            logprobs=request.logprobs,
        )
        next_check = time.monotonic() + _PEER_CHECK_SECONDS
        for event in events:
            kind = type(event)
            if kind is TokenEvent or kind is ToolCallEvent:
                if kind is TokenEvent:
                    builder.add(event)  # type: ignore[arg-type]
                else:
                    builder.add_tool_call(event)  # type: ignore[arg-type]
                if "ttft_ms" not in self._record:
                    self._record["ttft_ms"] = self._elapsed_ms()
                if time.monotonic() >= next_check:
                    if _peer_closed(self.connection):
                        raise _ClientGone
                    next_check = time.monotonic() + _PEER_CHECK_SECONDS
                continue
            self._record["tokens"] = builder.tokens
            if builder.tool_calls:
                self._record["tool_calls"] = builder.tool_calls
            if type(event) is DoneEvent:
                self._record_done(event)
                self._send_json(200, builder.build(event))
                return True
            assert isinstance(event, ErrorEvent)
            self._fail(event)
            return False
        return False

    def _record_done(self, done: DoneEvent) -> None:
        self._record["finish_reason"] = done.finish_reason
        if done.prompt_tokens is not None:
            self._record["prompt_tokens"] = done.prompt_tokens
        if done.completion_tokens is not None:
            self._record["completion_tokens"] = done.completion_tokens

    def _fail(self, event: ErrorEvent) -> None:
        """Answer a stream that failed before anything was sent with its mapped status."""
        failure = describe_stream_error(event)
        self._record["stream_error"] = failure.code
        self._send_error(
            failure.status, failure.message, error_type=failure.error_type, code=failure.code
        )

    # -- request body -------------------------------------------------------------------------

    def _read_body(self, limit: int) -> bytes:
        try:
            data = read_body(self.rfile, self.headers, limit=limit)
        except BodyTooLarge as err:
            self._must_close = not err.drained  # a drained body leaves the connection usable
            raise
        except (OSError, EOFError) as exc:  # a client that stopped sending, or went away
            raise _ClientGone from exc
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
            raise _ClientGone from exc
        self._headers_sent = True

    def _write(self, data: bytes) -> None:
        self._headers_sent = True  # from here on, a failure can only close the connection
        try:
            self.wfile.write(data)
        except OSError as exc:
            raise _ClientGone from exc

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
        with contextlib.suppress(_ClientGone):
            self._send_error(status, message, error_type=error_type, code=error_type)


def _model_object(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "sagemaker"}


def _terminated(events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """The events, guaranteed to end with one terminal event even if the source raises."""
    try:
        for event in events:
            yield event
            if type(event) is not TokenEvent and type(event) is not ToolCallEvent:
                return
    except Exception as exc:  # the upstream read failed in a way the parser did not map
        yield ErrorEvent(message=f"reading the model stream failed: {exc}", code=type(exc).__name__)
        return
    yield ErrorEvent(message="the model stream ended without a final event", code="incomplete")


def _dimensions(route: Route | None) -> tuple[str, str]:
    """A chat request's metric dimensions: its route's target and model; a request refused
    before a runtime serving several models knew its model is counted under ``-``."""
    if route is None:
        return UNROUTED, UNROUTED
    return route.inference_component_name or route.endpoint_name, route.model


def _chunk(data: bytes) -> bytes:
    """One HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def _peer_closed(sock: socket.socket) -> bool:
    """True when the client has closed its end (readable with nothing to read)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _lambda_request_id(header: str | None) -> str | None:
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


def make_server(
    settings: Settings, *, client: Any = None, log: LogSink = emit_log_line
) -> RuntimeServer:
    """A server bound to ``settings.bind_address:settings.port`` (port 0 picks a free one)."""
    return RuntimeServer(settings, client=client, log=log)
