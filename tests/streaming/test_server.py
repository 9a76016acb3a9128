"""The runtime server end to end: real clients in front, the fake SageMaker endpoint behind."""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.settings import new_sagemaker_client
from tests.streaming.conftest import BASE_SETTINGS, MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.stream_fixtures import load_fixtures
from tests.support import engine_streams
from tests.support.fake_sagemaker import CallError, FakeSageMaker, ReceivedRequest, Scenario

TOKENS = ["Hel", "lo", ",", " wörld", " 🙂", "!"]
USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Say hello"}]
CHAT = "/v1/chat/completions"

# framing name -> (configured stream format, payloads for TOKENS, OpenAI finish reason, logprob)
FRAMINGS: dict[str, tuple[StreamFormat, Callable[[], list[bytes]], str, float]] = {
    "tgi": (
        StreamFormat.TGI,
        lambda: engine_streams.tgi(TOKENS, finish_reason="eos_token", log_prob=-0.25),
        "stop",
        -0.25,
    ),
    "openai": (
        StreamFormat.OPENAI,
        lambda: engine_streams.openai(TOKENS, finish_reason="length", log_prob=-0.75),
        "length",
        -0.75,
    ),
    "lmi_jsonlines": (
        StreamFormat.LMI_JSONLINES,
        lambda: engine_streams.lmi_jsonlines(TOKENS, finish_reason="length", log_prob=-0.5),
        "length",
        -0.5,
    ),
}
FRAMING_CASES = [
    pytest.param(name, configured, id=f"{name}-{'auto' if configured else 'explicit'}")
    for name in FRAMINGS
    for configured in (False, True)
]


def sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def connect(runtime: Runtime) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)


def request(
    runtime: Runtime,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, http.client.HTTPMessage, bytes]:
    connection = connect(runtime)
    try:
        raw = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        connection.request(method, path, body=raw, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def sse_data(body: bytes) -> list[Any]:
    """The ``data:`` payloads of an SSE body, JSON-decoded except ``[DONE]``."""
    out: list[Any] = []
    for event in body.decode().split("\n\n"):
        if event.startswith("data: "):
            data = event[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def error_of(body: bytes) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def stream_request(**extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": USER, "stream": True, **extra}


def wait_for(predicate: Callable[[], bool], timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


# -- streaming and non-streaming with the openai SDK, per engine framing ---------------------


@pytest.mark.parametrize(("framing", "auto"), FRAMING_CASES)
def test_openai_sdk_streams_one_chunk_per_token(
    start_runtime: StartRuntime, fake: FakeSageMaker, framing: str, auto: bool
) -> None:
    # GIVEN an engine streaming TOKENS in its own framing, cut at arbitrary byte boundaries
    stream_format, payloads, finish, _ = FRAMINGS[framing]
    runtime = start_runtime(stream_format=StreamFormat.AUTO if auto else stream_format)
    fake.enqueue(Scenario(parts=engine_streams.rechunk(payloads(), 7)))
    # WHEN the openai SDK asks for a stream
    stream = sdk(runtime).chat.completions.create(
        model="ignored",
        messages=USER,
        stream=True,
        max_tokens=16,
    )
    chunks = list(stream)
    # THEN a role chunk, one chunk per token in order, and a final chunk with the reason
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].delta.content for c in chunks[1:-1]] == TOKENS
    assert chunks[-1].choices[0].finish_reason == finish
    assert {c.model for c in chunks} == {MODEL}
    assert len({c.id for c in chunks}) == 1
    # AND the engine was asked to stream a messages request, with its usage
    assert fake.requests[0].json() == {
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 16,
    }
    assert fake.requests[0].headers["content-type"] == "application/json"


@pytest.mark.parametrize(("framing", "auto"), FRAMING_CASES)
def test_openai_sdk_gets_one_completion_when_not_streaming(
    start_runtime: StartRuntime, fake: FakeSageMaker, framing: str, auto: bool
) -> None:
    stream_format, payloads, finish, log_prob = FRAMINGS[framing]
    runtime = start_runtime(stream_format=StreamFormat.AUTO if auto else stream_format)
    fake.enqueue(Scenario(parts=engine_streams.rechunk(payloads(), 5)))
    completion = sdk(runtime).chat.completions.create(
        model="ignored",
        messages=USER,
        logprobs=True,
    )
    choice = completion.choices[0]
    assert choice.message.content == "".join(TOKENS)
    assert choice.finish_reason == finish
    assert choice.logprobs is not None and choice.logprobs.content is not None
    assert [e.logprob for e in choice.logprobs.content] == [log_prob] * len(TOKENS)
    assert completion.model == MODEL
    # the engine streams even for a stream:false client
    assert fake.requests[0].json() == {
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
        "logprobs": True,
    }


def test_generate_request_format_sends_the_prompt_as_inputs(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(request_format=RequestFormat.GENERATE, stream_format=StreamFormat.TGI)
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)))
    prompt = "<|user|>Say hello<|end|><|assistant|>"
    stream = sdk(runtime).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        max_tokens=8,
        temperature=0,
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "".join(TOKENS)
    assert fake.requests[0].json() == {
        "inputs": prompt,
        "parameters": {"details": True, "max_new_tokens": 8, "do_sample": False},
        "stream": True,
    }


def test_openai_sdk_gets_usage_from_tgi_details_when_not_streaming(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a TGI engine whose last event reports generated_tokens and input_length
    runtime = start_runtime(request_format=RequestFormat.GENERATE, stream_format=StreamFormat.TGI)
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS, input_length=13)))
    # WHEN the openai SDK asks for one completion
    completion = sdk(runtime).chat.completions.create(model="m", messages=USER)
    # THEN it carries the engine's counts
    assert completion.usage is not None
    usage = completion.usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (13, len(TOKENS))
    assert usage.total_tokens == 13 + len(TOKENS)
    # AND the log line records them
    assert wait_for(lambda: len(runtime.logs) == 1)
    assert (runtime.logs[0]["prompt_tokens"], runtime.logs[0]["completion_tokens"]) == (13, 6)


@pytest.mark.parametrize("framing", ["tgi", "openai"])
def test_include_usage_streams_end_with_a_usage_chunk(
    start_runtime: StartRuntime, fake: FakeSageMaker, framing: str
) -> None:
    # GIVEN an engine that reports 21 prompt tokens, in TGI details or an OpenAI usage chunk
    if framing == "tgi":
        runtime = start_runtime(
            request_format=RequestFormat.GENERATE, stream_format=StreamFormat.TGI
        )
        payloads = engine_streams.tgi(TOKENS, input_length=21)
    else:
        runtime = start_runtime(stream_format=StreamFormat.OPENAI)
        payloads = engine_streams.openai(TOKENS, prompt_tokens=21)
    fake.enqueue(Scenario(parts=engine_streams.rechunk(payloads, 9)))
    # WHEN the openai SDK streams with stream_options.include_usage
    stream = sdk(runtime).chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    # THEN the text chunks carry no usage, and the last chunk has no choices and the counts
    assert "".join(c.choices[0].delta.content or "" for c in chunks[:-1]) == "".join(TOKENS)
    assert chunks[-2].choices[0].finish_reason is not None
    assert all(c.usage is None for c in chunks[:-1])
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (21, len(TOKENS))
    assert last.usage.total_tokens == 21 + len(TOKENS)
    assert last.id == chunks[0].id
    # AND a messages engine was asked for its usage chunk; the generate API knows no such field
    sent = fake.requests[0].json()
    expected = None if framing == "tgi" else {"include_usage": True}
    assert sent.get("stream_options") == expected


def test_include_usage_sends_no_usage_chunk_when_the_engine_gave_no_counts(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN an engine that streams no usage chunk (its usage is unknown)
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    fake.enqueue(Scenario(parts=engine_streams.openai(TOKENS)))
    status, _, body = request(
        runtime, "POST", CHAT, stream_request(stream_options={"include_usage": True})
    )
    # THEN the stream ends normally with the finish chunk then [DONE]: the SDK needs ints
    assert status == 200
    events = sse_data(body)
    assert events[-1] == "[DONE]"
    assert events[-2]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in e for e in events[:-1])


def test_a_stream_without_include_usage_gets_no_usage_chunk(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    fake.enqueue(Scenario(parts=engine_streams.openai(TOKENS, prompt_tokens=5)))
    status, _, body = request(runtime, "POST", CHAT, stream_request())
    assert status == 200
    events = sse_data(body)
    assert events[-2]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in e for e in events[:-1])
    # the engine reported usage (it always is asked to), the client did not ask for it
    assert fake.requests[0].json()["stream_options"] == {"include_usage": True}


def test_generate_request_format_rejects_a_conversation_naming_the_limitation(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(request_format=RequestFormat.GENERATE)
    with pytest.raises(openai.BadRequestError) as info:
        sdk(runtime).chat.completions.create(
            model="m",
            messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        )
    assert info.value.status_code == 400
    assert "no chat template is applied" in info.value.message
    assert fake.requests == []


def test_models_route_lists_the_served_model(runtime: Runtime) -> None:
    models = sdk(runtime).models.list()
    assert [m.id for m in models.data] == [MODEL]


# -- invalid requests and routing (raw HTTP) -------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code", "param"),
    [
        (b"{oops", "invalid_json", None),
        ({"model": "m"}, "missing_required", "messages"),
        ({"messages": [{"role": "user", "content": 1}]}, "invalid_value", "messages[0].content"),
        ({"messages": USER, "n": 3}, "unsupported_parameter", "n"),
    ],
)
def test_invalid_requests_get_400_with_an_openai_error(
    runtime: Runtime, fake: FakeSageMaker, body: Any, code: str, param: str | None
) -> None:
    status, headers, raw = request(runtime, "POST", CHAT, body)
    assert status == 400
    assert headers["Content-Type"] == "application/json"
    error = error_of(raw)
    assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", code, param)
    assert fake.requests == []


def test_a_body_over_the_function_url_limit_gets_413_at_once_and_the_connection_closes(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(max_body_bytes=1024)
    connection = connect(runtime)
    # headers announce 7 MB, more than a function URL passes, and no body byte is ever sent
    connection.putrequest("POST", CHAT)
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Content-Length", str(7 * 1024 * 1024))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413
    assert response.headers["Connection"] == "close"
    error = error_of(response.read())
    assert error["code"] == "request_too_large"
    assert "7340032 bytes" in error["message"] and "1024" in error["message"]
    connection.close()


def test_missing_content_length_gets_411(runtime: Runtime) -> None:
    connection = connect(runtime)
    connection.putrequest("POST", CHAT)
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 411
    assert error_of(response.read())["code"] == "length_required"
    connection.close()


def test_chunked_request_bodies_are_read_within_the_limit(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(max_body_bytes=1024)
    fake.enqueue(Scenario(parts=engine_streams.tgi(["ok"])))
    body = json.dumps(stream_request()).encode()
    # http.client sends an iterable body with Transfer-Encoding: chunked
    status, _, raw = request(runtime, "POST", CHAT, iter([body[:10], body[10:]]))
    assert status == 200
    assert sse_data(raw)[1]["choices"][0]["delta"]["content"] == "ok"
    big = iter([b" " * 600, b" " * 600])
    status, _, raw = request(runtime, "POST", CHAT, big)
    assert status == 413
    assert error_of(raw)["code"] == "request_too_large"


@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        ("GET", "/nope", 404, None),
        ("POST", "/v1/completions", 404, None),
        ("GET", CHAT, 405, "POST"),
        ("DELETE", CHAT, 405, "POST"),
        ("POST", "/health", 405, "GET, HEAD"),
    ],
)
def test_unknown_paths_get_404_and_wrong_methods_405(
    runtime: Runtime, method: str, path: str, status: int, allow: str | None
) -> None:
    got, headers, raw = request(runtime, method, path, b"{}" if method == "POST" else None)
    assert got == status
    assert headers["Allow"] == allow
    assert error_of(raw)["code"] == ("not_found" if status == 404 else "method_not_allowed")


def test_unknown_http_method_gets_a_json_501(runtime: Runtime) -> None:
    status, headers, raw = request(runtime, "BREW", "/health")
    assert status == 501
    assert error_of(raw)["code"] == "method_not_implemented"
    assert headers["Allow"] is None  # 405 carries Allow; 501 says no path takes the method


def test_health_answers_200_and_is_not_logged(runtime: Runtime) -> None:
    status, _, raw = request(runtime, "GET", "/health")
    assert (status, json.loads(raw)) == (200, {"status": "ok"})
    status, _, raw = request(runtime, "HEAD", "/health")
    assert (status, raw) == (200, b"")
    assert runtime.logs == []


def test_a_keep_alive_connection_serves_requests_after_an_error(runtime: Runtime) -> None:
    connection = connect(runtime)
    connection.request("POST", CHAT, body=b"[]", headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    assert (response.status, error_of(response.read())["code"]) == (400, "invalid_json")
    connection.request("GET", "/health")
    response = connection.getresponse()
    assert (response.status, response.read()) == (200, b'{"status":"ok"}')
    connection.close()


# -- upstream failures before the stream -----------------------------------------------------


DENIED = (
    "User: arn:aws:sts::123456789012:assumed-role/llm-runtime-role/fn is not authorized to "
    "perform: sagemaker:InvokeEndpointWithResponseStream on resource: "
    "arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm-endpoint"
)


def _scrubbed(text: str) -> str:
    """What a client may read of ``text``: the account and ARNs replaced."""
    text = re.sub(r"arn:aws[\w-]*:\S+", "<ARN>", text)
    return re.sub(r"\b\d{12}\b", "<account>", text)


@pytest.mark.parametrize(
    ("error", "status", "code", "calls"),
    [
        (CallError.model_error("kaput", 500), 502, "model_error", 1),
        (CallError.model_error("input too long", 422), 400, "model_rejected_request", 1),
        (CallError.model_error("busy", 429), 429, "model_overloaded", 1),
        (
            CallError.validation_error("Endpoint x of account 123456789012 not found."),
            400,
            "upstream_validation_error",
            1,
        ),
        (CallError(status=503, error_type="ServiceUnavailable", message="x"), 503, None, 2),
        (CallError(status=400, error_type="ThrottlingException", message="x"), 429, None, 2),
        (CallError(status=500, error_type="InternalFailure", message="x"), 502, None, 2),
        (CallError(status=403, error_type="AccessDeniedException", message=DENIED), 502, None, 1),
    ],
    ids=lambda v: v.error_type if isinstance(v, CallError) else None,
)
def test_call_time_upstream_errors_map_to_a_status_and_an_openai_error(
    runtime: Runtime,
    fake: FakeSageMaker,
    error: CallError,
    status: int,
    code: str | None,
    calls: int,
) -> None:
    # GIVEN SageMaker failing the call (retryable failures fail the retry too)
    fake.enqueue(*[Scenario(call_error=error)] * calls)
    # WHEN a streaming request comes in
    got, _, raw = request(runtime, "POST", CHAT, stream_request())
    # THEN the mapped status, an OpenAI error naming the upstream error, and one retry at most
    assert got == status
    body = error_of(raw)
    assert error.error_type in body["message"]
    # the container's own words, or SageMaker's, without the account, ARNs or URLs in them
    said = _scrubbed(error.fields.get("OriginalMessage", error.message))
    assert said in body["message"]
    for private in ("123456789012", "arn:aws", "https://", "llm-runtime-role"):
        assert private not in body["message"]
    if code is not None:
        assert body["code"] == code
    assert len(fake.requests) == calls
    assert wait_for(lambda: bool(runtime.logs))
    assert runtime.logs[-1]["upstream_error"] == error.error_type


NOT_READY = CallError(status=429, error_type="ModelNotReadyException", message="loading")


@pytest.mark.parametrize(
    ("error", "status", "retry_after"),
    [
        (CallError(status=400, error_type="ThrottlingException", message="x"), 429, "1"),
        (CallError.model_error("busy", 429), 429, "1"),  # the engine is overloaded
        (CallError(status=503, error_type="ServiceUnavailable", message="x"), 503, "5"),
        (CallError.model_error("model not ready", 503), 503, "5"),
        (NOT_READY, 429, "5"),  # a serverless variant or a multi-model endpoint loading
        # SageMaker's own Retry-After, when it sends one in seconds, is passed on
        (
            CallError(
                status=503, error_type="ServiceUnavailable", message="x", headers={"Retry-After": "12"}
            ),
            503,
            "12",
        ),
        (CallError.model_error("kaput", 500), 502, None),
    ],
    ids=["throttled", "engine-busy", "unavailable", "engine-not-ready", "model-not-ready",
         "upstream-says", "model-error"],
)  # fmt: skip
@pytest.mark.parametrize("stream", [True, False])
def test_429_and_503_answers_tell_the_client_when_to_retry(
    runtime: Runtime,
    fake: FakeSageMaker,
    error: CallError,
    status: int,
    retry_after: str | None,
    stream: bool,
) -> None:
    fake.enqueue(*[Scenario(call_error=error)] * 2)  # a retryable one fails its retry too
    got, headers, raw = request(runtime, "POST", CHAT, {"messages": USER, "stream": stream})
    assert got == status, raw
    assert headers.get("Retry-After") == retry_after


def test_an_engine_busy_before_its_first_token_gets_a_429_with_retry_after(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.openai_error("queue full", code=429)))
    got, headers, _ = request(runtime, "POST", CHAT, stream_request())
    assert (got, headers.get("Retry-After")) == (429, "1")
    # AND the openai SDK, which honours it, retries after that second and gets the answer
    fake.enqueue(
        Scenario(parts=engine_streams.openai_error("queue full", code=429)),
        Scenario(parts=engine_streams.openai(["ok"])),
    )
    client = openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=1
    )
    started = time.monotonic()
    completion = client.chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "ok"
    assert time.monotonic() - started >= 1.0  # it waited as told


def test_an_unreachable_endpoint_gets_502_after_one_retry(
    start_runtime: StartRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a SageMaker URL where nothing listens
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", dead)
    runtime = start_runtime(client=new_sagemaker_client(BASE_SETTINGS))
    # WHEN a request comes in THEN the connection failure is a 502 naming the cause, but not
    # the endpoint URL (it names the endpoint and region)
    status, _, raw = request(runtime, "POST", CHAT, stream_request())
    assert status == 502
    error = error_of(raw)
    assert error["code"] == "upstream_unreachable"
    assert "Could not connect" in error["message"] and dead not in error["message"]


def test_a_retried_call_that_then_succeeds_streams_normally(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    busy = CallError(status=503, error_type="ServiceUnavailable", message="x")
    fake.enqueue(Scenario(call_error=busy), Scenario(parts=engine_streams.tgi(["ok"])))
    status, _, raw = request(runtime, "POST", CHAT, stream_request())
    assert status == 200
    assert sse_data(raw)[1]["choices"][0]["delta"]["content"] == "ok"


# -- failures during the stream --------------------------------------------------------------


def test_model_stream_error_mid_stream_ends_with_an_error_event_and_done(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(
        Scenario(
            parts=engine_streams.tgi(TOKENS)[:2],
            exception="ModelStreamError",
            exception_message="model died",
            exception_code="StreamBroken",
        )
    )
    connection = connect(runtime)
    connection.request("POST", CHAT, body=json.dumps(stream_request()).encode())
    response = connection.getresponse()
    assert response.status == 200
    assert response.headers["Transfer-Encoding"] == "chunked"
    events = sse_data(response.read())  # read() raises IncompleteRead on an unclean end
    assert [e["choices"][0]["delta"].get("content") for e in events[1:3]] == TOKENS[:2]
    assert events[3]["error"]["code"] == "ModelStreamError"
    assert "model died" in events[3]["error"]["message"]
    assert events[4:] == ["[DONE]"]
    # the response ended cleanly: the same connection serves the next request
    connection.request("GET", "/health")
    assert connection.getresponse().status == 200
    connection.close()
    assert runtime.logs[0]["stream_error"] == "ModelStreamError"


def test_engine_error_payload_mid_stream_raises_in_the_openai_sdk_after_the_tokens(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(stream_format=StreamFormat.TGI)
    parts = [*engine_streams.tgi(TOKENS)[:3], engine_streams.tgi_error("CUDA out of memory")]
    fake.enqueue(Scenario(parts=parts))
    received: list[str] = []
    with pytest.raises(openai.APIError) as info:
        for chunk in sdk(runtime).chat.completions.create(model="m", messages=USER, stream=True):
            received.append(chunk.choices[0].delta.content or "")
    assert "".join(received) == "".join(TOKENS[:3])
    assert "CUDA out of memory" in info.value.message


@pytest.mark.parametrize(
    ("scenario", "status", "error_type", "code"),
    [
        (Scenario(exception="ModelStreamError"), 502, "upstream_error", "ModelStreamError"),
        (
            Scenario(parts=[engine_streams.tgi_error("Input is too long", "validation")]),
            400,
            "invalid_request_error",
            "validation",
        ),
        (
            Scenario(parts=engine_streams.openai_error("engine crashed")),
            502,
            "upstream_error",
            "InternalServerError",
        ),
    ],
    ids=["stream-exception", "tgi-validation", "vllm-error"],
)
def test_a_stream_failing_before_its_first_token_gets_an_http_error_status(
    runtime: Runtime,
    fake: FakeSageMaker,
    scenario: Scenario,
    status: int,
    error_type: str,
    code: str,
) -> None:
    # GIVEN an engine stream that fails before any token
    fake.enqueue(scenario)
    # WHEN a client asks for a stream THEN it gets a real error status, not 200 + error event
    got, headers, raw = request(runtime, "POST", CHAT, stream_request())
    error = error_of(raw)
    assert (got, error["type"]) == (status, error_type)
    assert headers["Content-Type"] == "application/json"
    assert error["code"] == code


def _error_line(payload: dict[str, Any], done: bool = True) -> list[bytes]:
    line = b"data: " + json.dumps(payload).encode() + b"\n\n"
    return [line, b"data: [DONE]\n\n"] if done else [line]


ABORT_FIRST = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"abort"}]}\n\n'
FIXTURE_RAW = {f.name: f.raw for f in load_fixtures()}


@pytest.mark.parametrize(
    ("parts", "status", "code"),
    [
        ([FIXTURE_RAW["sglang_abort_status"]], 429, "TOO_MANY_REQUESTS"),
        (
            _error_line({"error": {"message": "m", "type": "BAD_REQUEST", "code": 400}}),
            400,
            "BAD_REQUEST",
        ),
        (
            _error_line({"error": {"message": "m", "type": "SERVICE_UNAVAILABLE", "code": 503}}),
            503,
            "SERVICE_UNAVAILABLE",
        ),
        ([FIXTURE_RAW["vllm_not_found"]], 404, "NotFoundError"),
        ([FIXTURE_RAW["djl_code_error"]], 400, "400"),
        ([b'{"code":424,"error":"Custom formatter failed"}'], 502, "424"),
        ([FIXTURE_RAW["tgi_messages_overloaded"]], 429, "overloaded"),
        (
            _error_line(
                {
                    "error": {
                        "message": "Request failed during generation: x",
                        "http_status_code": 422,
                    }
                }
            ),
            502,
            "generation",
        ),
        (
            _error_line(
                {"error": {"message": "Input validation error: x", "http_status_code": 422}}
            ),
            400,
            "validation",
        ),
        ([ABORT_FIRST, b"data: [DONE]\n\n"], 502, "abort"),
    ],
    ids=[
        "sglang-429",
        "sglang-400",
        "sglang-503",
        "vllm-404",
        "djl-code-400",
        "djl-code-424",
        "tgi-messages-overloaded",
        "tgi-messages-generation-422",
        "tgi-messages-validation-422",
        "abort",
    ],
)
def test_engine_errors_before_the_first_token_get_the_engines_status(
    runtime: Runtime, fake: FakeSageMaker, parts: list[bytes], status: int, code: str
) -> None:
    # GIVEN an engine failing before any token, in its own error shape, cut into small parts
    fake.enqueue(Scenario(parts=engine_streams.rechunk(parts, 5)))
    got, _, raw = request(runtime, "POST", CHAT, stream_request())
    # THEN the status the engine meant, the engine's code, and its message
    assert got == status
    error = error_of(raw)
    assert error["code"] == code
    assert error["message"].startswith("the model stream failed: ")


@pytest.mark.parametrize("fixture", ["vllm_abort", "sglang_abort"])
def test_an_abort_after_tokens_ends_the_stream_with_an_error_not_a_stop(
    runtime: Runtime, fake: FakeSageMaker, fixture: str
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.rechunk([FIXTURE_RAW[fixture]], 9)))
    status, _, raw = request(runtime, "POST", CHAT, stream_request())
    assert status == 200
    events = sse_data(raw)
    assert events[-2]["error"]["code"] == "abort"
    assert events[-1] == "[DONE]"
    assert not any(
        e != "[DONE]" and e.get("choices") and e["choices"][0]["finish_reason"] for e in events
    )


@pytest.mark.parametrize("framing", list(FRAMINGS))
def test_a_stream_cut_before_the_engine_said_done_ends_with_an_error_not_a_stop(
    start_runtime: StartRuntime, fake: FakeSageMaker, framing: str
) -> None:
    # GIVEN an engine stream cut after its tokens: no finish_reason, no [DONE], no final event
    configured, payloads, _, _ = FRAMINGS[framing]
    runtime = start_runtime(stream_format=configured)
    cut = [p for p in payloads() if b"[DONE]" not in p and b'"finish_reason":"' not in p]
    fake.enqueue(Scenario(parts=cut), Scenario(parts=cut), Scenario(parts=cut))
    # WHEN a client streams it
    status, _, raw = request(runtime, "POST", CHAT, stream_request())
    # THEN it gets the tokens, then an error event: never a finish_reason "stop"
    assert status == 200
    events = sse_data(raw)
    assert events[-2]["error"]["code"] == "truncated"
    assert events[-1] == "[DONE]"
    assert not any(
        e != "[DONE]" and e.get("choices") and e["choices"][0]["finish_reason"] for e in events
    )
    # AND a whole reply is a 502, not a completion cut short
    status, _, raw = request(runtime, "POST", CHAT, {"messages": USER})
    assert status == 502 and error_of(raw)["code"] == "truncated"
    with pytest.raises(openai.APIError) as raised:  # and the SDK's stream raises
        list(sdk(runtime).chat.completions.create(model="m", messages=USER, stream=True))
    assert "cut short" in str(raised.value)


def test_djl_sse_chat_keeps_the_token_after_its_early_done(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(
        Scenario(parts=engine_streams.rechunk([FIXTURE_RAW["djl_sse_chat_done_early"]], 4))
    )
    completion = sdk(runtime).chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "Bonjour !"
    assert completion.choices[0].finish_reason == "length"


def test_djl_3p_stream_gives_text_reason_and_usage(runtime: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=engine_streams.rechunk([FIXTURE_RAW["djl_3p_stream"]], 6)))
    completion = sdk(runtime).chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "Hello wörld!"
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 3)


def test_djl_chat_log_probs_sent_as_a_list_reach_the_client(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=[FIXTURE_RAW["djl_chat_logprobs_list"]]))
    completion = sdk(runtime).chat.completions.create(model="m", messages=USER, logprobs=True)
    logprobs = completion.choices[0].logprobs
    assert logprobs is not None and logprobs.content is not None
    assert [(e.token, e.logprob) for e in logprobs.content] == [("Hi", -0.25), (" there", -0.5)]


def test_stream_false_replies_carry_the_usage_the_chat_engine_reports(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a chat engine that sends its usage chunk (it is always asked for it)
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    fake.enqueue(Scenario(parts=engine_streams.openai(TOKENS, prompt_tokens=17)))
    completion = sdk(runtime).chat.completions.create(model="m", messages=USER)
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (17, 6)
    assert fake.requests[0].json()["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [True, False])
def test_cached_and_reasoning_tokens_are_the_engine_s_and_absent_when_it_counts_none(
    start_runtime: StartRuntime, fake: FakeSageMaker, stream: bool
) -> None:
    # GIVEN an engine that counts cached and reasoning tokens, then one that counts neither
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    counted = engine_streams.openai(TOKENS, prompt_tokens=40, cached_tokens=32, reasoning_tokens=2)
    fake.enqueue(
        Scenario(parts=counted), Scenario(parts=engine_streams.openai(TOKENS, prompt_tokens=9))
    )
    extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if stream else {}

    def usage() -> dict[str, Any]:
        status, _, raw = request(
            runtime, "POST", CHAT, {"messages": USER, "stream": stream, **extra}
        )
        assert status == 200
        if not stream:
            found: dict[str, Any] = json.loads(raw)["usage"]
            return found
        (chunk,) = [e for e in sse_data(raw) if e != "[DONE]" and e.get("usage")]
        return dict(chunk["usage"])

    # THEN the counts are the engine's, never a constant
    first = usage()
    assert first["prompt_tokens_details"] == {"cached_tokens": 32}
    assert first["completion_tokens_details"] == {"reasoning_tokens": 2}
    # AND absent when the engine counted none (a 0 would say none were cached)
    second = usage()
    assert second == {"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15}


def test_mid_stream_error_without_streaming_gets_502(runtime: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)[:2], exception="InternalStreamFailure"))
    status, _, raw = request(runtime, "POST", CHAT, {"messages": USER})
    assert status == 502
    assert error_of(raw)["code"] == "InternalStreamFailure"


def test_upstream_read_timeout_ends_the_stream_with_an_error_not_a_hang(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN an engine that sends one token and then goes silent for longer than the timeout
    runtime = start_runtime(upstream_read_timeout=0.5)
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)[:1], stall=8.0))
    started = time.monotonic()
    status, _, raw = request(runtime, "POST", CHAT, stream_request())
    # THEN the token, then an error event and [DONE], well before the stall ends
    assert time.monotonic() - started < 5.0
    assert status == 200
    events = sse_data(raw)
    assert events[1]["choices"][0]["delta"]["content"] == TOKENS[0]
    assert events[2]["error"]["code"] == "ReadTimeoutError"
    assert events[3] == "[DONE]"


def test_upstream_read_timeout_without_streaming_gets_504(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(upstream_read_timeout=0.5)
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)[:1], stall=5.0))
    status, _, raw = request(runtime, "POST", CHAT, {"messages": USER})
    assert status == 504
    assert error_of(raw)["code"] == "ReadTimeoutError"


# -- client disconnects ----------------------------------------------------------------------


def _send_raw(runtime: Runtime, body: dict[str, Any]) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT)
    data = json.dumps(body).encode()
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
    sock.sendall(head.encode() + data)
    return sock


def _slow_stream(fake: FakeSageMaker, parts: int = 200) -> ReceivedRequest:
    fake.enqueue(
        Scenario(parts=engine_streams.tgi([f"t{i} " for i in range(parts)]), interval=0.02)
    )
    assert wait_for(lambda: len(fake.requests) == 1)
    return fake.requests[0]


def test_client_disconnect_mid_stream_closes_the_upstream_stream(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    sock = _send_raw(runtime, stream_request())
    upstream = _slow_stream(fake)
    received = b""
    while b'"content":"t0 "' not in received:
        received += sock.recv(65536)
    sock.close()
    # the runtime stops reading and closes its SageMaker connection within a short time
    assert upstream.client_closed.wait(20)  # set at once when it holds; 200 parts take 4 s
    assert upstream.parts_sent < 100
    assert wait_for(lambda: bool(runtime.logs))
    assert runtime.logs[-1]["client_disconnected"] is True


def test_client_disconnect_while_aggregating_closes_the_upstream_stream(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    sock = _send_raw(runtime, {"messages": USER})
    upstream = _slow_stream(fake)
    assert wait_for(lambda: upstream.parts_sent >= 2)
    sock.close()
    assert upstream.client_closed.wait(20)  # set at once when it holds; 200 parts take 4 s
    assert upstream.parts_sent < 100


def test_a_client_that_stops_sending_its_body_is_dropped_after_the_client_timeout(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(client_timeout=0.3)
    sock = socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT)
    sock.sendall(f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{".encode())
    started = time.monotonic()
    assert sock.recv(1024) == b""  # closed without an answer: there is nobody to answer
    assert time.monotonic() - started < 3.0
    sock.close()
    assert fake.requests == []
    assert wait_for(lambda: bool(runtime.logs))
    assert runtime.logs[0]["client_disconnected"] is True


def test_http_1_0_clients_get_a_close_delimited_stream(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)))
    sock = socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT)
    data = json.dumps(stream_request()).encode()
    sock.sendall(f"POST {CHAT} HTTP/1.0\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    sock.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head
    events = sse_data(body)
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-1]) == "".join(
        TOKENS
    )
    assert events[-1] == "[DONE]"


# -- upstream request details, logs, concurrency ---------------------------------------------


def _idle_connections(client: Any) -> int:
    """Open connections waiting in a boto3 client's urllib3 pools (botocore internals, test
    only). A closed one may wait there too: urllib3 puts a response's connection back when the
    response's reader is garbage-collected, closed or not, and replaces a closed one when it is
    next taken; so only an open one can carry the next request."""
    manager = client._endpoint.http_session._manager
    pools = [manager.pools[key] for key in manager.pools.keys()]  # noqa: SIM118 (no __iter__)
    queued = [conn for pool in pools for conn in list(pool.pool.queue) if conn is not None]
    return sum(1 for conn in queued if conn.sock is not None)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("framing", list(FRAMINGS))
def test_the_upstream_connection_is_reused_after_a_completed_stream(
    start_runtime: StartRuntime, fake: FakeSageMaker, framing: str, stream: bool
) -> None:
    # GIVEN a runtime with its own boto3 client, and two requests in a row ending normally
    client = new_sagemaker_client(BASE_SETTINGS)
    runtime = start_runtime(client=client)
    _, payloads, _, _ = FRAMINGS[framing]
    fake.enqueue(Scenario(parts=payloads()), Scenario(parts=payloads()))
    for _ in range(2):
        assert request(runtime, "POST", CHAT, {"messages": USER, "stream": stream})[0] == 200
        # the end of the body is read in the background, then the connection is pooled
        assert wait_for(lambda: _idle_connections(client) == 1)
    # THEN the second went over the first one's connection (no new TLS handshake on AWS)
    assert fake.requests[0].client_port == fake.requests[1].client_port
    assert not fake.requests[0].client_closed.is_set()


def test_a_stream_whose_end_has_arrived_is_read_to_it_without_a_thread(
    fake: FakeSageMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    from constructs_llm.streaming.runtime import upstream
    from constructs_llm.streaming.runtime.parsing.parser import parse_stream
    from constructs_llm.streaming.runtime.parsing.sagemaker_stream import iter_payload_parts

    threads: list[object] = []
    monkeypatch.setattr(upstream, "_drain_in_background", threads.append)
    client = new_sagemaker_client(BASE_SETTINGS)
    # GIVEN a stream read to its final event, whose HTTP body ends only after a long stall
    fake.enqueue(
        Scenario(parts=engine_streams.tgi(["a"]), stall=30.0),
        Scenario(parts=engine_streams.tgi(["a"])),
    )

    def read_to_final_event() -> Any:
        body = client.invoke_endpoint_with_response_stream(
            EndpointName="llm-endpoint", ContentType="application/json", Body=b"{}"
        )["Body"]
        parts = iter_payload_parts(body)
        events = list(parse_stream(iter(parts.__next__, None), StreamFormat.TGI))
        assert [type(event).__name__ for event in events] == ["TokenEvent", "DoneEvent"]
        return parts

    stalled = read_to_final_event()
    # THEN its end is not there yet: the answer comes without waiting for it, and the rest
    # is left to a background thread
    started = time.monotonic()
    assert not stalled.rest_received()
    assert time.monotonic() - started < 15.0
    upstream.release(stalled, completed=True)
    assert threads == [stalled]
    stalled.close()
    # WHEN the next stream's end arrives right after its final event
    ended = read_to_final_event()
    assert wait_for(ended.rest_received)
    upstream.release(ended, completed=True)
    # THEN it is read here, at once, and its connection is back in the pool
    assert threads == [stalled]
    assert _idle_connections(client) == 1


def test_the_upstream_connection_is_dropped_after_a_failed_stream(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    client = new_sagemaker_client(BASE_SETTINGS)
    runtime = start_runtime(client=client)
    failing = Scenario(parts=engine_streams.tgi(TOKENS)[:1], exception="ModelStreamError")
    fake.enqueue(failing, Scenario(parts=engine_streams.tgi(TOKENS)))
    assert request(runtime, "POST", CHAT, stream_request())[0] == 200
    assert _idle_connections(client) == 0
    assert request(runtime, "POST", CHAT, stream_request())[0] == 200
    assert fake.requests[0].client_port != fake.requests[1].client_port


def test_inference_component_name_is_sent_when_configured(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    fake.enqueue(*[Scenario(parts=engine_streams.tgi(["x"]))] * 2)
    for runtime in (start_runtime(inference_component_name="chat-ic"), start_runtime()):
        assert request(runtime, "POST", CHAT, stream_request())[0] == 200
    assert [r.inference_component for r in fake.requests] == ["chat-ic", None]
    assert {r.endpoint_name for r in fake.requests} == {"llm-endpoint"}


def test_each_request_logs_one_json_line_without_the_prompt(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS, finish_reason="length")))
    context = json.dumps({"request_id": "req-123", "deadline": 1})
    status, _, _ = request(
        runtime, "POST", CHAT, stream_request(), {"x-amzn-lambda-context": context}
    )
    assert status == 200
    assert wait_for(lambda: len(runtime.logs) == 1)
    record = runtime.logs[0]
    assert record["request_id"] == "req-123"
    assert (record["status"], record["stream"], record["tokens"]) == (200, True, len(TOKENS))
    assert record["finish_reason"] == "length"
    assert 0 < record["ttft_ms"] <= record["duration_ms"]
    text = json.dumps(runtime.logs)
    assert "Say hello" not in text and "wörld" not in text


def test_32_concurrent_streams_each_get_exactly_their_own_tokens_in_order(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    # GIVEN an engine whose tokens name the client that asked, sent with small gaps
    def respond(received: ReceivedRequest) -> Scenario:
        client = received.json()["messages"][0]["content"]
        tokens = [f"{client}:{i} " for i in range(20)]
        return Scenario(
            parts=engine_streams.rechunk(engine_streams.tgi(tokens), 11), interval=0.002
        )

    fake.responder = respond
    client = sdk(runtime)
    results: dict[int, list[str]] = {}
    barrier = threading.Barrier(32, timeout=SOCKET_TIMEOUT)

    def run(n: int) -> None:
        barrier.wait()
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": f"c{n}"}], stream=True
        )
        results[n] = [c.choices[0].delta.content for c in stream if c.choices[0].delta.content]

    # WHEN 32 clients stream at once
    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    # THEN every client got all of its tokens, in order, and nobody else's
    assert time.monotonic() - started < 20
    assert sorted(results) == list(range(32))
    for n, pieces in results.items():
        assert pieces == [f"c{n}:{i} " for i in range(20)]
    assert len(fake.requests) == 32
