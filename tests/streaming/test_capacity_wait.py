"""A door that waits for a wake-up: an inference component scaled to zero refuses a call for
want of capacity; the runtime holds the request and calls again with backoff up to
``CAPACITY_WAIT_SECONDS`` (``StreamingInvoker(capacity_wait=...)``), streams get SSE comments
meanwhile, past the wait (or without one) the client gets a 503 with ``Retry-After``, and the
log line's EMF record counts the held request and its time. Against the fake SageMaker,
refusing N times and then answering."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

import pytest

from constructs_llm.streaming.runtime import capacity_wait
from constructs_llm.streaming.runtime.settings import Settings, SettingsError
from tests.streaming.conftest import ENDPOINT, MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.support import engine_streams
from tests.support.emf import check, emf_metrics
from tests.support.fake_sagemaker import CallError, FakeSageMaker, ReceivedRequest, Scenario

CHAT = "/v1/chat/completions"
USER = [{"role": "user", "content": "Hi"}]
ASLEEP = Scenario(call_error=CallError.no_capacity())
KEEP_ALIVE = b": keep-alive\n\n"


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff of hundredths of a second and a beat every 50 ms, so holds are short."""
    monkeypatch.setattr(capacity_wait, "FIRST_BACKOFF_S", 0.02)
    monkeypatch.setattr(capacity_wait, "MAX_BACKOFF_S", 0.05)
    monkeypatch.setattr(capacity_wait, "HOLD_BEAT_S", 0.05)


def post(runtime: Runtime, body: dict[str, Any]) -> tuple[int, http.client.HTTPMessage, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    try:
        connection.request("POST", CHAT, body=json.dumps(body))
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def metrics(runtime: Runtime) -> dict[str, float]:
    record = runtime.logs[-1]
    check(record)
    return emf_metrics(record)[("Target", "Model")]


def test_without_a_wait_a_component_with_no_copy_is_a_503_with_retry_after(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(ASLEEP)
    status, headers, raw = post(runtime, {"messages": USER})
    # THEN not the client's 400, but a 503 saying when to come back; one call, not held
    assert status == 503, raw
    error = json.loads(raw)["error"]
    assert error["code"] == "no_capacity" and "scaled to zero" in error["message"]
    assert headers["Retry-After"] == str(capacity_wait.RETRY_AFTER_NO_CAPACITY)
    assert len(fake.requests) == 1
    assert "held_ms" not in runtime.logs[-1] and "HeldRequests" not in metrics(runtime)


@pytest.mark.parametrize("refusals", [1, 3])
def test_a_held_request_is_answered_once_the_component_wakes(
    start_runtime: StartRuntime, fake: FakeSageMaker, refusals: int
) -> None:
    # GIVEN a component that refuses N calls while it wakes, then answers
    runtime = start_runtime(capacity_wait_seconds=30.0)
    fake.enqueue(*[ASLEEP] * refusals, Scenario(parts=engine_streams.openai(["Good", " morning"])))
    # WHEN a whole reply is asked for
    status, _, raw = post(runtime, {"messages": USER})
    # THEN it is the answer, after N + 1 calls
    assert status == 200, raw
    assert json.loads(raw)["choices"][0]["message"]["content"] == "Good morning"
    assert len(fake.requests) == refusals + 1
    # AND the log line counts the hold
    record = runtime.logs[-1]
    assert record["capacity_retries"] == refusals and record["held_ms"] > 0
    values = metrics(runtime)
    assert values["HeldRequests"] == 1 and values["HeldTime"] == record["held_ms"]
    assert values["Errors"] == 0


def test_a_held_stream_gets_comments_until_its_first_token(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a component that refuses twice, then answers only once the client saw a comment
    runtime = start_runtime(capacity_wait_seconds=30.0)
    awake = threading.Event()
    answer = Scenario(parts=engine_streams.openai(["Hi"]), first_after=awake)
    fake.enqueue(ASLEEP, ASLEEP, answer)
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    connection.request("POST", CHAT, body=json.dumps({"messages": USER, "stream": True}))
    # THEN the 200 comes with a keep-alive comment while the request is held
    response = connection.getresponse()
    assert response.status == 200
    assert response.read(len(KEEP_ALIVE)) == KEEP_ALIVE
    awake.set()
    # AND the answer follows
    text = response.read().decode()
    connection.close()
    assert '"content":"Hi"' in text and text.endswith("data: [DONE]\n\n")
    assert runtime.logs[-1]["heartbeats"] >= 1 and len(fake.requests) == 3


def test_past_the_wait_a_whole_reply_gets_the_503_with_retry_after(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a component that never wakes within the wait
    runtime = start_runtime(capacity_wait_seconds=0.3)
    fake.responder = lambda request: ASLEEP
    started = time.monotonic()
    status, headers, raw = post(runtime, {"messages": USER})
    waited = time.monotonic() - started
    # THEN it was held the whole wait, then refused with when to come back
    assert status == 503 and json.loads(raw)["error"]["code"] == "no_capacity"
    assert headers["Retry-After"] == str(capacity_wait.RETRY_AFTER_NO_CAPACITY)
    assert waited >= 0.3 and len(fake.requests) >= 2
    record = runtime.logs[-1]
    assert record["held_ms"] >= 300 and record["capacity_retries"] == len(fake.requests) - 1
    values = metrics(runtime)
    assert values["HeldRequests"] == 1 and values["Errors"] == 1


def test_past_the_wait_a_stream_whose_200_a_comment_committed_ends_with_the_error(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(capacity_wait_seconds=2.0)  # comments every 50 ms meanwhile
    fake.responder = lambda request: ASLEEP
    status, _, raw = post(runtime, {"messages": USER, "stream": True})
    assert status == 200  # a comment went out before the wait was over
    text = raw.decode()
    assert text.startswith(": keep-alive\n\n")
    events = [e[len("data: ") :] for e in text.split("\n\n") if e.startswith("data: ")]
    assert json.loads(events[-2])["error"]["code"] == "no_capacity"
    assert events[-1] == "[DONE]"


def test_a_stream_whose_wait_ends_before_any_comment_gets_the_503(
    start_runtime: StartRuntime, fake: FakeSageMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capacity_wait, "HOLD_BEAT_S", 30.0)
    runtime = start_runtime(capacity_wait_seconds=0.2)
    fake.responder = lambda request: ASLEEP
    status, headers, _ = post(runtime, {"messages": USER, "stream": True})
    assert status == 503 and headers["Retry-After"] == "60"


def test_other_refusals_are_not_held(start_runtime: StartRuntime, fake: FakeSageMaker) -> None:
    runtime = start_runtime(capacity_wait_seconds=30.0)
    fake.enqueue(Scenario(call_error=CallError.validation_error("Endpoint x not found")))
    status, _, raw = post(runtime, {"messages": USER})
    assert status == 400 and json.loads(raw)["error"]["code"] == "upstream_validation_error"
    assert len(fake.requests) == 1 and "held_ms" not in runtime.logs[-1]


def test_a_client_that_leaves_while_held_stops_the_calls(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(capacity_wait_seconds=30.0)
    calls: list[ReceivedRequest] = []

    def asleep(request: ReceivedRequest) -> Scenario:
        calls.append(request)
        return ASLEEP

    fake.responder = asleep
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    connection.request("POST", CHAT, body=json.dumps({"messages": USER}))
    deadline = time.monotonic() + SOCKET_TIMEOUT
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    connection.close()  # the client gives up
    while not runtime.logs and time.monotonic() < deadline:
        time.sleep(0.01)
    # THEN the hold ends (its log line is written when it does) with the disconnect
    record = runtime.logs[-1]
    assert record["client_disconnected"] is True and "held_ms" in record


def test_the_wait_is_read_from_its_variable_and_bounded() -> None:
    base = {"ENDPOINT_NAME": ENDPOINT, "MODEL_NAME": MODEL}
    assert Settings.from_env(base).capacity_wait_seconds == 0
    assert Settings.from_env({**base, "CAPACITY_WAIT_SECONDS": "600"}).capacity_wait_seconds == 600
    for bad in ("-1", "901", "soon"):
        with pytest.raises(SettingsError, match="CAPACITY_WAIT_SECONDS"):
            Settings.from_env({**base, "CAPACITY_WAIT_SECONDS": bad})
