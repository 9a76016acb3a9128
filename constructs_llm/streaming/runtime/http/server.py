"""The runtime's HTTP/1.1 server: one thread per connection, at most ``MAX_CONNECTIONS`` of
them, each request handed to a dispatch function.

Stdlib + boto3 only: this file ships in the Lambda asset, where the Lambda Web Adapter relays
each function URL request to it over loopback HTTP/1.1 and streams the response back
(``AWS_LWA_INVOKE_MODE=response_stream``). ``HttpServer`` is what every request reads of its
server: the settings, the routes, the origin secret, the API-key auth, the sagemaker-runtime
client and the log sink. Which handler answers which path is ``runtime/server.py``'s.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..metrics import key_refresh_record
from ..settings import Settings, sagemaker_client
from .auth import ApiKeyAuth
from .connection_slots import ConnectionSlots
from .exchange import Exchange, LogSink, emit_log_line, new_request_id
from .origin_secret import OriginSecret

Dispatch = Callable[[Exchange], None]


class HttpServer(ThreadingHTTPServer):
    """One thread per connection, at most ``MAX_CONNECTIONS`` of them (a connection past it
    gets a 503); daemon threads so a stuck client never blocks exit.

    :param settings: the runtime's settings.
    :param handler: reads the requests of one connection (``connection.Connection``).
    :param dispatch: answers one request.
    :param methods: the methods ``dispatch`` serves on some path (a 501 lists them).
    :param client: the sagemaker-runtime client. @default the container-wide one
    :param log: where log lines go. @default stdout
    :param address: where to listen. @default ``BIND_ADDRESS:PORT`` from the settings
    """

    daemon_threads = True
    block_on_close = False  # idle keep-alive connections must not delay shutdown
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        settings: Settings,
        handler: type[BaseHTTPRequestHandler],
        dispatch: Dispatch,
        *,
        methods: tuple[str, ...],
        client: Any = None,
        log: LogSink = emit_log_line,
        address: tuple[str, int] | None = None,
    ) -> None:
        self.settings = settings
        self.dispatch = dispatch
        self.methods = methods
        self.routes = settings.routing()
        self.log = log
        self._client = client
        self.auth = self._api_key_auth()
        #: CloudFront's origin secret, when the invoker is behind a distribution with API keys.
        self.origin = OriginSecret(settings.origin_secret_id) if settings.origin_secret_id else None
        self.slots = ConnectionSlots(settings.max_connections)
        super().__init__(address or (settings.bind_address, settings.port), handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection if a slot is free; else a 503, from this thread."""
        if not self.slots.take():
            request_id = new_request_id()
            self.log(  # before the answer, as every log line (Lambda may freeze after it)
                {
                    "msg": "connection_refused",
                    "request_id": request_id,
                    "status": 503,
                    "error_code": "too_many_connections",
                    "max_connections": self.slots.limit,
                }
            )
            self.slots.refuse(request, request_id)
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

    def _api_key_auth(self) -> ApiKeyAuth | None:
        settings = self.settings
        if settings.api_keys_secret_id is None:
            return None

        def report(error: str, outcome: str) -> None:
            record = key_refresh_record(error, outcome, namespace=settings.metrics_namespace)
            self.log(record)

        return ApiKeyAuth(
            settings.api_keys_secret_id,
            ttl=settings.api_keys_ttl,
            stale_for=settings.api_keys_stale_seconds,
            report=report,
        )

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
