"""An API's whole answer (``stream: false``), built from the events of one stream.

Stdlib only: this file ships in the Lambda asset. The invoker's own ``stream: false`` path
(``generation.py``) adds each event inline, as it also times the first token and checks its
client; a batch line (``batches/worker.py``) and an answer an asynchronous endpoint wrote
(``chat/async_answer.py``) have nothing to do between events, and give them to ``answered``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .parsing.events import DoneEvent, ErrorEvent, ReasoningEvent, TokenEvent, ToolCallEvent

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .parsing.events import StreamEvent


class Answer(Protocol):
    """An API's whole answer, built from every event (``stream: false``)."""

    @property
    def tool_calls(self) -> int: ...

    def add_text(self, event: TokenEvent) -> object: ...

    def add_reasoning(self, event: ReasoningEvent) -> object: ...

    def add_call(self, event: ToolCallEvent) -> object: ...

    def build(self, done: DoneEvent) -> dict[str, Any]:
        """The answer's JSON object, once the stream completed with ``done``."""
        ...


def answered(answer: Answer, events: Iterable[StreamEvent]) -> DoneEvent | ErrorEvent | None:
    """Add the events to ``answer`` up to the one that ends the stream, and return that one
    (None: the events ran out first)."""
    for event in events:
        if isinstance(event, TokenEvent):
            answer.add_text(event)
        elif isinstance(event, ReasoningEvent):
            answer.add_reasoning(event)
        elif isinstance(event, ToolCallEvent):
            answer.add_call(event)
        else:
            return event
    return None
