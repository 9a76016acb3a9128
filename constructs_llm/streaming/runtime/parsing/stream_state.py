"""What the stream parser remembers while it reads one stream, and the small pieces every
format family shares: the fast ``TokenEvent`` constructor, token counts and the finish
reasons that are errors.

Stdlib only: this file ships in the Lambda asset. ``parser.py`` documents the rules.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any

from .events import DoneEvent, ErrorEvent, StreamEvent, TokenEvent
from .tool_calls import ToolCallDeltas

ERROR_CODE_MODEL_ERROR = "model_error"
"""``ErrorEvent.code`` for an engine error that names no code of its own (DJL LMI)."""

_FINISH_REASON_ERROR = ErrorEvent(
    message="the model stopped with finish_reason 'error'", code=ERROR_CODE_MODEL_ERROR
)
# vLLM (FinishReason.ABORT, vllm-project/vllm: vllm/v1/engine/__init__.py) and SGLang (a
# graceful abort, sgl-project/sglang: python/sglang/srt/entrypoints/openai/serving_chat.py)
# end an aborted request with this finish reason: an error, not a stop.
_FINISH_REASON_ABORT = ErrorEvent(
    message="the engine aborted the request (finish_reason 'abort')", code="abort"
)
_FAILED_FINISH_REASONS = {"error": _FINISH_REASON_ERROR, "abort": _FINISH_REASON_ABORT}


def failed_finish(reason: Any) -> ErrorEvent | None:
    """The error an engine's finish reason stands for, if it is one. Only a string is looked
    up: the engine may send any JSON value, and a list or object is not hashable."""
    return _FAILED_FINISH_REASONS.get(reason) if type(reason) is str else None


def _make_token_event_factory() -> Callable[[str, int | None, float | None], TokenEvent]:
    """A TokenEvent constructor for the hot path: text, token id and log-prob, the other fields
    at their defaults.

    TokenEvent is a frozen, slotted dataclass: its __init__ sets each field through
    object.__setattr__, about 0.5 us per event. Filling the slots through their descriptors
    gives an equal object in less than half the time. Should the class's fields change or it
    lose its slots, this falls back to the constructor.
    """
    names = ("text", "token_id", "log_prob", "top_logprobs", "choice")
    slots: list[Any] = [getattr(TokenEvent, name, None) for name in names]
    fields = tuple(field.name for field in dataclasses.fields(TokenEvent))
    if fields != names or not all(isinstance(s, types.MemberDescriptorType) for s in slots):
        return TokenEvent
    set_text, set_token_id, set_log_prob, set_top, set_choice = (slot.__set__ for slot in slots)
    new = object.__new__

    def token_event(text: str, token_id: int | None, log_prob: float | None) -> TokenEvent:
        event = new(TokenEvent)
        set_text(event, text)
        set_token_id(event, token_id)
        set_log_prob(event, log_prob)
        set_top(event, None)
        set_choice(event, 0)
        return event

    return token_event


token_event = _make_token_event_factory()


class StreamState:
    """Per-stream state: the finish reasons and usage seen so far, whether text was streamed,
    the tool-call deltas, and whether a ``[DONE]`` marker was read."""

    __slots__ = (
        "after_done",
        "cached_tokens",
        "completion_tokens",
        "finish_reason",
        "more_choices",
        "open_ended",
        "prompt_tokens",
        "reasoning_tokens",
        "streamed_text",
        "tool_calls",
    )

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        #: The finish reasons of choices past the first (n > 1), by choice; None: none seen.
        self.more_choices: dict[int, str | None] | None = None
        self.streamed_text = False
        self.prompt_tokens: int | None = None  # from an OpenAI-style usage object
        self.completion_tokens: int | None = None
        self.reasoning_tokens: int | None = None
        self.cached_tokens: int | None = None
        self.tool_calls = ToolCallDeltas()
        self.after_done = False  # a [DONE] marker was read: the answer is complete
        self.open_ended = False  # a form with no final event (old LMI outputs) was read

    @property
    def complete(self) -> bool:
        """Whether the engine said the answer is done: ``[DONE]``, the first choice's
        ``finish_reason``, or a form that has no final event; a stream that ends otherwise
        was cut short."""
        return self.after_done or self.finish_reason is not None or self.open_ended

    def choice_seen(self, choice: int) -> None:
        """A choice past the first streamed something (the engine generates several)."""
        if self.more_choices is None:
            self.more_choices = {}
        self.more_choices.setdefault(choice, None)

    def finished(self, choice: int, reason: str | None) -> None:
        if choice == 0:
            self.finish_reason = reason
        else:
            self.choice_seen(choice)
            if self.more_choices is not None:
                self.more_choices[choice] = reason

    def settle(self, out: list[StreamEvent]) -> list[StreamEvent]:
        """``out`` ending in its terminal event: after ``[DONE]`` the answer is complete, so a
        failure read after it (a stalled or broken end of the body) does not undo it."""
        if self.after_done and type(out[-1]) is ErrorEvent:
            out[-1] = self.done()
        return out

    def done(self, finish_reason: str | None = None) -> DoneEvent:
        """The terminal event of a stream that ends at the end of the input (or a final line
        whose ``finish_reason`` is given)."""
        first = finish_reason or self.finish_reason
        reasons: tuple[str | None, ...] = ()
        more = self.more_choices
        if more:
            reasons = tuple(first if i == 0 else more.get(i) for i in range(max(more) + 1))
        return DoneEvent(
            finish_reason=first,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            reasoning_tokens=self.reasoning_tokens,
            cached_tokens=self.cached_tokens,
            finish_reasons=reasons,
        )


def count(value: Any) -> int | None:
    """A token count: a non-negative int (not a bool), else unknown."""
    return value if type(value) is int and value >= 0 else None


def str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
