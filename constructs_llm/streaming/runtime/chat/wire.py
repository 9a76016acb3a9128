"""The values OpenAI's chat wire objects share, streamed or not: ids, finish reasons, usage,
a token's log-probability entry, reasoning, and an SSE event. Stdlib only: this file ships in
the Lambda asset.

Finish reasons are the engine's, in OpenAI's words (TGI's ``eos_token`` is ``stop``). A reply
whose model chose to call tools (``tool_choice`` ``auto`` or ``required``) and stopped
normally finishes with ``tool_calls``, as vLLM, SGLang and OpenAI report it (TGI says
``stop``); with a named ``tool_choice`` the call was not the model's choice, and the reason
stays ``stop``, as vLLM and OpenAI report it.

Reasoning goes out under one name, ``reasoning`` unless ``REASONING_FIELD`` says otherwise
(``formats.ReasoningField``). ``reasoning`` is vLLM's since 0.25 (vllm-project/vllm:
``vllm/entrypoints/openai/engine/protocol.py``, ``DeltaMessage.reasoning``), and current
clients read it: LiteLLM maps it to its ``reasoning_content`` itself (BerriAI/litellm:
``litellm/llms/openai/chat/gpt_transformation.py``,
``OpenAIChatCompletionStreamingHandler._map_reasoning_to_reasoning_content``, and
BerriAI/litellm: ``litellm/types/utils.py``, ``Delta.__init__``; a whole message through
``extract_reasoning_content`` in BerriAI/litellm:
``litellm/litellm_core_utils/prompt_templates/common_utils.py``),
LangChain's ``ChatDeepSeek`` falls back to it (langchain-ai/langchain:
``libs/partners/deepseek/langchain_deepseek/chat_models.py``, ``reasoning_content`` first), and
the OpenAI Agents SDK reads it as the reasoning item's text (openai/openai-agents-python:
``src/agents/models/chatcmpl_stream_handler.py`` and openai/openai-agents-python:
``src/agents/models/chatcmpl_converter.py``).
``reasoning_content``, SGLang's (sgl-project/sglang:
``python/sglang/srt/entrypoints/openai/protocol.py``) and older vLLM's, is the only name older
clients read (LiteLLM before its mapping, ``langchain-deepseek`` before its fallback). Both
names at once make the Agents SDK's streamed chat model read the thinking twice (the first as
its reasoning summary, the second as its text), so ``both`` is for a mix of clients that
cannot agree. LangChain's ``ChatOpenAI`` reads neither (langchain-ai/langchain:
``libs/partners/openai/langchain_openai/chat_models/base.py``: non-standard fields are not
extracted). Usage carries ``completion_tokens_details.reasoning_tokens`` and
``prompt_tokens_details.cached_tokens`` when the engine counted them, and leaves each out
when it did not (both are optional in OpenAI's ``CompletionUsage``): a 0 would claim that no
token was reasoned or cached.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from ...formats import ReasoningField
from ..parsing.events import DoneEvent, TokenEvent

DONE = b"data: [DONE]\n\n"


def new_completion_id() -> str:
    return "chatcmpl-" + os.urandom(12).hex()


def _now() -> int:
    return int(time.time())


@dataclass(frozen=True, kw_only=True)
class CompletionShape:
    """What each chunk or the completion of one answer repeats, and how it is written.

    :param completion_id: its ``id``. @default a new one
    :param created: its ``created`` time (seconds). @default now
    :param model: the served model's name.
    :param logprobs: whether tokens carry their log-probabilities. @default False
    :param chose_tools: whether the model chose its tool calls (``tool_choice`` ``auto`` or
        ``required``, not a named function), so a reply with calls that stopped normally
        finishes with ``tool_calls``. @default True
    :param reasoning_field: the name(s) reasoning is written under.
        @default ``ReasoningField.REASONING``
    """

    completion_id: str = field(default_factory=new_completion_id)
    created: int = field(default_factory=_now)
    model: str
    logprobs: bool = False
    chose_tools: bool = True
    reasoning_field: ReasoningField = ReasoningField.REASONING


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
    which is ``"tool_calls"`` when the model chose to make tool calls (``tool_calls``)."""
    reason = _FINISH_REASONS.get(raw or "stop", "stop")
    return "tool_calls" if tool_calls and reason == "stop" else reason


def new_tool_call_id() -> str:
    """An id for a tool call whose engine gave none (OpenAI's ``call_`` form)."""
    return "call_" + os.urandom(12).hex()


# json.dumps(obj, separators=(",", ":")) without a new encoder per event: the same settings,
# so the same bytes (an encoder keeps no state between calls).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def sse(obj: Any) -> bytes:
    """One server-sent event carrying ``obj`` as compact JSON."""
    return b"data: " + _COMPACT.encode(obj).encode() + b"\n\n"


def usage_object(done: DoneEvent) -> dict[str, Any] | None:
    """OpenAI's ``usage`` object, or None unless the engine reported both counts: the SDK's
    ``CompletionUsage`` requires all three as integers, and a guess would mislead billing.
    ``completion_tokens_details.reasoning_tokens`` and ``prompt_tokens_details.cached_tokens``
    only when the engine counted them."""
    prompt, completion = done.prompt_tokens, done.completion_tokens
    if prompt is None or completion is None:
        return None
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if done.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": done.reasoning_tokens}
    if done.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": done.cached_tokens}
    return usage


def reasoning_delta(text: str, field: ReasoningField) -> dict[str, str]:
    """Reasoning under the name(s) ``field`` gives (see the module docstring)."""
    return dict.fromkeys(field.names, text)


def logprob_entry(event: TokenEvent) -> dict[str, Any]:
    """A token's log-probability, and its most likely alternatives when the engine gave them,
    as ``ChatCompletionTokenLogprob`` (and Responses' ``Logprob``) lists them."""
    top = event.top_logprobs or ()
    return {
        "token": event.text,
        "logprob": event.log_prob,
        "bytes": list(event.text.encode()),
        "top_logprobs": [
            {"token": token, "logprob": value, "bytes": list(token.encode())}
            for token, value in top
        ],
    }


def logprobs_object(event: TokenEvent) -> dict[str, Any] | None:
    """A chunk's ``logprobs``: its token's entry, or None when the engine gave no log-prob."""
    if event.log_prob is None:
        return None
    return {"content": [logprob_entry(event)], "refusal": None}
