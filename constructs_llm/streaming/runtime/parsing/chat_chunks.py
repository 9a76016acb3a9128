"""OpenAI ``chat.completion.chunk`` streams (TGI Messages, vLLM, SGLang, LMI chat), with
``text_completion`` chunks and a whole ``chat.completion`` read the same way, and the
``usage`` object they end with.

Stdlib only: this file ships in the Lambda asset. ``parser.py`` documents the rules.
"""

from __future__ import annotations

from typing import Any

from .events import ReasoningEvent, StreamEvent, TokenEvent, TopLogprob
from .stream_state import StreamState, count, failed_finish, str_or_none, token_event


def remember_usage(state: StreamState, usage: Any) -> None:
    """Remember an OpenAI ``usage`` object's counts (the last one wins: it is cumulative),
    with the reasoning tokens where the engine counts them: OpenAI's
    ``completion_tokens_details.reasoning_tokens``, or SGLang's ``reasoning_tokens``
    (sgl-project/sglang: ``python/sglang/srt/entrypoints/openai/protocol.py``, ``UsageInfo``),
    and the prompt tokens read from the prefix cache where the engine counts them:
    ``prompt_tokens_details.cached_tokens``, which vLLM sends when it runs with
    ``--enable-prompt-tokens-details`` (vllm-project/vllm:
    ``vllm/entrypoints/openai/engine/protocol.py``, ``PromptTokenUsageInfo``)."""
    if type(usage) is dict:
        state.prompt_tokens = count(usage.get("prompt_tokens"))
        state.completion_tokens = count(usage.get("completion_tokens"))
        details = usage.get("completion_tokens_details")
        reasoning = details.get("reasoning_tokens") if type(details) is dict else None
        if reasoning is None:
            reasoning = usage.get("reasoning_tokens")
        state.reasoning_tokens = count(reasoning)
        prompt_details = usage.get("prompt_tokens_details")
        cached = prompt_details.get("cached_tokens") if type(prompt_details) is dict else None
        state.cached_tokens = count(cached)


def chat_chunk(state: StreamState, choices: Any, out: list[StreamEvent]) -> bool:
    """The choices of an OpenAI chunk: text, reasoning, tool-call deltas and finish reasons,
    each with its choice's index."""
    if type(choices) is not list:
        return False
    for choice in choices:
        if type(choice) is not dict:
            continue
        index = choice.get("index")
        number = index if type(index) is int and index > 0 else 0
        if number:
            state.choice_seen(number)
        delta = choice.get("delta")
        logprobs = None
        if type(delta) is dict:
            text = delta.get("content")
            logprobs = choice.get("logprobs")
        else:  # a completions chunk, or a whole chat.completion's message
            delta = choice.get("message")
            if type(delta) is not dict:
                delta = {}
            text = delta.get("content") or choice.get("text")
            if "message" not in choice:
                logprobs = choice.get("logprobs")
        thought = delta.get("reasoning") or delta.get("reasoning_content")
        if thought and type(thought) is str:
            out.append(ReasoningEvent(thought, number))
        if text and type(text) is str:
            if logprobs is None and not number:
                out.append(token_event(text, None, None))
            else:
                log_prob, top = _chat_log_prob(logprobs)
                out.append(TokenEvent(text, None, log_prob, top, number))
            state.streamed_text = True
        calls = delta.get("tool_calls")
        if calls:
            state.tool_calls.add(calls, out, number)
        reason = choice.get("finish_reason")
        if reason is not None:
            failed = failed_finish(reason)
            if failed is not None:
                out.append(failed)
                return True
            state.finished(number, str_or_none(reason))
    return False


def _chat_log_prob(logprobs: Any) -> tuple[float | None, tuple[TopLogprob, ...] | None]:
    """Log-prob of a chunk's text (the sum over its tokens, usually exactly one), and its
    token's most likely alternatives when the engine sent them for a one-token chunk."""
    if type(logprobs) is list and len(logprobs) == 1:
        # DJL's jsonlines_chat formatter wraps the object in a one-element list (a trailing
        # comma makes it a tuple; deepjavalibrary/djl-serving:
        # djl_python/output_formatter.py at 76158f2a).
        logprobs = logprobs[0]
    if type(logprobs) is not dict:
        return None, None
    entries = logprobs.get("content")
    values: Any
    top = None
    if type(entries) is list and entries:
        values = [entry.get("logprob") if type(entry) is dict else None for entry in entries]
        if len(entries) == 1 and type(entries[0]) is dict:
            top = _top(entries[0].get("top_logprobs"))
    else:
        values = logprobs.get("token_logprobs")  # completions chunks
        if type(values) is not list or not values:
            return None, None
    total = 0.0
    for value in values:
        if type(value) is not float and type(value) is not int:
            return None, top
        total += value
    return total, top


def _top(entries: Any) -> tuple[TopLogprob, ...] | None:
    """``top_logprobs`` entries as (token, log-prob) pairs; None if absent or malformed."""
    if type(entries) is not list or not entries:
        return None
    pairs = []
    for entry in entries:
        if type(entry) is not dict:
            return None
        token, value = entry.get("token"), entry.get("logprob")
        if type(token) is not str or (type(value) is not float and type(value) is not int):
            return None
        pairs.append((token, float(value)))
    return tuple(pairs)
