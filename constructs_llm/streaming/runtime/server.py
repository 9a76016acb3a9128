"""The runtime's routes: OpenAI's Chat Completions, Responses and embeddings APIs in front of
SageMaker endpoints, each path answered by its API's handler.

Stdlib + boto3 only: this file ships in the Lambda asset. ``http/`` serves HTTP (connections,
requests, writes, errors, API keys); each API has its folder (``chat/``, ``responses/``,
``embeddings/``) with its request's field table and its handler; ``generation.py`` invokes an
engine and answers its stream for chat and Responses alike.

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
  ``settings.py`` and ``http/heartbeat.py``). ``stream: false`` answers one
  ``chat.completion`` JSON (the engine still streams; the server aggregates), with ``usage``
  on the same condition. Tool calls stream as ``delta.tool_calls`` chunks and come back as
  ``message.tool_calls`` (``chat/stream.py``, ``chat/completion.py``).
- ``POST /v1/responses``: the OpenAI Responses API, stateless, on the same engine request
  (``responses/fields.py`` says what is served and refused, ``responses/stream.py`` the
  event sequence); the same errors, auth, routing and metrics as chat.
- ``POST /v1/embeddings``: OpenAI's embeddings API for an embedding model (TEI), one
  ``InvokeEndpoint`` call per batch of inputs (``embeddings/handler.py``; what is served and
  refused is in ``embeddings/fields.py``); the same errors, auth, routing and metrics as
  chat. A chat request for an embedding model, or an embeddings request for a chat model,
  gets a 400 ``model_kind_mismatch`` naming the model's kind.
- ``POST /v1/files``, ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``POST
  /v1/batches``, ``GET /v1/batches``, ``GET /v1/batches/{id}``, ``POST
  /v1/batches/{id}/cancel``: OpenAI's Batch API on a Step Functions distributed map
  (``files/handler.py``, ``batches/handler.py``), when ``StreamingInvoker.add_batch_api()``
  set ``BATCH_BUCKET``; else a 404 saying how to enable it.
- ``GET /health``: 200 (the adapter's readiness check); not logged.
- ``GET /v1/models``: every served model, chat and embedding; ``GET /v1/models/{model}``:
  that model, or 404.

Routing (``routing.py``): with several routes, a request's ``model`` picks the endpoint and
inference component it goes to, and that route's request and stream formats; a missing
``model`` is a 400, an unknown one a 404 ``model_not_found``. ``X-Target-Variant`` pins a
production variant (SageMaker's ``TargetVariant``).

Errors: 400 invalid request, 411 no body length, 413 body over ``MAX_BODY_BYTES`` (read to
its end first when it is within the function URL's 6 MB, so the client reads the 413; see
``http/body.py``), 404, 405, 501, 408 for a request not received within ``REQUEST_DEADLINE``,
503 past ``MAX_CONNECTIONS`` (``http/connection_slots.py``), and the upstream tables in
``upstream.py``; all with an OpenAI-shaped ``{"error": {...}}`` body, and always after a status
line, even for a request line that cannot be parsed. A failure after the first token ends the
stream with ``data: {"error": {...}}`` then ``data: [DONE]`` and a clean end of the body. A
client that hangs up closes the upstream stream at the next write (or, for ``stream: false``,
within ``generation.PEER_CHECK_SECONDS``).

Methods, as RFC 9110 (section 9.1) has them: a method the server does not recognize (``BREW``,
or ``TRACE``, which it does not implement) gets 501 ``method_not_implemented`` naming it and
the methods served, and closes the connection (``http/connection.py``); a method it knows
(GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS) on a path that does not take it gets 405
``method_not_allowed`` with an ``Allow`` header listing those the path takes (section
15.5.6).

Before any handler, every route but ``/health`` checks, in this order: with
``ORIGIN_SECRET_ID``, CloudFront's ``x-origin-verify`` header (``http/origin_secret.py``): 403
``origin_not_allowed`` without the right value, so the function URL answers its distribution
alone; with ``CORS_ALLOWED_ORIGINS``, a CORS preflight is answered (``http/cors.py``: 204, or
403 without CORS headers for an origin not allowed), and every later answer to an allowed
origin carries its CORS headers; with ``API_KEYS_SECRET_ID``, the request's ``Authorization:
Bearer`` key (``http/auth.py``): 401 ``invalid_api_key`` without a current key.

Each request except ``/health`` logs one JSON line to stdout (never the prompt, the text or a
key); a chat, responses or embeddings request's line is also a CloudWatch Embedded Metric
Format record of its metrics, by the target and model it went to (``metrics.py``).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from .batches.handler import BATCH_PREFIX, BATCHES_PATH, serve_batch, serve_batches
from .chat.handler import serve_chat
from .embeddings.handler import serve_embeddings
from .files.handler import FILE_PREFIX, FILES_PATH, serve_file, serve_files
from .http.connection import Connection
from .http.cors import CorsPolicy
from .http.exchange import Exchange, LogSink, emit_log_line
from .http.origin_secret import HEADER as ORIGIN_HEADER
from .http.server import HttpServer
from .responses.handler import serve_responses
from .responses.stateless import NO_STORED_RESPONSES
from .routing import model_not_found
from .settings import Settings

CHAT_PATH = "/v1/chat/completions"
_EMBEDDINGS_PATH = "/v1/embeddings"
_HEALTH_PATH = "/health"
_MODELS_PATH = "/v1/models"
_RESPONSES_PATH = "/v1/responses"
_MODEL_PREFIX = _MODELS_PATH + "/"
_MODEL_PATH = _MODEL_PREFIX + "{model}"


def _health(exchange: Exchange) -> None:
    exchange.send_json(200, {"status": "ok"})


def _models(exchange: Exchange) -> None:
    listed = [_model_object(name) for name in exchange.server.routes.models]
    exchange.send_json(200, {"object": "list", "data": listed})


def _model(exchange: Exchange) -> None:
    model = urllib.parse.unquote(exchange.path[len(_MODEL_PREFIX) :])
    if exchange.server.routes.find(model) is not None:
        exchange.send_json(200, _model_object(model))
        return
    exchange.refuse(model_not_found(model, exchange.server.routes.models))


def _model_object(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "sagemaker"}


#: Each path: the methods it takes, and its handler.
_PATHS: dict[str, tuple[tuple[str, ...], Callable[[Exchange], None]]] = {
    CHAT_PATH: (("POST",), serve_chat),
    _RESPONSES_PATH: (("POST",), serve_responses),
    _EMBEDDINGS_PATH: (("POST",), serve_embeddings),
    _HEALTH_PATH: (("GET", "HEAD"), _health),
    _MODELS_PATH: (("GET", "HEAD"), _models),
    _MODEL_PATH: (("GET", "HEAD"), _model),
    FILES_PATH: (("POST",), serve_files),
    FILE_PREFIX + "{file_id}": (("GET", "HEAD"), serve_file),
    FILE_PREFIX + "{file_id}/content": (("GET",), serve_file),
    BATCHES_PATH: (("GET", "POST"), serve_batches),
    BATCH_PREFIX + "{batch_id}": (("GET", "HEAD"), serve_batch),
    BATCH_PREFIX + "{batch_id}/cancel": (("POST",), serve_batch),
}
_METERED = frozenset({CHAT_PATH, _RESPONSES_PATH, _EMBEDDINGS_PATH})
_METHODS = tuple(sorted({method for methods, _ in _PATHS.values() for method in methods}))


def _admitted(exchange: Exchange) -> bool:
    """The checks before any handler, in order: CloudFront's origin secret (403), then CORS
    (a preflight is answered here, without credentials), then the API key (401). False once
    the request is answered."""
    server = exchange.server
    denial = server.origin.check(exchange.headers.get(ORIGIN_HEADER)) if server.origin else None
    cors = exchange.settings.cors
    if denial is None and cors is not None:
        allow_origin = cors.allowed(exchange.headers.get("Origin"))
        exchange.extra_headers = cors.answer_headers(allow_origin)
        if CorsPolicy.is_preflight(exchange.command, exchange.headers):
            exchange.record["cors_preflight"] = allow_origin is not None
            if allow_origin is None:
                message = "this origin may not call this server (CORS)"
                exchange.send_error(403, message, error_type="permission_error", code="cors")
                return False
            exchange.extra_headers = cors.preflight_headers(allow_origin)
            exchange.send_no_content()
            return False
    if denial is None and server.auth is not None:
        denial = server.auth.check(exchange.headers.get("Authorization"))
    if denial is None:
        return True
    exchange.record["auth"] = denial.reason
    exchange.send_error(
        denial.status, denial.message, error_type=denial.error_type, code=denial.code
    )
    return False


def dispatch(exchange: Exchange) -> None:
    """Answer one request: the checks of ``_admitted``, then its path's handler (or a
    404/405)."""
    path = exchange.path
    exchange.record["path"] = path[:200]
    exchange.logged = path == _HEALTH_PATH  # readiness checks are not logged
    exchange.metered = path in _METERED
    routes = exchange.server.routes.routes  # one route counts every request, even unread ones
    exchange.route = routes[0] if len(routes) == 1 else None
    if path != _HEALTH_PATH and not _admitted(exchange):
        return
    key = _path_key(path)
    served = _PATHS.get(key)
    if served is None:
        paths = ", ".join(sorted(_PATHS))
        message = f"no route for {path[:200]!r}; this server serves {paths}"
        if path.startswith(_RESPONSES_PATH + "/"):
            message += f" ({NO_STORED_RESPONSES})"
        exchange.send_error(404, message, error_type="not_found_error", code="not_found")
        return
    methods, handler = served
    if exchange.command not in methods:
        message = f"{exchange.command} is not allowed on {key}; use {' or '.join(methods)}"
        exchange.send_error(405, message, code="method_not_allowed", allow=", ".join(methods))
        return
    handler(exchange)


def _path_key(path: str) -> str:
    """The ``_PATHS`` key a path falls under: a model's, a file's or a batch's path by its
    template (``/v1/files/{file_id}/content``), any other path as it is."""
    if path.startswith(_MODEL_PREFIX):
        return _MODEL_PATH
    for prefix, name in ((FILE_PREFIX, "{file_id}"), (BATCH_PREFIX, "{batch_id}")):
        if path.startswith(prefix) and len(path) > len(prefix):
            rest = path[len(prefix) :].partition("/")
            return prefix + name + rest[1] + rest[2]
    return path


class RuntimeServer(HttpServer):
    """The runtime's HTTP server: every path above, on ``settings``.

    :param settings: the runtime's settings.
    :param client: the sagemaker-runtime client. @default the container-wide one
    :param log: where log lines go. @default stdout
    :param address: where to listen. @default ``BIND_ADDRESS:PORT`` from the settings
    """

    def __init__(
        self,
        settings: Settings,
        *,
        client: Any = None,
        log: LogSink = emit_log_line,
        address: tuple[str, int] | None = None,
    ) -> None:
        super().__init__(
            settings,
            Connection,
            dispatch,
            methods=_METHODS,
            client=client,
            log=log,
            address=address,
        )


def make_server(settings: Settings) -> RuntimeServer:
    """A server bound to ``settings.bind_address:settings.port`` (port 0 picks a free one)."""
    return RuntimeServer(settings)
