"""A reasoning model's thinking reaching unchanged clients besides the ``openai`` SDK (its rows
are in ``test_reasoning.py`` and the vLLM cases; LiteLLM's in ``test_litellm_client.py``): the
OpenAI Agents SDK, with its default Responses model and with its chat completions model, and
LangChain's ``ChatOpenAI``. Each is fed the chat stream a real vLLM answered for a Qwen3
reasoning model (the ``reasoning_stream`` recording of ``make test-engines``), through the
runtime, in chat and Responses, streamed and not, wherever the client exposes reasoning.

The Agents SDK's chat completions model reads both chat names: ``reasoning_content`` as the
reasoning item's summary and ``reasoning`` as its text, each on every streamed delta
(``agents/models/chatcmpl_stream_handler.py``), and on a whole message ``reasoning`` only when
``reasoning_content`` is absent (``agents/models/chatcmpl_converter.py``). With the runtime's
default, ``reasoning`` alone, the thinking arrives once; with ``REASONING_FIELD=both`` a
streamed run gets it twice, which is why ``both`` is not the default.

What a client does not expose is stated here too, from its own source: LangChain's
``ChatOpenAI`` reads no reasoning from chat completions (``langchain_openai/chat_models/
base.py``: third-party fields such as ``reasoning_content`` "are not extracted"), and from a
streamed Responses answer it reads reasoning summaries only (``response.reasoning_summary_*``),
not the reasoning text a vLLM model writes."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessageChunk

from constructs_llm.contract import EngineName, ReasoningField, StreamFormat
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.test_tool_calls import chat_model
from tests.streaming.vllm_cases import FIXTURES
from tests.support.engine_exchanges import Recording
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.tiny_model import ANSWER_TEXT, REASONING_TEXT

QUESTION = "What is the answer?"


@pytest.fixture(scope="module")
def recorded() -> tuple[bytes, ...]:
    """The chunks vLLM wrote for the reasoning model's streamed chat answer."""
    (exchange,) = Recording.load(FIXTURES / "reasoning_stream.json").exchanges
    assert exchange.streamed and exchange.status == 200
    return exchange.chunks


@pytest.fixture
def runtime(
    start_runtime: StartRuntime, fake: FakeSageMaker, recorded: tuple[bytes, ...]
) -> Runtime:
    """A runtime in front of a vLLM route that answers with the recorded stream."""
    return _serving(start_runtime, fake, recorded, ReasoningField.REASONING)


def _serving(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    recorded: tuple[bytes, ...],
    field: ReasoningField,
) -> Runtime:
    fake.enqueue(Scenario(parts=recorded))
    return start_runtime(
        stream_format=StreamFormat.OPENAI, engine=EngineName.VLLM, reasoning_field=field
    )


# -- the OpenAI Agents SDK ----------------------------------------------------------------------


def _agent_run(runtime: Runtime, *, responses: bool, streamed: bool) -> tuple[Any, list[Any]]:
    """An agent on the runtime (tracing off): its result and, streamed, its stream events."""
    from agents import Agent, RunConfig, Runner
    from agents.models.openai_provider import OpenAIProvider

    async def run() -> tuple[Any, list[Any]]:
        client = openai.AsyncOpenAI(
            base_url=runtime.url + "/v1", api_key="unused", max_retries=0, timeout=SOCKET_TIMEOUT
        )
        provider = OpenAIProvider(openai_client=client, use_responses=responses)
        config = RunConfig(model_provider=provider, tracing_disabled=True)
        agent = Agent(name="Thinker", instructions="Answer.", model=MODEL)
        if not streamed:
            return await Runner.run(agent, QUESTION, run_config=config), []
        result = Runner.run_streamed(agent, QUESTION, run_config=config)
        events = [event async for event in result.stream_events()]
        return result, events

    return asyncio.run(run())


def _reasoning_items(result: Any) -> list[Any]:
    return [item.raw_item for item in result.new_items if item.type == "reasoning_item"]


def _texts(parts: Any) -> str:
    return "".join(part.text for part in parts or ())


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_the_agents_sdk_s_responses_model_gets_a_reasoning_item(
    runtime: Runtime, streamed: bool
) -> None:
    # WHEN an agent on the SDK's default model (the Responses API) answers
    result, events = _agent_run(runtime, responses=True, streamed=streamed)
    # THEN its items hold the thinking as a reasoning item's text, before the answer
    (reasoning,) = _reasoning_items(result)
    assert _texts(reasoning.content) == REASONING_TEXT
    assert result.final_output == ANSWER_TEXT
    if streamed:  # AND the stream carried it piece by piece, then announced the item
        deltas = [
            e.data.delta
            for e in events
            if e.type == "raw_response_event" and e.data.type == "response.reasoning_text.delta"
        ]
        assert "".join(deltas) == REASONING_TEXT and len(deltas) > 1
        created = [e for e in events if getattr(e, "name", None) == "reasoning_item_created"]
        assert [_texts(e.item.raw_item.content) for e in created] == [REASONING_TEXT]


_SUMMARY, _TEXT = "response.reasoning_summary_text.delta", "response.reasoning_text.delta"


def _reasoning_deltas(events: list[Any]) -> dict[str, str]:
    """The streamed reasoning, joined, by the kind of event that carried it."""
    raw = [e.data for e in events if e.type == "raw_response_event"]
    return {
        kind: "".join(e.delta for e in raw if e.type == kind)
        for kind in (_SUMMARY, _TEXT)
        if any(e.type == kind for e in raw)
    }


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_the_agents_sdk_s_chat_completions_model_gets_the_reasoning_once(
    runtime: Runtime, streamed: bool
) -> None:
    # WHEN an agent on the SDK's chat completions model answers, whole or streamed
    result, events = _agent_run(runtime, responses=False, streamed=streamed)
    # THEN the one reasoning item holds the thinking once, as its text, and no summary
    (reasoning,) = _reasoning_items(result)
    assert _texts(reasoning.content) == REASONING_TEXT
    assert not reasoning.summary
    assert result.final_output == ANSWER_TEXT
    if streamed:  # AND the stream carried it once, as reasoning text events only
        assert _reasoning_deltas(events) == {_TEXT: REASONING_TEXT}


@pytest.mark.parametrize(
    ("field", "summary", "text"),
    [
        (ReasoningField.REASONING_CONTENT, REASONING_TEXT, ""),
        (ReasoningField.BOTH, REASONING_TEXT, REASONING_TEXT),
    ],
    ids=["reasoning_content", "both"],
)
def test_the_agents_sdk_streams_the_reasoning_by_the_names_it_gets(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    recorded: tuple[bytes, ...],
    field: ReasoningField,
    summary: str,
    text: str,
) -> None:
    # GIVEN REASONING_FIELD=reasoning_content, or both
    runtime = _serving(start_runtime, fake, recorded, field)
    # WHEN the chat completions model streams
    result, events = _agent_run(runtime, responses=False, streamed=True)
    # THEN reasoning_content arrives as the item's summary, and with both names the thinking
    # arrives a second time, as its text: the reason the default is one name
    (reasoning,) = _reasoning_items(result)
    assert (_texts(reasoning.summary), _texts(reasoning.content)) == (summary, text)
    expected = {_SUMMARY: summary} | ({_TEXT: text} if text else {})
    assert _reasoning_deltas(events) == expected
    assert result.final_output == ANSWER_TEXT


# -- LangChain ----------------------------------------------------------------------------------


def _blocks(content: Any, kind: str) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def test_langchain_s_responses_answer_carries_the_reasoning_block(runtime: Runtime) -> None:
    # WHEN ChatOpenAI on the Responses API is invoked
    reply = chat_model(runtime, use_responses_api=True).invoke(QUESTION)
    # THEN its content holds the reasoning item as a block, then the answer's text
    (reasoning,) = _blocks(reply.content, "reasoning")
    assert _texts_of(reasoning["content"]) == REASONING_TEXT
    assert reply.text == ANSWER_TEXT
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["output_token_details"]["reasoning"] > 0


def _texts_of(parts: list[dict[str, Any]]) -> str:
    return "".join(part["text"] for part in parts)


@pytest.mark.parametrize(
    "kwargs", [{}, {"use_responses_api": True}], ids=["chat_completions", "responses"]
)
def test_langchain_streams_the_answer_without_the_reasoning_text(
    runtime: Runtime, kwargs: dict[str, Any]
) -> None:
    # WHEN ChatOpenAI streams (chat completions, or the Responses API)
    merged: AIMessageChunk | None = None
    for chunk in chat_model(runtime, **kwargs).stream(QUESTION):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    # THEN the answer arrives, and the thinking does not: ChatOpenAI reads neither chat's
    # reasoning fields nor Responses' reasoning text events
    assert merged.text == ANSWER_TEXT
    assert REASONING_TEXT not in str(merged.content) + str(merged.additional_kwargs)
