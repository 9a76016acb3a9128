"""The runtime's SageMaker read path over HTTPS, as it runs in AWS: the fake SageMaker behind
TLS (a throwaway CA, verified by boto3 through ``AWS_CA_BUNDLE``), so the socket under boto3
is an ``ssl.SSLSocket``. ``payload_frames``' fast paths reach into http.client's buffered
reader (``_body_chunks``) and set the socket's timeout to 0 for one ``peek``
(``rest_received``); over TLS a non-blocking read raises ``ssl.SSLWantReadError`` and the
records buffer inside OpenSSL. Each answer here is the very answer the same stream gets over
plain HTTP, and the fast paths are shown to run, not to fall back.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from constructs_llm.streaming.runtime.aws_clients import new_client
from constructs_llm.streaming.runtime.settings import new_sagemaker_client
from tests.streaming.conftest import BASE_SETTINGS, ENDPOINT, Runtime, StartRuntime
from tests.streaming.test_server import CHAT, TOKENS, USER, request, stream_request, wait_for
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.loopback_tls import LoopbackTls, loopback_tls


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> LoopbackTls:
    return loopback_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_server(certificates: LoopbackTls) -> Iterator[FakeSageMaker]:
    with FakeSageMaker(tls=certificates.server) as server:
        yield server


@pytest.fixture
def tls_fake(tls_server: FakeSageMaker, aws_env: dict[str, str]) -> Iterator[FakeSageMaker]:
    tls_server.reset()
    yield tls_server
    tls_server.reset()


def tls_client(
    fake: FakeSageMaker, ca_file: Path | None, read_timeout: float = 5.0, **config: Any
) -> Any:
    """A runtime's boto3 client sent to the HTTPS fake, trusting ``ca_file`` alone (the
    variables are read when the client is made); ``config`` makes a client of its own."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", fake.url)
        if ca_file is None:
            env.delenv("AWS_CA_BUNDLE", raising=False)
        else:
            env.setenv("AWS_CA_BUNDLE", str(ca_file))
        if config:
            return new_client("sagemaker-runtime", read_timeout=read_timeout, **config)
        return new_sagemaker_client(replace(BASE_SETTINGS, upstream_read_timeout=read_timeout))


@pytest.fixture
def fast_paths(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """What the fast paths did: each ``rest_received`` answer with the socket's timeout before
    and after it, the chunk sizes urllib3 read itself over TLS (``_update_chunk_length``), and
    the streams left to a background drain. Each function in ``settled`` is called before
    ``rest_received`` looks (to wait until the fake has sent a body's end)."""
    import urllib3

    from constructs_llm.streaming.runtime import upstream
    from constructs_llm.streaming.runtime.parsing import sagemaker_stream
    from constructs_llm.streaming.runtime.parsing.payload_frames import rest_received

    seen: dict[str, list[Any]] = {
        "rest_received": [],
        "urllib3_chunks": [],
        "drains": [],
        "settled": [],
    }

    def recorded(body: Any) -> bool:  # PayloadParts calls it by its name in sagemaker_stream
        for settle in seen["settled"]:
            settle()
        sock = body._raw_stream._connection.sock
        before = sock.gettimeout()
        answer = rest_received(body)
        seen["rest_received"].append((type(sock).__name__, answer, before, sock.gettimeout()))
        return answer

    monkeypatch.setattr(sagemaker_stream, "rest_received", recorded)
    chunk_length = urllib3.response.HTTPResponse._update_chunk_length

    def counted(self: Any) -> None:
        chunk_length(self)
        if isinstance(self._connection.sock, ssl.SSLSocket):  # the TLS runtime's reads only
            seen["urllib3_chunks"].append(self.chunk_left)

    monkeypatch.setattr(urllib3.response.HTTPResponse, "_update_chunk_length", counted)
    drain = upstream._drain_in_background

    def background(parts: Any) -> None:
        seen["drains"].append(parts)
        drain(parts)

    monkeypatch.setattr(upstream, "_drain_in_background", background)
    return seen


def _ends_sent(*fakes: FakeSageMaker) -> Callable[[], None]:
    """Waits until the fakes have sent every body to its end: on loopback, a body's last chunk
    is then received, however late the fake's thread ran."""

    def wait() -> None:
        assert wait_for(lambda: all(r.finished.is_set() for f in fakes for r in f.requests))

    return wait


_ID = re.compile(rb'"(id|created)":\s*("[^"]*"|\d+)')


def _answer(runtime: Runtime, body: dict[str, Any]) -> tuple[int, bytes]:
    """The status and body the client gets, its per-request id and time left out."""
    status, _, raw = request(runtime, "POST", CHAT, body)
    return status, _ID.sub(rb'"\1": "_"', raw)


def _idle_connections(client: Any) -> int:
    """Open connections in a boto3 client's urllib3 pools (botocore internals, test only)."""
    manager = client._endpoint.http_session._manager
    pools = [manager.pools[key] for key in manager.pools.keys()]  # noqa: SIM118 (no __iter__)
    queued = [conn for pool in pools for conn in list(pool.pool.queue) if conn is not None]
    return sum(1 for conn in queued if conn.sock is not None)


def _same_answer_both_ways(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    tls_fake: FakeSageMaker,
    certificates: LoopbackTls,
    scenario: Scenario,
    body: dict[str, Any],
    read_timeout: float = 5.0,
) -> tuple[int, bytes, Any]:
    """The answer to ``body`` over plain HTTP, asserted equal to the one over TLS; and the
    boto3 client of the TLS runtime."""
    plain = start_runtime(upstream_read_timeout=read_timeout)
    client = tls_client(tls_fake, certificates.ca_file, read_timeout)
    secure = start_runtime(client=client, upstream_read_timeout=read_timeout)
    fake.enqueue(scenario)
    tls_fake.enqueue(scenario)
    expected = _answer(plain, body)
    assert _answer(secure, body) == expected
    assert len(tls_fake.requests) == 1 and tls_fake.requests[0].endpoint_name == ENDPOINT
    return (*expected, client)


def test_boto3_verifies_the_fake_s_certificate(
    tls_fake: FakeSageMaker, certificates: LoopbackTls
) -> None:
    from botocore.exceptions import SSLError

    # GIVEN a client that does not trust the test CA THEN the call fails its handshake
    client = tls_client(tls_fake, None, connect_timeout=5.0, max_attempts=1)
    with pytest.raises(SSLError):
        client.invoke_endpoint(EndpointName=ENDPOINT, ContentType="application/json", Body=b"{}")
    client.close()
    assert tls_fake.requests == []


def test_a_chat_stream_with_usage_is_the_same_over_tls_and_its_fast_paths_run(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    tls_fake: FakeSageMaker,
    certificates: LoopbackTls,
    fast_paths: dict[str, list[Any]],
) -> None:
    fast_paths["settled"].append(_ends_sent(fake, tls_fake))
    scenario = Scenario(parts=engine_streams.tgi(TOKENS, input_length=21))
    body = stream_request(stream_options={"include_usage": True})
    status, raw, client = _same_answer_both_ways(
        start_runtime, fake, tls_fake, certificates, scenario, body
    )
    assert status == 200 and b'"prompt_tokens":21' in raw.replace(b" ", b"")
    # THEN over TLS too, the finished stream's end was found received (the socket's timeout
    # put back) and read at once, without a thread, and its connection pooled
    assert wait_for(lambda: _idle_connections(client) == 1)
    assert fast_paths["rest_received"] == [
        ("socket", True, 5.0, 5.0),  # over HTTP
        ("SSLSocket", True, 5.0, 5.0),
    ]
    assert fast_paths["drains"] == []
    # AND every chunk but the body's last came from the buffer (urllib3 read that one)
    assert fast_paths["urllib3_chunks"] == [0]


def test_a_non_stream_answer_is_the_same_over_tls(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    tls_fake: FakeSageMaker,
    certificates: LoopbackTls,
    fast_paths: dict[str, list[Any]],
) -> None:
    fast_paths["settled"].append(_ends_sent(fake, tls_fake))
    scenario = Scenario(parts=engine_streams.tgi(TOKENS, input_length=13))
    status, raw, client = _same_answer_both_ways(
        start_runtime, fake, tls_fake, certificates, scenario, {"messages": USER}
    )
    assert status == 200
    assert json.loads(raw)["choices"][0]["message"]["content"] == "".join(TOKENS)
    assert wait_for(lambda: _idle_connections(client) == 1)
    assert [seen[:2] for seen in fast_paths["rest_received"]] == [
        ("socket", True),
        ("SSLSocket", True),
    ]
    assert fast_paths["urllib3_chunks"] == [0]


def test_a_model_stream_error_mid_stream_is_the_same_over_tls(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    tls_fake: FakeSageMaker,
    certificates: LoopbackTls,
) -> None:
    scenario = Scenario(
        parts=engine_streams.tgi(TOKENS)[:2],
        exception="ModelStreamError",
        exception_message="model died",
        exception_code="StreamBroken",
    )
    status, raw, client = _same_answer_both_ways(
        start_runtime, fake, tls_fake, certificates, scenario, stream_request()
    )
    assert status == 200 and b"ModelStreamError" in raw and raw.endswith(b"data: [DONE]\n\n")
    # the failed stream's connection is dropped, not pooled
    assert _idle_connections(client) == 0


def test_a_stalled_upstream_times_out_the_same_over_tls(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    tls_fake: FakeSageMaker,
    certificates: LoopbackTls,
) -> None:
    # GIVEN an engine that sends one token, then nothing for longer than the read timeout (2 s:
    # long enough that a busy machine still sends the first token within it, both ways)
    scenario = Scenario(parts=engine_streams.tgi(TOKENS)[:1], stall=8.0)
    status, raw, _ = _same_answer_both_ways(
        start_runtime, fake, tls_fake, certificates, scenario, stream_request(), read_timeout=2.0
    )
    # THEN both end with the same read-timeout error event, then [DONE]
    assert status == 200 and b'"code": "ReadTimeoutError"' in raw.replace(b'":"', b'": "')
    assert raw.endswith(b"data: [DONE]\n\n")


def test_a_late_end_over_tls_is_drained_and_the_connection_reused(
    start_runtime: StartRuntime,
    tls_fake: FakeSageMaker,
    certificates: LoopbackTls,
    fast_paths: dict[str, list[Any]],
) -> None:
    client = tls_client(tls_fake, certificates.ca_file)
    runtime = start_runtime(client=client)
    # GIVEN a stream whose body ends only when the test says, then one that ends at once
    end = threading.Event()
    tls_fake.enqueue(
        Scenario(parts=engine_streams.tgi(TOKENS), end_after=end),
        Scenario(parts=engine_streams.tgi(TOKENS)),
    )
    # WHEN the first is answered, before its end arrived
    assert _answer(runtime, stream_request())[0] == 200
    # THEN the runtime found its end not received over TLS, and left it to a drain
    assert wait_for(lambda: len(fast_paths["drains"]) == 1)
    assert fast_paths["rest_received"] == [("SSLSocket", False, 5.0, 5.0)]
    assert _idle_connections(client) == 0
    # WHEN the end arrives THEN the drain reads it and gives the connection back to the pool
    end.set()
    assert wait_for(lambda: _idle_connections(client) == 1)
    # AND the next stream goes over that same TLS connection, read to its end without a thread
    fast_paths["settled"].append(_ends_sent(tls_fake))
    assert _answer(runtime, stream_request())[0] == 200
    assert wait_for(lambda: len(fast_paths["rest_received"]) == 2)
    assert fast_paths["rest_received"][1:] == [("SSLSocket", True, 5.0, 5.0)]
    assert len(fast_paths["drains"]) == 1
    assert _idle_connections(client) == 1
    first, second = tls_fake.requests
    assert first.client_port == second.client_port
    assert not first.client_closed.is_set() and not second.client_closed.is_set()
    # urllib3 read only the body's last chunk of each stream; the rest came from the buffer
    assert fast_paths["urllib3_chunks"] == [0, 0]
