"""LineBuffer: bytes in any parts -> the same lines, within a fixed memory bound."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_llm.streaming.runtime.parsing.line_buffer import (
    DEFAULT_MAX_LINE_BYTES,
    LineBuffer,
    LineParserError,
    LineTooLongError,
)
from tests.streaming.stream_fixtures import at


def lines_of(parts: list[bytes], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[str]:
    buffer = LineBuffer(max_line_bytes)
    lines = [line for part in parts for line in buffer.feed(part)]
    last = buffer.flush()
    return lines if last is None else [*lines, last]


def test_splits_on_newlines_and_keeps_blank_lines() -> None:
    assert lines_of([b"a\n\nb\n"]) == ["a", "", "b"]


def test_crlf_is_one_line_ending_even_split_between_parts() -> None:
    assert lines_of([b"a\r", b"\nb\r\n"]) == ["a", "b"]


def test_only_a_trailing_cr_is_dropped() -> None:
    assert lines_of([b"a\rb\r\r\n"]) == ["a\rb\r"]


def test_unicode_line_separators_do_not_split_a_line() -> None:
    # str.splitlines() would split here; JSON allows these characters raw in strings
    text = "a\u2028b\u0085c\x0bd\x1ce"
    assert lines_of([text.encode() + b"\n"]) == [text]


def test_multibyte_characters_split_at_every_offset_decode_intact() -> None:
    raw = "héllo 世界 🚀\n".encode()
    for a in range(len(raw) + 1):
        for b in range(a, len(raw) + 1):
            assert lines_of(at([a, b])(raw)) == ["héllo 世界 🚀"], (a, b)


def test_one_byte_parts() -> None:
    raw = "x🚀\r\ny\n".encode()
    assert lines_of([raw[i : i + 1] for i in range(len(raw))]) == ["x🚀", "y"]


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert lines_of([b"a\xff\xfeb\n\xf0\x9f\n"]) == ["a\ufffd\ufffdb", "\ufffd"]


def test_feed_returns_nothing_until_a_line_ends() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b"") == []
    assert buffer.feed(b"abc") == []
    assert buffer.pending_bytes == 3
    assert buffer.feed(b"d\ne") == ["abcd"]
    assert buffer.pending_bytes == 1


def test_flush_returns_the_unfinished_line_once() -> None:
    buffer = LineBuffer()
    buffer.feed(b"a\nlast\r")
    assert buffer.flush() == "last"
    assert buffer.flush() is None
    assert buffer.pending_bytes == 0


def test_flush_of_an_empty_buffer_is_none() -> None:
    buffer = LineBuffer()
    buffer.feed(b"a\n")
    assert buffer.flush() is None


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(
        st.text(st.characters(exclude_characters="\n\r", exclude_categories=["Cs"])),
        max_size=20,
    ),
    crlf=st.booleans(),
    final_newline=st.booleans(),
    data=st.data(),
)
def test_any_split_gives_the_same_lines(
    lines: list[str], crlf: bool, final_newline: bool, data: st.DataObject
) -> None:
    ending = "\r\n" if crlf else "\n"
    raw = ending.join(lines) + (ending if final_newline and lines else "")
    encoded = raw.encode()
    offsets = data.draw(st.lists(st.integers(0, len(encoded)), max_size=20))
    # An unterminated empty last line is no line at all: flush() has nothing to return.
    expected = lines if final_newline or (lines and lines[-1]) else lines[:-1]
    assert lines_of(at(offsets)(encoded)) == expected


# -- the cap --------------------------------------------------------------------------------


def test_line_at_the_cap_is_fine_and_one_byte_more_is_not() -> None:
    assert lines_of([b"x" * 8 + b"\n"], max_line_bytes=8) == ["x" * 8]
    with pytest.raises(LineTooLongError, match="longer than 8 bytes"):
        lines_of([b"x" * 9 + b"\n"], max_line_bytes=8)


def test_too_long_is_a_line_parser_error() -> None:
    assert issubclass(LineTooLongError, LineParserError)


def test_error_carries_the_lines_before_the_long_one() -> None:
    buffer = LineBuffer(8)
    with pytest.raises(LineTooLongError) as caught:
        buffer.feed(b"ok\nfine\n" + b"z" * 20 + b"\nlost\n")
    assert caught.value.lines == ["ok", "fine"]
    assert caught.value.limit == 8


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_long_line_growing_over_many_parts_raises_once_and_holds_at_most_the_cap(
    size: int,
) -> None:
    buffer = LineBuffer(64)
    raised = 0
    for _ in range(2000 // size):
        try:
            assert buffer.feed(b"q" * size) == []
        except LineTooLongError:
            raised += 1
        assert buffer.pending_bytes <= 64 + size
    assert raised == 1


def test_after_the_error_the_rest_of_the_long_line_is_skipped_then_lines_resume() -> None:
    buffer = LineBuffer(4)
    assert buffer.feed(b"ab\n") == ["ab"]
    with pytest.raises(LineTooLongError):
        buffer.feed(b"0123456")
    assert buffer.feed(b"789") == []
    assert buffer.feed(b"still long\nnext\nto") == ["next"]
    assert buffer.flush() == "to"


def test_flush_after_an_unfinished_long_line_is_none() -> None:
    buffer = LineBuffer(4)
    with pytest.raises(LineTooLongError):
        buffer.feed(b"0123456")
    assert buffer.flush() is None


def test_cap_must_be_positive() -> None:
    with pytest.raises(ValueError, match="got 0"):
        LineBuffer(0)


def test_default_cap_is_one_mebibyte() -> None:
    assert LineBuffer().max_line_bytes == DEFAULT_MAX_LINE_BYTES == 1024 * 1024


# -- iter_lines: the pull-style fast path ---------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    raw=st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")),
    offsets=st.lists(st.integers(0, 300), max_size=30),
    cap=st.integers(1, 40),
)
def test_iter_lines_gives_what_feed_gives(raw: bytes, offsets: list[int], cap: int) -> None:
    def by_feed() -> tuple[list[str], bool]:
        buffer, lines = LineBuffer(cap), []
        try:
            for part in at(offsets)(raw):
                lines += buffer.feed(part)
        except LineTooLongError as exc:
            return lines + exc.lines, True
        last = buffer.flush()
        return (lines if last is None else [*lines, last]), False

    def by_iter_lines() -> tuple[list[str], bool]:
        buffer, lines = LineBuffer(cap), []
        try:
            for completed in buffer.iter_lines(at(offsets)(raw)):
                lines += completed
        except LineTooLongError as exc:
            return lines + exc.lines, True
        last = buffer.flush()
        return (lines if last is None else [*lines, last]), False

    assert by_iter_lines() == by_feed()


def test_iter_lines_after_a_feed_error_keeps_skipping_the_long_line() -> None:
    buffer = LineBuffer(4)
    with pytest.raises(LineTooLongError):
        buffer.feed(b"0123456")
    assert list(buffer.iter_lines([b"789", b"abcdefgh", b"ij\nok\n"])) == [["ok"]]


@pytest.mark.parametrize("use_iter_lines", [False, True])
def test_a_long_line_arriving_byte_by_byte_costs_little_more_than_its_size(
    use_iter_lines: bool,
) -> None:
    # GIVEN a 512 KiB line in 1-byte parts (joining that many parts at once costs ~90x)
    line = bytes(range(97, 123)) * (512 * 1024 // 26)
    parts = [line[i : i + 1] for i in range(len(line))] + [b"\n"]
    buffer = LineBuffer()
    tracemalloc.start()
    try:
        if use_iter_lines:
            lines = [text for group in buffer.iter_lines(parts) for text in group]
        else:
            lines = [text for part in parts for text in buffer.feed(part)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # THEN the line comes out whole, and memory peaks at a few times its size (not ~90x)
    assert lines == [line.decode()]
    assert peak < 5 * len(line)
