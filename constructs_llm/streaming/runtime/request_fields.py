"""What the runtime does with each field of an OpenAI Chat Completions request.

Stdlib only: this file ships in the Lambda asset. The fields are those of the ``openai``
SDK's ``CompletionCreateParams`` (openai 3.54.0), plus ``stream``. Every one is either
honoured (validated in ``requests.py`` and sent to the engine, or answered by the runtime
itself), accepted and ignored because it cannot change the answer, or refused with a 400
naming it, so a client never gets a silently different answer. A field outside the schema
is refused too, as OpenAI's API does.
"""

from __future__ import annotations

from typing import Any

from .request_errors import RequestError, unsupported

__all__ = ["HONOURED", "IGNORED", "REFUSED", "check_fields"]

HONOURED = frozenset(
    {
        "messages",
        "model",  # echoed as the served model; one endpoint serves one model
        "stream",
        "stream_options",
        "max_completion_tokens",
        "max_tokens",
        "temperature",
        "top_p",
        "stop",
        "seed",
        "frequency_penalty",
        "presence_penalty",
        "logprobs",
        "top_logprobs",  # 0 only
        "n",  # 1 only
        "modalities",  # ["text"] only
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
    }
)

IGNORED = {
    "user": "an end-user identifier for OpenAI's abuse monitoring",
    "safety_identifier": "an end-user identifier for OpenAI's abuse monitoring",
    "metadata": "tags for stored completions",
    "store": "OpenAI's completion storage",
    "service_tier": "OpenAI's processing tier",
    "prompt_cache_key": "a hint for OpenAI's prompt cache",
    "prompt_cache_retention": "a hint for OpenAI's prompt cache",
    "prompt_cache_options": "a hint for OpenAI's prompt cache",
}
"""Accepted and ignored: none of them can change the generated answer."""

REFUSED = {
    "audio": "the runtime relays text only (no audio output)",
    "prediction": "predicted outputs are an OpenAI latency feature no engine here serves",
    "functions": "use 'tools' (the deprecated function-calling API is not served)",
    "function_call": "use 'tool_choice' (the deprecated function-calling API is not served)",
    "logit_bias": "not every engine applies it (TGI accepts and ignores it), so it is refused",
    "reasoning_effort": "the engines pass it to the chat template, if at all; it is refused "
    "rather than silently ignored",
    "verbosity": "no engine here serves it",
    "web_search_options": "the model has no web search",
    "moderation": "the runtime runs no moderation model",
}
"""Refused with a 400 when set (a null or empty value asks for nothing and is accepted)."""


def check_fields(data: dict[str, Any]) -> None:
    """Raise ``RequestError`` for a refused field that is set, or a field outside the schema."""
    for name, value in data.items():
        if name in HONOURED or name in IGNORED:
            continue
        if name in REFUSED:
            if value is None or value == [] or value == {} or value == "":
                continue
            raise unsupported(name, REFUSED[name])
        raise RequestError(
            f"unrecognized request argument supplied: '{name}'; this endpoint serves the "
            "OpenAI Chat Completions fields only",
            param=name,
            code="unknown_parameter",
        )
