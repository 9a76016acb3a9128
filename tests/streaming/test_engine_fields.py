"""The engine decides what passes: each request field reaches the engines that honour it and
gets a 400 naming the field and the engine everywhere else; what the engine gives back for
them (several choices, top log-probs) reaches unchanged clients; finish reasons are the
engine's and OpenAI's."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionMessageParam

from constructs_llm.contract import EngineName, RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.chat.fields import FIELDS
from constructs_llm.streaming.runtime.chat.request import build_chat_request
from constructs_llm.streaming.runtime.chat.target import ChatTarget
from constructs_llm.streaming.runtime.http.errors import RequestError
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.stream_fixtures import load_fixtures
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

FIXTURES = {f.name: f for f in load_fixtures()}
USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi"}]
#: Each engine-dependent field, a value that asks for something, and where it lands.
ASKS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "top_k": ({"top_k": 20}, {"top_k": 20}),
    "min_p": ({"min_p": 0.05}, {"min_p": 0.05}),
    "repetition_penalty": ({"repetition_penalty": 1.1}, {"repetition_penalty": 1.1}),
    "logit_bias": ({"logit_bias": {"50256": -100}}, {"logit_bias": {"50256": -100}}),
    "n": ({"n": 2}, {"n": 2}),
    "top_logprobs": ({"logprobs": True, "top_logprobs": 3}, {"top_logprobs": 3}),
    "reasoning_effort": ({"reasoning_effort": "low"}, {"reasoning_effort": "low"}),
    "chat_template_kwargs": (
        {"chat_template_kwargs": {"enable_thinking": False}},
        {"chat_template_kwargs": {"enable_thinking": False}},
    ),
}
OPEN = {EngineName.VLLM, EngineName.LMI_VLLM, EngineName.SGLANG}
#: Which engines honour each field, from each engine's request schema (chat/fields.py cites it).
HONOURED_BY: dict[str, set[EngineName]] = {
    name: set(OPEN) for name in ASKS if name != "top_logprobs"
} | {"top_logprobs": OPEN | {EngineName.TGI, EngineName.TGI_NEURONX}}
ENGINES: list[EngineName | None] = [*EngineName, None]


def build(data: dict[str, Any], engine: EngineName | None) -> dict[str, Any]:
    request = build_chat_request(
        {"messages": USER, **data}, ChatTarget(request_format=RequestFormat.MESSAGES, engine=engine)
    )
    body: dict[str, Any] = json.loads(request.engine_body)
    return body


def test_the_fixture_table_covers_every_field_an_engine_decides() -> None:
    decided = {row.name for row in FIELDS if row.engines is not None}
    assert decided == set(ASKS)
    assert {row.name: set(row.engines or ()) for row in FIELDS if row.engines} == HONOURED_BY


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.value if e else "unknown")
@pytest.mark.parametrize("name", list(ASKS))
def test_a_field_reaches_the_engines_that_honour_it_and_no_other(
    name: str, engine: EngineName | None
) -> None:
    sent, received = ASKS[name]
    if engine in HONOURED_BY[name]:
        # THEN the engine receives it under its own name
        body = build(sent, engine)
        assert {key: body[key] for key in received} == received
        return
    # ELSE a 400 naming the field, and the engine (or that it is not known)
    with pytest.raises(RequestError) as refused:
        build(sent, engine)
    assert (refused.value.param, refused.value.code) == (name, "unsupported_parameter")
    where = f"its engine, {engine.value}," if engine else "the model's engine is not known"
    assert where in refused.value.message


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.value if e else "unknown")
def test_values_that_ask_for_nothing_pass_everywhere_and_are_not_sent(
    engine: EngineName | None,
) -> None:
    body = build({"n": 1, "top_logprobs": 0, "logprobs": True, "logit_bias": {}}, engine)
    assert not {"n", "top_logprobs", "logit_bias"} & set(body)


def test_tgi_is_told_why_it_does_not_get_what_it_would_ignore() -> None:
    with pytest.raises(RequestError) as refused:
        build({"logit_bias": {"1": 5}}, EngineName.TGI)
    assert "TGI reads it and ignores it" in refused.value.message


@pytest.mark.parametrize(
    ("data", "param", "words"),
    [
        ({"top_k": -2}, "top_k", ">= -1"),
        ({"min_p": 1.5}, "min_p", "between 0 and 1"),
        ({"repetition_penalty": 0}, "repetition_penalty", "above 0"),
        ({"logit_bias": {"the": 1}}, "logit_bias", "token ids"),
        ({"logit_bias": {"7": 101}}, "logit_bias.7", "between -100 and 100"),
        ({"n": 129}, "n", "between 1 and 128"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort", "must be one of"),
        ({"chat_template_kwargs": "no"}, "chat_template_kwargs", "enable_thinking"),
    ],
)
def test_bad_values_are_refused_naming_the_field_before_the_engine_is_asked(
    data: dict[str, Any], param: str, words: str
) -> None:
    with pytest.raises(RequestError) as refused:
        build(data, EngineName.VLLM)
    assert refused.value.param == param and words in refused.value.message


def test_reasoning_effort_none_asks_an_unknown_engine_for_nothing() -> None:
    assert "reasoning_effort" not in build({"reasoning_effort": "none"}, None)
    assert build({"reasoning_effort": "none"}, EngineName.SGLANG)["reasoning_effort"] == "none"


# -- end to end: the openai SDK against a vLLM route -----------------------------------------


def sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def replay(fake: FakeSageMaker, name: str) -> None:
    fake.enqueue(Scenario(parts=engine_streams.rechunk([FIXTURES[name].raw], 11)))


SAMPLING = {"top_k": 20, "min_p": 0.05, "repetition_penalty": 1.1}


@pytest.mark.parametrize("stream", [False, True])
def test_vllm_gets_the_sampling_fields_and_two_choices_with_top_logprobs_come_back(
    start_runtime: StartRuntime, fake: FakeSageMaker, stream: bool
) -> None:
    # GIVEN a route served by vLLM, answering two choices with their top log-probs
    runtime = start_runtime(stream_format=StreamFormat.OPENAI, engine=EngineName.VLLM)
    replay(fake, "vllm_n2_top_logprobs")
    ask: dict[str, Any] = {
        "model": MODEL,
        "messages": USER,
        "n": 2,
        "logprobs": True,
        "top_logprobs": 2,
        "seed": 7,
        "logit_bias": {"50256": -100},
        "extra_body": SAMPLING,
    }
    # WHEN the unchanged openai SDK asks for them
    if stream:
        state = ChatCompletionStreamState()
        for chunk in sdk(runtime).chat.completions.create(**ask, stream=True):
            state.handle_chunk(chunk)
        completion: Any = state.current_completion_snapshot  # the SDK's own accumulation
    else:
        completion = sdk(runtime).chat.completions.create(**ask)
    # THEN vLLM received every field, and each choice comes back with its text and top tokens
    received = fake.requests[0].json()
    assert {k: received[k] for k in ("n", "top_logprobs", "seed", "logit_bias", *SAMPLING)} == {
        "n": 2,
        "top_logprobs": 2,
        "seed": 7,
        "logit_bias": {"50256": -100},
        **SAMPLING,
    }
    first, second = completion.choices
    assert (first.index, first.message.content, first.finish_reason) == (0, "Hi!", "stop")
    assert (second.index, second.message.content, second.finish_reason) == (
        1,
        "Hey there",
        "length",
    )
    assert first.logprobs is not None and first.logprobs.content is not None
    top = first.logprobs.content[0].top_logprobs
    assert [(t.token, t.logprob) for t in top] == [("Hi", -0.25), ("Hey", -1.5)]


def test_a_tgi_route_refuses_what_tgi_would_ignore_before_sagemaker_is_called(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(engine=EngineName.TGI)
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(runtime).chat.completions.create(model=MODEL, messages=USER, extra_body={"top_k": 5})
    assert "'top_k'" in refused.value.message and "tgi" in refused.value.message
    assert fake.requests == []


# -- finish_reason as the engine and OpenAI report it ----------------------------------------

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}
NAMED = {"type": "function", "function": {"name": "get_weather"}}


@pytest.mark.parametrize(
    ("choice", "reason"), [("auto", "tool_calls"), ("required", "tool_calls"), (NAMED, "stop")]
)
@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_finish_with_tool_calls_only_when_the_model_chose_them(
    start_runtime: StartRuntime, fake: FakeSageMaker, choice: Any, reason: str, stream: bool
) -> None:
    # GIVEN TGI, which ends every tool call with "stop" (router/src/chat.rs)
    runtime = start_runtime(stream_format=StreamFormat.OPENAI, engine=EngineName.TGI)
    replay(fake, "tgi_messages_tools")
    ask: dict[str, Any] = {
        "model": MODEL,
        "messages": USER,
        "tools": [WEATHER],
        "tool_choice": choice,
    }
    # WHEN a call is made: by the model's choice, or because the request named the function
    if stream:
        state = ChatCompletionStreamState()
        for chunk in sdk(runtime).chat.completions.create(**ask, stream=True):
            state.handle_chunk(chunk)
        completion = state.get_final_completion()
    else:
        completion = sdk(runtime).chat.completions.create(**ask)
    # THEN "tool_calls" only when the model chose; "stop" for a named function, as OpenAI
    assert completion.choices[0].message.tool_calls
    assert completion.choices[0].finish_reason == reason
