"""parse_stream: every engine's framing, under every chunking, ends in one terminal event."""

from __future__ import annotations

import dataclasses
import json
import re
import tracemalloc
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_llm.contract import StreamFormat
from constructs_llm.streaming.runtime.parsing.events import (
    DoneEvent,
    ErrorEvent,
    StreamEvent,
    TokenEvent,
    ToolCallEvent,
)
from constructs_llm.streaming.runtime.parsing.parser import (
    ERROR_CODE_INVALID_JSON,
    ERROR_CODE_LINE_TOO_LONG,
    ERROR_CODE_TRUNCATED,
    UpstreamStreamError,
    parse_batches,
    parse_stream,
)
from tests.streaming.stream_fixtures import (
    CHUNKINGS,
    StreamFixture,
    as_dicts,
    at,
    from_dict,
    load_fixtures,
)

FIXTURES = load_fixtures()
FIXTURE_IDS = [f.name for f in FIXTURES]
TERMINAL = (DoneEvent, ErrorEvent)
TRUNCATED = ErrorEvent(
    message="the model stream ended before the engine said it was done (no finish_reason, "
    "[DONE] or final event): the answer may be cut short",
    code=ERROR_CODE_TRUNCATED,
)


def parse(parts: list[bytes], fmt: StreamFormat | str = StreamFormat.AUTO) -> list[StreamEvent]:
    return list(parse_stream(parts, fmt))


def assert_one_terminal_last(events: list[StreamEvent]) -> None:
    terminals = [i for i, e in enumerate(events) if isinstance(e, TERMINAL)]
    assert terminals == [len(events) - 1], events


def test_the_fixture_table_covers_every_engine_shape() -> None:
    names = set(FIXTURE_IDS)
    assert {"tgi_generate_details", "tgi_messages", "vllm_chat", "lmi_jsonlines"} <= names
    assert {"lmi_outputs", "lmi_transition", "lmi_chat", "tgi_crlf_fields"} <= names
    assert {"tgi_error", "tgi_messages_error", "vllm_error", "lmi_error_msg"} <= names
    assert {"vllm_tool_calls", "vllm_parallel_tool_calls", "sglang_tool_calls"} <= names
    assert {"tgi_messages_tools", "vllm_abort", "sglang_abort", "sglang_abort_status"} <= names
    assert {"djl_3p_stream", "djl_3p_error", "djl_code_error", "djl_sse_chat_done_early"} <= names
    assert {"djl_chat_logprobs_list", "vllm_not_found", "tgi_messages_overloaded"} <= names
    for fixture in FIXTURES:
        assert_one_terminal_last([from_dict(e) for e in fixture.events])


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_every_engine_fixture_names_the_engine_source_it_follows(fixture: StreamFixture) -> None:
    if fixture.name == "invalid_json":  # malformed input no engine writes
        assert fixture.source is None
        return
    assert fixture.source is not None
    assert set(fixture.source) == {"repository", "file", "commit"}
    assert fixture.source["repository"].count("/") == 1
    assert re.fullmatch(r"[0-9a-f]{40}", fixture.source["commit"])
    engine = fixture.name.split("_")[0]
    repositories = {
        "tgi": "huggingface/text-generation-inference",
        "vllm": "vllm-project/vllm",
        "sglang": "sgl-project/sglang",
        "lmi": "deepjavalibrary/djl-serving",
        "djl": "deepjavalibrary/djl-serving",
    }
    assert fixture.source["repository"] == repositories[engine]


# -- the table: each fixture, under each chunking, in its own format and in AUTO ------------


@pytest.mark.parametrize("chunking", list(CHUNKINGS))
@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_fixture_gives_its_events_under_any_chunking(fixture: StreamFixture, chunking: str) -> None:
    # GIVEN a captured stream cut into parts WHEN parsed in its format THEN the expected events
    parts = CHUNKINGS[chunking](fixture.raw)
    assert as_dicts(parse(parts, fixture.fmt)) == fixture.events


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_auto_detects_every_fixture(fixture: StreamFixture) -> None:
    assert as_dicts(parse(CHUNKINGS["random-seed-2"](fixture.raw), "auto")) == fixture.events


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_fixture_split_at_every_single_offset(fixture: StreamFixture) -> None:
    for offset in range(len(fixture.raw) + 1):
        parts = [fixture.raw[:offset], fixture.raw[offset:]]
        assert as_dicts(parse(parts, fixture.fmt)) == fixture.events, f"split at {offset}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_split_points_never_change_the_events(data: st.DataObject) -> None:
    fixture = data.draw(st.sampled_from(FIXTURES), label="fixture")
    offsets = data.draw(
        st.lists(st.integers(min_value=0, max_value=len(fixture.raw)), max_size=40),
        label="offsets",
    )
    assert as_dicts(parse(at(offsets)(fixture.raw), fixture.fmt)) == fixture.events


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_batches_are_the_events_of_each_part_in_one_list(fixture: StreamFixture) -> None:
    # GIVEN each chunking of a captured stream WHEN parsed in batches THEN the same events, in
    # one list per part that gave any (never two lists from the same part), and one more list
    # for the end of the input if it ends the stream
    for chunking, cut in CHUNKINGS.items():
        parts = cut(fixture.raw)
        pulled = 0

        def source(parts: list[bytes] = parts) -> Iterator[bytes]:
            nonlocal pulled
            for part in parts:
                pulled += 1
                yield part
            pulled += 1  # the end of the input

        batches, seen = [], []
        for batch in parse_batches(source(), fixture.fmt):
            batches.append(batch)
            seen.append(pulled)
        assert all(batches), chunking
        assert as_dicts([e for batch in batches for e in batch]) == fixture.events, chunking
        assert seen == sorted(set(seen)), chunking


def test_tgi_last_token_and_its_end_come_in_one_batch() -> None:
    final = b'data:{"token":{"id":2,"text":"b","special":false},"generated_text":"ab",'
    final += b'"details":{"finish_reason":"length","generated_tokens":2}}\n\n'
    first = b'data:{"token":{"id":1,"text":"a","special":false}}\n\n'
    batches = list(parse_batches([first, final], StreamFormat.TGI))
    assert [[type(e) for e in batch] for batch in batches] == [
        [TokenEvent],
        [TokenEvent, DoneEvent],
    ]


def test_batches_close_their_source_as_parse_stream_does() -> None:
    closed = []

    def source() -> Iterator[bytes]:
        try:
            yield b'data:{"token":{"id":1,"text":"a","special":false}}\n\n'
            yield b'data:{"token":{"id":2,"text":"b","special":false}}\n\n'
        finally:
            closed.append(True)

    batches = parse_batches(source(), StreamFormat.TGI)
    next(batches)
    batches.close()
    assert closed == [True]


# -- the seeds' failure cases, one by one ---------------------------------------------------


def test_utf8_character_split_across_parts_is_never_a_replacement_char() -> None:
    line = 'data:{"token":{"id":1,"text":"🚀 世界","special":false}}\n\n'.encode()
    rocket = line.index("🚀".encode())
    for a in range(rocket + 1, rocket + 4):  # inside the 4-byte rocket
        for b in range(a, len(line)):
            events = parse(at([a, b])(line), StreamFormat.TGI)
            assert events[0] == TokenEvent("🚀 世界", 1, None)
            assert "\ufffd" not in events[0].text


def test_missing_final_newline_still_parses_the_last_line() -> None:
    stream = b'{"token":{"id":1,"text":"a"}}\n{"token":{"id":2,"text":"b"},"generated_text":"ab"}'
    assert parse([stream], StreamFormat.LMI_JSONLINES) == [
        TokenEvent("a", 1),
        TokenEvent("b", 2),
        DoneEvent(generated_text="ab"),
    ]


def test_several_events_in_one_part_are_all_emitted() -> None:
    events = [f'data: {{"choices":[{{"index":0,"delta":{{"content":"{c}"}}}}]}}\n\n' for c in "abc"]
    stream = "".join(events).encode() + b"data: [DONE]\n\n"
    # GIVEN two and a half events in the first part, the rest in the second
    cut = len("".join(events[:2])) + 10
    assert [e.text for e in parse(at([cut])(stream)) if isinstance(e, TokenEvent)] == list("abc")


def test_crlf_line_endings_even_when_cr_and_lf_arrive_apart() -> None:
    stream = b'data:{"token":{"id":7,"text":"x"}}\r\n\r\ndata:[DONE]\r\n\r\n'
    cr = stream.index(b"\r")
    assert parse(at([cr + 1])(stream), StreamFormat.TGI) == [TokenEvent("x", 7), DoneEvent()]


def test_json_object_split_across_many_parts() -> None:
    stream = b'{"token": {"id": 3, "text": "split", "log_prob": -0.5}}\n{"generated_text": "split"}'
    assert parse(at([1, 9, 10, 30, 31, 60])(stream)) == [
        TokenEvent("split", 3, -0.5),
        DoneEvent(generated_text="split"),
    ]


# -- framing --------------------------------------------------------------------------------


@pytest.mark.parametrize("done", [b"data:[DONE]", b"data: [DONE]", b"data:  [DONE] "])
def test_done_marker_ends_the_answer_but_a_late_token_of_the_same_step_still_counts(
    done: bytes,
) -> None:
    # GIVEN [DONE] followed by one more chunk, as DJL's sse_chat formatter can write them
    stream = (
        b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n'
        + done
        + b'\ndata: {"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"length"}]}\n'
        + done
        + b"\n"
    )
    # THEN the late token is not lost, and the stream ends once, at the end of the input
    assert parse([stream], "openai") == [
        TokenEvent("a"),
        TokenEvent("b"),
        DoneEvent(finish_reason="length"),
    ]


@pytest.mark.parametrize(
    "after",
    [b"data: {not json}\n", b'data: {"error": "late"}\n', b"x" * 200 + b"\n"],
    ids=["invalid-json", "error-object", "line-too-long"],
)
def test_nothing_read_after_done_turns_the_stream_into_an_error(after: bytes) -> None:
    stream = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\ndata: [DONE]\n' + after
    events = list(parse_stream([stream], "openai", max_line_bytes=100))
    assert events == [TokenEvent("a"), DoneEvent()]


def test_a_failed_read_after_done_is_a_normal_end() -> None:
    def source() -> Iterator[bytes]:
        yield b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n'
        raise UpstreamStreamError("Read timed out", "ReadTimeoutError")

    assert list(parse_stream(source(), "openai")) == [TokenEvent("a"), DoneEvent()]


@pytest.mark.parametrize("fmt", ["tgi", "openai"])
def test_sse_formats_skip_unknown_fields_as_the_sse_spec_says(fmt: str) -> None:
    stream = b'foo: bar\nevent\ndata\ndata:\n{"token":{"text":"ok"}}\ndata: [DONE]\n'
    assert parse([stream], fmt) == [TokenEvent("ok"), DoneEvent()]


@pytest.mark.parametrize("fmt", ["lmi_jsonlines", "auto"])
def test_jsonlines_and_auto_report_a_line_that_is_not_json(fmt: str) -> None:
    events = parse([b'event: x\nid: 3\nretry: 10\n{"outputs":["a"]}\nhello world\n'], fmt)
    assert events[0] == TokenEvent("a")
    assert isinstance(events[1], ErrorEvent)
    assert events[1].code == ERROR_CODE_INVALID_JSON
    assert "'hello world'" in events[1].message
    assert len(events) == 2


def test_blank_whitespace_and_comment_lines_are_skipped() -> None:
    stream = b'\n   \n\t\n:\n: keep-alive\n  {"outputs": ["a"]}\n'
    assert parse([stream], "lmi_jsonlines") == [TokenEvent("a"), DoneEvent()]


def test_padded_json_after_data_is_accepted() -> None:
    stream = b'data:   {"token":{"text":"a"}}   \ndata:   {"generated_text":"a"}  \n'
    assert parse([stream], "tgi") == [TokenEvent("a"), DoneEvent(generated_text="a")]


def test_invalid_json_names_the_problem_and_quotes_the_line() -> None:
    (event,) = parse([b"data: {not json}\n"], "tgi")
    assert isinstance(event, ErrorEvent)
    assert event.code == ERROR_CODE_INVALID_JSON
    assert "not valid JSON" in event.message
    assert "{not json}" in event.message


def test_absurdly_nested_json_is_an_error_not_a_crash() -> None:
    (event,) = parse([b'{"a":' + b"[" * 200_000 + b"\n"], "lmi_jsonlines")
    assert isinstance(event, ErrorEvent)
    assert event.code == ERROR_CODE_INVALID_JSON


def test_a_json_array_is_reported_with_a_hint_about_streaming() -> None:
    (event,) = parse([b'[{"generated_text": "hi"}]'])
    assert isinstance(event, ErrorEvent)
    assert "is streaming enabled" in event.message


def test_a_long_bad_line_is_quoted_shortened() -> None:
    (event,) = parse([b"x" * 5000 + b"\n"], "lmi_jsonlines")
    assert isinstance(event, ErrorEvent)
    assert "(5000 characters)" in event.message
    assert len(event.message) < 400


def test_a_non_streamed_response_becomes_one_token_and_done() -> None:
    assert parse([b'{"generated_text": "whole answer"}']) == [
        TokenEvent("whole answer"),
        DoneEvent(generated_text="whole answer"),
    ]


def test_objects_of_unknown_shape_are_skipped() -> None:
    stream = b'{"metadata": {"x": 1}}\n{"token": null}\n{"outputs":["a"]}\n'
    assert parse([stream]) == [TokenEvent("a"), DoneEvent()]


def test_format_may_be_given_as_its_string_value() -> None:
    stream = b'data:{"token":{"text":"a"}}\ndata:[DONE]\n'
    assert parse([stream], "tgi") == [TokenEvent("a"), DoneEvent()]


def test_unknown_format_is_rejected_when_called() -> None:
    with pytest.raises(ValueError, match="'sse'"):
        parse_stream([], "sse")


def test_an_empty_stream_is_cut_short_not_done() -> None:
    assert parse([]) == [TRUNCATED]
    assert parse([b"", b""]) == [TRUNCATED]


# -- payload shapes -------------------------------------------------------------------------


def test_tgi_special_tokens_and_lmi_special_token_flag_give_no_text() -> None:
    stream = (
        b'{"token":{"id":1,"text":"<s>","special":true}}\n'
        b'{"token":{"id":2,"text":"<|im_end|>","special_token":true}}\n'
        b'{"token":{"id":3,"text":"ok","special":false}}\n'
        b'{"generated_text":"ok"}\n'
    )
    assert parse([stream]) == [TokenEvent("ok", 3), DoneEvent(generated_text="ok")]


def test_log_probs_are_floats_and_odd_values_are_dropped() -> None:
    stream = (
        b'{"token":{"id":1,"text":"a","logprob":-1}}\n'
        b'{"token":{"id":"x","text":"b","logprob":"-0.5"}}\n'
        b'{"token":{"id":2,"text":7}}\n'
        b'{"generated_text":"ab"}\n'
    )
    assert parse([stream]) == [
        TokenEvent("a", 1, -1.0),
        TokenEvent("b"),
        DoneEvent(generated_text="ab"),
    ]


def test_every_choice_is_streamed_with_its_index_and_its_finish_reason() -> None:
    # GIVEN a stream of two choices (n=2), the second finishing at the token limit
    stream = (
        b'{"choices":[{"index":1,"delta":{"content":"other"}},'
        b'{"index":0,"delta":{"content":"mine"}}]}\n'
        b'{"choices":[{"index":1,"delta":{},"finish_reason":"length"}]}\n'
        b'{"choices":[{"delta":{"content":"!"},"finish_reason":"stop"}]}\n'
    )
    # THEN each token names its choice, and the end lists every choice's finish reason
    assert parse([stream]) == [
        TokenEvent("other", choice=1),
        TokenEvent("mine"),
        TokenEvent("!"),
        DoneEvent(finish_reason="stop", finish_reasons=("stop", "length")),
    ]


def test_role_deltas_give_no_event_and_tool_call_deltas_give_tool_call_events() -> None:
    stream = (
        b'{"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n'
        b'{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}]}\n'
        b'{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n'
    )
    assert parse([stream]) == [
        ToolCallEvent(index=0, name="f"),
        DoneEvent(finish_reason="tool_calls"),
    ]


def test_each_calls_id_and_name_come_once_and_empty_pieces_are_dropped() -> None:
    # GIVEN an engine that repeats the id and name on every entry (as TGI and SGLang do)
    def line(pairs: list[tuple[int, str]]) -> str:
        calls = [
            {"index": i, "id": f"c{i}", "function": {"name": f"f{i}", "arguments": a}}
            for i, a in pairs
        ]
        return json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]}) + "\n"

    lines = [line(p) for p in ([(0, "{")], [(0, "}"), (1, "")], [(1, "")], [(1, "[]")])]
    # THEN each call's id and name are passed on once, and an entry with nothing new is skipped
    assert parse(["".join(lines).encode()])[:-1] == [
        ToolCallEvent(0, "c0", "f0", "{"),
        ToolCallEvent(0, None, None, "}"),
        ToolCallEvent(1, "c1", "f1", ""),
        ToolCallEvent(1, None, None, "[]"),
    ]


def test_tool_call_arguments_sent_as_an_object_become_json_text() -> None:
    # TGI's non-streamed tool call carries its arguments as a JSON object
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "0", "function": {"name": "f", "arguments": {"x": "é"}}}],
    }
    line = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    assert parse([line.encode()]) == [
        ToolCallEvent(0, "0", "f", '{"x":"é"}'),
        DoneEvent(finish_reason="stop"),
    ]


def test_chat_finish_reason_error_is_an_error() -> None:
    stream = b'data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n'
    (event,) = parse([stream], "openai")
    assert isinstance(event, ErrorEvent)
    assert "finish_reason 'error'" in event.message


_ABORT = ErrorEvent("the engine aborted the request (finish_reason 'abort')", "abort")


@pytest.mark.parametrize(
    ("stream", "fmt", "events"),
    [
        (
            b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":["stop"]}]}\n',
            "openai",
            [TokenEvent("a"), DoneEvent(finish_reason="['stop']")],
        ),
        (
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":{"type":"error"}}]}\n',
            "openai",
            [DoneEvent(finish_reason="{'type': 'error'}")],
        ),
        (
            b'{"body":{"generation":"a","stop_reason":["error"]}}\n',
            "lmi_jsonlines",
            [TokenEvent("a"), DoneEvent(finish_reason="['error']")],
        ),
        (
            b'{"body":{"generation":"a","stop_reason":{"reason":"abort"}}}\n',
            "lmi_jsonlines",
            [TokenEvent("a"), DoneEvent(finish_reason="{'reason': 'abort'}")],
        ),
        (
            b'data:{"token":{"text":"a"},"generated_text":"a","details":{"finish_reason":[1]}}\n',
            "tgi",
            [TokenEvent("a"), DoneEvent(finish_reason="[1]", generated_text="a")],
        ),
        (
            b'{"token":{"text":"a"},"generated_text":"a","details":{"finish_reason":{}}}\n',
            "lmi_jsonlines",
            [TokenEvent("a"), DoneEvent(finish_reason="{}", generated_text="a")],
        ),
        (
            b'{"token":{"text":"a"},"generated_text":"a","details":{"finish_reason":"abort"}}\n',
            "lmi_jsonlines",
            [TokenEvent("a"), _ABORT],
        ),
        (b'{"body":{"generation":"","stop_reason":"abort"}}\n', "lmi_jsonlines", [_ABORT]),
    ],
    ids=[
        "chat-list",
        "chat-dict",
        "3p-list",
        "3p-dict",
        "details-list",
        "details-dict",
        "details-abort",
        "3p-abort",
    ],
)
def test_only_a_string_finish_reason_is_looked_up_so_none_raises(
    stream: bytes, fmt: str, events: list[StreamEvent]
) -> None:
    # GIVEN a finish reason an engine sent as a list or an object (not hashable), at any split
    for offset in range(len(stream) + 1):
        # THEN the stream ends with one terminal event; only a string reason is looked up
        assert parse([stream[:offset], stream[offset:]], fmt) == events, f"split at {offset}"


@pytest.mark.parametrize(
    ("payload", "message", "code"),
    [
        ({"error": "overloaded", "error_type": "overloaded"}, "overloaded", "overloaded"),
        ({"error": {"message": "bad", "code": 400}}, "bad", "400"),
        (
            {"error": {"message": "bad", "type": "invalid_request_error", "code": 1}},
            "bad",
            "invalid_request_error",
        ),
        ({"error": ""}, 'the model reported an error: {"error": ""}', None),
        ({"error": {"type": "X"}}, 'the model reported an error: {"error": {"type": "X"}}', "X"),
        ({"code": 424, "error": "Input parsing failed"}, "Input parsing failed", "424"),
        ({"error": {"error": {"error_code": 400, "error_msg": "bad"}}}, "bad", "400"),
        ({"error": {"error_code": 400, "error_msg": "bad"}}, "bad", "400"),
        (
            {"error": {"message": "busy", "type": "SERVICE_UNAVAILABLE", "code": 503}},
            "busy",
            "SERVICE_UNAVAILABLE",
        ),
        (
            {"error": {"message": "Tool error: x", "http_status_code": 422}},
            "Tool error: x",
            "tool_error",
        ),
        ({"error": {"message": "new", "http_status_code": 422}}, "new", None),
        ({"error": {"message": "odd", "http_status_code": 500}}, "odd", None),
    ],
)
def test_error_payload_shapes(payload: object, message: str, code: str | None) -> None:
    (event,) = parse([b"data:" + json.dumps(payload).encode() + b"\n"])
    assert isinstance(event, ErrorEvent)
    assert (event.message, event.code) == (message, code)


@pytest.mark.parametrize(
    ("payload", "code", "status"),
    [
        ({"error": {"message": "m", "type": "NotFoundError", "code": 404}}, "NotFoundError", 404),
        # SGLang names the status in the type (as in the sglang_abort_status fixture)
        (
            {"error": {"message": "m", "type": "SERVICE_UNAVAILABLE", "code": 503}},
            "SERVICE_UNAVAILABLE",
            503,
        ),
        ({"code": 424, "error": "m"}, "424", 424),
        ({"error": "m", "error_type": "validation"}, "validation", None),
        (
            {"error": {"message": "Tool error: no tool", "http_status_code": 422}},
            "tool_error",
            None,
        ),
        (
            {"error": {"message": "Model is overloaded", "http_status_code": 422}},
            "overloaded",
            None,
        ),
        (
            {"error": {"message": "Incomplete generation stream", "http_status_code": 422}},
            "incomplete_generation_stream",
            None,
        ),
        ({"error": {"message": "odd", "http_status_code": 500}}, None, 500),
        ({"error": {"message": "something new", "http_status_code": 422}}, None, None),
        ({"error": {"message": "m", "code": 1}}, "1", None),
    ],
)
def test_error_codes_and_the_engines_http_status(
    payload: object, code: str | None, status: int | None
) -> None:
    (event,) = parse([b"data:" + json.dumps(payload).encode() + b"\n"])
    assert isinstance(event, ErrorEvent)
    assert event.code == code
    assert event.status == status


def test_error_null_is_not_an_error() -> None:
    assert parse([b'{"error": null, "outputs": ["a"]}\n']) == [TokenEvent("a"), DoneEvent()]


# -- token usage ----------------------------------------------------------------------------


def test_tgi_details_give_the_prompt_and_completion_token_counts() -> None:
    # GIVEN a TGI generate stream whose last event has generated_tokens and input_length
    stream = (
        b'data:{"token":{"id":1,"text":"a"},"generated_text":null,"details":null}\n\n'
        b'data:{"token":{"id":2,"text":"b"},"generated_text":"ab",'
        b'"details":{"finish_reason":"length","generated_tokens":2,"input_length":11}}\n\n'
    )
    # THEN the DoneEvent carries both counts
    assert parse([stream], "tgi")[-1] == DoneEvent(
        finish_reason="length", generated_text="ab", prompt_tokens=11, completion_tokens=2
    )


def test_a_non_streamed_tgi_response_counts_its_prefill_tokens() -> None:
    body = (
        b'{"generated_text":"ok","details":{"finish_reason":"eos_token","generated_tokens":1,'
        b'"prefill":[{"id":1,"text":"<s>"},{"id":2,"text":"Hi"}],"tokens":[]}}'
    )
    assert parse([body])[-1] == DoneEvent(
        finish_reason="eos_token", generated_text="ok", prompt_tokens=2, completion_tokens=1
    )


def test_lmi_details_give_the_completion_token_count_only() -> None:
    # GIVEN DJL LMI jsonlines, whose details name generated_tokens but not the prompt length
    stream = (
        b'{"token":{"id":1,"text":"a","log_prob":-0.5}}\n'
        b'{"token":{"id":2,"text":"b","log_prob":-0.5},"generated_text":"ab",'
        b'"details":{"finish_reason":"length","generated_tokens":2,"inputs":"x"}}\n'
    )
    assert parse([stream], "lmi_jsonlines")[-1] == DoneEvent(
        finish_reason="length", generated_text="ab", completion_tokens=2
    )


@pytest.mark.parametrize("end", [b"data: [DONE]\n\n", b""], ids=["done-marker", "end-of-input"])
def test_an_openai_usage_chunk_is_put_on_the_terminal_event(end: bytes) -> None:
    # GIVEN an OpenAI chunk stream ending with the usage chunk (empty choices)
    stream = (
        b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],'
        b'"usage":null}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1,'
        b'"total_tokens":10}}\n\n' + end
    )
    # THEN the usage chunk gives no event and its counts end up on the DoneEvent
    assert parse([stream], "openai") == [
        TokenEvent("a"),
        DoneEvent(finish_reason="stop", prompt_tokens=9, completion_tokens=1),
    ]


@pytest.mark.parametrize("value", ["-1", "1.5", "true", '"7"', "null"])
def test_token_counts_that_are_not_non_negative_integers_are_ignored(value: str) -> None:
    usage = f'{{"choices":[],"usage":{{"prompt_tokens":{value},"completion_tokens":3}}}}\n'
    usage += "data: [DONE]\n"
    details = f'{{"generated_text":"x","details":{{"generated_tokens":{value}}}}}\n'
    assert parse([usage.encode()])[-1] == DoneEvent(completion_tokens=3)
    assert parse([details.encode()])[-1] == DoneEvent(generated_text="x")


# -- exactly one terminal event -------------------------------------------------------------


def test_after_an_error_nothing_else_is_emitted_or_read() -> None:
    consumed = []

    def source() -> Iterator[bytes]:
        yield b'data:{"token":{"text":"a"}}\n\ndata:{"error":"boom"}\n\n'
        consumed.append("more")
        yield b'data:{"token":{"text":"b"}}\n\n'

    assert list(parse_stream(source(), "tgi")) == [TokenEvent("a"), ErrorEvent("boom")]
    assert consumed == []


def test_stream_without_end_marker_ends_with_the_last_finish_reason_seen() -> None:
    stream = b'{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}\n'
    assert parse([stream]) == [TokenEvent("a"), DoneEvent(finish_reason="length")]


@pytest.mark.parametrize(
    ("cut", "fmt"),
    [
        # vLLM, SGLang, TGI Messages: tokens, then the connection ends with no finish_reason
        (b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n', "openai"),
        # a usage chunk is no end either: only the first choice's finish_reason or [DONE] is
        (
            b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
            b'data: {"choices":[{"index":1,"delta":{},"finish_reason":"stop"}],'
            b'"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\n',
            "openai",
        ),
        (b'{"choices":[{"index":0,"delta":{"content":"a"}}]}\n', "lmi_jsonlines"),  # LMI chat
        (b'data:{"token":{"id":1,"text":"a"},"generated_text":null}\n\n', "tgi"),  # no final
        (b'{"token":{"id":1,"text":"a","log_prob":-1.0}}\n', "lmi_jsonlines"),
        (b'{"body":{"generation":"a","prompt_token_count":3}}\n', "auto"),  # DJL 3p
    ],
    ids=["openai", "usage-without-finish", "lmi-chat", "tgi", "lmi-tokens", "djl-3p"],
)
def test_a_stream_that_ends_before_the_engine_said_done_is_truncated(cut: bytes, fmt: str) -> None:
    token, end = parse([cut], fmt)
    assert isinstance(token, TokenEvent) and token.text == "a"
    assert end == TRUNCATED
    # the same stream with its end marker is done
    assert isinstance(parse([cut + b"data: [DONE]\n\n"], fmt)[-1], DoneEvent)


def test_the_old_lmi_outputs_form_has_no_final_event_so_its_end_is_done() -> None:
    assert parse([b'{"outputs":["a"]}\n'], "lmi_jsonlines") == [TokenEvent("a"), DoneEvent()]


def test_a_stream_cut_mid_line_or_between_events_is_an_error() -> None:
    assert parse([b'data:{"token":{"text":"a"}}\n\ndata:{"tok']) == [
        TokenEvent("a"),
        ErrorEvent(
            message="stream line is not valid JSON (Unterminated string starting at: "
            "line 1 column 2 (char 1)): '{\"tok'",
            code=ERROR_CODE_INVALID_JSON,
        ),
    ]
    assert parse([b'data:{"token":{"text":"a"}}\n\n']) == [TokenEvent("a"), TRUNCATED]


@settings(max_examples=300, deadline=None)
@given(
    raw=st.binary(max_size=400),
    fmt=st.sampled_from(list(StreamFormat)),
    offsets=st.lists(st.integers(0, 400), max_size=8),
)
def test_arbitrary_bytes_never_raise_and_end_with_one_terminal(
    raw: bytes, fmt: StreamFormat, offsets: list[int]
) -> None:
    assert_one_terminal_last(list(parse_stream(at(offsets)(raw), fmt)))


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(max_size=12), max_size=30),
    style=st.sampled_from(["tgi", "lmi", "chat", "outputs"]),
    ascii_only=st.booleans(),
    data=st.data(),
)
def test_any_token_texts_survive_any_split(
    texts: list[str], style: str, ascii_only: bool, data: st.DataObject
) -> None:
    # GIVEN arbitrary Unicode token texts, framed in one engine's style
    def dumps(obj: object) -> str:
        return json.dumps(obj, ensure_ascii=ascii_only)

    if style == "tgi":
        lines = [f"data:{dumps({'token': {'id': i, 'text': t}})}\n\n" for i, t in enumerate(texts)]
    elif style == "lmi":
        lines = [
            dumps({"token": {"id": i, "text": t, "log_prob": -1.0}}) + "\n"
            for i, t in enumerate(texts)
        ]
    elif style == "chat":
        lines = [
            f"data: {dumps({'choices': [{'index': 0, 'delta': {'content': t}}]})}\n\n"
            for t in texts
        ]
    else:  # the old LMI form has no final event
        lines = [dumps({"outputs": [t]}) + "\n" for t in texts]
    final = {
        "tgi": 'data:{"generated_text":null,"details":{"finish_reason":"length"}}\n\n',
        "lmi": '{"token":{"id":0,"text":""},"details":{"finish_reason":"length"}}\n',
        "chat": 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n',
        "outputs": "",
    }
    raw = ("".join(lines) + final[style]).encode()
    offsets = data.draw(st.lists(st.integers(0, len(raw)), max_size=30))
    # WHEN split anywhere THEN the texts come out unchanged, then one DoneEvent
    events = parse(at(offsets)(raw))
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == "".join(texts)
    if style != "outputs":
        assert events[-1] == DoneEvent(finish_reason="length")
    else:  # ended by its end of input, unless it had no line at all
        assert events[-1] == (DoneEvent() if texts else TRUNCATED)


# -- the byte source ------------------------------------------------------------------------


def test_upstream_error_from_the_source_is_the_terminal_event() -> None:
    def source() -> Iterator[bytes]:
        yield b'data:{"token":{"text":"a"}}\n\ndata:{"token":{"te'
        raise UpstreamStreamError("Model stream broke", "ModelStreamError")

    assert list(parse_stream(source(), "tgi")) == [
        TokenEvent("a"),
        ErrorEvent("Model stream broke", "ModelStreamError"),
    ]


def test_closing_the_events_closes_the_source() -> None:
    closed = []

    def source() -> Iterator[bytes]:
        try:
            while True:
                yield b'{"outputs":["a"]}\n'
        finally:
            closed.append(True)

    events = parse_stream(source())
    assert next(events) == TokenEvent("a")
    events.close()  # e.g. the HTTP client went away
    assert closed == [True]


def test_source_is_closed_after_the_terminal_event() -> None:
    closed = []

    def source() -> Iterator[bytes]:
        try:
            yield b"data: [DONE]\n"
            yield b"more"
        finally:
            closed.append(True)

    assert list(parse_stream(source())) == [DoneEvent()]
    assert closed == [True]


# -- bounded memory -------------------------------------------------------------------------


def test_line_over_the_cap_is_an_error_after_the_lines_before_it() -> None:
    stream = b'{"outputs":["a"]}\n' + b'{"outputs":["' + b"x" * 100 + b'"]}\n{"outputs":["b"]}\n'
    for parts in ([stream], at([5])(stream), at([30, 60])(stream)):
        events = parse_stream(parts, "lmi_jsonlines", max_line_bytes=64)
        first, error = list(events)
        assert first == TokenEvent("a")
        assert isinstance(error, ErrorEvent)
        assert error.code == ERROR_CODE_LINE_TOO_LONG
        assert "64 bytes" in error.message


def test_an_endless_line_is_dropped_without_buffering_it() -> None:
    # GIVEN a source that would send 64 MiB without a newline, 64 KiB at a time
    part = b"y" * 65536
    sent = []

    def source() -> Iterator[bytes]:
        yield b'{"outputs":["a"]}\n'
        for _ in range(1024):
            sent.append(len(part))
            yield part

    tracemalloc.start()
    try:
        events = list(parse_stream(source(), "lmi_jsonlines", max_line_bytes=1024 * 1024))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # THEN the error comes as soon as the line passes 1 MiB, and memory stays near the cap
    assert events[0] == TokenEvent("a")
    assert isinstance(events[1], ErrorEvent)
    assert events[1].code == ERROR_CODE_LINE_TOO_LONG
    assert sum(sent) <= 1024 * 1024 + len(part)
    assert peak < 4 * 1024 * 1024


def test_hot_path_token_events_equal_constructed_ones() -> None:
    # GIVEN an event from the parser's fast constructor and one from TokenEvent(...)
    (fast, _) = parse([b'{"token":{"id":5,"text":"x","logprob":-0.5}}\n'])
    built = TokenEvent("x", 5, -0.5)
    assert fast == built
    assert hash(fast) == hash(built)
    assert repr(fast) == repr(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.text = "y"  # type: ignore[misc]


def test_tool_call_events_are_exported_with_the_other_events() -> None:
    import constructs_llm.streaming as streaming

    assert streaming.ToolCallEvent is ToolCallEvent
    assert "ToolCallEvent" in streaming.__all__
