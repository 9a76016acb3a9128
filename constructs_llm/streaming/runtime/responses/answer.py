"""A whole Responses answer: one ``response`` object built from the stream (``stream: false``).
Stdlib only: this file ships in the Lambda asset."""

from __future__ import annotations

from typing import Any

from ..parsing.events import DoneEvent, ReasoningEvent, TokenEvent, ToolCallEvent
from .objects import ResponseShape, final_status, usage_object
from .output import OutputItems


class ResponseAnswer:
    """The output items of one response as they come, then the ``response`` object."""

    def __init__(self, shape: ResponseShape, *, logprobs: bool) -> None:
        self._shape = shape
        self._output = OutputItems(logprobs=logprobs)

    @property
    def tool_calls(self) -> int:
        return self._output.tool_calls

    def add_text(self, event: TokenEvent) -> object:
        return self._output.add_text(event)

    def add_reasoning(self, event: ReasoningEvent) -> object:
        return self._output.add_reasoning(event)

    def add_call(self, event: ToolCallEvent) -> object:
        return self._output.add_call(event)

    def build(self, done: DoneEvent) -> dict[str, Any]:
        output = self._output
        output.close(done.generated_text)
        status, incomplete = final_status(done, tool_calls=bool(output.tool_calls))
        return self._shape.response(
            status=status,
            output=output.items("completed" if status == "completed" else "incomplete"),
            usage=usage_object(done),
            incomplete_details=incomplete,
        )
