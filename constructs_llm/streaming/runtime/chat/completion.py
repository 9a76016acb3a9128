"""A whole chat answer: one ``chat.completion`` object aggregated from the stream (``stream:
false``). Stdlib only: this file ships in the Lambda asset.

One choice per choice the engine generated (``n`` > 1 gives several), each with its text, its
reasoning (under ``reasoning``, or the shape's ``reasoning_field``, as ``wire.py`` says), its
log-probs when asked, and its tool calls: ``message.tool_calls``, with ``content`` null unless
text came too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..parsing.events import DoneEvent, ReasoningEvent, TokenEvent, ToolCallEvent
from .wire import (
    CompletionShape,
    finish_reason,
    logprob_entry,
    new_tool_call_id,
    reasoning_delta,
    usage_object,
)


@dataclass
class _Choice:
    """What one choice said so far."""

    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    logprobs: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)


class CompletionBuilder:
    """Aggregates a stream into one ``chat.completion`` object (for ``stream: false``).

    :param shape: its ``id``, ``created`` and ``model``, and how it is written.
    """

    def __init__(self, shape: CompletionShape) -> None:
        self._id, self._created, self._model = shape.completion_id, shape.created, shape.model
        self._want_logprobs = shape.logprobs
        self._chose_tools = shape.chose_tools
        self._reasoning_field = shape.reasoning_field
        self._choices: dict[int, _Choice] = {0: _Choice()}

    def _choice(self, index: int) -> _Choice:
        choice = self._choices.get(index)
        if choice is None:
            choice = self._choices[index] = _Choice()
        return choice

    def add_text(self, event: TokenEvent) -> None:
        choice = self._choice(event.choice)
        choice.texts.append(event.text)
        if self._want_logprobs and event.log_prob is not None:
            choice.logprobs.append(logprob_entry(event))

    def add_reasoning(self, event: ReasoningEvent) -> None:
        self._choice(event.choice).thoughts.append(event.text)

    def add_call(self, event: ToolCallEvent) -> None:
        calls = self._choice(event.choice).calls
        call = calls.get(event.index)
        if call is None:
            call = {"id": event.id or new_tool_call_id(), "name": "", "arguments": []}
            calls[event.index] = call
        if event.name is not None:
            call["name"] = event.name
        call["arguments"].append(event.arguments)

    @property
    def tool_calls(self) -> int:
        """How many tool calls the reply makes."""
        return sum(len(choice.calls) for choice in self._choices.values())

    def build(self, done: DoneEvent) -> dict[str, Any]:
        reasons = done.finish_reasons or (done.finish_reason,)
        count = max(len(reasons), max(self._choices) + 1)
        completion: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion",
            "created": self._created,
            "model": self._model,
            "choices": [
                self._built(index, reasons[index] if index < len(reasons) else None, done)
                for index in range(count)
            ],
        }
        counts = usage_object(done)
        if counts is not None:  # omitted when unknown (ChatCompletion.usage is optional)
            completion["usage"] = counts
        return completion

    def _built(self, index: int, reason: str | None, done: DoneEvent) -> dict[str, Any]:
        choice = self._choices.get(index) or _Choice()
        text: str | None = "".join(choice.texts)
        if not text and index == 0 and done.generated_text:
            text = done.generated_text
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if choice.thoughts:
            message.update(reasoning_delta("".join(choice.thoughts), self._reasoning_field))
        if choice.calls:
            message["content"] = text or None  # OpenAI's null content beside tool calls
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(choice.calls.items())
            ]
        logprobs = {"content": choice.logprobs, "refusal": None} if self._want_logprobs else None
        called = self._chose_tools and bool(choice.calls)
        return {
            "index": index,
            "message": message,
            "logprobs": logprobs,
            "finish_reason": finish_reason(reason, tool_calls=called),
        }
