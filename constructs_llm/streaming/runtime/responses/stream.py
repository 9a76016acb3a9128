"""Stream events -> the server-sent events of a streamed OpenAI Responses answer.

Stdlib only: this file ships in the Lambda asset. Each event is written as OpenAI writes it,
``event: <type>`` then ``data: <json>``, with ``sequence_number`` counting from 0, and no
``[DONE]`` at the end. The sequence, as the ``openai`` SDK's types
(``ResponseStreamEvent``) and its stream accumulator expect it:

1. ``response.created`` and ``response.in_progress`` (the response, ``in_progress``, no output);
2. for a reasoning model's thinking, at its first piece: ``response.output_item.added`` (a
   ``reasoning`` item, no content), ``response.content_part.added`` (an empty
   ``reasoning_text``), then one ``response.reasoning_text.delta`` per piece;
3. for the text, at its first token: ``response.output_item.added`` (a message, no content),
   ``response.content_part.added`` (an empty ``output_text``), then one
   ``response.output_text.delta`` per token (with its log-prob when ``include`` asks);
4. for each tool call, once its name is known: ``response.output_item.added`` (a
   ``function_call`` with its ``call_id`` and name, empty arguments), then
   ``response.function_call_arguments.delta`` per piece;
5. at the end, for each item in output order: ``response.reasoning_text.done``,
   ``response.content_part.done`` and ``response.output_item.done`` for the reasoning;
   ``response.output_text.done``, ``response.content_part.done`` and
   ``response.output_item.done`` for the message; ``response.function_call_arguments.done``
   and ``response.output_item.done`` for a call;
6. ``response.completed`` (or ``response.incomplete`` at the token limit) with the whole
   response, output and usage included.

Items stay open until the end, as the engine may interleave the text and several calls; each
event names its item by ``output_index`` and ``item_id``. A stream that fails after it started
ends with ``response.failed``: the response with status ``failed``, its ``error``, and the
output so far (items ``incomplete``).

Token deltas are the hot path (one per generated token): their JSON is built around a
pre-encoded prefix, as ``chat/stream.py`` does for chat chunks.
"""

from __future__ import annotations

import json
from typing import Any

from ..parsing.events import DoneEvent, ReasoningEvent, TokenEvent, ToolCallEvent
from ..upstream import UpstreamFailure
from .objects import ResponseShape, final_status, response_error, usage_object
from .output import Call, Message, OutputItems, Reasoning

_TEXT_DELTA = "response.output_text.delta"


class ResponseEvents:
    """The SSE events of one streamed response."""

    def __init__(self, shape: ResponseShape, *, logprobs: bool) -> None:
        self._shape = shape
        self.output = OutputItems(logprobs=logprobs)
        self._sequence = 0
        self._delta_prefix = b""

    @property
    def tool_calls(self) -> int:
        return self.output.tool_calls

    def _event(self, kind: str, fields: dict[str, Any]) -> bytes:
        obj = {"type": kind, **fields, "sequence_number": self._sequence}
        self._sequence += 1
        data = json.dumps(obj, separators=(",", ":"))
        return b"event: " + kind.encode() + b"\ndata: " + data.encode() + b"\n\n"

    def start(self) -> bytes:
        """``response.created`` and ``response.in_progress``."""
        response = self._shape.response(status="in_progress", output=[])
        return self._event("response.created", {"response": response}) + self._event(
            "response.in_progress", {"response": response}
        )

    def token(self, event: TokenEvent) -> bytes:
        message, opened, entry = self.output.add_text(event)
        head = self._open_message(message) if opened else b""
        logprobs = b"[]" if entry is None else json.dumps([entry]).encode()
        sequence = self._sequence
        self._sequence += 1
        return b"".join(
            (
                head,
                self._delta_prefix,
                json.dumps(event.text).encode(),
                b',"logprobs":',
                logprobs,
                b',"sequence_number":%d}\n\n' % sequence,
            )
        )

    def _open_message(self, message: Message) -> bytes:
        where = {"item_id": message.id, "output_index": message.index, "content_index": 0}
        head = json.dumps({"type": _TEXT_DELTA, **where}, separators=(",", ":"))[:-1]
        self._delta_prefix = f'event: {_TEXT_DELTA}\ndata: {head},"delta":'.encode()
        added = self._event(
            "response.output_item.added",
            {"output_index": message.index, "item": message.item("in_progress") | {"content": []}},
        )
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        return added + self._event("response.content_part.added", {**where, "part": part})

    def reasoning(self, event: ReasoningEvent) -> bytes:
        reasoning, opened = self.output.add_reasoning(event)
        head = self._open_reasoning(reasoning) if opened else b""
        where = {"item_id": reasoning.id, "output_index": reasoning.index, "content_index": 0}
        return head + self._event("response.reasoning_text.delta", {**where, "delta": event.text})

    def _open_reasoning(self, reasoning: Reasoning) -> bytes:
        where = {"item_id": reasoning.id, "output_index": reasoning.index, "content_index": 0}
        added = self._event(
            "response.output_item.added",
            {
                "output_index": reasoning.index,
                "item": reasoning.item("in_progress") | {"content": []},
            },
        )
        part = {"type": "reasoning_text", "text": ""}
        return added + self._event("response.content_part.added", {**where, "part": part})

    def tool_call(self, event: ToolCallEvent) -> bytes:
        call, announced = self.output.add_call(event)
        if announced:
            return self._open_call(call)
        if call.index is None or not event.arguments:
            return b""  # waits for its name, or nothing to say
        return self._arguments(call, event.arguments)

    def _open_call(self, call: Call) -> bytes:
        """``output_item.added`` for a call, and the arguments that came before its name."""
        added = self._event(
            "response.output_item.added",
            {"output_index": call.index, "item": call.item("in_progress") | {"arguments": ""}},
        )
        pending = "".join(call.arguments)
        return added + (self._arguments(call, pending) if pending else b"")

    def _arguments(self, call: Call, delta: str) -> bytes:
        return self._event(
            "response.function_call_arguments.delta",
            {"item_id": call.id, "output_index": call.index, "delta": delta},
        )

    def finish(self, done: DoneEvent) -> bytes:
        """Close every item, then ``response.completed`` (or ``response.incomplete``)."""
        opened = {id(item) for item in self.output.order}
        self.output.close(None)
        out = [self._open_late(item) for item in self.output.order if id(item) not in opened]
        status, incomplete = final_status(done, tool_calls=bool(self.output.tool_calls))
        item_status = "completed" if status == "completed" else "incomplete"
        out.extend(self._close(item, item_status) for item in self.output.order)
        response = self._shape.response(
            status=status,
            output=self.output.items(item_status),
            usage=usage_object(done),
            incomplete_details=incomplete,
        )
        kind = "response.completed" if status == "completed" else "response.incomplete"
        out.append(self._event(kind, {"response": response}))
        return b"".join(out)

    def _open_late(self, item: Reasoning | Message | Call) -> bytes:
        """Start an item that only exists at the end: an empty message, or a nameless call."""
        if isinstance(item, Call):
            return self._open_call(item)
        if isinstance(item, Reasoning):
            return self._open_reasoning(item)
        return self._open_message(item)

    def _close(self, item: Reasoning | Message | Call, status: str) -> bytes:
        if isinstance(item, Call):
            arguments = self._event(
                "response.function_call_arguments.done",
                {
                    "item_id": item.id,
                    "output_index": item.index,
                    "arguments": "".join(item.arguments),
                },
            )
            done = self._event(
                "response.output_item.done", {"output_index": item.index, "item": item.item(status)}
            )
            return arguments + done
        where = {"item_id": item.id, "output_index": item.index, "content_index": 0}
        if isinstance(item, Reasoning):
            return b"".join(
                (
                    self._event("response.reasoning_text.done", {**where, "text": item.text}),
                    self._event("response.content_part.done", {**where, "part": item.part()}),
                    self._event(
                        "response.output_item.done",
                        {"output_index": item.index, "item": item.item(status)},
                    ),
                )
            )
        return b"".join(
            (
                self._event(
                    "response.output_text.done",
                    {**where, "text": item.text, "logprobs": item.logprobs},
                ),
                self._event("response.content_part.done", {**where, "part": item.part()}),
                self._event(
                    "response.output_item.done",
                    {"output_index": item.index, "item": item.item(status)},
                ),
            )
        )

    def fail(self, failure: UpstreamFailure) -> bytes:
        """``response.failed``: the error, and the output so far as incomplete items."""
        response = self._shape.response(
            status="failed", output=self.output.items("incomplete"), error=response_error(failure)
        )
        return self._event("response.failed", {"response": response})

    def abort(self, failure: UpstreamFailure) -> bytes:
        """A stream that failed before its first event: opened, then failed."""
        return self.start() + self.fail(failure)
