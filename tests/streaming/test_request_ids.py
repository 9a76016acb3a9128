"""Every answer carries ``x-request-id`` (success, error, streamed, refused before routing), and
the request's log line holds the same id: what the ``openai`` SDK shows as ``_request_id`` finds
the log line of a failure."""

from __future__ import annotations

import http.client
import json
import re
import socket
from contextlib import ExitStack

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi"}]
GENERATED = re.compile(r"req_[0-9a-f]{32}")


def sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def logged(runtime: Runtime, request_id: str) -> dict[str, object]:
    (line,) = [line for line in runtime.logs if line.get("request_id") == request_id]
    return line


def test_a_whole_answer_s_request_id_is_its_log_line_s(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.openai(["Hello"])))
    completion = sdk(runtime).chat.completions.create(model=MODEL, messages=USER)
    request_id = completion._request_id
    assert request_id is not None and GENERATED.fullmatch(request_id)
    assert logged(runtime, request_id)["status"] == 200


def test_a_stream_carries_its_request_id_in_its_head(runtime: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=engine_streams.openai(["Hel", "lo"])))
    stream = sdk(runtime).chat.completions.create(model=MODEL, messages=USER, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    request_id = stream.response.headers["x-request-id"]
    assert text == "Hello" and logged(runtime, request_id)["tokens"] == 2


def test_an_error_s_request_id_finds_its_log_line(runtime: Runtime, fake: FakeSageMaker) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(runtime).chat.completions.create(model=MODEL, messages=[])
    request_id = refused.value.request_id
    assert request_id is not None
    assert logged(runtime, request_id)["error_code"] == "invalid_value"


def test_responses_and_a_lambda_invocation_s_own_id(runtime: Runtime, fake: FakeSageMaker) -> None:
    # GIVEN a request the Lambda Web Adapter relays, naming the invocation
    fake.enqueue(Scenario(parts=engine_streams.openai(["ok"])))
    context = json.dumps({"request_id": "4b1e5c3a-90d2-4f6e-8a7b-1c2d3e4f5a6b"})
    response = sdk(runtime).responses.with_raw_response.create(
        model=MODEL, input="Hi", extra_headers={"x-amzn-lambda-context": context}
    )
    # THEN the answer and the log line carry the invocation's id, which Lambda logs too
    assert response.headers["x-request-id"] == "4b1e5c3a-90d2-4f6e-8a7b-1c2d3e4f5a6b"
    assert response.parse().output_text == "ok"
    assert logged(runtime, "4b1e5c3a-90d2-4f6e-8a7b-1c2d3e4f5a6b")["path"] == "/v1/responses"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/health", 200),
        ("GET", "/v1/models", 200),
        ("GET", "/nope", 404),
        ("PUT", "/health", 405),
    ],
)
def test_every_route_answers_with_a_request_id(
    runtime: Runtime, method: str, path: str, status: int
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    connection.request(method, path)
    response = connection.getresponse()
    assert response.status == status
    assert GENERATED.fullmatch(response.headers["x-request-id"] or "")
    connection.close()


def raw(runtime: Runtime, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def request_id_of(answer: bytes) -> str:
    found = re.search(rb"\r\nx-request-id: (\S+)\r\n", answer.split(b"\r\n\r\n", 1)[0] + b"\r\n")
    assert found, answer
    return found.group(1).decode()


def test_a_request_refused_before_routing_has_a_request_id_too(runtime: Runtime) -> None:
    answer = raw(runtime, b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 501 ")
    assert logged(runtime, request_id_of(answer))["error_code"] == "method_not_implemented"


def test_a_connection_past_the_bound_gets_a_503_with_a_request_id(
    start_runtime: StartRuntime,
) -> None:
    runtime = start_runtime(max_connections=1)
    with ExitStack() as held:
        sock = held.enter_context(
            socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT)
        )
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        answer = raw(runtime, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 503 ")
    assert logged(runtime, request_id_of(answer))["msg"] == "connection_refused"


def test_a_heartbeat_s_early_head_carries_the_request_id(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(heartbeat_seconds=0.1)
    fake.enqueue(Scenario(parts=engine_streams.openai(["late"]), header_delay=0.5))
    stream = sdk(runtime).chat.completions.create(model=MODEL, messages=USER, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "late"
    assert logged(runtime, stream.response.headers["x-request-id"])["heartbeats"]
