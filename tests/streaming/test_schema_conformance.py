"""Every response shape the runtime writes (Chat Completions and Responses), validated in
pydantic strict mode against the ``openai`` SDK's typed models (openai 3.54.0, pinned in ``requirements-dev.txt``; its types are
generated from OpenAI's published OpenAPI spec). Strict mode: no coercion, so a string where
the schema has an int, or a missing required field, fails."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest
from openai.types import Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.shared import ErrorObject
from pydantic import ValidationError

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.chat.target import ChatTarget
from constructs_llm.streaming.runtime.parsing.events import DoneEvent
from constructs_llm.streaming.runtime.responses.objects import ResponseShape
from constructs_llm.streaming.runtime.responses.request import build_responses_request
from constructs_llm.streaming.runtime.responses.stream import ResponseEvents
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.stream_fixtures import load_fixtures
from tests.support import engine_streams
from tests.support.fake_sagemaker import CallError, FakeSageMaker, Scenario
from tests.support.responses_events import (
    check_sequence,
    sse_events,
    strict_event,
    strict_response,
)

FIXTURE_RAW = {f.name: f.raw for f in load_fixtures()}
USER = [{"role": "user", "content": "Hi"}]
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def post(runtime: Runtime, body: Any, path: str = "/v1/chat/completions") -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    try:
        connection.request("POST", path, body=json.dumps(body).encode())
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def get(runtime: Runtime, path: str) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def chunks_of(body: bytes) -> list[dict[str, Any]]:
    events = [e[len("data: ") :] for e in body.decode().split("\n\n") if e.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return [json.loads(e) for e in events[:-1]]


def strict_error(body: dict[str, Any]) -> None:
    assert set(body) == {"error"}
    ErrorObject.model_validate(body["error"], strict=True)
    assert set(body["error"]) == {"message", "type", "param", "code"}


# (engine payload, request extras, whether the engine reports usage) for each kind of reply
CASES: dict[str, tuple[list[bytes], dict[str, Any], bool]] = {
    "text-logprobs-usage": (
        engine_streams.openai(["Hel", "lo"], log_prob=-0.5, prompt_tokens=4),
        {"logprobs": True},
        True,
    ),
    "tgi-generate-usage": (engine_streams.tgi(["a", "b"], input_length=3), {}, True),
    "tool-calls": ([FIXTURE_RAW["vllm_tool_calls"]], {"tools": [TOOL]}, True),
    "parallel-tool-calls-and-text": (
        [FIXTURE_RAW["vllm_parallel_tool_calls"]],
        {"tools": [TOOL]},
        False,
    ),
    "tool-call-without-engine-id": ([FIXTURE_RAW["tgi_messages_tools"]], {"tools": [TOOL]}, True),
}


def serve(
    start_runtime: StartRuntime, fake: FakeSageMaker, case: str, request: dict[str, Any]
) -> tuple[bool, bytes]:
    """Whether the case's engine reports usage, and the body of the 200 it gets."""
    payloads, extra, usage = CASES[case]
    runtime = start_runtime(stream_format=StreamFormat.AUTO)
    fake.enqueue(Scenario(parts=engine_streams.rechunk(payloads, 13)))
    status, body = post(runtime, {"messages": USER, **request, **extra})
    assert status == 200
    return usage, body


def test_strict_validation_rejects_what_the_schema_does_not_allow() -> None:
    # the check below is worth something only if strict mode bites on these models
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [],
    }
    ChatCompletionChunk.model_validate(chunk, strict=True)
    with pytest.raises(ValidationError):
        ChatCompletionChunk.model_validate({**chunk, "created": "1"}, strict=True)
    with pytest.raises(ValidationError):
        ErrorObject.model_validate({"message": 1, "type": "t", "code": None}, strict=True)


@pytest.mark.parametrize("case", list(CASES))
def test_streamed_chunks_validate_strictly(
    start_runtime: StartRuntime, fake: FakeSageMaker, case: str
) -> None:
    streamed = {"stream": True, "stream_options": {"include_usage": True}}
    usage, body = serve(start_runtime, fake, case, streamed)
    chunks = chunks_of(body)
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk, strict=True)
    # the usage chunk (empty choices) is the last one when the engine reported usage
    assert (chunks[-1]["choices"] == []) is usage
    assert ("usage" in chunks[-1]) is usage


@pytest.mark.parametrize("case", list(CASES))
def test_completions_validate_strictly(
    start_runtime: StartRuntime, fake: FakeSageMaker, case: str
) -> None:
    usage, body = serve(start_runtime, fake, case, {})
    completion = ChatCompletion.model_validate(json.loads(body), strict=True)
    assert (completion.usage is not None) is usage
    if "tool" in case:
        assert completion.choices[0].message.tool_calls
        assert completion.choices[0].finish_reason == "tool_calls"


def test_errors_validate_strictly_at_every_stage(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime()
    # a 400 from validation
    status, body = post(runtime, {"messages": USER, "logit_bias": {"1": 1}})
    assert status == 400
    strict_error(json.loads(body))
    # an upstream call failure
    fake.enqueue(Scenario(call_error=CallError.validation_error("bad endpoint")))
    status, body = post(runtime, {"messages": USER})
    assert status == 400
    strict_error(json.loads(body))
    # an engine error before the first token, and one after it (in the stream)
    fake.enqueue(Scenario(parts=[FIXTURE_RAW["vllm_not_found"]]))
    status, body = post(runtime, {"messages": USER, "stream": True})
    assert status == 404
    strict_error(json.loads(body))
    fake.enqueue(Scenario(parts=[FIXTURE_RAW["vllm_abort"]]))
    status, body = post(runtime, {"messages": USER, "stream": True})
    assert status == 200
    *chunks, error = chunks_of(body)
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk, strict=True)
    strict_error(error)
    # routing
    status, not_found = get(runtime, "/v1/models/other")
    assert status == 404
    strict_error(not_found)


def test_model_list_and_model_object_validate_strictly(runtime: Runtime) -> None:
    status, listing = get(runtime, "/v1/models")
    assert status == 200
    assert set(listing) == {"object", "data"} and listing["object"] == "list"
    for item in listing["data"]:
        Model.model_validate(item, strict=True)
    status, model = get(runtime, f"/v1/models/{listing['data'][0]['id']}")
    assert status == 200
    assert Model.model_validate(model, strict=True).id == listing["data"][0]["id"]


# -- the Responses API (POST /v1/responses) ---------------------------------------------------

RESPONSES_TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}


@pytest.mark.parametrize("stream", [True, False], ids=["events", "response"])
@pytest.mark.parametrize("case", list(CASES))
def test_responses_and_their_events_validate_strictly(
    start_runtime: StartRuntime, fake: FakeSageMaker, case: str, stream: bool
) -> None:
    payloads, extra, usage = CASES[case]
    runtime = start_runtime(stream_format=StreamFormat.AUTO)
    fake.enqueue(Scenario(parts=engine_streams.rechunk(payloads, 13)))
    request: dict[str, Any] = {"model": "m", "input": "Hi", "stream": stream}
    if "tools" in extra:
        request["tools"] = [RESPONSES_TOOL]
    if extra.get("logprobs"):
        request["include"] = ["message.output_text.logprobs"]
    status, body = post(runtime, request, "/v1/responses")
    assert status == 200
    # every event strictly (check_sequence), or the one response object strictly
    response = check_sequence(sse_events(body)) if stream else strict_response(json.loads(body))
    assert (response.usage is not None) is usage
    if "tool" in case:
        assert "function_call" in [item.type for item in response.output]


def test_strict_validation_rejects_a_response_or_event_the_schema_does_not_allow() -> None:
    # what the runtime builds passes; the same with one field of the wrong type does not
    echo = build_responses_request(
        {"input": "Hi"}, ChatTarget(request_format=RequestFormat.MESSAGES)
    ).echo
    writer = ResponseEvents(ResponseShape(model="m", echo=echo), logprobs=False)
    created, in_progress = sse_events(writer.start())
    check_sequence([created, in_progress, *sse_events(writer.finish(DoneEvent()))])
    with pytest.raises(ValidationError):
        strict_response({**created["response"], "created_at": "1"})
    with pytest.raises(ValidationError):
        strict_response({**created["response"], "output": [{"type": "message"}]})
    with pytest.raises(ValidationError):
        strict_event({**created, "sequence_number": "0"})


def test_responses_errors_validate_strictly_at_every_stage(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime()
    # a 400 from validation
    status, body = post(runtime, {"input": "Hi", "store": True}, "/v1/responses")
    assert status == 400
    strict_error(json.loads(body))
    # an engine error before the first token: an HTTP error
    fake.enqueue(Scenario(parts=[FIXTURE_RAW["vllm_not_found"]]))
    status, body = post(runtime, {"input": "Hi", "stream": True}, "/v1/responses")
    assert status == 404
    strict_error(json.loads(body))
    # one after it: response.failed, in the stream
    fake.enqueue(Scenario(parts=[FIXTURE_RAW["vllm_abort"]]))
    status, body = post(runtime, {"input": "Hi", "stream": True}, "/v1/responses")
    assert status == 200
    events = sse_events(body)
    assert events[-1]["type"] == "response.failed"
    check_sequence(events)
