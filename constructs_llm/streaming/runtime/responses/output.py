"""The output items of one response, built up from the engine's events: one ``reasoning`` item
for a reasoning model's thinking, one assistant message for the text, one ``function_call``
item per tool call. Stdlib only: ships in the Lambda.

Items take their ``output_index`` in the order they start: the reasoning at its first piece,
the message at its first token, a tool call once its name is known
(``ResponseFunctionToolCall.name`` is required, and the ``openai`` SDK's stream accumulator
keeps the name the item was added with, so arguments that come before the name wait for
it). A call keeps the engine's id as its ``call_id``, else gets a new ``call_…`` one (TGI
gives none). A response with neither text nor tool calls has one
message with empty text (after its reasoning, if any), or the engine's ``generated_text`` when
it gave only that.

``stream.py`` turns each step into events; a non-streamed answer takes ``items``
(``answer.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..chat.wire import logprob_entry, new_tool_call_id
from ..parsing.events import ReasoningEvent, TokenEvent, ToolCallEvent
from .objects import (
    function_call_item,
    message_item,
    new_item_id,
    output_text,
    reasoning_item,
    reasoning_text,
)


@dataclass(eq=False)
class Reasoning:
    """The reasoning item: its id, output index and text pieces."""

    id: str
    index: int
    texts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    def part(self) -> dict[str, Any]:
        return reasoning_text(self.text)

    def item(self, status: str) -> dict[str, Any]:
        return reasoning_item(self.id, status, [self.part()])


@dataclass(eq=False)
class Message:
    """The assistant message: its id, output index, text pieces and their log-probs."""

    id: str
    index: int
    texts: list[str] = field(default_factory=list)
    logprobs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    def part(self) -> dict[str, Any]:
        return output_text(self.text, self.logprobs)

    def item(self, status: str) -> dict[str, Any]:
        return message_item(self.id, status, [self.part()])


@dataclass(eq=False)
class Call:
    """A tool call: ids, its output index once announced, name and argument pieces."""

    id: str
    call_id: str
    name: str | None = None
    index: int | None = None
    arguments: list[str] = field(default_factory=list)

    def item(self, status: str) -> dict[str, Any]:
        return function_call_item(
            self.id,
            status,
            call_id=self.call_id,
            name=self.name or "",
            arguments="".join(self.arguments),
        )


class OutputItems:
    """The items of one response so far, in output order."""

    def __init__(self, *, logprobs: bool) -> None:
        self._logprobs = logprobs
        self.order: list[Reasoning | Message | Call] = []
        self.reasoning: Reasoning | None = None
        self.message: Message | None = None
        self._calls: dict[int, Call] = {}
        self.tokens = 0
        """Events added: tokens and tool-call pieces, as the chat answers count them."""

    @property
    def tool_calls(self) -> int:
        return len(self._calls)

    def add_text(self, event: TokenEvent) -> tuple[Message, bool, dict[str, Any] | None]:
        """Add a token: the message, whether it started now, and the token's log-prob entry
        (when asked for and given)."""
        self.tokens += 1
        opened = self.message is None
        if self.message is None:
            self.message = Message(id=new_item_id("msg"), index=len(self.order))
            self.order.append(self.message)
        message = self.message
        message.texts.append(event.text)
        entry = None
        if self._logprobs and event.log_prob is not None:
            entry = logprob_entry(event)
            message.logprobs.append(entry)
        return message, opened, entry

    def add_reasoning(self, event: ReasoningEvent) -> tuple[Reasoning, bool]:
        """Add a piece of reasoning: the item, and whether it started now."""
        self.tokens += 1
        opened = self.reasoning is None
        if self.reasoning is None:
            self.reasoning = Reasoning(id=new_item_id("rs"), index=len(self.order))
            self.order.append(self.reasoning)
        self.reasoning.texts.append(event.text)
        return self.reasoning, opened

    def add_call(self, event: ToolCallEvent) -> tuple[Call, bool]:
        """Add a tool-call piece: the call, and whether it was announced now (its name just
        came: its arguments so far are then all pending)."""
        self.tokens += 1
        call = self._calls.get(event.index)
        if call is None:
            call = Call(id=new_item_id("fc"), call_id=event.id or new_tool_call_id())
            self._calls[event.index] = call
        if event.name is not None and call.name is None:
            call.name = event.name
        call.arguments.append(event.arguments)
        return call, self.announce(call)

    def announce(self, call: Call) -> bool:
        """Give ``call`` its output index if it has a name and none yet; True if it did."""
        if call.index is not None or call.name is None:
            return False
        call.index = len(self.order)
        self.order.append(call)
        return True

    def unannounced(self) -> list[Call]:
        """Calls whose name never came, by the engine's index: they end with an empty name."""
        return [call for _, call in sorted(self._calls.items()) if call.index is None]

    def close(self, generated_text: str | None) -> None:
        """Complete the items at the end of the stream: announce nameless calls, and give a
        response without output its (possibly empty) message."""
        for call in self.unannounced():
            call.name = call.name or ""
            self.announce(call)
        if self.message is None and not self._calls:
            self.message = Message(id=new_item_id("msg"), index=len(self.order))
            if generated_text:
                self.message.texts.append(generated_text)
            self.order.append(self.message)

    def items(self, status: str) -> list[dict[str, Any]]:
        """The output as the response lists it, each item with ``status``."""
        return [item.item(status) for item in self.order]
