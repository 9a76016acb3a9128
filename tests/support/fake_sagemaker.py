"""A loopback fake of SageMaker Runtime's ``InvokeEndpointWithResponseStream`` and
``InvokeEndpoint``.

It speaks the real wire protocol, so real boto3 clients (and the runtime server) talk to it
unchanged through ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME``:

- ``POST /endpoints/{name}/invocations-response-stream`` answers 200 with
  ``Content-Type: application/vnd.amazon.eventstream``, chunked, one event-stream frame per
  ``PayloadPart``; optionally a ``ModelStreamError`` / ``InternalStreamFailure`` exception
  frame after N parts, delays between parts, or a stall.
- ``POST /endpoints/{name}/invocations`` (``InvokeEndpoint``) answers 200 with the container's
  body as is (``Scenario.answer``) and ``x-Amzn-Invoked-Production-Variant``, as botocore's
  ``InvokeEndpointOutput`` reads it (the body is the payload; the content type, the variant and
  custom attributes come in headers). :func:`tei_answer` writes TEI's answer.
- Call-time errors answer with ``x-amzn-ErrorType`` and a JSON body (``ModelError`` 424,
  ``ValidationError`` 400, ...), which botocore raises as ``ClientError``.

Each test scripts the responses: ``enqueue(Scenario(...))`` (first in, first out), or a
``responder`` that builds a scenario from the request. Every request is recorded with its
headers and body, and with whether the client hung up before the stream ended.

``FakeSageMaker(tls=context)`` serves HTTPS instead (each connection's handshake on its own
handler thread), as SageMaker Runtime does; ``tests/support/loopback_tls.py`` makes a context.

Run ``python -m tests.support.fake_sagemaker --help`` to serve timestamped tokens for benchmarks.
"""

from __future__ import annotations

import argparse
import collections
import json
import select
import socket
import ssl
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.eventstream import encode_exception, encode_payload_part

_PATH_PREFIX = "/endpoints/"
_PATH_SUFFIX = "/invocations-response-stream"
_INVOKE_SUFFIX = "/invocations"
IC_HEADER = "x-amzn-sagemaker-inference-component"
PREFIX_AWARE_ID_HEADER = "x-amzn-sagemaker-prefix-aware-id"  # PrefixAwareId, both operations

Part = bytes | Callable[[], bytes]
"""A payload part's bytes, or a function called at send time (for timestamped tokens)."""


@dataclass(frozen=True, kw_only=True)
class CallError:
    """An error returned instead of the stream, as SageMaker does at call time."""

    status: int
    error_type: str
    message: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)  # more response headers

    @classmethod
    def model_error(cls, message: str = "boom", original_status: int = 500) -> CallError:
        wrapped = (  # SageMaker's wording around the container's message
            f'Received client error ({original_status}) from primary with message "{message}". '
            "See https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1"
            "#logEventViewer:group=/aws/sagemaker/Endpoints/llm-endpoint in account "
            "123456789012 for more information."
        )
        return cls(
            status=424,
            error_type="ModelError",
            message=wrapped,
            fields={
                "OriginalStatusCode": original_status,
                "OriginalMessage": message,
                "LogStreamArn": "arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/x",
            },
        )

    @classmethod
    def validation_error(cls, message: str = "invalid") -> CallError:
        return cls(status=400, error_type="ValidationError", message=message)

    @classmethod
    def no_capacity(cls) -> CallError:
        """SageMaker's refusal of an inference component with no copy (scaled to zero), in
        the words the AWS Machine Learning Blog quotes ("Unlock cost savings with the new
        scale down to zero feature in SageMaker Inference", 2024-12-03)."""
        return cls.validation_error(
            "Inference Component has no capacity to process this request. "
            "ApplicationAutoScaling may be in-progress (if configured) or try to increase the "
            "capacity by invoking UpdateInferenceComponentRuntimeConfig API."
        )


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One scripted response."""

    parts: Iterable[Part] = ()  # a generator streams what it yields, as it yields it
    header_delay: float = 0.0  # before the response headers (time the engine takes to start)
    first_delay: float = 0.0  # after the headers, before the first part
    first_after: threading.Event | None = None  # and the first part waits until this is set
    interval: float = 0.0  # before each later part
    split_frames: bool = False  # write each frame in two TCP chunks
    exception: str | None = None  # "ModelStreamError" | "InternalStreamFailure", after the parts
    exception_message: str = "stream failed"
    exception_code: str | None = None  # ModelStreamError's ErrorCode
    stall: float = 0.0  # after the parts: hold the connection open this long, sending nothing
    end_after: threading.Event | None = None  # and the body's last chunk waits until this is set
    call_error: CallError | None = None
    answer: bytes | None = None  # InvokeEndpoint: the container's whole answer
    content_type: str = "application/json"  # InvokeEndpoint: the container's content type


@dataclass
class ReceivedRequest:
    """What the fake saw of one request, and how its stream ended."""

    endpoint_name: str
    headers: dict[str, str]
    body: bytes
    streamed: bool = True  # False: InvokeEndpoint
    client_port: int = 0  # the same port on two requests means a reused connection
    parts_sent: int = 0
    client_closed: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def inference_component(self) -> str | None:
        return self.headers.get(IC_HEADER)

    @property
    def prefix_aware_id(self) -> str | None:
        """The ``PrefixAwareId`` the call carried (SageMaker's prefix-aware routing id)."""
        return self.headers.get(PREFIX_AWARE_ID_HEADER)


class _ClientClosed(Exception):
    pass


class FakeSageMaker:
    """The fake endpoint, serving on ``127.0.0.1`` in a daemon thread."""

    def __init__(
        self, default: Scenario | None = None, *, tls: ssl.SSLContext | None = None
    ) -> None:
        self.default = default
        self.scheme = "http" if tls is None else "https"
        self.responder: Callable[[ReceivedRequest], Scenario] | None = None
        self.requests: list[ReceivedRequest] = []
        self._queue: collections.deque[Scenario] = collections.deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), _handler_class(self))
        self._server.tls = tls
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self._server.server_address[1]}"

    def enqueue(self, *scenarios: Scenario) -> None:
        with self._lock:
            self._queue.extend(scenarios)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
        self.responder = None

    def close(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeSageMaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record(self, request: ReceivedRequest) -> Scenario | None:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(request)
        return self.default


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    tls: ssl.SSLContext | None = None

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        if self.tls is None:
            return sock, address
        # the handshake waits for the client: the handler's thread does it (``_Handler.setup``)
        return self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # resets by clients are expected
            super().handle_error(request, client_address)


def _handler_class(fake: FakeSageMaker) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    owner: FakeSageMaker
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(30.0)  # a client that never finishes its handshake
            self.request.do_handshake()
            self.request.settimeout(None)
        super().setup()

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        streamed = path.endswith(_PATH_SUFFIX)
        suffix = _PATH_SUFFIX if streamed else _INVOKE_SUFFIX
        if not (path.startswith(_PATH_PREFIX) and path.endswith(suffix)):
            self._error(CallError(status=404, error_type="UnknownOperationException", message=path))
            return
        name = path[len(_PATH_PREFIX) : -len(suffix)]
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = ReceivedRequest(
            endpoint_name=name,
            headers=headers,
            body=body,
            streamed=streamed,
            client_port=self.client_address[1],
        )
        scenario = self.owner._record(request)
        try:
            if scenario is None:
                self._error(
                    CallError(status=500, error_type="InternalFailure", message="no scenario")
                )
            elif scenario.call_error is not None:
                self._sleep(scenario.header_delay)
                self._error(scenario.call_error)
            elif not streamed:
                self._answer(scenario)
            else:
                self._stream(scenario, request)
        except _ClientClosed:
            request.client_closed.set()
            self.close_connection = True
        finally:
            request.finished.set()

    def _error(self, error: CallError) -> None:
        payload = json.dumps({"message": error.message, **error.fields}).encode()
        self.send_response(error.status)
        self.send_header("Content-Type", "application/json")
        self.send_header(
            "x-amzn-ErrorType",
            f"{error.error_type}:http://internal.amazon.com/coral/com.amazonaws.sagemaker/",
        )
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        for name, value in error.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _answer(self, scenario: Scenario) -> None:
        """InvokeEndpoint's 200: the container's body, its content type and the variant."""
        self._sleep(scenario.header_delay)
        payload = scenario.answer if scenario.answer is not None else b""
        self.send_response(200)
        self.send_header("Content-Type", scenario.content_type)
        self.send_header("x-Amzn-Invoked-Production-Variant", "AllTraffic")
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self._write(payload)

    def _stream(self, scenario: Scenario, request: ReceivedRequest) -> None:
        self._sleep(scenario.header_delay)
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.amazon.eventstream")
        self.send_header("X-Amzn-SageMaker-Content-Type", "text/event-stream")
        self.send_header("x-Amzn-Invoked-Production-Variant", "AllTraffic")
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index, part in enumerate(scenario.parts):
            self._sleep(scenario.first_delay if index == 0 else scenario.interval)
            if index == 0 and scenario.first_after is not None:
                self._wait_for(scenario.first_after)
            payload = part() if callable(part) else part
            self._frame(encode_payload_part(payload), split=scenario.split_frames)
            request.parts_sent += 1
        if scenario.exception is not None:
            frame = encode_exception(
                scenario.exception, scenario.exception_message, error_code=scenario.exception_code
            )
            self._frame(frame, split=False)
        self._sleep(scenario.stall)
        if scenario.end_after is not None:
            self._wait_for(scenario.end_after)
        self._write(b"0\r\n\r\n")

    def _frame(self, frame: bytes, *, split: bool) -> None:
        pieces = [frame[: len(frame) // 2], frame[len(frame) // 2 :]] if split else [frame]
        for piece in pieces:
            self._write(b"%x\r\n%s\r\n" % (len(piece), piece))

    def _write(self, data: bytes) -> None:
        if self._peer_closed(0):
            raise _ClientClosed
        try:
            self.wfile.write(data)
        except OSError as err:
            raise _ClientClosed from err

    def _sleep(self, seconds: float) -> None:
        """Wait, but notice (and stop) as soon as the client hangs up or the fake shuts down."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.owner._stopping.is_set():
                raise _ClientClosed
            if self._peer_closed(min(left, 0.05)):
                raise _ClientClosed

    def _wait_for(self, event: threading.Event) -> None:
        """Wait until ``event`` is set, stopping as :meth:`_sleep` does."""
        while not event.is_set():
            self._sleep(0.05)

    def _peer_closed(self, timeout: float) -> bool:
        sock = self.connection
        try:
            readable, _, _ = select.select([sock], [], [], timeout)
            if not readable:
                return False
            # the TCP bytes themselves, also under TLS (``SSLSocket.recv`` takes no flags): a
            # client closing a TLS connection sends no close_notify from Python, just its FIN
            return bool(socket.socket.recv(sock, 1, socket.MSG_PEEK) == b"")
        except (OSError, ValueError):
            return True


def tei_answer(vectors: Sequence[Sequence[float]]) -> Scenario:
    """TEI's answer on ``/invocations`` for an embedding model: a JSON array holding one array
    of floats per input, in input order, for a single input too (``EmbedResponse(Vec<Vec<f32>>)``
    in text-embeddings-inference ``router/src/http/types.rs``; the ``embed`` route of
    ``router/src/http/server.rs``)."""
    return Scenario(answer=json.dumps([list(v) for v in vectors]).encode())


def tei_error(message: str, error_type: str, status: int) -> Scenario:
    """TEI refusing a request: its ``ErrorResponse`` body (``{"error", "error_type"}``) with the
    status its ``ErrorType`` maps to (validation 413, tokenizer 422, backend 424, overloaded
    429, empty 400), which SageMaker wraps as a ``ModelError``."""
    body = json.dumps({"error": message, "error_type": error_type})
    return Scenario(call_error=CallError.model_error(body, original_status=status))


def _timestamp_tokens(count: int) -> list[Part]:
    """TGI events whose text is the send time in ``time.perf_counter_ns()`` units."""

    def event(index: int) -> Callable[[], bytes]:
        def build() -> bytes:
            token = {"id": index, "text": f"{time.perf_counter_ns()} ", "logprob": -0.1}
            last = index == count - 1
            body = {
                "index": index,
                "token": {**token, "special": False},
                "generated_text": "" if last else None,
                "details": {"finish_reason": "length", "generated_tokens": count} if last else None,
            }
            return b"data:" + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"

        return build

    return [event(i) for i in range(count)]


def main(argv: Sequence[str] | None = None) -> None:
    """Serve timestamped TGI tokens until stdin closes; prints ``PORT <n>`` when ready."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--first-delay-ms", type=float, default=0.0)
    parser.add_argument("--interval-ms", type=float, default=2.0)
    args = parser.parse_args(argv)
    scenario = Scenario(
        parts=_timestamp_tokens(args.tokens),
        first_delay=args.first_delay_ms / 1000,
        interval=args.interval_ms / 1000,
    )
    with FakeSageMaker(default=scenario) as fake:
        print(f"PORT {fake.url.rsplit(':', 1)[1]}", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
