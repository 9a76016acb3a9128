"""A reasoning model's thinking reaches unchanged clients: in chat under one name,
``reasoning`` (or ``reasoning_content``, or both, as ``REASONING_FIELD`` chooses), in Responses as a ``reasoning`` output item with its
stream events, with the engine's reasoning-token count; and the settings that steer reasoning
(``reasoning_effort``, ``chat_template_kwargs``, Responses' ``reasoning``) reach the engines
that take them."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionMessageParam

from constructs_llm.contract import EngineName, ReasoningField, StreamFormat
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.stream_fixtures import load_fixtures
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.responses_events import check_sequence, sse_events

FIXTURES = {f.name: f for f in load_fixtures()}
USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "2+2?"}]
# fixture -> (its engine, the reasoning, the answer, the engine's reasoning-token count)
ENGINES: dict[str, tuple[EngineName, str, str, int]] = {
    "vllm_reasoning": (EngineName.VLLM, "Okay, the user greets me.", "Hello!", 5),
    "sglang_reasoning": (EngineName.SGLANG, "Let me think.", "Four.", 3),
}


def sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def serve(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    name: str,
    field: ReasoningField = ReasoningField.REASONING,
) -> Runtime:
    engine = ENGINES[name][0]
    runtime = start_runtime(stream_format=StreamFormat.OPENAI, engine=engine, reasoning_field=field)
    fake.enqueue(Scenario(parts=engine_streams.rechunk([FIXTURES[name].raw], 9)))
    return runtime


@pytest.mark.parametrize("name", list(ENGINES))
def test_chat_streams_the_reasoning_under_its_name_before_the_answer(
    start_runtime: StartRuntime, fake: FakeSageMaker, name: str
) -> None:
    # GIVEN a runtime with the default reasoning field, whichever name the engine sends
    _, thinking, answer, _ = ENGINES[name]
    runtime = serve(start_runtime, fake, name)
    state = ChatCompletionStreamState()
    pieces: list[tuple[str, str]] = []
    for chunk in sdk(runtime).chat.completions.create(
        model=MODEL,
        messages=USER,
        stream=True,
        stream_options={"include_usage": True},
    ):
        state.handle_chunk(chunk)
        for choice in chunk.choices:
            extra = choice.delta.model_extra or {}
            assert "reasoning_content" not in extra  # one name only
            if "reasoning" in extra:
                pieces.append(("reasoning", extra["reasoning"]))
            if choice.delta.content:
                pieces.append(("content", choice.delta.content))
    # THEN the thinking comes first, piece by piece, then the answer
    assert "".join(text for kind, text in pieces if kind == "reasoning") == thinking
    kinds = [kind for kind, _ in pieces]
    assert kinds == sorted(kinds, key=lambda kind: kind != "reasoning")
    final = state.get_final_completion()
    assert final.choices[0].message.content == answer
    # the SDK's accumulator joins the extra field too
    assert final.choices[0].message.model_extra == {"reasoning": thinking}
    assert final.usage is not None and final.usage.completion_tokens_details is not None
    assert final.usage.completion_tokens_details.reasoning_tokens == ENGINES[name][3]


@pytest.mark.parametrize("name", list(ENGINES))
def test_a_whole_chat_answer_carries_the_reasoning_on_its_message(
    start_runtime: StartRuntime, fake: FakeSageMaker, name: str
) -> None:
    _, thinking, answer, count = ENGINES[name]
    runtime = serve(start_runtime, fake, name)
    completion = sdk(runtime).chat.completions.create(model=MODEL, messages=USER)
    message = completion.choices[0].message
    assert message.content == answer
    assert message.model_extra == {"reasoning": thinking}
    assert completion.usage is not None and completion.usage.completion_tokens_details is not None
    assert completion.usage.completion_tokens_details.reasoning_tokens == count


@pytest.mark.parametrize(
    ("field", "names"),
    [
        (ReasoningField.REASONING_CONTENT, ["reasoning_content"]),
        (ReasoningField.BOTH, ["reasoning", "reasoning_content"]),
    ],
    ids=["reasoning_content", "both"],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_the_reasoning_field_setting_names_the_reasoning(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    field: ReasoningField,
    names: list[str],
    streamed: bool,
) -> None:
    # GIVEN REASONING_FIELD=reasoning_content (clients that read only the older name) or both
    _, thinking, answer, _ = ENGINES["vllm_reasoning"]
    runtime = serve(start_runtime, fake, "vllm_reasoning", field)
    # WHEN a chat answer comes, streamed or whole
    if streamed:
        state = ChatCompletionStreamState()
        for chunk in sdk(runtime).chat.completions.create(model=MODEL, messages=USER, stream=True):
            state.handle_chunk(chunk)
            for choice in chunk.choices:  # each reasoning delta carries exactly those names
                names_sent = sorted(choice.delta.model_extra or {})
                assert not names_sent or names_sent == names
        message = state.get_final_completion().choices[0].message
        extra, content = message.model_extra, message.content
    else:
        completion = sdk(runtime).chat.completions.create(model=MODEL, messages=USER)
        extra, content = (
            completion.choices[0].message.model_extra,
            completion.choices[0].message.content,
        )
    # THEN the message carries the thinking under exactly those names
    assert extra == dict.fromkeys(names, thinking)
    assert content == answer


def test_enable_thinking_false_and_the_effort_reach_vllm(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = serve(start_runtime, fake, "vllm_reasoning")
    sdk(runtime).chat.completions.create(
        model=MODEL,
        messages=USER,
        reasoning_effort="low",
        extra_body={"chat_template_kwargs": {"enable_thinking": False}},
    )
    received = fake.requests[0].json()
    assert received["chat_template_kwargs"] == {"enable_thinking": False}
    assert received["reasoning_effort"] == "low"


# -- Responses -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ENGINES))
def test_responses_answers_a_reasoning_item_before_the_message(
    start_runtime: StartRuntime, fake: FakeSageMaker, name: str
) -> None:
    _, thinking, answer, count = ENGINES[name]
    runtime = serve(start_runtime, fake, name)
    response = sdk(runtime).responses.create(
        model=MODEL, input="2+2?", reasoning={"effort": "medium", "summary": "auto"}
    )
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and message.type == "message"
    assert reasoning.content is not None and [c.text for c in reasoning.content] == [thinking]
    assert reasoning.summary == [] and reasoning.status == "completed"
    assert response.output_text == answer
    assert response.usage is not None
    assert response.usage.output_tokens_details.reasoning_tokens == count
    # the effort went to the engine as chat's reasoning_effort
    assert fake.requests[0].json()["reasoning_effort"] == "medium"
    assert response.reasoning is not None and response.reasoning.effort == "medium"


@pytest.mark.parametrize("name", list(ENGINES))
def test_responses_streams_the_reasoning_text_events(
    start_runtime: StartRuntime, fake: FakeSageMaker, name: str
) -> None:
    _, thinking, answer, _ = ENGINES[name]
    runtime = serve(start_runtime, fake, name)
    raw = sdk(runtime).responses.with_raw_response.create(model=MODEL, input="2+2?", stream=True)
    events = sse_events(raw.http_response.read())
    final = check_sequence(events)  # every event strictly valid, in the documented order
    deltas = [e["delta"] for e in events if e["type"] == "response.reasoning_text.delta"]
    assert "".join(deltas) == thinking
    first_text = next(i for i, e in enumerate(events) if e["type"] == "response.output_text.delta")
    assert (
        min(i for i, e in enumerate(events) if e["type"] == "response.reasoning_text.delta")
        < first_text
    )
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert final.output_text == answer


def test_the_openai_sdk_stream_helper_rebuilds_the_reasoning_item(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = serve(start_runtime, fake, "vllm_reasoning")
    with sdk(runtime).responses.stream(model=MODEL, input="hi") as stream:
        kinds = {event.type for event in stream}
        final = stream.get_final_response()
    assert "response.reasoning_text.delta" in kinds
    reasoning = final.output[0]
    assert reasoning.type == "reasoning" and reasoning.content is not None
    assert reasoning.content[0].text == "Okay, the user greets me."


def test_earlier_reasoning_items_are_accepted_and_not_sent_to_the_engine(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a conversation replayed with the reasoning item of an earlier answer, as clients
    # keeping their own state (the Agents SDK with store=False) send it back
    runtime = start_runtime(stream_format=StreamFormat.OPENAI, engine=EngineName.VLLM)
    fake.enqueue(Scenario(parts=engine_streams.openai(["ok"])))
    earlier: list[Any] = [
        {"role": "user", "content": "2+2?"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [],
            "content": [{"type": "reasoning_text", "text": "Adding."}],
            "encrypted_content": None,
            "status": "completed",
        },
        {"role": "assistant", "content": [{"type": "output_text", "text": "4"}]},
        {"role": "user", "content": "and 3+3?"},
    ]
    response = sdk(runtime).responses.create(model=MODEL, input=earlier)
    assert response.output_text == "ok"
    sent = fake.requests[0].json()["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "Adding." not in str(sent)
