"""Exchanges with a real engine behind the fake SageMaker: forwarded and recorded live, then
replayed from the recording.

Live (``make test-engines``), :func:`forwarding` makes the fake SageMaker a pass-through: each
request the runtime sends goes to the engine's ``/invocations`` unchanged, and the engine's
answer comes back as SageMaker gives it (a streamed answer one ``PayloadPart`` per chunk the
engine wrote, as it arrives; an error status as a ``ModelError`` carrying the engine's status
and body). Each exchange is recorded: the request body, and the answer's bytes exactly as the
engine sent them. :func:`direct` records an exchange the runtime does not make yet, by sending
the body it should send straight to the engine.

In the fast suite, :func:`replaying` answers each request with the first unused recorded
exchange whose request is contained in the body sent (every recorded top-level field present
with the same value), so a recording keeps matching when the runtime adds a field, and stops
matching when it changes or drops one.
"""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.support.fake_sagemaker import CallError, ReceivedRequest, Scenario

__all__ = ["Exchange", "Recording", "Replay", "direct", "forwarding", "replaying"]

_TIMEOUT_S = 120.0
_READ = 65536


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One request to the engine and its answer, as the engine sent it.

    :param endpoint: the SageMaker endpoint the request named.
    :param streamed: sent with ``InvokeEndpointWithResponseStream`` (else ``InvokeEndpoint``).
    :param request: the JSON body.
    :param status: the engine's HTTP status.
    :param content_type: the engine's ``Content-Type``.
    :param chunks: the answer's bytes, one item per chunk the engine wrote.
    :param direct: sent by the recorder (a body the runtime should send), not by the runtime.
    """

    endpoint: str
    streamed: bool
    request: Mapping[str, Any]
    status: int
    content_type: str
    chunks: tuple[bytes, ...]
    direct: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def matches(self, request: ReceivedRequest) -> bool:
        """Whether ``request`` is what was recorded: the same endpoint and API, and every
        recorded top-level field present with the same value."""
        if request.endpoint_name != self.endpoint or request.streamed != self.streamed:
            return False
        try:
            sent = request.json()
        except ValueError:
            return False
        return isinstance(sent, dict) and all(
            key in sent and sent[key] == value for key, value in self.request.items()
        )

    def scenario(self) -> Scenario:
        """The fake SageMaker's answer that replays this exchange."""
        if self.status >= 400:
            message = self.body.decode(errors="replace")
            return Scenario(call_error=CallError.model_error(message, self.status))
        if self.streamed:
            return Scenario(parts=self.chunks)
        return Scenario(answer=self.body, content_type=self.content_type)

    def to_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "streamed": self.streamed,
            "direct": self.direct,
            "request": self.request,
            "status": self.status,
            "content_type": self.content_type,
            "chunks": [_chunk_json(c) for c in self.chunks],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Exchange:
        return cls(
            endpoint=data["endpoint"],
            streamed=data["streamed"],
            direct=data["direct"],
            request=data["request"],
            status=data["status"],
            content_type=data["content_type"],
            chunks=tuple(_chunk_bytes(c) for c in data["chunks"]),
        )


def _chunk_json(chunk: bytes) -> str | dict[str, str]:
    """A chunk as text when it is UTF-8 (readable diffs), else as base64."""
    try:
        return chunk.decode()
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(chunk).decode()}


def _chunk_bytes(item: str | Mapping[str, str]) -> bytes:
    return item.encode() if isinstance(item, str) else base64.b64decode(item["base64"])


@dataclass
class Recording:
    """The exchanges of one case, with the engine that answered them."""

    case: str
    engine: str
    version: str
    exchanges: list[Exchange] = field(default_factory=list)

    def save(self, path: Path) -> None:
        data = {
            "case": self.case,
            "engine": self.engine,
            "version": self.version,
            "exchanges": [e.to_json() for e in self.exchanges],
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: Path) -> Recording:
        data = json.loads(path.read_text())
        return cls(
            case=data["case"],
            engine=data["engine"],
            version=data["version"],
            exchanges=[Exchange.from_json(e) for e in data["exchanges"]],
        )


def forwarding(
    upstreams: Mapping[str, str], record: Callable[[Exchange], None]
) -> Callable[[ReceivedRequest], Scenario]:
    """A fake-SageMaker responder that sends each request to its endpoint's engine
    (``upstreams``: endpoint name -> base URL) and records the exchange once it ends."""

    def respond(request: ReceivedRequest) -> Scenario:
        url = upstreams.get(request.endpoint_name)
        if url is None:
            message = f"no engine serves the endpoint {request.endpoint_name!r}"
            return Scenario(call_error=CallError.validation_error(message))
        connection, answer = _post(url, request.body)
        status, content_type = answer.status, answer.getheader("Content-Type", "")

        def exchange(chunks: Sequence[bytes]) -> Exchange:
            return Exchange(
                endpoint=request.endpoint_name,
                streamed=request.streamed,
                request=request.json(),
                status=status,
                content_type=content_type,
                chunks=tuple(chunks),
            )

        if status >= 400 or not request.streamed:
            recorded = exchange(_read_all(connection, answer))
            record(recorded)
            return recorded.scenario()
        return Scenario(parts=_relay(connection, answer, lambda c: record(exchange(c))))

    return respond


def _post(url: str, body: bytes) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=_TIMEOUT_S)
    connection.request(
        "POST", "/invocations", body=body, headers={"Content-Type": "application/json"}
    )
    return connection, connection.getresponse()


def _read_all(
    connection: http.client.HTTPConnection, answer: http.client.HTTPResponse
) -> list[bytes]:
    try:
        return list(iter(lambda: answer.read1(_READ), b""))
    finally:
        connection.close()


def _relay(
    connection: http.client.HTTPConnection,
    answer: http.client.HTTPResponse,
    done: Callable[[list[bytes]], None],
) -> Iterator[bytes]:
    """Yields each chunk as the engine writes it; records the whole answer at its end (an
    answer the client abandoned is not recorded)."""
    chunks: list[bytes] = []
    try:
        while chunk := answer.read1(_READ):
            chunks.append(chunk)
            yield chunk
        done(chunks)
    finally:
        connection.close()


def direct(url: str, endpoint: str, body: Mapping[str, Any], *, streamed: bool) -> Exchange:
    """The engine's answer to ``body``, sent by the recorder rather than the runtime."""
    connection, answer = _post(url, json.dumps(body).encode())
    return Exchange(
        endpoint=endpoint,
        streamed=streamed,
        request=body,
        status=answer.status,
        content_type=answer.getheader("Content-Type", ""),
        chunks=tuple(_read_all(connection, answer)),
        direct=True,
    )


@dataclass
class Replay:
    """A replaying responder's record: requests no recorded exchange matched."""

    unmatched: list[dict[str, Any]] = field(default_factory=list)


def replaying(
    exchanges: Sequence[Exchange],
) -> tuple[Callable[[ReceivedRequest], Scenario], Replay]:
    """A fake-SageMaker responder that answers from ``exchanges`` (each used once), and the
    record of what it could not answer (which gets a 500 ``InternalFailure``)."""
    unused = list(exchanges)
    replay = Replay()

    def respond(request: ReceivedRequest) -> Scenario:
        for exchange in unused:
            if exchange.matches(request):
                unused.remove(exchange)
                return exchange.scenario()
        replay.unmatched.append({"endpoint": request.endpoint_name, "body": request.json()})
        error = CallError(status=500, error_type="InternalFailure", message="no recording")
        return Scenario(call_error=error)

    return respond, replay
