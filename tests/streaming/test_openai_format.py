"""Stream events -> OpenAI chunk events, completion objects and error envelopes."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from constructs_llm.streaming.runtime.chat.completion import CompletionBuilder
from constructs_llm.streaming.runtime.chat.stream import ChunkStream
from constructs_llm.streaming.runtime.chat.wire import (
    DONE,
    CompletionShape,
    finish_reason,
    new_completion_id,
    sse,
)
from constructs_llm.streaming.runtime.http.errors import error_object
from constructs_llm.streaming.runtime.parsing.events import DoneEvent, TokenEvent

#: A whole answer's shape, without log-probs.
PLAIN = CompletionShape(completion_id="c", created=2, model="m")


def decode(event: bytes) -> Any:
    assert event.startswith(b"data: ") and event.endswith(b"\n\n")
    return json.loads(event[len(b"data: ") : -2])


def encoder(logprobs: bool = False, *, include_usage: bool = False) -> ChunkStream:
    shape = CompletionShape(
        completion_id="chatcmpl-1", created=1700000000, model="m", logprobs=logprobs
    )
    return ChunkStream(shape, include_usage=include_usage)


def events(data: bytes) -> list[bytes]:
    """The SSE events of ``data``, each with its blank line."""
    return [part + b"\n\n" for part in data.split(b"\n\n") if part]


def test_role_chunk_opens_with_the_assistant_role_and_empty_content() -> None:
    chunk = ChatCompletionChunk.model_validate(decode(encoder().start()))
    assert chunk.object == "chat.completion.chunk"
    assert (chunk.id, chunk.created, chunk.model) == ("chatcmpl-1", 1700000000, "m")
    assert chunk.choices[0].delta.role == "assistant"
    assert chunk.choices[0].delta.content == ""
    assert chunk.choices[0].finish_reason is None


@pytest.mark.parametrize("text", ["Hello", ' "quoted"\n', "é漢字🙂", "\\", "</s>", ""])
def test_token_chunk_fast_path_matches_the_generic_encoding(text: str) -> None:
    event = encoder().token(TokenEvent(text, 5, -0.5))
    data = decode(event)
    assert data == {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
        "choices": [
            {"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": None}
        ],
    }
    assert ChatCompletionChunk.model_validate(data).choices[0].delta.content == text


@pytest.mark.parametrize("model", ["m", 'a"b\\c', "é漢字"])
@pytest.mark.parametrize("raw", ["length", "eos_token", "stop_sequence", None, "unknown"])
def test_finish_chunk_template_is_byte_for_byte_the_generic_encoding(
    model: str, raw: str | None
) -> None:
    # GIVEN a one-choice stream WHEN it finishes THEN the template's bytes are json.dumps's
    shape = CompletionShape(completion_id="chatcmpl-1", created=1700000000, model=model)
    stream = ChunkStream(shape)
    stream.start()
    entry = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish_reason(raw)}
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000}
    assert stream.finish(DoneEvent(raw)) == sse({**head, "model": model, "choices": [entry]}) + DONE


def test_model_names_needing_escapes_stay_valid_json() -> None:
    odd = ChunkStream(CompletionShape(completion_id="c", created=1, model='a"b\\c'))
    assert decode(odd.token(TokenEvent("x")))["model"] == 'a"b\\c'


def test_token_chunk_carries_the_sampled_token_logprob_when_asked() -> None:
    data = decode(encoder(logprobs=True).token(TokenEvent("Hi", 1, -0.25)))
    logprobs = ChatCompletionChunk.model_validate(data).choices[0].logprobs
    assert logprobs is not None and logprobs.content is not None
    entry = logprobs.content[0]
    assert (entry.token, entry.logprob, entry.bytes, entry.top_logprobs) == (
        "Hi",
        -0.25,
        [72, 105],
        [],
    )


def test_token_without_logprob_gets_null_logprobs_even_when_asked() -> None:
    assert decode(encoder(logprobs=True).token(TokenEvent("Hi")))["choices"][0]["logprobs"] is None


@pytest.mark.parametrize(
    ("engine", "openai"),
    [
        ("eos_token", "stop"),
        ("stop_sequence", "stop"),
        ("stop", "stop"),
        ("length", "length"),
        ("tool_calls", "tool_calls"),
        (None, "stop"),
        ("something-new", "stop"),
    ],
)
def test_finish_reasons_are_mapped_to_openai_values(engine: str | None, openai: str) -> None:
    assert finish_reason(engine) == openai
    last, done = events(encoder().finish(DoneEvent(finish_reason=engine)))
    assert done == DONE
    data = decode(last)
    assert data["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": openai,
    }


def test_completion_builder_joins_tokens_into_one_chat_completion() -> None:
    builder = CompletionBuilder(replace(PLAIN, logprobs=True))
    for text, lp in [("Hel", -0.1), ("lo", -0.2)]:
        builder.add_text(TokenEvent(text, None, lp))
    data = builder.build(DoneEvent(finish_reason="length", generated_text="Hello"))
    completion = ChatCompletion.model_validate(data)
    assert completion.object == "chat.completion"
    choice = completion.choices[0]
    assert (choice.message.role, choice.message.content, choice.finish_reason) == (
        "assistant",
        "Hello",
        "length",
    )
    assert choice.logprobs is not None and choice.logprobs.content is not None
    assert [e.logprob for e in choice.logprobs.content] == [-0.1, -0.2]


def test_completion_builder_falls_back_to_generated_text_when_no_token_streamed() -> None:
    builder = CompletionBuilder(PLAIN)
    data = builder.build(DoneEvent(finish_reason="eos_token", generated_text="whole"))
    assert data["choices"][0]["message"]["content"] == "whole"
    assert data["choices"][0]["logprobs"] is None


def test_completion_builder_reports_usage_when_the_engine_gave_both_counts() -> None:
    builder = CompletionBuilder(PLAIN)
    builder.add_text(TokenEvent("Hi"))
    data = builder.build(DoneEvent(prompt_tokens=7, completion_tokens=2))
    usage = ChatCompletion.model_validate(data).usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (7, 2, 9)


@pytest.mark.parametrize("done", [DoneEvent(), DoneEvent(completion_tokens=2)])
def test_completion_builder_omits_usage_unless_both_counts_are_known(done: DoneEvent) -> None:
    builder = CompletionBuilder(PLAIN)
    data = builder.build(done)
    assert "usage" not in data
    assert ChatCompletion.model_validate(data).usage is None


def test_usage_chunk_has_empty_choices_and_the_counts() -> None:
    finished = encoder(include_usage=True).finish(DoneEvent(prompt_tokens=3, completion_tokens=4))
    _, usage, done = events(finished)
    assert done == DONE
    data = decode(usage)
    chunk = ChatCompletionChunk.model_validate(data)
    assert data["choices"] == []
    assert chunk.usage is not None
    assert (chunk.usage.prompt_tokens, chunk.usage.completion_tokens) == (3, 4)
    assert chunk.usage.total_tokens == 7
    assert (chunk.id, chunk.model) == ("chatcmpl-1", "m")


def test_usage_chunk_is_left_out_when_a_count_is_unknown() -> None:
    finished = encoder(include_usage=True).finish(DoneEvent(prompt_tokens=3))
    assert len(events(finished)) == 2


def test_error_object_has_the_openai_envelope() -> None:
    assert error_object("bad", param="messages", code="invalid_value") == {
        "error": {
            "message": "bad",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "invalid_value",
        }
    }


def test_sse_framing_and_done_marker() -> None:
    assert sse({"a": 1}) == b'data: {"a":1}\n\n'
    assert DONE == b"data: [DONE]\n\n"


def test_completion_ids_are_unique_and_prefixed() -> None:
    ids = {new_completion_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(i.startswith("chatcmpl-") for i in ids)
