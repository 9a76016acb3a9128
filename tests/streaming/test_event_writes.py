"""The writes of a streamed answer: the events parsed from one part go out in one write, each
still a chunk of its own, so the client receives the bytes of one write per event; TGI's last
token and the end of the stream (one part) cost one send, not two."""

from __future__ import annotations

from typing import Any

import pytest

from constructs_llm.contract import StreamFormat
from constructs_llm.streaming.runtime.chat.stream import ChunkStream
from constructs_llm.streaming.runtime.chat.wire import CompletionShape
from constructs_llm.streaming.runtime.generation import _stream, terminated_batches
from constructs_llm.streaming.runtime.http.event_stream import EventStream
from constructs_llm.streaming.runtime.parsing.parser import parse_batches
from tests.support import engine_streams


class _Exchange:
    """What an ``EventStream`` and ``_stream`` use of an exchange, recording each write."""

    def __init__(self, *, chunked: bool = True) -> None:
        self.chunked = chunked
        self.record: dict[str, Any] = {}
        self.writes: list[bytes] = []
        self.logged_before: int | None = None  # how many writes were out when it logged

    def close_after(self) -> None:
        pass

    def response_head(self, status_line: str, headers: list[tuple[str, str]]) -> bytes:
        return f"HTTP/1.1 {status_line}\r\n\r\n".encode()

    def log(self) -> None:
        self.logged_before = len(self.writes)

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def elapsed_ms(self) -> float:
        return 1.0


def _answer(batched_writes: bool, parts: list[bytes]) -> _Exchange:
    exchange = _Exchange()
    stream = EventStream(exchange)  # type: ignore[arg-type]
    writer = ChunkStream(CompletionShape(completion_id="c", created=1, model="m"))
    batches = terminated_batches(parse_batches(parts, StreamFormat.TGI))
    if not batched_writes:  # each event in a list of its own: one write per event
        batches = iter([[event] for batch in batches for event in batch])
    assert _stream(exchange, stream, writer, batches)  # type: ignore[arg-type]
    return exchange


def test_the_last_token_and_the_end_of_a_tgi_stream_go_out_in_one_write() -> None:
    # GIVEN a TGI stream of three tokens, one part each (the last with generated_text)
    parts = engine_streams.tgi(["a", "b", "c"])
    # WHEN it is answered THEN three writes (the head with the first token, the second token,
    # the last token with the end), against four with one write per event, and the same bytes
    batched, one_by_one = _answer(True, parts), _answer(False, parts)
    assert len(batched.writes) == 3 and len(one_by_one.writes) == 4
    assert b"".join(batched.writes) == b"".join(one_by_one.writes)
    assert batched.writes[-1].endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")
    assert b'"content":"c"' in batched.writes[-1]
    assert batched.logged_before == 2  # the log line before the last byte, as before
    assert batched.record["tokens"] == 3 and batched.record["status"] == 200


@pytest.mark.parametrize("chunked", [True, False], ids=["http-1.1", "http-1.0"])
def test_events_sent_together_are_the_bytes_of_events_sent_alone(chunked: bool) -> None:
    together, alone = _Exchange(chunked=chunked), _Exchange(chunked=chunked)
    first, second = EventStream(together), EventStream(alone)  # type: ignore[arg-type]
    first.send(b"data: 1\n\n", b"data: 2\n\n")
    first.send(b"data: 3\n\n")
    first.end(b"data: 4\n\n", b"data: [DONE]\n\n")
    for data in (b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n", b"data: 4\n\n"):
        second.send(data)
    second.end(b"data: [DONE]\n\n")
    assert len(together.writes) == 3 and len(alone.writes) == 5
    assert b"".join(together.writes) == b"".join(alone.writes)
