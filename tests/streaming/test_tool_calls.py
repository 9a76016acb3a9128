"""Tool calls end to end: the real ``openai`` SDK and LangChain against the runtime, in front of
the fake SageMaker replaying each engine's tool-call stream (the fixtures, written from the
engines' source) cut at arbitrary byte boundaries."""

from __future__ import annotations

import json
import re
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from constructs_llm.contract import StreamFormat
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.conversations import tool_turn
from tests.streaming.stream_fixtures import load_fixtures
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

FIXTURES = {f.name: f for f in load_fixtures()}
WEATHER: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
        },
    },
}
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Weather in Zürich?"}]
# engine fixture -> (the arguments each call ends with, the engine's id for each call or None)
ENGINES: dict[str, tuple[list[str], list[str | None]]] = {
    "vllm_tool_calls": (
        ['{"city": "Zürich", "unit": "celsius"}'],
        ["chatcmpl-tool-9a8b7c6d5e4f4a3b"],
    ),
    "sglang_tool_calls": (['{"city": "Paris"}'], ["call_3f9c0b1d2e4a5b6c7d8e9f01"]),
    "tgi_messages_tools": (['{ "location": "Paris"'], [None]),  # TGI streams its grammar's text
    "vllm_parallel_tool_calls": (
        ['{"city": "Oslo"}', '{"tz": "Europe/Oslo"}'],
        ["chatcmpl-tool-aa01", "chatcmpl-tool-bb02"],
    ),
}


def assert_call_id(call_id: str | None, engine_id: str | None) -> None:
    """The engine's id when it sent one, else the ``call_`` + 24 hex digits the runtime makes
    (``chat/wire.py``'s ``new_tool_call_id``; TGI's id is empty)."""
    if engine_id is not None:
        assert call_id == engine_id
    else:
        assert call_id is not None and re.fullmatch(r"call_[0-9a-f]{24}", call_id), call_id


def sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def replay(fake: FakeSageMaker, name: str, size: int = 7) -> None:
    fake.enqueue(Scenario(parts=engine_streams.rechunk([FIXTURES[name].raw], size)))


@pytest.mark.parametrize("engine", list(ENGINES))
def test_openai_sdk_streams_tool_call_deltas_exactly(
    start_runtime: StartRuntime, fake: FakeSageMaker, engine: str
) -> None:
    # GIVEN an engine streaming tool calls in its own shape
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    replay(fake, engine)
    # WHEN the openai SDK streams with tools
    stream = sdk(runtime).chat.completions.create(
        model=MODEL, messages=ASK, tools=[WEATHER], tool_choice="auto", stream=True
    )
    chunks = list(stream)
    # THEN each call's first delta has its index, id, type and name, later ones arguments only
    deltas = [d for c in chunks for d in (c.choices[0].delta.tool_calls or []) if c.choices]
    arguments, engine_ids = ENGINES[engine]
    firsts = {}
    for delta in deltas:
        if delta.index not in firsts:
            firsts[delta.index] = delta
            assert delta.id and delta.type == "function" and delta.function is not None
            assert delta.function.name
        else:
            assert (delta.id, delta.type) == (None, None)
            assert delta.function is not None and delta.function.name is None
    assert sorted(firsts) == list(range(len(engine_ids)))
    for index, engine_id in enumerate(engine_ids):
        assert_call_id(firsts[index].id, engine_id)
    # AND the SDK's own accumulator rebuilds the calls; the reply finishes with tool_calls
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState(input_tools=[WEATHER])
    for chunk in chunks:
        state.handle_chunk(chunk)
    message = state.get_final_completion().choices[0]
    assert message.finish_reason == "tool_calls"
    calls = message.message.tool_calls or []
    assert [c.function.arguments for c in calls] == arguments
    assert [c.id for c in calls] == [firsts[i].id for i in range(len(calls))]


@pytest.mark.parametrize("engine", list(ENGINES))
def test_openai_sdk_gets_message_tool_calls_when_not_streaming(
    start_runtime: StartRuntime, fake: FakeSageMaker, engine: str
) -> None:
    runtime = start_runtime(stream_format=StreamFormat.AUTO)
    replay(fake, engine, size=11)
    completion = sdk(runtime).chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER])
    choice = completion.choices[0]
    arguments, engine_ids = ENGINES[engine]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [c.function.arguments for c in calls] == arguments  # type: ignore[union-attr]
    for call, engine_id in zip(calls, engine_ids, strict=True):
        assert_call_id(call.id, engine_id)
    expect_text = "Checking both." if engine == "vllm_parallel_tool_calls" else None
    assert choice.message.content == expect_text


def test_the_engine_receives_the_tools_the_choice_and_the_tool_turns(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a second turn: the model's call and the tool's result in the history
    runtime = start_runtime()
    fake.enqueue(Scenario(parts=engine_streams.openai(["It is 21 °C."])))
    history: list[ChatCompletionMessageParam] = [*ASK, *tool_turn("Zürich")]  # type: ignore[list-item]
    completion = sdk(runtime).chat.completions.create(
        model=MODEL,
        messages=history,
        tools=[WEATHER],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        parallel_tool_calls=False,
    )
    assert completion.choices[0].message.content == "It is 21 °C."
    assert completion.choices[0].finish_reason == "stop"
    # THEN the engine got all of it, unchanged
    sent = fake.requests[0].json()
    assert sent["messages"] == history
    assert sent["tools"] == [WEATHER]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert sent["parallel_tool_calls"] is False


def test_with_tools_off_the_openai_sdk_gets_a_400_naming_the_field(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(tools=False)
    with pytest.raises(openai.BadRequestError) as info:
        sdk(runtime).chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER])
    assert info.value.status_code == 400
    body: Any = info.value.body
    assert body["param"] == "tools" and body["code"] == "unsupported_parameter"
    assert "TOOLS=off" in body["message"]
    assert fake.requests == []


# -- LangChain ---------------------------------------------------------------------------------


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city."""
    return f"21 {unit} in {city}"


def chat_model(runtime: Runtime, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=runtime.url + "/v1",
        api_key="unused",  # type: ignore[arg-type]
        model=MODEL,
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
        **kwargs,
    )


def test_langchain_bind_tools_gets_the_tool_call_and_usage(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN vLLM answering with a tool call (and its usage chunk)
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    replay(fake, "vllm_tool_calls", size=5)
    # WHEN LangChain invokes a model with bound tools
    reply = chat_model(runtime).bind_tools([get_weather]).invoke("Weather in Zürich?")
    # THEN the tool call comes back parsed, with the engine's id, and the usage
    assert reply.tool_calls == [
        {
            "name": "get_weather",
            "args": {"city": "Zürich", "unit": "celsius"},
            "id": "chatcmpl-tool-9a8b7c6d5e4f4a3b",
            "type": "tool_call",
        }
    ]
    assert reply.usage_metadata is not None
    assert (reply.usage_metadata["input_tokens"], reply.usage_metadata["output_tokens"]) == (
        187,
        24,
    )
    # AND the engine received LangChain's tool definition as an OpenAI function tool
    (sent_tool,) = fake.requests[0].json()["tools"]
    assert sent_tool["type"] == "function"
    assert sent_tool["function"]["name"] == "get_weather"
    assert set(sent_tool["function"]["parameters"]["properties"]) == {"city", "unit"}


def test_langchain_streams_tool_call_chunks_that_merge_into_one_call(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN TGI, which repeats the call's (empty) id on every delta
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    replay(fake, "tgi_messages_tools", size=3)
    merged: AIMessageChunk | None = None
    for chunk in chat_model(runtime).bind_tools([get_weather]).stream("Weather in Paris?"):
        assert isinstance(chunk, AIMessageChunk)
        merged = chunk if merged is None else merged + chunk
    # THEN LangChain merges the chunks into one call with one id and the whole arguments text
    assert merged is not None
    (call,) = merged.tool_call_chunks
    assert call["name"] == "get_weather"
    assert (call["id"] or "").startswith("call_")
    assert call["args"] == '{ "location": "Paris"'


def test_langchain_sends_tool_results_back_in_the_next_turn(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    replay(fake, "vllm_tool_calls")
    fake.enqueue(Scenario(parts=engine_streams.openai(["21 °C in Zürich."], prompt_tokens=220)))
    model = chat_model(runtime).bind_tools([get_weather])
    question = HumanMessage("Weather in Zürich?")
    first = model.invoke([question])
    (call,) = first.tool_calls
    result = ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"])
    second = model.invoke([question, first, result])
    assert second.content == "21 °C in Zürich."
    sent = fake.requests[1].json()["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "chatcmpl-tool-9a8b7c6d5e4f4a3b"
    assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == call["args"]
    assert sent[2] == {
        "role": "tool",
        "content": "21 celsius in Zürich",
        "tool_call_id": "chatcmpl-tool-9a8b7c6d5e4f4a3b",
    }
