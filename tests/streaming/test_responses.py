"""``POST /v1/responses``: the stateless OpenAI Responses API served by the runtime, called by
unchanged clients (the ``openai`` SDK's ``responses.create`` and ``responses.stream``, plain
HTTP, and the OpenAI Agents SDK with its default Responses model) against the fake SageMaker
endpoint. Every object and event is validated strictly against the ``openai`` SDK's types
(``tests/support/responses_events.py``)."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import openai
import pytest
from openai.types.responses import (
    FunctionToolParam,
    Response,
    ResponseOutputMessage,
    ResponseOutputText,
    ToolChoiceFunction,
)
from openai.types.responses.response_create_params import ResponseCreateParamsBase
from pydantic import BaseModel

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.chat.target import ChatTarget
from constructs_llm.streaming.runtime.parsing.events import DoneEvent, ToolCallEvent
from constructs_llm.streaming.runtime.responses.fields import FIELDS
from constructs_llm.streaming.runtime.responses.objects import ResponseShape
from constructs_llm.streaming.runtime.responses.request import build_responses_request
from constructs_llm.streaming.runtime.responses.stream import ResponseEvents
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.stream_fixtures import load_fixtures
from tests.streaming.test_routing import ROUTES
from tests.support import engine_streams
from tests.support.emf import emf_metrics, parse_emf_line
from tests.support.fake_sagemaker import CallError, FakeSageMaker, Scenario
from tests.support.responses_events import (
    check_sequence,
    sse_events,
    strict_event,
    strict_response,
)
from tests.support.runtime_process import (
    free_port,
    lambda_env,
    make_task_root,
    running,
    wait_healthy,
)

RAW = {f.name: f.raw for f in load_fixtures()}
PATH = "/v1/responses"
#: A chat model on a messages engine, and one whose limit is 4,096 tokens.
CHAT_MODEL = ChatTarget(request_format=RequestFormat.MESSAGES)
LIMITED = ChatTarget(request_format=RequestFormat.MESSAGES, max_total_tokens=4096)
WEATHER: FunctionToolParam = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
CHAT_WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {k: v for k, v in WEATHER.items() if k != "type"},
}
TARGET_MODEL = ("Target", "Model")


def sdk(runtime: Runtime | str) -> openai.OpenAI:
    url = runtime if isinstance(runtime, str) else runtime.url
    return openai.OpenAI(
        base_url=url + "/v1", api_key="unused", max_retries=0, timeout=SOCKET_TIMEOUT
    )


def post(runtime: Runtime, body: Any) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    try:
        connection.request("POST", PATH, body=json.dumps(body).encode())
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def answer(fake: FakeSageMaker, payloads: list[bytes], size: int = 11) -> None:
    """The engine's next answer, cut into SageMaker parts at arbitrary points."""
    fake.enqueue(Scenario(parts=engine_streams.rechunk(payloads, size)))


def statuses(response: Response) -> list[str | None]:
    """Each output item's status."""
    return [getattr(item, "status", None) for item in response.output]


def engine_body(fake: FakeSageMaker, index: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = fake.requests[index].json()
    return body


# -- text ------------------------------------------------------------------------------------


def test_create_answers_a_response_with_its_text_usage_and_echoed_settings(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    # GIVEN an engine answering two tokens and its usage
    answer(fake, engine_streams.openai(["Hel", "lo"], prompt_tokens=9))
    # WHEN the openai SDK creates a response (not streamed)
    response = sdk(runtime).responses.create(
        model=MODEL,
        instructions="Answer briefly.",
        input="Say hello",
        max_output_tokens=32,
        temperature=0.2,
        top_p=0.9,
        metadata={"ticket": "T-1"},
    )
    # THEN it is a completed response with one message, the usage, and the settings echoed
    strict_response(response.model_dump(mode="json", exclude_unset=True))
    assert response.id.startswith("resp_")
    assert (response.status, response.model, response.output_text) == ("completed", MODEL, "Hello")
    (message,) = response.output
    assert message.type == "message" and message.id.startswith("msg_")
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 2)
    assert response.usage.total_tokens == 11
    assert response.metadata == {"ticket": "T-1"}
    assert (response.instructions, response.max_output_tokens) == ("Answer briefly.", 32)
    assert (response.temperature, response.top_p) == (0.2, 0.9)
    # AND the engine got the chat request it stands for
    assert engine_body(fake) == {
        "messages": [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "Say hello"},
        ],
        "stream": True,
        "max_tokens": 32,
        "temperature": 0.2,
        "top_p": 0.9,
        "stream_options": {"include_usage": True},
    }


def test_the_usage_details_are_the_engine_s_counts_and_0_only_where_the_schema_needs_one(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    # GIVEN an engine that counts cached and reasoning tokens, then one that counts neither
    answer(
        fake, engine_streams.openai(["Hi"], prompt_tokens=40, cached_tokens=32, reasoning_tokens=3)
    )
    answer(fake, engine_streams.openai(["Hi"], prompt_tokens=40))
    counted, uncounted = (sdk(runtime).responses.create(model=MODEL, input="Hi") for _ in "ab")
    # THEN the details are the engine's
    assert counted.usage is not None and uncounted.usage is not None
    assert counted.usage.input_tokens_details.cached_tokens == 32
    assert counted.usage.output_tokens_details.reasoning_tokens == 3
    # AND 0 where it counted none: ResponseUsage requires an integer
    assert uncounted.usage.input_tokens_details.cached_tokens == 0
    assert uncounted.usage.output_tokens_details.reasoning_tokens == 0
    strict_response(uncounted.model_dump(mode="json", exclude_unset=True))


def test_a_streamed_response_follows_the_documented_event_sequence(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, engine_streams.openai(["Hel", "lo", " wörld"], prompt_tokens=4), size=5)
    status, body = post(runtime, {"model": MODEL, "input": "Hi", "stream": True})
    assert status == 200
    events = sse_events(body)
    response = check_sequence(events)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e["delta"] for e in events if e["type"] == "response.output_text.delta"] == [
        "Hel",
        "lo",
        " wörld",
    ]
    assert events[0]["response"]["status"] == "in_progress"
    assert response.status == "completed" and response.output_text == "Hello wörld"
    assert response.usage is not None and response.usage.output_tokens == 3


def test_the_sdk_stream_helper_and_stream_true_both_read_the_events(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    client = sdk(runtime)
    answer(fake, engine_streams.tgi(["Str", "eam"], finish_reason="eos_token", input_length=3))
    with client.responses.stream(model=MODEL, input="Hi") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert deltas == ["Str", "eam"] and final.output_text == "Stream"
    answer(fake, engine_streams.tgi(["Tr", "ue"], finish_reason="eos_token", input_length=3))
    events = list(client.responses.create(model=MODEL, input="Hi", stream=True))
    check_sequence([e.model_dump(mode="json", exclude_unset=True) for e in events])
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "True"


# -- tools -----------------------------------------------------------------------------------


def test_a_streamed_tool_call_and_its_follow_up_with_the_function_output(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    client = sdk(runtime)
    # GIVEN an engine that calls the tool, its arguments in pieces
    call = ("chatcmpl-tool-7f3a", "get_weather", ['{"city": "', "Zürich", '"}'])
    answer(fake, engine_streams.openai_tool_calls([call], prompt_tokens=40))
    # WHEN the SDK streams the response
    events = list(
        client.responses.create(model=MODEL, input="Weather?", tools=[WEATHER], stream=True)
    )
    response = check_sequence([e.model_dump(mode="json", exclude_unset=True) for e in events])
    # THEN the call streams as a function_call item with the engine's call id
    kinds = [e.type for e in events]
    assert kinds.count("response.function_call_arguments.delta") == 3
    (item,) = response.output
    assert item.type == "function_call"
    assert (item.call_id, item.name) == ("chatcmpl-tool-7f3a", "get_weather")
    assert json.loads(item.arguments) == {"city": "Zürich"}
    assert engine_body(fake)["tools"] == [CHAT_WEATHER]
    # WHEN the client sends the whole conversation back with the function's output
    answer(fake, engine_streams.openai(["Sunny."], prompt_tokens=60))
    follow_up = client.responses.create(
        model=MODEL,
        tools=[WEATHER],
        input=[
            {"role": "user", "content": "Weather?"},
            *[cast(Any, o.model_dump(exclude_unset=True)) for o in response.output],
            {"type": "function_call_output", "call_id": item.call_id, "output": "22 °C, sun"},
        ],
    )
    # THEN the engine gets the chat turns: the assistant's call and the tool's answer
    assert follow_up.output_text == "Sunny."
    assert engine_body(fake)["messages"] == [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "chatcmpl-tool-7f3a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": item.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "chatcmpl-tool-7f3a", "content": "22 °C, sun"},
    ]


def test_text_and_parallel_calls_are_items_in_order_streamed_or_not(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, [RAW["vllm_parallel_tool_calls"]])
    status, body = post(
        runtime, {"model": MODEL, "input": "Oslo?", "tools": [WEATHER], "stream": True}
    )
    assert status == 200
    streamed = check_sequence(sse_events(body))
    answer(fake, [RAW["vllm_parallel_tool_calls"]])
    whole = sdk(runtime).responses.create(model=MODEL, input="Oslo?", tools=[WEATHER])
    strict_response(whole.model_dump(mode="json", exclude_unset=True))
    for response in (streamed, whole):
        assert [o.type for o in response.output] == ["message", "function_call", "function_call"]
        assert response.output_text == "Checking both."
        calls = [o for o in response.output if o.type == "function_call"]
        assert [(c.call_id, c.name) for c in calls] == [
            ("chatcmpl-tool-aa01", "get_weather"),
            ("chatcmpl-tool-bb02", "get_time"),
        ]
        assert response.usage is None  # this engine reported no usage: none is made up


def test_a_call_without_an_engine_id_gets_one_call_id_throughout(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, [RAW["tgi_messages_tools"]])
    _status, body = post(
        runtime, {"model": MODEL, "input": "Paris?", "tools": [WEATHER], "stream": True}
    )
    events = sse_events(body)
    response = check_sequence(events)
    ids = {e["item"]["call_id"] for e in events if "item" in e}
    ids |= {o.call_id for o in response.output if o.type == "function_call"}
    (call_id,) = ids
    assert call_id.startswith("call_")
    assert response.status == "completed"  # TGI said "stop": it made a call, a normal end


def test_arguments_before_the_name_wait_for_it() -> None:
    # GIVEN an engine whose first piece of a call has no name yet
    echo = build_responses_request({"input": "x", "tools": [WEATHER]}, CHAT_MODEL).echo
    writer = ResponseEvents(ResponseShape(model=MODEL, echo=echo), logprobs=False)
    out = writer.start()
    first = writer.tool_call(ToolCallEvent(index=0, id="c1", arguments='{"a"'))
    named = writer.tool_call(ToolCallEvent(index=0, name="f", arguments=": 1"))
    last = writer.tool_call(ToolCallEvent(index=0, arguments="}"))
    out += first + named + last + writer.finish(DoneEvent(finish_reason="tool_calls"))
    # THEN nothing is said until the name comes; then the item, with what waited, and the rest
    assert first == b""
    events = sse_events(out)
    check_sequence(events)
    added = next(e for e in events if e["type"] == "response.output_item.added")
    assert (added["item"]["name"], added["item"]["call_id"]) == ("f", "c1")
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert deltas == ['{"a": 1', "}"]


def test_tool_choice_and_parallel_tool_calls_reach_the_engine_in_chat_shape(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, engine_streams.openai(["ok"]))
    response = sdk(runtime).responses.create(
        model=MODEL,
        input="Weather?",
        tools=[WEATHER],
        tool_choice={"type": "function", "name": "get_weather"},
        parallel_tool_calls=False,
    )
    body = engine_body(fake)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["parallel_tool_calls"] is False
    assert response.tool_choice == ToolChoiceFunction(type="function", name="get_weather")
    assert response.parallel_tool_calls is False


def test_a_replayed_conversation_becomes_the_chat_turns_it_stands_for() -> None:
    # GIVEN a conversation as a stateless client sends it back: the earlier output items
    # (with their ids, statuses and annotations) and the function outputs
    g = {**WEATHER, "name": "get_time", "description": None}
    request = build_responses_request(
        {
            "input": [
                {"role": "developer", "content": [_text("Be"), _text(" brief.")]},
                {"role": "user", "content": [
                    {**_text("Weather and time?"), "prompt_cache_breakpoint": {"mode": "explicit"}}
                ]},
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "phase": "commentary",
                    "content": [
                        {"type": "output_text", "text": "Checking.", "annotations": [], "logprobs": []}
                    ],
                },
                {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "get_weather",
                 "arguments": "{}", "status": "completed"},
                {"type": "function_call", "call_id": "c2", "name": "get_time", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "sun"},
                {"type": "function_call_output", "call_id": "c2", "output": [_text("noon")]},
            ],
            "tools": [WEATHER, g],
        },
        CHAT_MODEL,
    )  # fmt: skip
    # THEN the engine gets one assistant turn with its text and both calls, then the answers
    calls = [
        {"id": c, "type": "function", "function": {"name": n, "arguments": "{}"}}
        for c, n in (("c1", "get_weather"), ("c2", "get_time"))
    ]
    body = json.loads(request.chat.engine_body)
    assert body["messages"] == [
        {"role": "developer", "content": [_chat_text("Be"), _chat_text(" brief.")]},
        {"role": "user", "content": "Weather and time?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "sun"},
        {"role": "tool", "tool_call_id": "c2", "content": "noon"},
    ]
    assert body["tools"][1] == {
        "type": "function",
        "function": {"name": "get_time", "parameters": WEATHER["parameters"], "strict": True},
    }


def _text(text: str) -> dict[str, str]:
    return {"type": "input_text", "text": text}


def _chat_text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


# -- structured output, logprobs, limits -----------------------------------------------------


class City(BaseModel):
    city: str
    population: int


def test_json_schema_through_the_sdk_stream_helper_parses_into_the_model(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, engine_streams.openai(['{"city": "Bern",', ' "population": 134000}']))
    with sdk(runtime).responses.stream(model=MODEL, input="Capital?", text_format=City) as stream:
        final = stream.get_final_response()
    assert final.output_parsed == City(city="Bern", population=134000)
    fmt = engine_body(fake)["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "City" and fmt["json_schema"]["strict"] is True
    assert fmt["value"] == {"name": "City", "schema": fmt["json_schema"]["schema"]}  # TGI's
    assert final.text is not None and final.text.format.type == "json_schema"  # type: ignore[union-attr]


def test_json_object_is_forwarded(runtime: Runtime, fake: FakeSageMaker) -> None:
    answer(fake, engine_streams.openai(['{"a": 1}']))
    response = sdk(runtime).responses.create(
        model=MODEL, input="JSON please", text={"format": {"type": "json_object"}}
    )
    assert json.loads(response.output_text) == {"a": 1}
    assert engine_body(fake)["response_format"]["type"] == "json_object"


def test_included_logprobs_come_with_each_delta_and_the_text(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, engine_streams.openai(["a", "b"], log_prob=-0.5))
    _status, body = post(
        runtime,
        {"model": MODEL, "input": "x", "stream": True, "include": ["message.output_text.logprobs"]},
    )
    events = sse_events(body)
    response = check_sequence(events)
    deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    assert [d["logprobs"][0]["logprob"] for d in deltas] == [-0.5, -0.5]
    message = response.output[0]
    assert isinstance(message, ResponseOutputMessage)
    part = message.content[0]
    assert isinstance(part, ResponseOutputText) and part.logprobs is not None
    assert [lp.token for lp in part.logprobs] == ["a", "b"]
    assert engine_body(fake)["logprobs"] is True


def test_the_token_limit_makes_an_incomplete_response(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, engine_streams.openai(["cut"], finish_reason="length"))
    _status, body = post(
        runtime, {"model": MODEL, "input": "x", "stream": True, "max_output_tokens": 1}
    )
    events = sse_events(body)
    response = check_sequence(events)
    assert events[-1]["type"] == "response.incomplete"
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert statuses(response) == ["incomplete"]
    answer(fake, engine_streams.openai(["cut"], finish_reason="length"))
    whole = sdk(runtime).responses.create(model=MODEL, input="x", max_output_tokens=1)
    assert (whole.status, whole.output_text) == ("incomplete", "cut")


# -- failures --------------------------------------------------------------------------------


def test_an_engine_failure_after_the_first_token_ends_with_response_failed(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(
        Scenario(parts=engine_streams.tgi(["Par", "tial", "!"])[:2], exception="ModelStreamError")
    )
    status, body = post(runtime, {"model": MODEL, "input": "x", "stream": True})
    assert status == 200
    events = sse_events(body)
    response = check_sequence(events)
    assert events[-1]["type"] == "response.failed"
    assert response.error is not None
    assert (response.error.code, response.error.type) == ("server_error", "ModelStreamError")
    assert response.output_text == "Partial"
    assert statuses(response) == ["incomplete"]
    (record,) = runtime.logs
    assert (record["status"], record["stream_error"], record["tokens"]) == (
        200,
        "ModelStreamError",
        2,
    )
    assert parse_emf_line(json.dumps(record))["ErrorKind"] == "stream"


@pytest.mark.parametrize(
    ("error_type", "code"),
    [
        ("validation", "invalid_prompt"),
        ("overloaded", "rate_limit_exceeded"),
        ("generation", "server_error"),
    ],
)
def test_a_failed_response_s_error_code_follows_the_engine_s_error(
    runtime: Runtime, fake: FakeSageMaker, error_type: str, code: str
) -> None:
    # GIVEN a TGI stream that fails after a token, with the engine's own error type
    tokens = engine_streams.tgi(["a", "b"])[:1]
    answer(fake, [*tokens, engine_streams.tgi_error("it failed", error_type)])
    status, body = post(runtime, {"model": MODEL, "input": "x", "stream": True})
    assert status == 200
    response = check_sequence(sse_events(body))
    # THEN the response failed with the schema's code for it, and the engine's type kept
    assert response.error is not None
    assert (response.error.code, response.error.type) == (code, error_type)
    assert "it failed" in response.error.message


def test_an_engine_failure_before_any_token_is_an_http_error(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    client = sdk(runtime)
    answer(fake, [RAW["vllm_not_found"]])
    with pytest.raises(openai.NotFoundError):
        list(client.responses.create(model=MODEL, input="x", stream=True))
    fake.enqueue(Scenario(call_error=CallError.model_error("CUDA out of memory")))
    with pytest.raises(openai.InternalServerError, match="CUDA out of memory"):
        client.responses.create(model=MODEL, input="x")


@pytest.mark.parametrize("failure", ["call", "stream"])
def test_after_a_heartbeat_an_early_failure_is_a_failed_response(
    start_runtime: StartRuntime, fake: FakeSageMaker, failure: str
) -> None:
    # GIVEN a heartbeat that commits the 200 before SageMaker answers, which then fails
    runtime = start_runtime(heartbeat_seconds=0.05)
    if failure == "call":
        throttled = CallError(status=429, error_type="ThrottlingException", message="slow down")
        fake.enqueue(*[Scenario(call_error=throttled, header_delay=0.2)] * 2)  # and a retry
    else:
        fake.enqueue(Scenario(header_delay=0.2, exception="ModelStreamError"))
    status, body = post(runtime, {"model": MODEL, "input": "x", "stream": True})
    # THEN the stream says so: created, in progress, failed
    assert status == 200 and body.startswith(b": keep-alive")
    events = sse_events(body)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.failed",
    ]
    response = check_sequence(events)
    assert response.error is not None
    expected = "rate_limit_exceeded" if failure == "call" else "server_error"
    assert response.error.code == expected


# -- refused, accepted and translated fields -------------------------------------------------

STATELESS = "keeps no state"


@pytest.mark.parametrize(
    ("fields", "param", "words"),
    [
        ({"store": True}, "store", STATELESS),
        ({"previous_response_id": "resp_1"}, "previous_response_id", STATELESS),
        ({"conversation": "conv_1"}, "conversation", STATELESS),
        ({"conversation": {"id": "conv_1"}}, "conversation", STATELESS),
        ({"background": True}, "background", STATELESS),
        ({"prompt": {"id": "pmpt_1"}}, "prompt", "prompt templates"),
        ({"truncation": "auto"}, "truncation", "does not truncate"),
        ({"reasoning": {"effort": "high"}}, "reasoning.effort", "engine is not known"),
        ({"reasoning": {"effort": "huge"}}, "reasoning.effort", "must be one of"),
        ({"reasoning": {"depth": 3}}, "reasoning.depth", "unrecognized"),
        ({"context_management": [{"type": "compaction"}]}, "context_management", "compact"),
        ({"moderation": {"model": "omni-moderation-latest"}}, "moderation", "moderation"),
        ({"background_options": {"completion_window": "2h"}}, "background_options", STATELESS),
        ({"image": {"context_compression": "auto"}}, "image", "text only"),
        ({"access_programs": {"cyber": "standard"}}, "access_programs", "access programs"),
        ({"tools": [{"type": "web_search"}]}, "tools[0].type", "only function tools"),
        (
            {"tools": [{"type": "file_search", "vector_store_ids": ["vs"]}]},
            "tools[0].type",
            "built-in",
        ),
        ({"tools": [{"type": "computer_use_preview"}]}, "tools[0].type", "only function tools"),
        ({"tools": [{"type": "code_interpreter"}]}, "tools[0].type", "only function tools"),
        ({"tools": [{"type": "mcp", "server_label": "x"}]}, "tools[0].type", "only function tools"),
        ({"tools": [{"type": "custom", "name": "x"}]}, "tools[0].type", "custom tools"),
        ({"tools": [{**WEATHER, "defer_loading": True}]}, "tools[0].defer_loading", "tool search"),
        ({"tools": [{**WEATHER, "colour": "red"}]}, "tools[0].colour", "unrecognized"),
        ({"tool_choice": {"type": "web_search_preview"}}, "tool_choice", "only function tools"),
        ({"tool_choice": "required"}, "tool_choice", "needs 'tools'"),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "function", "name": "nope"}},
            "tool_choice.name",
            "not one of",
        ),
        ({"include": ["file_search_call.results"]}, "include[0]", "built-in tools"),
        ({"top_logprobs": 3}, "top_logprobs", "engine is not known"),
        ({"top_logprobs": 21}, "top_logprobs", "between 0 and 20"),
        ({"text": {"verbosity": "low"}}, "text.verbosity", "no engine"),
        ({"text": {"format": {"type": "grammar"}}}, "text.format.type", "'json_schema'"),
        (
            {"text": {"format": {"type": "json_schema", "name": "x"}}},
            "text.format.schema",
            "JSON Schema",
        ),
        ({"metadata": {"k": "v" * 513}}, "metadata.k", "512"),
        ({"stream_options": {"include_obfuscation": False}}, "stream_options", "stream"),
        ({"temperature": 3}, "temperature", "between 0 and 2"),
        ({"max_output_tokens": 0}, "max_output_tokens", ">= 1"),
        ({"frequency_penalty": 1}, "frequency_penalty", "unrecognized request argument"),
        ({"input": None}, "input", "required"),
        ({"input": []}, "input", "non-empty"),
        ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0].type", STATELESS),
        ({"input": [{"type": "web_search_call"}]}, "input[0].type", "built-in"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
            "input[0].content[0].image_url",
            "https:// URL or a data: URL",
        ),
        (
            {
                "input": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_image", "image_url": "https://x", "detail": "max"}
                        ],
                    }
                ]
            },
            "input[0].content[0].detail",
            "'auto', 'low' or 'high'",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "output_text", "text": "x"}]}]},
            "input[0].content[0].type",
            "'input_text' parts",
        ),
        ({"input": [{"role": "tool", "content": "x"}]}, "input[0].role", "must be one of"),
        (
            {"input": [{"type": "function_call_output", "output": "x"}]},
            "input[0].call_id",
            "id of the function call",
        ),
        ({"input": "\udce9"}, "input", "surrogate"),
        ({"instructions": ["x"]}, "instructions", "string"),
    ],
)
def test_a_refused_field_gets_a_400_naming_it(
    runtime: Runtime, fake: FakeSageMaker, fields: dict[str, Any], param: str, words: str
) -> None:
    body = {"model": MODEL, "input": "Hi", **fields}
    status, raw = post(runtime, body)
    assert status == 400, raw
    error = json.loads(raw)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert words in error["message"]
    assert fake.requests == []  # refused before SageMaker was called


def test_the_openai_sdk_sees_the_refusal_of_store_true(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        sdk(runtime).responses.create(model=MODEL, input="Hi", store=True)
    assert (raised.value.param, raised.value.code) == ("store", "unsupported_parameter")
    assert "send 'store': false or leave it out" in raised.value.message


HONOURED = {row.name for row in FIELDS if row.ignored is None and row.neutral is None}
IGNORED = {row.name: row.ignored for row in FIELDS if row.ignored is not None}
NEUTRAL_ONLY = {row.name: row.why for row in FIELDS if row.neutral is not None}


def test_every_field_of_the_openai_sdks_responses_schema_has_a_rule() -> None:
    # The openai SDK's typed request is the published schema the runtime follows; a field a
    # newer SDK adds must get its rule here before it can be sent.
    schema = set(ResponseCreateParamsBase.__annotations__) | {"stream"}
    ruled = HONOURED | set(IGNORED) | set(NEUTRAL_ONLY)
    assert schema == ruled, f"no rule: {sorted(schema - ruled)}; no field: {sorted(ruled - schema)}"
    assert not HONOURED & set(IGNORED) and not HONOURED & set(NEUTRAL_ONLY)
    assert not set(IGNORED) & set(NEUTRAL_ONLY)


@pytest.mark.parametrize("name", sorted(IGNORED))
def test_ignored_fields_are_accepted_and_not_sent(name: str) -> None:
    value: Any = {"ttl": "12h"} if name == "prompt_cache_options" else 7
    value = "x" if name not in ("prompt_cache_options", "max_tool_calls") else value
    request = build_responses_request({"input": "Hi", name: value}, CHAT_MODEL)
    assert set(json.loads(request.chat.engine_body)) == {"messages", "stream", "stream_options"}


def test_a_stored_response_cannot_be_retrieved_and_the_404_says_why(runtime: Runtime) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        sdk(runtime).responses.retrieve("resp_123")
    assert "stores no responses" in raised.value.message
    assert raised.value.code == "not_found"


def test_neutral_values_of_what_clients_send_by_default_are_accepted(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(fake, engine_streams.openai(["ok"]))
    response = sdk(runtime).responses.create(
        model=MODEL,
        input="Hi",
        include=["reasoning.encrypted_content"],
        store=False,
        truncation="disabled",
        reasoning={"effort": None, "summary": None},
        background=False,
        previous_response_id=None,
        conversation=None,
        tool_choice="auto",
        parallel_tool_calls=True,
        prompt_cache_key="run-7",
        safety_identifier="user-hash",
        user="u1",
        service_tier="auto",
        max_tool_calls=4,
        top_logprobs=0,
        text={"format": {"type": "text"}, "verbosity": None},
        extra_body={"context_management": None, "prompt": None},
    )
    assert response.output_text == "ok" and response.prompt_cache_key == "run-7"
    assert set(engine_body(fake)) == {"messages", "stream", "stream_options"}
    # a streamed request may say how OpenAI would pad its events: nothing to do here
    answer(fake, engine_streams.openai(["ok"]))
    options = {"include_obfuscation": False}
    status, body = post(
        runtime, {"model": MODEL, "input": "Hi", "stream": True, "stream_options": options}
    )
    assert status == 200 and check_sequence(sse_events(body)).output_text == "ok"


def test_chat_validation_errors_name_the_responses_field(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a model whose engine does not parse tool calls
    runtime = start_runtime(tools=False)
    status, raw = post(runtime, {"model": MODEL, "input": "x", "tools": [WEATHER]})
    assert (status, json.loads(raw)["error"]["param"]) == (400, "tools")
    # WHEN a conversation replays a tool turn
    turn = [
        {"role": "user", "content": "x"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
    ]
    status, raw = post(runtime, {"model": MODEL, "input": turn})
    error = json.loads(raw)["error"]
    # THEN the error names the input item, not a chat message the client never sent
    assert (status, error["param"]) == (400, "input[1]")
    assert error["message"].startswith("'input[1]' is a tool turn")


# -- routing, formats, metrics ---------------------------------------------------------------


def test_model_routes_a_response_to_its_endpoint_and_component(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(routes=ROUTES)
    client = sdk(runtime)
    answer(fake, engine_streams.openai(["routed"]))
    response = client.responses.create(model="chat", input="x")
    assert (response.model, response.output_text) == ("chat", "routed")
    (call,) = fake.requests
    assert (call.endpoint_name, call.inference_component) == ("shared-ep", "chat-ic")
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.create(model="gpt-4o", input="x")
    assert raised.value.code == "model_not_found"
    # the generate-API route takes one templated prompt, and no instructions
    answer(fake, engine_streams.tgi(["gen"], finish_reason="eos_token"))
    assert client.responses.create(model="ab", input="<s>[INST] x [/INST]").output_text == "gen"
    assert engine_body(fake)["inputs"] == "<s>[INST] x [/INST]"
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="ab", input="x", instructions="be brief")
    assert refused.value.param == "instructions"
    records = [parse_emf_line(json.dumps(r)) for r in runtime.logs]
    assert [(r["Target"], r["Model"]) for r in records] == [
        ("chat-ic", "chat"),
        ("-", "-"),
        ("ab-ep", "ab"),
        ("ab-ep", "ab"),
    ]


def test_a_response_s_log_line_carries_the_chat_metrics(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    answer(
        fake,
        engine_streams.openai_tool_calls(
            [("c1", "get_weather", ['{"city":', '"Bern"}'])],
            text=["Let me check."],
            prompt_tokens=12,
        ),
    )
    list(sdk(runtime).responses.create(model=MODEL, input="x", tools=[WEATHER], stream=True))
    (record,) = runtime.logs
    metrics = emf_metrics(parse_emf_line(json.dumps(record)))[TARGET_MODEL]
    assert (record["path"], record["stream"], record["tool_calls"]) == (PATH, True, 1)
    assert metrics["OutputTokens"] == 4  # a token, and three pieces of the call
    assert metrics["TimeToFirstToken"] <= metrics["Duration"]
    assert (metrics["Requests"], metrics["Errors"]) == (1, 0)
    assert (record["prompt_tokens"], record["completion_tokens"]) == (12, 3)


# -- the OpenAI Agents SDK, against the runtime run as the Lambda runs it ------------------------


@dataclass
class RuntimeProcess:
    url: str
    lines: list[str] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def records(self, count: int) -> list[dict[str, Any]]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self._responses()) >= count, timeout=SOCKET_TIMEOUT)
            return self._responses()

    def _responses(self) -> list[dict[str, Any]]:
        found = [json.loads(line) for line in self.lines]
        return [r for r in found if r.get("path") == PATH]


@pytest.fixture(scope="module")
def process(
    tmp_path_factory: pytest.TempPathFactory, fake_server: FakeSageMaker, aws_env: dict[str, str]
) -> Iterator[RuntimeProcess]:
    """``run.sh`` from a task root holding only the runtime, in its own process."""
    task_root = make_task_root(tmp_path_factory.mktemp("lambda"))
    port = free_port()
    env = lambda_env(
        aws_env,
        LAMBDA_TASK_ROOT=str(task_root),
        PORT=str(port),
        ENDPOINT_NAME="agents-ep",
        MODEL_NAME=MODEL,
        STREAM_FORMAT=StreamFormat.OPENAI.value,
    )
    with running(task_root, env) as proc:
        wait_healthy(port, proc)
        runtime = RuntimeProcess(url=f"http://127.0.0.1:{port}")

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                with runtime.arrived:
                    runtime.lines.append(line)
                    runtime.arrived.notify_all()

        threading.Thread(target=read, daemon=True).start()
        yield runtime


def _run_agent(url: str, *, streamed: bool, output_type: type[Any] | None = None) -> Any:
    """The Agents SDK's default model (Responses) with a function tool, tracing off, through
    a custom AsyncOpenAI client pointed at the runtime."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.models.openai_provider import OpenAIProvider
    from agents.models.openai_responses import OpenAIResponsesModel

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"22 °C and sunny in {city}"

    async def run() -> Any:
        client = openai.AsyncOpenAI(
            base_url=url + "/v1", api_key="unused", max_retries=0, timeout=SOCKET_TIMEOUT
        )
        provider = OpenAIProvider(openai_client=client)
        assert isinstance(provider.get_model(MODEL), OpenAIResponsesModel)  # the default
        agent = Agent(
            name="Forecaster",
            instructions="Use the tool.",
            model=MODEL,
            tools=[get_weather],
            output_type=output_type,
        )
        config = RunConfig(model_provider=provider, tracing_disabled=True)
        if not streamed:
            return await Runner.run(agent, "Weather in Zürich?", run_config=config)
        result = Runner.run_streamed(agent, "Weather in Zürich?", run_config=config)
        async for _ in result.stream_events():
            pass
        return result

    return asyncio.run(run())


def _tool_then(fake: FakeSageMaker, final: list[str]) -> None:
    call = ("call_agents01", "get_weather", ['{"city": ', '"Zürich"}'])
    answer(fake, engine_streams.openai_tool_calls([call], prompt_tokens=50))
    answer(fake, engine_streams.openai(final, prompt_tokens=80))


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_the_agents_sdk_calls_its_function_tool_through_the_runtime(
    process: RuntimeProcess, fake: FakeSageMaker, streamed: bool
) -> None:
    # GIVEN an engine that calls the tool, then answers with its result
    _tool_then(fake, ["It is ", "22 °C and sunny."])
    before = len(process.records(0))
    # WHEN an agent runs with the Agents SDK's default (Responses) model
    result = _run_agent(process.url, streamed=streamed)
    # THEN it ran the tool and gave the engine's final answer
    assert result.final_output == "It is 22 °C and sunny."
    assert len(fake.requests) == 2 and all(r.endpoint_name == "agents-ep" for r in fake.requests)
    first, second = (r.json() for r in fake.requests)
    assert first["messages"] == [
        {"role": "system", "content": "Use the tool."},
        {"role": "user", "content": "Weather in Zürich?"},
    ]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert second["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_agents01",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_agents01", "content": "22 °C and sunny in Zürich"},
    ]
    assert result.context_wrapper.usage.total_tokens == (50 + 2) + (80 + 2)  # both turns
    # AND the process logged both requests with their metrics
    records = process.records(before + 2)[before:]
    assert [r["stream"] for r in records] == [streamed, streamed]
    for record in records:
        assert emf_metrics(parse_emf_line(json.dumps(record)))[TARGET_MODEL]["Errors"] == 0


class Forecast(BaseModel):
    city: str
    celsius: int


def test_the_agents_sdk_gets_structured_output_through_json_schema(
    process: RuntimeProcess, fake: FakeSageMaker
) -> None:
    _tool_then(fake, ['{"city": "Zürich",', ' "celsius": 22}'])
    result = _run_agent(process.url, streamed=True, output_type=Forecast)
    assert result.final_output == Forecast(city="Zürich", celsius=22)
    fmt = fake.requests[-1].json()["response_format"]
    assert (fmt["type"], fmt["json_schema"]["name"], fmt["json_schema"]["strict"]) == (
        "json_schema",
        "final_output",
        True,
    )


def test_the_process_streams_strictly_valid_events(
    process: RuntimeProcess, fake: FakeSageMaker
) -> None:
    # an agent's first turn (text, then a call), read by the openai SDK from the process
    call = ("call_agents01", "get_weather", ['{"city": ', '"Zürich"}'])
    answer(fake, engine_streams.openai_tool_calls([call], text=["Checking."], prompt_tokens=50))
    with sdk(process.url).responses.create(
        model=MODEL,
        input="x",
        tools=[WEATHER],
        stream=True,
    ) as stream:
        events = [e.model_dump(mode="json", exclude_unset=True) for e in stream]
    for event in events:
        strict_event(event)
    response = check_sequence(events)
    assert [o.type for o in response.output] == ["message", "function_call"]


def test_max_output_tokens_above_the_model_s_limit_is_refused_naming_the_field() -> None:
    # GIVEN a route whose model takes at most 4,096 tokens, prompt and answer together
    from constructs_llm.streaming.runtime.http.errors import RequestError

    body = {"model": MODEL, "input": "Hi", "max_output_tokens": 10**30}
    # WHEN a Responses request asks for more THEN it is a 400 naming the Responses field
    with pytest.raises(RequestError) as caught:
        build_responses_request(body, LIMITED)
    assert caught.value.status == 400
    assert caught.value.param == "max_output_tokens"
    assert "max_output_tokens" in caught.value.message
    # AND within the limit it passes
    fine = build_responses_request({**body, "max_output_tokens": 1024}, LIMITED)
    assert json.loads(fine.chat.engine_body)["max_tokens"] == 1024
