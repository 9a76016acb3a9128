"""Reading and checking what ``POST /v1/responses`` writes, against the ``openai`` SDK's typed
models (openai 3.54.0, generated from OpenAI's OpenAPI spec) in pydantic strict mode, and
against the event sequence OpenAI documents for a streamed response."""

from __future__ import annotations

import json
from typing import Any

from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

__all__ = ["STREAM_EVENT", "check_sequence", "sse_events", "strict_event", "strict_response"]

STREAM_EVENT: TypeAdapter[ResponseStreamEvent] = TypeAdapter(ResponseStreamEvent)
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def strict_response(obj: dict[str, Any]) -> Response:
    """``obj`` as a ``Response``, validated strictly (no coercion, required fields present)."""
    return Response.model_validate(obj, strict=True)


def strict_event(obj: dict[str, Any]) -> ResponseStreamEvent:
    event = STREAM_EVENT.validate_python(obj, strict=True)
    if "response" in obj:
        strict_response(obj["response"])  # the union validated it; this names the failure
    return event


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """The events of a Responses SSE body: each an ``event:`` line naming its type, then one
    ``data:`` line; no ``[DONE]`` (OpenAI sends none for Responses). Comments are skipped."""
    events = []
    for block in body.decode().split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        assert len(lines) == 2, block
        name, data = lines
        assert name.startswith("event: ") and data.startswith("data: "), block
        event = json.loads(data[len("data: ") :])
        assert event["type"] == name[len("event: ") :]
        events.append(event)
    return events


def check_sequence(events: list[dict[str, Any]]) -> Response:
    """Check a whole stream: every event strictly valid, sequence numbers 0, 1, 2, ..., the
    documented order (created, in_progress, items added before their parts and deltas, their
    done events after, one terminal event last), deltas adding up to each item's final
    content, and the terminal response's output equal to the items as they were done.
    Returns the terminal response."""
    for event in events:
        strict_event(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events[:2]] == ["response.created", "response.in_progress"]
    *middle, last = events[2:]
    assert last["type"] in _TERMINAL
    response_id = events[0]["response"]["id"]
    assert all(e["response"]["id"] == response_id for e in (events[0], events[1], last))
    added: dict[int, dict[str, Any]] = {}
    done: dict[int, dict[str, Any]] = {}
    texts: dict[int, str] = {}
    arguments: dict[int, str] = {}
    for event in middle:
        kind, index = event["type"], event.get("output_index")
        assert kind not in _TERMINAL and kind not in ("response.created", "response.in_progress")
        if kind == "response.output_item.added":
            assert index == len(added) and index not in added
            added[index] = event["item"]
            continue
        assert index in added and index not in done, event
        item = added[index]
        if kind != "response.output_item.done":
            assert event["item_id"] == item["id"]
        if kind == "response.content_part.added":
            assert event["content_index"] == 0 and event["part"]["text"] == ""
            texts[index] = ""
        elif kind in ("response.output_text.delta", "response.reasoning_text.delta"):
            texts[index] += event["delta"]
        elif kind in ("response.output_text.done", "response.reasoning_text.done"):
            assert event["text"] == texts[index]
        elif kind == "response.content_part.done":
            assert event["part"]["text"] == texts[index]
        elif kind == "response.function_call_arguments.delta":
            arguments[index] = arguments.get(index, "") + event["delta"]
        elif kind == "response.function_call_arguments.done":
            assert event["arguments"] == arguments.get(index, "")
        elif kind == "response.output_item.done":
            assert event["item"]["id"] == item["id"] and event["item"]["type"] == item["type"]
            done[index] = event["item"]
        else:
            raise AssertionError(f"unexpected event {kind}")
    response = last["response"]
    if last["type"] == "response.failed":
        assert response["status"] == "failed" and response["error"]["message"]
    else:
        assert sorted(done) == sorted(added)  # every item was done before the end
        assert response["output"] == [done[i] for i in sorted(done)]
        for index, item in done.items():
            if item["type"] in ("message", "reasoning"):
                assert item["content"][0]["text"] == texts[index]
            else:
                assert item["arguments"] == arguments.get(index, "")
                assert item["call_id"] == added[index]["call_id"]
                assert item["name"] == added[index]["name"]
    return strict_response(response)
