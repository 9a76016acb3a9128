"""The values OpenAI's chat wire objects share, streamed or not: ids, finish reasons, usage,
a token's log-probability entry, and an SSE event. Stdlib only: this file ships in the Lambda.

A reply with tool calls that stopped normally finishes with ``"tool_calls"`` (TGI says
``"stop"``; vLLM and SGLang say ``"tool_calls"`` already).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..parsing.events import DoneEvent, TokenEvent

__all__ = [
    "DONE",
    "finish_reason",
    "logprobs_object",
    "new_completion_id",
    "new_tool_call_id",
    "sse",
    "usage_object",
]

DONE = b"data: [DONE]\n\n"

# Engines' finish reasons -> OpenAI's. TGI says eos_token/stop_sequence, LMI may say eos.
_FINISH_REASONS = {
    "stop": "stop",
    "eos_token": "stop",
    "eos": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}


def finish_reason(raw: str | None, *, tool_calls: bool = False) -> str:
    """OpenAI finish reason for an engine's one; unknown or missing means a normal stop,
    which is ``"tool_calls"`` when the reply made tool calls."""
    reason = _FINISH_REASONS.get(raw or "stop", "stop")
    return "tool_calls" if tool_calls and reason == "stop" else reason


def new_completion_id() -> str:
    return "chatcmpl-" + os.urandom(12).hex()


def new_tool_call_id() -> str:
    """An id for a tool call whose engine gave none (OpenAI's ``call_`` form)."""
    return "call_" + os.urandom(12).hex()


def sse(obj: Any) -> bytes:
    """One server-sent event carrying ``obj`` as compact JSON."""
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def usage_object(done: DoneEvent) -> dict[str, int] | None:
    """OpenAI's ``usage`` object, or None unless the engine reported both counts: the SDK's
    ``CompletionUsage`` requires all three as integers, and a guess would mislead billing."""
    prompt, completion = done.prompt_tokens, done.completion_tokens
    if prompt is None or completion is None:
        return None
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def logprobs_object(event: TokenEvent) -> dict[str, Any] | None:
    if event.log_prob is None:
        return None
    entry = {
        "token": event.text,
        "logprob": event.log_prob,
        "bytes": list(event.text.encode()),
        "top_logprobs": [],
    }
    return {"content": [entry], "refusal": None}
