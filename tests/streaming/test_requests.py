"""OpenAI chat request validation and the engine request built from it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from constructs_llm.streaming.runtime.events import RequestFormat
from constructs_llm.streaming.runtime.requests import RequestError, parse_chat_request

USER = [{"role": "user", "content": "Hello"}]


def engine_body(request: dict[str, Any], fmt: RequestFormat = RequestFormat.MESSAGES) -> Any:
    return json.loads(parse_chat_request(json.dumps(request).encode(), fmt).engine_body)


def rejects(body: Any, fmt: RequestFormat = RequestFormat.MESSAGES) -> RequestError:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(RequestError) as info:
        parse_chat_request(raw, fmt)
    assert info.value.status == 400
    return info.value


# -- MESSAGES format -------------------------------------------------------------------------


def test_messages_format_forwards_messages_and_always_asks_the_engine_to_stream() -> None:
    # GIVEN a non-streaming OpenAI request with every supported sampling parameter
    request = {
        "model": "anything",
        "messages": [{"role": "system", "content": "Be brief."}, *USER],
        "stream": False,
        "max_completion_tokens": 64,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": "###",
        "seed": 7,
        "logprobs": True,
        "frequency_penalty": 0.5,
    }
    # WHEN it is converted for a messages-API engine
    parsed = parse_chat_request(json.dumps(request).encode(), RequestFormat.MESSAGES)
    # THEN the engine is asked to stream anyway, with OpenAI parameter names
    assert json.loads(parsed.engine_body) == {
        "messages": request["messages"],
        "stream": True,
        "max_tokens": 64,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["###"],
        "seed": 7,
        "logprobs": True,
        "frequency_penalty": 0.5,
    }
    assert (parsed.stream, parsed.logprobs, parsed.model) == (False, True, "anything")


def test_max_tokens_is_used_when_max_completion_tokens_is_absent() -> None:
    assert engine_body({"messages": USER, "max_tokens": 12})["max_tokens"] == 12


def test_max_completion_tokens_wins_over_the_deprecated_max_tokens() -> None:
    body = engine_body({"messages": USER, "max_tokens": 12, "max_completion_tokens": 30})
    assert body["max_tokens"] == 30


def test_unset_parameters_are_not_sent() -> None:
    assert engine_body({"messages": USER}) == {"messages": USER, "stream": True}


def test_include_usage_is_forwarded_to_a_messages_engine_only_when_asked() -> None:
    # GIVEN a streaming request asking for usage, and one that does not
    asked = {"messages": USER, "stream": True, "stream_options": {"include_usage": True}}
    parsed = parse_chat_request(json.dumps(asked).encode(), RequestFormat.MESSAGES)
    plain = parse_chat_request(
        json.dumps({"messages": USER, "stream": True}).encode(), RequestFormat.MESSAGES
    )
    # THEN only the first asks the engine for its usage chunk
    assert json.loads(parsed.engine_body)["stream_options"] == {"include_usage": True}
    assert parsed.include_usage is True
    assert "stream_options" not in json.loads(plain.engine_body)
    assert plain.include_usage is False
    off = {**asked, "stream_options": {"include_usage": False}}
    assert "stream_options" not in engine_body(off)


def test_include_usage_is_not_sent_to_a_generate_engine() -> None:
    # the generate API reports counts in details (always requested) and knows no stream_options
    request = {"messages": USER, "stream": True, "stream_options": {"include_usage": True}}
    parsed = parse_chat_request(json.dumps(request).encode(), RequestFormat.GENERATE)
    assert "stream_options" not in json.loads(parsed.engine_body)
    assert parsed.include_usage is True


def test_content_parts_and_tool_less_assistant_turns_are_accepted() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": None},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]},
    ]
    assert engine_body({"messages": messages})["messages"] == messages


# -- GENERATE format -------------------------------------------------------------------------


def test_generate_format_sends_the_single_prompt_as_inputs_with_tgi_parameters() -> None:
    request = {
        "messages": [{"role": "user", "content": "<s>[INST] Hi [/INST]"}],
        "max_tokens": 20,
        "temperature": 0.7,
        "top_p": 0.95,
        "stop": ["</s>", "\n\n"],
        "seed": 3,
    }
    assert engine_body(request, RequestFormat.GENERATE) == {
        "inputs": "<s>[INST] Hi [/INST]",
        "parameters": {
            "details": True,
            "max_new_tokens": 20,
            "do_sample": True,
            "temperature": 0.7,
            "top_p": 0.95,
            "stop": ["</s>", "\n\n"],
            "seed": 3,
        },
        "stream": True,
    }


def test_generate_format_maps_temperature_zero_to_greedy_and_drops_top_p_one() -> None:
    # TGI rejects temperature 0 and top_p 1.0; both mean "no sampling change" in OpenAI terms
    body = engine_body({"messages": USER, "temperature": 0, "top_p": 1}, RequestFormat.GENERATE)
    assert body["parameters"] == {"details": True, "do_sample": False}


def test_generate_format_accepts_one_text_part() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "prompt"}]}]
    assert engine_body({"messages": messages}, RequestFormat.GENERATE)["inputs"] == "prompt"


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        [{"role": "assistant", "content": "a"}],
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            }
        ],
    ],
)
def test_generate_format_rejects_anything_but_one_user_prompt_naming_the_limitation(
    messages: list[dict[str, Any]],
) -> None:
    error = rejects({"messages": messages}, RequestFormat.GENERATE)
    assert "no chat template is applied" in error.message
    assert error.code == "unsupported_messages"


# -- rejected requests -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "param", "fragment"),
    [
        (b"{not json", None, "not valid JSON"),
        (b"\xff\xfe", None, "not valid JSON"),
        ([1, 2], None, "must be a JSON object, got list"),
        ({}, "messages", "'messages' is required"),
        ({"messages": "hi"}, "messages", "non-empty array"),
        ({"messages": []}, "messages", "non-empty array"),
        ({"messages": ["hi"]}, "messages[0]", "must be an object"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role", "'robot'"),
        ({"messages": [{"role": "user"}]}, "messages[0].content", "is required"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content", "got int"),
        (
            {"messages": [{"role": "user", "content": [{"type": "video"}]}]},
            "messages[0].content[0].type",
            "'video'",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]},
            "messages[0].content[0].text",
            "must be a string",
        ),
        ({"messages": USER, "n": 2}, "n", "only n=1"),
        ({"messages": USER, "tools": [{"type": "function"}]}, "tools", "'tools' is not supported"),
        ({"messages": USER, "tool_choice": "auto"}, "tool_choice", "'auto'"),
        ({"messages": USER, "stream": "yes"}, "stream", "must be a boolean"),
        ({"messages": USER, "stream_options": {}}, "stream_options", "only allowed"),
        ({"messages": USER, "stream": True, "stream_options": 1}, "stream_options", "an object"),
        (
            {"messages": USER, "stream": True, "stream_options": {"include_usage": "yes"}},
            "stream_options.include_usage",
            "must be a boolean, got 'yes'",
        ),
        ({"messages": USER, "max_tokens": 0}, "max_tokens", ">= 1, got 0"),
        ({"messages": USER, "max_tokens": 1.5}, "max_tokens", "must be an integer"),
        ({"messages": USER, "max_tokens": True}, "max_tokens", "must be an integer"),
        ({"messages": USER, "temperature": 3}, "temperature", "between 0 and 2, got 3"),
        ({"messages": USER, "top_p": "x"}, "top_p", "must be a number"),
        ({"messages": USER, "stop": [""]}, "stop", "non-empty"),
        ({"messages": USER, "stop": ["s"] * 17}, "stop", "at most 16"),
        ({"messages": USER, "seed": "1"}, "seed", "must be an integer"),
        ({"messages": USER, "model": 3}, "model", "must be a string"),
        ({"messages": USER, "logprobs": True, "top_logprobs": 5}, "top_logprobs", "got 5"),
        ({"messages": USER, "top_logprobs": 0}, "top_logprobs", "requires 'logprobs'"),
    ],
)
def test_invalid_requests_are_rejected_naming_the_field(
    body: Any, param: str | None, fragment: str
) -> None:
    error = rejects(body)
    assert error.param == param
    assert fragment in error.message
    assert error.error_type == "invalid_request_error"


def test_n_equal_to_one_and_tool_choice_none_are_accepted() -> None:
    assert engine_body({"messages": USER, "n": 1, "tool_choice": "none"})["messages"] == USER
