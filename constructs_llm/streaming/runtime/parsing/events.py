"""The events ``parse_stream`` yields: what an engine's stream says, whatever its wire format
(``streaming/formats.py``). Stdlib only: this file ships in the Lambda asset."""

from __future__ import annotations

from dataclasses import dataclass

TopLogprob = tuple[str, float]
"""One of the most likely tokens at a position: its text and log-probability."""


@dataclass(frozen=True, slots=True)
class TokenEvent:
    """One generated piece of text.

    ``top_logprobs`` are the most likely tokens at its position, when the engine was asked
    for them (``top_logprobs``); ``choice`` is the choice it belongs to when the engine
    generates several (``n`` > 1).
    """

    text: str
    token_id: int | None = None
    log_prob: float | None = None
    top_logprobs: tuple[TopLogprob, ...] | None = None
    choice: int = 0


@dataclass(frozen=True, slots=True)
class ReasoningEvent:
    """A piece of the model's reasoning (its thinking before the answer), which the engine's
    reasoning parser separates from the answer's text (``delta.reasoning`` or
    ``delta.reasoning_content``)."""

    text: str
    choice: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """A piece of a tool call the model is making (OpenAI ``delta.tool_calls[]``).

    ``index`` tells a reply's calls apart. A call's ``id`` and ``name`` come once, on the
    first event that has them (``id`` is None when the engine gave none); its ``arguments``
    come in pieces, whose concatenation is the call's JSON arguments.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    choice: int = 0


@dataclass(frozen=True, slots=True)
class DoneEvent:
    """The stream ended normally. Token counts are the engine's own, when it reports them
    (``reasoning_tokens``: those of ``completion_tokens`` spent reasoning; ``cached_tokens``:
    those of ``prompt_tokens`` read from the engine's prefix cache).

    ``finish_reason`` is the first choice's; ``finish_reasons`` holds every choice's, by
    choice, when the engine generated several (``n`` > 1), else nothing.
    """

    finish_reason: str | None = None
    generated_text: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    finish_reasons: tuple[str | None, ...] = ()
    cached_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """The stream ended with an error (engine payload or SageMaker stream exception).

    ``code`` is the engine's own error type or code, ``status`` the HTTP status the engine
    gave the error, when it gave one.
    """

    message: str
    code: str | None = None
    status: int | None = None


StreamEvent = TokenEvent | ReasoningEvent | ToolCallEvent | DoneEvent | ErrorEvent
