"""Stream fixtures and re-chunking helpers shared by the streaming tests.

Each fixture is a raw capture-shaped stream (``<name>.sse`` or ``<name>.jsonl``, bytes kept
exactly) next to ``<name>.events.json``: its format, what it shows, the engine source it is
written from (repository, file and commit; null for malformed input that no engine writes),
and the events expected.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from constructs_llm.streaming.runtime.parsing.events import (
    DoneEvent,
    ErrorEvent,
    ReasoningEvent,
    StreamEvent,
    TokenEvent,
    ToolCallEvent,
)

FIXTURES = Path(__file__).parent / "fixtures"

_TYPE_NAMES = {
    TokenEvent: "token",
    ReasoningEvent: "reasoning",
    ToolCallEvent: "tool_call",
    DoneEvent: "done",
    ErrorEvent: "error",
}
EVENT_TYPES = {name: kind for kind, name in _TYPE_NAMES.items()}


@dataclass(frozen=True)
class StreamFixture:
    name: str
    fmt: str
    about: str
    raw: bytes
    events: list[dict[str, Any]]
    source: dict[str, str] | None


def load_fixtures() -> list[StreamFixture]:
    fixtures = []
    for spec_path in sorted(FIXTURES.glob("*.events.json")):
        name = spec_path.name.removesuffix(".events.json")
        (stream_path,) = [p for p in FIXTURES.glob(f"{name}.*") if p != spec_path]
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
        raw = stream_path.read_bytes()
        fixtures.append(
            StreamFixture(name, spec["format"], spec["about"], raw, spec["events"], spec["source"])
        )
    return fixtures


#: Fields a fixture states only when they are set: a choice past the first (n > 1), the top
#: log-probs, the reasoning and cached tokens and every choice's finish reason.
_WHEN_SET = {
    "choice": 0,
    "top_logprobs": None,
    "reasoning_tokens": None,
    "cached_tokens": None,
    "finish_reasons": (),
}


def as_dicts(events: Iterator[StreamEvent] | list[StreamEvent]) -> list[dict[str, Any]]:
    """Events in the fixtures' JSON shape: ``{"type": "token", "text": ..., ...}``."""
    return [
        {
            "type": _TYPE_NAMES[type(event)],
            **{
                name: _json(value)
                for name, value in asdict(event).items()
                if name not in _WHEN_SET or value != _WHEN_SET[name]
            },
        }
        for event in events
    ]


def _json(value: Any) -> Any:
    """Tuples as the lists JSON has."""
    if isinstance(value, tuple):
        return [_json(item) for item in value]
    return value


def from_dict(spec: dict[str, Any]) -> StreamEvent:
    """The event a fixture's JSON describes."""
    fields = {k: _tuple(v) for k, v in spec.items() if k != "type"}
    event: StreamEvent = EVENT_TYPES[spec["type"]](**fields)
    return event


def _tuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuple(item) for item in value)
    return value


def fixed(size: int) -> Callable[[bytes], list[bytes]]:
    def split(raw: bytes) -> list[bytes]:
        return [raw[i : i + size] for i in range(0, len(raw), size)]

    return split


def random_sizes(seed: int, low: int = 1, high: int = 24) -> Callable[[bytes], list[bytes]]:
    def split(raw: bytes) -> list[bytes]:
        rng = random.Random(seed)
        parts, start = [], 0
        while start < len(raw):
            end = start + rng.randint(low, high)
            parts.append(raw[start:end])
            start = end
        return parts

    return split


def at(offsets: list[int]) -> Callable[[bytes], list[bytes]]:
    """Split at the given offsets (sorted, duplicates give empty parts, which are legal)."""

    def split(raw: bytes) -> list[bytes]:
        bounds = [0, *sorted(offsets), len(raw)]
        return [raw[a:b] for a, b in itertools.pairwise(bounds)]

    return split


CHUNKINGS: dict[str, Callable[[bytes], list[bytes]]] = {
    "whole": lambda raw: [raw],
    "1-byte": fixed(1),
    "2-byte": fixed(2),
    "3-byte": fixed(3),
    "7-byte": fixed(7),
    "random-seed-1": random_sizes(1),
    "random-seed-2": random_sizes(2),
    "random-seed-3": random_sizes(3, high=200),
}
