"""The events ``parse_stream`` yields: what an engine's stream says, whatever its wire format
(``streaming/formats.py``). Stdlib only: this file ships in the Lambda asset."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DoneEvent", "ErrorEvent", "StreamEvent", "TokenEvent", "ToolCallEvent"]


@dataclass(frozen=True, slots=True)
class TokenEvent:
    """One generated piece of text."""

    text: str
    token_id: int | None = None
    log_prob: float | None = None


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


@dataclass(frozen=True, slots=True)
class DoneEvent:
    """The stream ended normally. Token counts are the engine's own, when it reports them."""

    finish_reason: str | None = None
    generated_text: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """The stream ended with an error (engine payload or SageMaker stream exception).

    ``code`` is the engine's own error type or code, ``status`` the HTTP status the engine
    gave the error, when it gave one.
    """

    message: str
    code: str | None = None
    status: int | None = None


StreamEvent = TokenEvent | ToolCallEvent | DoneEvent | ErrorEvent
