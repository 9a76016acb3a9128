"""A whole chat answer: one ``chat.completion`` object aggregated from the stream (``stream:
false``). Stdlib only: this file ships in the Lambda asset.

A reply with tool calls carries ``message.tool_calls``, with ``content`` null unless text came
too.
"""

from __future__ import annotations

from typing import Any

from ..parsing.events import DoneEvent, TokenEvent, ToolCallEvent
from .wire import finish_reason, logprobs_object, new_tool_call_id, usage_object

__all__ = ["CompletionBuilder"]


class CompletionBuilder:
    """Aggregates a stream into one ``chat.completion`` object (for ``stream: false``)."""

    def __init__(self, *, completion_id: str, created: int, model: str, logprobs: bool) -> None:
        self._id, self._created, self._model = completion_id, created, model
        self._want_logprobs = logprobs
        self._texts: list[str] = []
        self._logprobs: list[dict[str, Any]] = []
        self._calls: dict[int, dict[str, Any]] = {}

    def add_text(self, event: TokenEvent) -> None:
        self._texts.append(event.text)
        if self._want_logprobs and event.log_prob is not None:
            lp = logprobs_object(event)
            if lp is not None:
                self._logprobs.extend(lp["content"])

    def add_call(self, event: ToolCallEvent) -> None:
        call = self._calls.get(event.index)
        if call is None:
            call = {"id": event.id or new_tool_call_id(), "name": "", "arguments": []}
            self._calls[event.index] = call
        if event.name is not None:
            call["name"] = event.name
        call["arguments"].append(event.arguments)

    @property
    def tool_calls(self) -> int:
        """How many tool calls the reply makes."""
        return len(self._calls)

    def build(self, done: DoneEvent) -> dict[str, Any]:
        text: str | None = "".join(self._texts)
        if not text and done.generated_text:
            text = done.generated_text
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if self._calls:
            message["content"] = text or None  # OpenAI's null content beside tool calls
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(self._calls.items())
            ]
        logprobs = {"content": self._logprobs, "refusal": None} if self._want_logprobs else None
        completion: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion",
            "created": self._created,
            "model": self._model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": logprobs,
                    "finish_reason": finish_reason(
                        done.finish_reason, tool_calls=bool(self._calls)
                    ),
                }
            ],
        }
        counts = usage_object(done)
        if counts is not None:  # omitted when unknown (ChatCompletion.usage is optional)
            completion["usage"] = counts
        return completion
