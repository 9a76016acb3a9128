"""The streaming Lambda's HTTP server: OpenAI Chat Completions in front of a SageMaker endpoint.

Stdlib + boto3 only: this file ships in the Lambda asset, where the Lambda Web Adapter relays
each function URL request to it over loopback HTTP/1.1 and streams the response back
(``AWS_LWA_INVOKE_MODE=response_stream``). This module routes each request; the rest is
I/O plumbing and one module per step: ``http_exchange`` (per-request state, log line, writes),
``chat_flow`` (a chat request to its events: ``requests`` validates, ``upstream`` calls
SageMaker, ``parser`` reads the stream), ``chat_answers`` (SSE or JSON, in ``openai_format``).

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
- ``POST /v1/responses``: the OpenAI Responses API, stateless, on the same engine request
  (``responses_request.py`` says what is served and refused, ``responses_stream.py`` the
  event sequence); the same errors, auth, routing and metrics as chat.
- ``POST /v1/embeddings``: OpenAI's embeddings API for an embedding model (TEI), one
  ``InvokeEndpoint`` call per batch of inputs (``embeddings_flow.py``; what is served and
  refused is in ``embeddings_request.py``); the same errors, auth, routing and metrics as chat.
  A chat request for an embedding model, or an embeddings request for a chat model, gets a
  400 ``model_kind_mismatch`` naming the model's kind.
- ``GET /health``: 200 (the adapter's readiness check); not logged.
- ``GET /v1/models``: every served model, chat and embedding; ``GET /v1/models/{model}``:
  that model, or 404.

Routing (``routing.py``): with several routes, a request's ``model`` picks the endpoint and
inference component it goes to, and that route's request and stream formats; a missing
``model`` is a 400, an unknown one a 404 ``model_not_found``. ``X-Target-Variant`` pins a
production variant (SageMaker's ``TargetVariant``).

Errors: 400 invalid request, 411 no body length, 413 body over ``MAX_BODY_BYTES`` (read to
its end first when it is within the function URL's 6 MB, so the client reads the 413; see
``request_body.py``), 404, 405, 501, 408 for a request not received within
``REQUEST_DEADLINE``, 503 past ``MAX_CONNECTIONS`` (``http_exchange.py``), and the upstream
tables in ``upstream.py``; all with an OpenAI-shaped ``{"error": {...}}`` body, and always
after a status line, even for a request line that cannot be parsed. A failure after the
first token ends the stream with ``data: {"error": {...}}`` then ``data: [DONE]`` and a clean
end of the body. A client that hangs up closes the upstream stream at the next write (or, for
``stream: false``, within ``chat_answers.PEER_CHECK_SECONDS``).

Methods, as RFC 9110 (section 9.1) has them: a method the server does not recognize (``BREW``,
or ``TRACE``, which it does not implement) gets 501 ``method_not_implemented`` naming it and
the methods served, and closes the connection; a method it knows (GET, HEAD, POST, PUT, DELETE,
PATCH, OPTIONS) on a path that does not take it gets 405 ``method_not_allowed`` with an
``Allow`` header listing those the path takes (section 15.5.6).

With ``API_KEYS_SECRET_ID`` set, every route but ``/health`` first checks the request's
``Authorization: Bearer`` key (``auth.py``): 401 ``invalid_api_key`` without a current key.

Each request except ``/health`` logs one JSON line to stdout (never the prompt, the text or a
key); a chat, responses or embeddings request's line is also a CloudWatch Embedded Metric
Format record of its metrics, by the target and model it went to (``metrics.py``).
"""

from __future__ import annotations

import sys
import time
import traceback
import urllib.parse
from typing import Any

from .embeddings_flow import EmbeddingsExchange
from .http_exchange import ClientGone, LogSink, ServerBase, emit_log_line, lambda_request_id
from .responses_fields import NO_STORED_RESPONSES
from .responses_flow import ResponsesExchange
from .routing import model_not_found
from .settings import Settings

__all__ = [
    "CHAT_PATH",
    "EMBEDDINGS_PATH",
    "HEALTH_PATH",
    "MODELS_PATH",
    "RESPONSES_PATH",
    "RuntimeServer",
    "emit_log_line",
    "make_server",
]

CHAT_PATH = "/v1/chat/completions"
EMBEDDINGS_PATH = "/v1/embeddings"
HEALTH_PATH = "/health"
MODELS_PATH = "/v1/models"
RESPONSES_PATH = "/v1/responses"
_MODEL_PREFIX = MODELS_PATH + "/"
_ROUTES: dict[str, tuple[str, ...]] = {
    CHAT_PATH: ("POST",),
    RESPONSES_PATH: ("POST",),
    EMBEDDINGS_PATH: ("POST",),
    HEALTH_PATH: ("GET", "HEAD"),
    MODELS_PATH: ("GET", "HEAD"),
    _MODEL_PREFIX + "{model}": ("GET", "HEAD"),
}


class RuntimeServer(ServerBase):
    """The runtime's HTTP server: ``ServerBase`` with this module's request handler."""

    def __init__(
        self,
        settings: Settings,
        *,
        client: Any = None,
        log: LogSink = emit_log_line,
        address: tuple[str, int] | None = None,
    ) -> None:
        super().__init__(settings, _Handler, client=client, log=log, address=address)


class _Handler(EmbeddingsExchange, ResponsesExchange):
    """Routes each request of a connection: chat, responses, embeddings, health, models, or a
    404/405."""

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_GET

    def _dispatch(self) -> None:
        self._started = time.perf_counter()
        path = self.path.split("?", 1)[0]
        self._headers_sent = False
        # A body we do not read would be parsed as the next request: close unless consumed.
        self._must_close = bool(
            self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length", "0") != "0"
        )
        self._record = {"msg": "request", "method": self.command, "path": path[:200]}
        self._logged = path == HEALTH_PATH  # readiness checks are not logged
        self._metered = path in (CHAT_PATH, RESPONSES_PATH, EMBEDDINGS_PATH)
        routes = self.server.routes.routes  # one route counts every request, even unread ones
        self._routed = routes[0] if len(routes) == 1 else None
        request_id = lambda_request_id(self.headers.get("x-amzn-lambda-context"))
        if request_id:
            self._record["request_id"] = request_id
        try:
            self._route(path)
        except ClientGone:
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

    def _unknown_method(self) -> None:
        served = ", ".join(sorted({method for allowed in _ROUTES.values() for method in allowed}))
        message = (
            f"the method {str(self.command)[:40]!r} is not implemented by this server; it "
            f"serves {served}"
        )
        self._protocol_error(501, message, "method_not_implemented")

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
            if path.startswith(RESPONSES_PATH + "/"):
                message += f" ({NO_STORED_RESPONSES})"
            self._send_error(404, message, error_type="not_found_error", code="not_found")
        elif self.command not in allowed:
            message = f"{self.command} is not allowed on {path}; use {' or '.join(allowed)}"
            self._send_error(405, message, code="method_not_allowed", allow=", ".join(allowed))
        elif path == CHAT_PATH:
            self._chat()
        elif path == RESPONSES_PATH:
            self._responses()
        elif path == EMBEDDINGS_PATH:
            self._embeddings()
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


def _model_object(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "sagemaker"}


def make_server(
    settings: Settings, *, client: Any = None, log: LogSink = emit_log_line
) -> RuntimeServer:
    """A server bound to ``settings.bind_address:settings.port`` (port 0 picks a free one)."""
    return RuntimeServer(settings, client=client, log=log)
