"""The opt-in SSE heartbeat (``HEARTBEAT_SECONDS``) for streams whose first token is slow."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import replace

import openai
import pytest

from constructs_llm.streaming.runtime.http.heartbeat import Heartbeat
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.test_server import (
    CHAT,
    TOKENS,
    USER,
    connect,
    request,
    sdk,
    sse_data,
    stream_request,
    wait_for,
)
from tests.support import engine_streams
from tests.support.fake_sagemaker import CallError, FakeSageMaker, Scenario

INTERVAL = 0.05
SLOW = 0.4  # the first token's delay: room for 7 heartbeats, of which the tests need 2
BEAT = b": keep-alive\n\n"


@pytest.fixture
def beating(start_runtime: StartRuntime) -> Runtime:
    return start_runtime(heartbeat_seconds=INTERVAL)


@pytest.fixture
def patient(start_runtime: StartRuntime) -> Runtime:
    """A heartbeat that cannot come first, however loaded the machine: for what must happen
    before it."""
    return start_runtime(heartbeat_seconds=SOCKET_TIMEOUT)


def slow_tokens(fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS), first_delay=SLOW))


def contents(body: bytes) -> list[str]:
    return [e["choices"][0]["delta"].get("content") or "" for e in sse_data(body)[:-1]]


def test_keep_alive_comments_come_before_the_first_token_then_the_tokens_stream(
    beating: Runtime, fake: FakeSageMaker
) -> None:
    # GIVEN an engine whose first token takes four heartbeat intervals
    slow_tokens(fake)
    connection = connect(beating)
    connection.request("POST", CHAT, body=json.dumps(stream_request()).encode())
    # WHEN the client reads THEN the 200 and a keep-alive comment arrive before any token exists
    response = connection.getresponse()
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    assert response.headers["Transfer-Encoding"] == "chunked"
    first_line = response.readline()
    assert fake.requests[0].parts_sent == 0
    assert first_line == b": keep-alive\n"
    # AND then more comments, then the usual events with every token
    body = first_line + response.read()
    beats = 0
    while body.startswith(BEAT, beats * len(BEAT)):
        beats += 1
    assert beats >= 2
    rest = body[beats * len(BEAT) :]
    assert rest.startswith(b"data: ") and BEAT not in rest
    assert contents(rest) == ["", *TOKENS, ""]
    assert sse_data(body)[-1] == "[DONE]"
    # AND the body ended cleanly: the connection serves the next request
    connection.request("GET", "/health")
    assert connection.getresponse().status == 200
    connection.close()
    log = beating.logs[0]
    assert (log["status"], log["tokens"], log["heartbeats"] >= 2) == (200, len(TOKENS), True)


def test_the_openai_sdk_skips_the_comments_and_gets_exactly_the_tokens(
    beating: Runtime, fake: FakeSageMaker
) -> None:
    slow_tokens(fake)
    stream = sdk(beating).chat.completions.create(model="m", messages=USER, stream=True)
    chunks = list(stream)
    assert [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content] == TOKENS
    assert chunks[-1].choices[0].finish_reason == "length"
    assert beating.logs[0]["heartbeats"] >= 2


@pytest.mark.parametrize(
    ("scenario", "code"),
    [
        (
            Scenario(exception="ModelStreamError", exception_message="model died"),
            "ModelStreamError",
        ),
        (Scenario(call_error=CallError.model_error("model died")), "model_error"),
    ],
    ids=["in-stream-error", "call-time-error"],
)
def test_a_failure_after_the_heartbeat_committed_200_ends_the_stream_with_an_error_event(
    beating: Runtime, fake: FakeSageMaker, scenario: Scenario, code: str
) -> None:
    # GIVEN SageMaker that answers only after the heartbeat has begun, with a failure
    fake.enqueue(replace(scenario, header_delay=SLOW))
    connection = connect(beating)
    connection.request("POST", CHAT, body=json.dumps(stream_request()).encode())
    response = connection.getresponse()
    # THEN the status is the 200 already sent, and the stream ends with the error and [DONE]
    assert response.status == 200
    body = response.read()  # raises IncompleteRead on an unclean end
    assert body.startswith(BEAT)
    events = sse_data(body)
    assert len(events) == 2 and events[1] == "[DONE]"
    assert events[0]["error"]["code"] == code
    assert "model died" in events[0]["error"]["message"]
    connection.request("GET", "/health")
    assert connection.getresponse().status == 200
    connection.close()
    assert beating.logs[0]["stream_error"] == code


def test_the_openai_sdk_raises_the_error_sent_after_the_heartbeat(
    beating: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(exception="ModelStreamError", header_delay=SLOW))
    with pytest.raises(openai.APIError) as info:
        list(sdk(beating).chat.completions.create(model="m", messages=USER, stream=True))
    assert "stream failed" in info.value.message


def test_a_failure_before_the_first_heartbeat_still_gets_an_http_status(
    patient: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(exception="ModelStreamError"))
    status, headers, raw = request(patient, "POST", CHAT, stream_request())
    assert (status, headers["Content-Type"]) == (502, "application/json")
    assert json.loads(raw)["error"]["code"] == "ModelStreamError"
    assert "heartbeats" not in patient.logs[0]


def test_a_fast_first_token_sends_no_comment(patient: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)))
    status, _, raw = request(patient, "POST", CHAT, stream_request())
    assert status == 200
    assert raw.startswith(b"data: ") and BEAT not in raw
    assert contents(raw) == ["", *TOKENS, ""]
    assert "heartbeats" not in patient.logs[0]


def test_non_streaming_requests_get_no_heartbeat(beating: Runtime, fake: FakeSageMaker) -> None:
    slow_tokens(fake)
    status, headers, raw = request(beating, "POST", CHAT, {"messages": USER})
    assert (status, headers["Content-Type"]) == (200, "application/json")
    assert json.loads(raw)["choices"][0]["message"]["content"] == "".join(TOKENS)
    assert "heartbeats" not in beating.logs[0]


def _send(runtime: Runtime, *, version: str = "HTTP/1.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT)
    data = json.dumps(stream_request()).encode()
    head = f"POST {CHAT} {version}\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
    sock.sendall(head.encode() + data)
    return sock


def test_without_heartbeat_a_slow_stream_sends_nothing_until_its_first_token(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    assert runtime.settings.heartbeat_seconds == 0
    # GIVEN an engine whose first token waits until the test has watched the silence
    first_token = threading.Event()
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS), first_after=first_token))
    sock = _send(runtime)
    sock.settimeout(SLOW / 2)
    with pytest.raises(TimeoutError):
        sock.recv(65536)
    assert fake.requests[0].parts_sent == 0
    first_token.set()
    sock.settimeout(SOCKET_TIMEOUT)
    received = b""
    while not received.endswith(b"0\r\n\r\n"):
        received += sock.recv(65536)
    sock.close()
    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"keep-alive" not in received


def test_http_1_0_clients_get_unframed_comments_in_a_close_delimited_stream(
    beating: Runtime, fake: FakeSageMaker
) -> None:
    slow_tokens(fake)
    sock = _send(beating, version="HTTP/1.0")
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    sock.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head
    assert body.startswith(BEAT * 2)
    assert contents(body.replace(BEAT, b"")) == ["", *TOKENS, ""]


def test_a_client_gone_during_the_heartbeat_closes_the_upstream_stream(
    beating: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(
        Scenario(
            parts=engine_streams.tgi([f"t{i} " for i in range(200)]),
            first_delay=SLOW,
            interval=0.02,
        )
    )
    sock = _send(beating)
    assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")  # the first heartbeat
    sock.close()
    assert wait_for(lambda: bool(fake.requests))
    assert fake.requests[0].client_closed.wait(20)
    assert fake.requests[0].parts_sent < 100
    assert wait_for(lambda: bool(beating.logs))
    assert beating.logs[0]["client_disconnected"] is True


# -- the Heartbeat itself ------------------------------------------------------------------


def test_heartbeat_writes_the_head_once_then_beats_until_stopped() -> None:
    writes: list[bytes] = []
    heartbeat = Heartbeat(writes.append, head=b"HEAD", beat=b"B", interval=0.05)
    assert wait_for(lambda: len(writes) >= 3)
    sent, failed = heartbeat.stop()
    count = len(writes)
    time.sleep(0.15)
    assert len(writes) == count == sent and not failed
    assert writes[0] == b"HEADB" and set(writes[1:]) == {b"B"}


def test_heartbeat_stopped_before_its_interval_writes_nothing() -> None:
    writes: list[bytes] = []
    heartbeat = Heartbeat(writes.append, head=b"H", beat=b"B", interval=0.2)
    assert heartbeat.stop() == (0, False)
    time.sleep(0.3)
    assert writes == []


def test_heartbeat_stops_at_a_failed_write() -> None:
    calls = threading.Semaphore(0)

    def write(data: bytes) -> None:
        calls.release()
        raise BrokenPipeError

    heartbeat = Heartbeat(write, head=b"H", beat=b"B", interval=0.02)
    assert calls.acquire(timeout=2)
    assert not calls.acquire(timeout=0.1)  # no second attempt
    assert heartbeat.stop() == (0, True)
