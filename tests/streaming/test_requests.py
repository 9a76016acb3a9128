"""OpenAI chat request validation and the engine request built from it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat.completion_create_params import CompletionCreateParamsBase

from constructs_llm.contract import RequestFormat
from constructs_llm.streaming.runtime.chat.fields import FIELDS
from constructs_llm.streaming.runtime.chat.request import parse_chat_request
from constructs_llm.streaming.runtime.http.errors import RequestError
from constructs_llm.streaming.runtime.http.json_body import MAX_JSON_DEPTH
from tests.streaming.conversations import tool_turn

HONOURED = {row.name for row in FIELDS if row.check is not None}
IGNORED = {row.name: row.ignored for row in FIELDS if row.ignored is not None}
REFUSED = {row.name: row.refused for row in FIELDS if row.refused is not None}

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
    # THEN the engine is asked to stream anyway, with OpenAI parameter names, and for usage
    assert json.loads(parsed.engine_body) == {
        "messages": request["messages"],
        "stream": True,
        "stream_options": {"include_usage": True},
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
    assert engine_body({"messages": USER}) == {
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


@pytest.mark.parametrize("stream", [True, False])
def test_a_messages_engine_is_always_asked_for_usage_and_the_client_gets_it_when_asked(
    stream: bool,
) -> None:
    # GIVEN requests with and without stream_options.include_usage
    plain = parse_chat_request(
        json.dumps({"messages": USER, "stream": stream}).encode(), RequestFormat.MESSAGES
    )
    # THEN the engine always reports usage (stream:false replies need it), the client's
    # stream carries a usage chunk only when asked, as OpenAI's does
    assert json.loads(plain.engine_body)["stream_options"] == {"include_usage": True}
    assert plain.include_usage is False
    if stream:
        asked = {"messages": USER, "stream": True, "stream_options": {"include_usage": True}}
        assert parse_chat_request(json.dumps(asked).encode(), "messages").include_usage
        obfuscation = {**asked, "stream_options": {"include_obfuscation": False}}
        assert not parse_chat_request(json.dumps(obfuscation).encode(), "messages").include_usage


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
        ({"messages": USER, "n": 2}, "n", "the model's engine is not known"),
        ({"messages": USER, "n": 0}, "n", "between 1 and 128"),
        ({"messages": USER, "tool_choice": "auto"}, "tool_choice", "needs 'tools'"),
        ({"messages": USER, "stream": "yes"}, "stream", "must be a boolean"),
        ({"messages": USER, "stream_options": {}}, "stream_options", "only allowed"),
        ({"messages": USER, "stream": True, "stream_options": 1}, "stream_options", "an object"),
        (
            {"messages": USER, "stream": True, "stream_options": {"x": 1}},
            "stream_options.x",
            "unrecognized stream option",
        ),
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
        ({"messages": USER, "stop": ["s"] * 5}, "stop", "has 5 sequences; at most 4"),
        ({"messages": USER, "max_tokens": -1}, "max_tokens", ">= 1, got -1"),
        ({"messages": USER, "max_tokens": "5"}, "max_tokens", "must be an integer"),
        ({"messages": USER, "max_tokens": 10**30}, "max_tokens", "at most 2147483647"),
        ({"messages": USER, "max_completion_tokens": 2**31}, "max_completion_tokens", "at most"),
        (
            {"messages": USER, "max_completion_tokens": 9, "max_tokens": 0},
            "max_tokens",
            ">= 1, got 0",
        ),
        ({"messages": USER, "seed": "1"}, "seed", "must be an integer"),
        ({"messages": USER, "model": 3}, "model", "must be a string"),
        (
            {"messages": USER, "logprobs": True, "top_logprobs": 5},
            "top_logprobs",
            "the model's engine is not known",
        ),
        ({"messages": USER, "logprobs": True, "top_logprobs": 21}, "top_logprobs", "got 21"),
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


def test_four_stop_sequences_are_forwarded() -> None:
    # OpenAI takes "up to 4 sequences" (the SDK's CompletionCreateParams.stop)
    assert engine_body({"messages": USER, "stop": list("abcd")})["stop"] == list("abcd")


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_is_bounded_by_the_model_s_max_total_tokens(field: str) -> None:
    def parse(value: int) -> Any:
        body = json.dumps({"messages": USER, field: value}).encode()
        return parse_chat_request(body, RequestFormat.MESSAGES, max_total_tokens=4096)

    assert json.loads(parse(4096).engine_body)["max_tokens"] == 4096
    for too_many in (4097, 10**30):
        with pytest.raises(RequestError) as info:
            parse(too_many)
        assert (info.value.status, info.value.param) == (400, field)
        assert f"'{field}' is {too_many}" in info.value.message
        assert "max_total_tokens (4096)" in info.value.message
        assert "prompt and completion together" in info.value.message


def test_n_equal_to_one_and_tool_choice_none_are_accepted() -> None:
    assert engine_body({"messages": USER, "n": 1, "tool_choice": "none"})["messages"] == USER


@pytest.mark.parametrize("depth", [129, 990, 50_000])
def test_json_nested_past_the_depth_limit_is_a_400_not_a_recursion_error(depth: int) -> None:
    body = b'{"messages": [], "metadata": ' + b"[" * depth + b"]" * depth + b"}"
    error = rejects(body)
    assert error.code == "json_too_deep"
    assert f"more than {MAX_JSON_DEPTH} levels" in error.message


# -- every field of the OpenAI schema has a rule ---------------------------------------------


def test_every_field_of_the_openai_sdks_request_schema_has_a_rule() -> None:
    # The openai SDK's typed request is the published schema this runtime follows.
    schema = set(CompletionCreateParamsBase.__annotations__) | {"stream"}
    ruled = HONOURED | set(IGNORED) | set(REFUSED)
    assert schema <= ruled, f"fields with no rule: {sorted(schema - ruled)}"
    assert not HONOURED & set(IGNORED) and not HONOURED & set(REFUSED)
    assert not set(IGNORED) & set(REFUSED)


@pytest.mark.parametrize("name", sorted(IGNORED))
def test_ignored_fields_are_accepted_and_not_sent(name: str) -> None:
    value: Any = {"a": "b"} if name in ("metadata", "prompt_cache_options") else "x"
    if name == "store":
        value = True
    assert engine_body({"messages": USER, name: value}) == engine_body({"messages": USER})


REFUSED_VALUES: dict[str, Any] = {
    "audio": {"voice": "alloy", "format": "wav"},
    "prediction": {"type": "content", "content": "x"},
    "functions": [{"name": "f"}],
    "function_call": "auto",
    "logit_bias": {"50256": -100},
    "reasoning_effort": "low",
    "verbosity": "low",
    "web_search_options": {"search_context_size": "low"},
    "moderation": {"model": "omni-moderation-latest"},
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_fields_get_400_naming_them_and_why(name: str) -> None:
    error = rejects({"messages": USER, name: REFUSED_VALUES[name]})
    assert (error.param, error.code) == (name, "unsupported_parameter")
    assert f"'{name}' is not supported by this endpoint: {REFUSED[name]}" == error.message
    # a null value asks for nothing and is accepted
    assert engine_body({"messages": USER, name: None}) == engine_body({"messages": USER})


def test_a_field_outside_the_schema_is_refused_by_name() -> None:
    error = rejects({"messages": USER, "top_kk": 5})
    assert (error.param, error.code) == ("top_kk", "unknown_parameter")
    assert "'top_kk'" in error.message


@pytest.mark.parametrize(
    "modalities", [["text", "audio"], ["audio"], "text"], ids=["text+audio", "audio", "string"]
)
def test_modalities_other_than_text_get_400(modalities: Any) -> None:
    assert rejects({"messages": USER, "modalities": modalities}).param == "modalities"
    assert "modalities" not in engine_body({"messages": USER, "modalities": ["text"]})


def test_a_lone_surrogate_escape_gets_400_naming_where_it_is() -> None:
    raw = b'{"messages": [{"role": "user", "content": "caf\\udce9"}]}'
    error = rejects(raw)
    assert error.param == "messages[0].content"
    assert "unpaired UTF-16 surrogate" in error.message
    # a surrogate pair is one character and fine
    pair = b'{"messages": [{"role": "user", "content": "\\ud83d\\ude80"}]}'
    assert (
        json.loads(parse_chat_request(pair, "messages").engine_body)["messages"][0]["content"]
        == "\U0001f680"
    )


# -- tools ------------------------------------------------------------------------------------

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "strict": True,
    },
}
TOOL_TURNS = [{"role": "user", "content": "Weather in Paris?"}, *tool_turn("Paris")]


@pytest.mark.parametrize(
    "choice",
    ["auto", "none", "required", {"type": "function", "function": {"name": "get_weather"}}],
    ids=["auto", "none", "required", "named"],
)
def test_tools_tool_choice_and_tool_turns_are_forwarded_unchanged(choice: Any) -> None:
    request = {
        "messages": TOOL_TURNS,
        "tools": [WEATHER],
        "tool_choice": choice,
        "parallel_tool_calls": False,
    }
    body = engine_body(request)
    assert body["messages"] == TOOL_TURNS
    assert (body["tools"], body["tool_choice"], body["parallel_tool_calls"]) == (
        [WEATHER],
        choice,
        False,
    )


def test_tools_without_tool_choice_leave_the_choice_to_the_engine() -> None:
    body = engine_body({"messages": USER, "tools": [WEATHER]})
    assert body["tools"] == [WEATHER] and "tool_choice" not in body


@pytest.mark.parametrize(
    ("extra", "param", "fragment"),
    [
        ({"tools": [{"type": "custom", "custom": {"name": "x"}}]}, "tools[0].type", "'custom'"),
        ({"tools": [{"type": "function"}]}, "tools[0].function", "must be an object"),
        (
            {"tools": [{"type": "function", "function": {"name": "bad name"}}]},
            "tools[0].function.name",
            "'bad name'",
        ),
        ({"tools": [WEATHER, WEATHER]}, "tools[1].function.name", "duplicate"),
        (
            {"tools": [{"type": "function", "function": {"name": "f", "parameters": "{}"}}]},
            "tools[0].function.parameters",
            "JSON Schema object",
        ),
        ({"tools": "get_weather"}, "tools", "must be an array"),
        ({"tools": [WEATHER], "tool_choice": "any"}, "tool_choice", "'any'"),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "x"}}},
            "tool_choice.function.name",
            "'x' is not one of the tools ['get_weather']",
        ),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "allowed_tools"}},
            "tool_choice",
            "'allowed_tools'",
        ),
        ({"tools": [WEATHER], "parallel_tool_calls": "yes"}, "parallel_tool_calls", "boolean"),
        ({"parallel_tool_calls": True}, "parallel_tool_calls", "needs 'tools'"),
    ],
)
def test_invalid_tool_fields_are_rejected_naming_the_field(
    extra: dict[str, Any], param: str, fragment: str
) -> None:
    error = rejects({"messages": USER, **extra})
    assert error.param == param
    assert fragment in error.message


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ({"role": "tool", "content": "x"}, "messages[0].tool_call_id"),
        ({"role": "user", "content": "x", "tool_calls": []}, None),
        (
            {"role": "assistant", "tool_calls": [{"id": "", "type": "function"}]},
            "messages[0].tool_calls[0].id",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
            },
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            {"role": "user", "content": "x", "tool_calls": [{"id": "c"}]},
            "messages[0]",
        ),
    ],
)
def test_invalid_tool_turns_are_rejected_naming_the_field(
    message: dict[str, Any], param: str | None
) -> None:
    if param is None:  # an empty tool_calls list on a user message asks for nothing
        engine_body({"messages": [message]})
        return
    assert rejects({"messages": [message]}).param == param


@pytest.mark.parametrize(
    "request_",
    [
        {"messages": USER, "tools": [WEATHER]},
        {"messages": TOOL_TURNS},
    ],
    ids=["tools", "tool-turns"],
)
def test_with_tools_off_every_tool_field_gets_400_naming_it_and_the_setting(
    request_: dict[str, Any],
) -> None:
    raw = json.dumps(request_).encode()
    with pytest.raises(RequestError) as info:
        parse_chat_request(raw, RequestFormat.MESSAGES, tools=False)
    assert info.value.code == "unsupported_parameter"
    assert "TOOLS=off" in info.value.message
    assert info.value.param in ("tools", "messages[1]")
    # tool_choice 'none' without tools asks for nothing and is fine
    parse_chat_request(
        json.dumps({"messages": USER, "tool_choice": "none"}).encode(), "messages", tools=False
    )


def test_the_generate_format_has_no_tools() -> None:
    error = rejects({"messages": USER, "tools": [WEATHER]}, RequestFormat.GENERATE)
    assert error.param == "tools"
    assert "REQUEST_FORMAT=generate" in error.message


# -- response_format ---------------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_json_schema_is_forwarded_in_openai_and_tgi_shape() -> None:
    spec = {"name": "person", "schema": SCHEMA, "strict": True}
    body = engine_body(
        {"messages": USER, "response_format": {"type": "json_schema", "json_schema": spec}}
    )
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": spec,  # vLLM, SGLang
        "value": {"name": "person", "schema": SCHEMA},  # TGI's GrammarType
    }


def test_json_object_is_forwarded_with_the_schema_of_any_object_for_tgi() -> None:
    body = engine_body({"messages": USER, "response_format": {"type": "json_object"}})
    assert body["response_format"] == {"type": "json_object", "value": {"type": "object"}}


def test_text_response_format_is_the_default_and_not_sent() -> None:
    assert "response_format" not in engine_body(
        {"messages": USER, "response_format": {"type": "text"}}
    )


@pytest.mark.parametrize(
    ("value", "param"),
    [
        ({"type": "json_schema"}, "response_format.json_schema"),
        (
            {"type": "json_schema", "json_schema": {"schema": SCHEMA}},
            "response_format.json_schema.name",
        ),
        (
            {"type": "json_schema", "json_schema": {"name": "p"}},
            "response_format.json_schema.schema",
        ),
        ({"type": "grammar"}, "response_format.type"),
        ("json", "response_format"),
    ],
)
def test_invalid_response_formats_are_rejected_naming_the_field(value: Any, param: str) -> None:
    assert rejects({"messages": USER, "response_format": value}).param == param


def test_the_generate_format_refuses_structured_output() -> None:
    error = rejects(
        {"messages": USER, "response_format": {"type": "json_object"}}, RequestFormat.GENERATE
    )
    assert (error.param, error.code) == ("response_format", "unsupported_parameter")


# -- generate format: penalties and logprobs ----------------------------------------------------


def test_generate_format_forwards_frequency_penalty_and_refuses_presence_penalty() -> None:
    body = engine_body({"messages": USER, "frequency_penalty": 0.5}, RequestFormat.GENERATE)
    assert body["parameters"]["frequency_penalty"] == 0.5
    error = rejects({"messages": USER, "presence_penalty": 0.5}, RequestFormat.GENERATE)
    assert (error.param, error.code) == ("presence_penalty", "unsupported_parameter")


def test_generate_format_serves_logprobs_from_the_stream() -> None:
    parsed = parse_chat_request(
        json.dumps({"messages": USER, "logprobs": True}).encode(), RequestFormat.GENERATE
    )
    assert parsed.logprobs is True  # relayed from token.logprob / token.log_prob
