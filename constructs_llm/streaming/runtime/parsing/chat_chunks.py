"""OpenAI ``chat.completion.chunk`` streams (TGI Messages, vLLM, SGLang, LMI chat), with
``text_completion`` chunks and a whole ``chat.completion`` read the same way, and the
``usage`` object they end with.

Stdlib only: this file ships in the Lambda asset. ``parser.py`` documents the rules.
"""

from __future__ import annotations

from typing import Any

from .events import StreamEvent
from .stream_state import StreamState, count, failed_finish, str_or_none, token_event

__all__ = ["chat_chunk", "remember_usage"]


def remember_usage(state: StreamState, usage: Any) -> None:
    """Remember an OpenAI ``usage`` object's counts (the last one wins: it is cumulative)."""
    if type(usage) is dict:
        state.prompt_tokens = count(usage.get("prompt_tokens"))
        state.completion_tokens = count(usage.get("completion_tokens"))


def chat_chunk(state: StreamState, choices: Any, out: list[StreamEvent]) -> bool:
    """The first choice of an OpenAI chunk: its text, tool-call deltas and finish reason."""
    if type(choices) is not list:
        return False
    for choice in choices:
        if type(choice) is not dict:
            continue
        index = choice.get("index")
        if index is not None and index != 0:
            continue  # only the first choice: n > 1 is not one text
        delta = choice.get("delta")
        if type(delta) is dict:
            text = delta.get("content")
            log_prob = _chat_log_prob(choice.get("logprobs"))
        else:  # a completions chunk, or a whole chat.completion's message
            delta = choice.get("message")
            if type(delta) is not dict:
                delta = {}
            text = delta.get("content") or choice.get("text")
            log_prob = None if "message" in choice else _chat_log_prob(choice.get("logprobs"))
        if text and type(text) is str:
            out.append(token_event(text, None, log_prob))
            state.streamed_text = True
        calls = delta.get("tool_calls")
        if calls:
            state.tool_calls.add(calls, out)
        reason = choice.get("finish_reason")
        if reason is not None:
            failed = failed_finish(reason)
            if failed is not None:
                out.append(failed)
                return True
            state.finish_reason = str_or_none(reason)
    return False


def _chat_log_prob(logprobs: Any) -> float | None:
    """Log-prob of a chunk's text: the sum over its tokens (usually exactly one)."""
    if type(logprobs) is list and len(logprobs) == 1:
        # DJL's jsonlines_chat formatter wraps the object in a one-element list (a trailing
        # comma makes it a tuple: deepjavalibrary/djl-serving:
        # djl_python/output_formatter.py at 76158f2a).
        logprobs = logprobs[0]
    if type(logprobs) is not dict:
        return None
    entries = logprobs.get("content")
    values: Any
    if type(entries) is list and entries:
        values = [entry.get("logprob") if type(entry) is dict else None for entry in entries]
    else:
        values = logprobs.get("token_logprobs")  # completions chunks
        if type(values) is not list or not values:
            return None
    total = 0.0
    for value in values:
        if type(value) is not float and type(value) is not int:
            return None
        total += value
    return total
