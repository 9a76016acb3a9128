"""parse_stream against the seeds' LineIterator approach and against json.loads alone.

All three run in this process on the same ~100k-token TGI stream (``data:{json}`` events, with
multibyte text), cut into random 1-24 byte PayloadParts as SageMaker may deliver them:

- parse_stream: the chunks in, TokenEvents and a DoneEvent out.
- LineIterator: the helper in the aws-samples notebooks and LangChain (rewritten here from
  its description): a BytesIO that every part is appended to, ``seek`` to the read position
  and ``readline`` until a full line appears; then each line is decoded, its ``data:`` prefix
  cut and ``json.loads`` applied, as the seeds' consumers do.
- json.loads alone: only the JSON decoding of the same event payloads, already split into
  lines and decoded: the floor for any parser that uses the standard library's JSON.

Goals: parse_stream at least 2x as fast as LineIterator, and at most 1.5x the time of
json.loads alone, both on the 1-24 byte parts. For scale, parse_stream is also timed with one
part per SSE event, which shows the per-part cost apart from the per-line cost. Peak memory
(tracemalloc) of both parsers is reported on the same stream. Times are process CPU time
(best of a few runs), so other processes on the machine disturb the ratios less.
"""

from __future__ import annotations

import gc
import io
import json
import random
import time
import tracemalloc
from collections.abc import Callable, Iterable
from typing import Any

from constructs_llm.streaming.runtime.parsing.events import TokenEvent
from constructs_llm.streaming.runtime.parsing.parser import parse_stream

TOKENS = 100_000
SEED = 20_240_607
REPEATS = 4
SPEEDUP_GOAL = 2.0  # parse_stream at least this many times faster than LineIterator
JSON_RATIO_GOAL = 1.5  # parse_stream time at most this multiple of json.loads alone

_WORDS = [" the", " model", " stream", "ing", " token", ",", ".", " héllo", " 世界", " 🚀", "\n"]


def build_tgi_stream(tokens: int, rng: random.Random) -> tuple[bytes, list[str]]:
    """A TGI generate_stream body and the JSON payload of each of its events."""
    payloads, texts = [], []
    for index in range(1, tokens + 1):
        text = rng.choice(_WORDS)
        texts.append(text)
        token = {"id": rng.randrange(32000), "text": text, "logprob": -rng.random() * 4}
        token["special"] = False
        last = index == tokens
        event = {
            "index": index,
            "token": token,
            "generated_text": "".join(texts) if last else None,
            "details": {"finish_reason": "length", "generated_tokens": tokens} if last else None,
        }
        payloads.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
    body = "".join(f"data:{payload}\n\n" for payload in payloads).encode()
    return body, payloads


def random_parts(body: bytes, rng: random.Random, low: int = 1, high: int = 24) -> list[bytes]:
    parts, start = [], 0
    while start < len(body):
        size = rng.randint(low, high)
        parts.append(body[start : start + size])
        start += size
    return parts


class LineIterator:
    """The seeds' approach: grow one BytesIO with every part; readline from a position."""

    def __init__(self, stream: Iterable[dict[str, Any]]) -> None:
        self.byte_iterator = iter(stream)
        self.buffer = io.BytesIO()
        self.read_pos = 0

    def __iter__(self) -> LineIterator:
        return self

    def __next__(self) -> bytes:
        while True:
            self.buffer.seek(self.read_pos)
            line = self.buffer.readline()
            if line and line[-1] == ord(b"\n"):
                self.read_pos += len(line)
                return line[:-1]
            try:
                chunk = next(self.byte_iterator)
            except StopIteration:
                # The original loops forever here on a last line without "\n"; this stream
                # ends with one, so the benchmark stops like the original would.
                raise
            if "PayloadPart" not in chunk:
                continue
            self.buffer.seek(0, io.SEEK_END)
            self.buffer.write(chunk["PayloadPart"]["Bytes"])


def run_line_iterator(events: list[dict[str, Any]]) -> int:
    """The seeds' consumer loop; returns the number of tokens seen."""
    count = 0
    for line in LineIterator(events):
        if line and line.startswith(b"data:"):
            data = json.loads(line[5:].decode("utf-8"))
            token = data.get("token")
            if token and not token.get("special"):
                count += 1
    return count


def run_parse_stream(parts: list[bytes]) -> int:
    count = 0
    for event in parse_stream(parts, "tgi"):
        if type(event) is TokenEvent:
            count += 1
    return count


def run_json_loads(payloads: list[str]) -> int:
    loads = json.loads
    for payload in payloads:
        loads(payload)
    return len(payloads)


def race(contenders: dict[str, Callable[[], int]], expected: int) -> dict[str, float]:
    """Best CPU time of each contender, run in turns so that all see the same machine load."""
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(REPEATS):
        for name, run in contenders.items():
            gc.collect()
            started = time.process_time()
            result = run()
            best[name] = min(best[name], time.process_time() - started)
            if result != expected:
                raise AssertionError(f"{name} counted {result} tokens, expected {expected}")
    return best


def peak_memory(run: Callable[[], int]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    rng = random.Random(SEED)
    body, payloads = build_tgi_stream(TOKENS, rng)
    parts = random_parts(body, rng)
    event_parts = [f"data:{payload}\n\n".encode() for payload in payloads]
    events = [{"PayloadPart": {"Bytes": part}} for part in parts]
    megabytes = len(body) / 1e6
    print(
        f"TGI stream: {TOKENS} tokens, {megabytes:.1f} MB in {len(parts)} parts of 1-24 bytes; "
        f"best of {REPEATS}"
    )

    timings = race(
        {
            "parse_stream": lambda: run_parse_stream(parts),
            "LineIterator (seeds)": lambda: run_line_iterator(events),
            "json.loads alone": lambda: run_json_loads(payloads),
            "parse_stream, 1 part/event": lambda: run_parse_stream(event_parts),
        },
        TOKENS,
    )
    for name, seconds in timings.items():
        print(
            f"  {name:<27} {seconds * 1000:8.0f} ms  {megabytes / seconds:7.1f} MB/s  "
            f"{TOKENS / seconds / 1000:7.0f}k tokens/s"
        )

    memory = {
        "parse_stream": peak_memory(lambda: run_parse_stream(parts)),
        "LineIterator (seeds)": peak_memory(lambda: run_line_iterator(events)),
    }
    for name, peak in memory.items():
        print(f"  peak memory {name:<22} {peak / 1e6:8.2f} MB")
    per_part = (timings["parse_stream"] - timings["parse_stream, 1 part/event"]) / (
        len(parts) - len(event_parts)
    )

    speedup = timings["LineIterator (seeds)"] / timings["parse_stream"]
    json_ratio = timings["parse_stream"] / timings["json.loads alone"]
    memory_ratio = memory["LineIterator (seeds)"] / memory["parse_stream"]
    print(
        f"  speed-up vs LineIterator: {speedup:.2f}x (goal >= {SPEEDUP_GOAL}x) "
        f"{'PASS' if speedup >= SPEEDUP_GOAL else 'MISS'}"
    )
    print(
        f"  time vs json.loads alone: {json_ratio:.2f}x (goal <= {JSON_RATIO_GOAL}x) "
        f"{'PASS' if json_ratio <= JSON_RATIO_GOAL else 'MISS'}"
    )
    print(
        f"  for scale: with one part per event parse_stream takes "
        f"{timings['parse_stream, 1 part/event'] / timings['json.loads alone']:.2f}x json.loads; "
        f"each extra tiny part costs ~{per_part * 1e9:.0f} ns"
    )
    print(f"  peak memory: parse_stream uses {memory_ratio:.1f}x less than LineIterator")


if __name__ == "__main__":
    main()
