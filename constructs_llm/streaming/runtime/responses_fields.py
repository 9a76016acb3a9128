"""What the runtime does with each top-level field of an OpenAI Responses request.

Stdlib only: this file ships in the Lambda asset. The fields are those of the ``openai``
SDK's ``ResponseCreateParams`` (openai 3.54.0), plus ``stream``. Each one is

- honoured: validated and served (``responses_request.py``),
- ignored, because it cannot change the answer (an identifier for OpenAI's abuse monitoring,
  a hint for OpenAI's prompt cache or processing tier),
- accepted only with a neutral value, which asks for nothing this gateway would have to do
  differently: the OpenAI Agents SDK (openai-agents 0.24.0, ``OpenAIResponsesModel.
  _build_response_create_kwargs``) always sends ``include`` (an empty list unless a tool or a
  setting asks for more), and sends ``store``, ``truncation``, ``reasoning``,
  ``context_management`` and the prompt-cache fields when its ``ModelSettings`` set them,
- or refused with a 400 naming it and saying why.

The gateway is stateless: it stores no response and no conversation. ``store: true``,
``previous_response_id``, ``conversation`` and ``background: true`` are refused with that
reason. OpenAI's default for ``store`` is true, but the openai SDK sends ``store`` only when
it is given, so an absent ``store`` is accepted: nothing is stored either way. A field outside
the schema is refused, as OpenAI's API does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .request_errors import RequestError

__all__ = [
    "HONOURED",
    "IGNORED",
    "NEUTRAL_ONLY",
    "NO_STORED_RESPONSES",
    "STATELESS",
    "check_fields",
]

STATELESS = (
    "this gateway keeps no state (it stores no response and no conversation); send the whole "
    "conversation in 'input' on every request, with the earlier output items (messages, "
    "function_call and function_call_output items) included"
)

NO_STORED_RESPONSES = (
    "this gateway stores no responses, so none can be retrieved, cancelled or deleted; "
    "POST /v1/responses is served"
)

HONOURED = frozenset(
    {
        "input",
        "instructions",
        "model",  # picks the route; echoed as the served model
        "stream",
        "stream_options",  # include_obfuscation only, which pads OpenAI's own events: ignored
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "text",
        "max_output_tokens",
        "temperature",
        "top_p",
        "metadata",  # echoed back
        "include",  # message.output_text.logprobs is served (see responses_request.py)
        "top_logprobs",  # 0 only
    }
)

IGNORED = {
    "user": "an end-user identifier for OpenAI's abuse monitoring",
    "safety_identifier": "an end-user identifier for OpenAI's abuse monitoring",
    "service_tier": "OpenAI's processing tier",
    "prompt_cache_key": "a hint for OpenAI's prompt cache",
    "prompt_cache_retention": "a hint for OpenAI's prompt cache",
    "prompt_cache_options": "a hint for OpenAI's prompt cache",
    "max_tool_calls": "a limit on calls to OpenAI's built-in tools, of which none is served",
}
"""Accepted and ignored: none of them can change the generated answer."""


def _absent(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _off(value: Any) -> bool:
    return value is None or value is False


def _not_truncated(value: Any) -> bool:
    return value is None or value == "disabled"


def _reasoning_neutral(value: Any) -> bool:
    """No reasoning configuration, or one that turns reasoning off (``effort: "none"``)."""
    if _absent(value):
        return True
    if not isinstance(value, dict):
        return False
    return all(v is None or (k == "effort" and v == "none") for k, v in value.items())


NEUTRAL_ONLY: dict[str, tuple[Callable[[Any], bool], str]] = {
    "store": (_off, STATELESS + "; send 'store': false or leave it out"),
    "previous_response_id": (_absent, STATELESS),
    "conversation": (_absent, STATELESS),
    "background": (
        _off,
        STATELESS + ", so a response cannot run in the background and be fetched later; leave "
        "'background' out",
    ),
    "background_options": (_absent, STATELESS + "; leave 'background_options' out"),
    "truncation": (
        _not_truncated,
        "the gateway does not truncate the input: an input longer than the model's context "
        "gets the engine's 400; send 'disabled' or leave it out",
    ),
    "reasoning": (
        _reasoning_neutral,
        "the engines here take no reasoning configuration; leave 'reasoning' out (or send "
        "effort 'none')",
    ),
    "context_management": (_absent, "the gateway does not compact the input; leave it out"),
    "prompt": (
        _absent,
        "prompt templates are stored by OpenAI, and this gateway keeps none; send the prompt "
        "in 'instructions' and 'input'",
    ),
    "moderation": (_absent, "the runtime runs no moderation model"),
    "image": (_absent, "the runtime relays text only (no image input)"),
    "access_programs": (_absent, "OpenAI's access programs do not apply to this model"),
}
"""Accepted only with a neutral value (null, false or empty unless said otherwise), else a
400 with the reason."""


def check_fields(data: dict[str, Any]) -> None:
    """Raise ``RequestError`` for a field set to what is refused, or a field outside the schema."""
    for name, value in data.items():
        if name in HONOURED or name in IGNORED:
            continue
        rule = NEUTRAL_ONLY.get(name)
        if rule is None:
            raise RequestError(
                f"unrecognized request argument supplied: '{name}'; this endpoint serves the "
                "OpenAI Responses fields only",
                param=name,
                code="unknown_parameter",
            )
        neutral, why = rule
        if not neutral(value):
            raise RequestError(
                f"'{name}' {_shown(value)} is not supported by this endpoint: {why}",
                param=name,
                code="unsupported_parameter",
            )


def _shown(value: Any) -> str:
    """``value`` as the client wrote it (JSON), cut to a readable length."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
