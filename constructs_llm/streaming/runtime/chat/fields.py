"""Every top-level field of an OpenAI Chat Completions request, one row each: how it is checked,
and what each engine receives. Adding a field is adding a row.

Stdlib only: this file ships in the Lambda asset. The fields are those of the ``openai`` SDK's
``CompletionCreateParams`` (openai 3.54.0), plus ``stream``. Every one is either honoured
(checked, then sent to the engine or answered by the runtime itself), accepted and ignored
because it cannot change the answer, or refused with a 400 naming it, so a client never gets a
silently different answer. A field outside the schema is refused too, as OpenAI's API does.

A row's ``check`` takes a value that is set (not null), with the request's ``Context``, and
returns what the engine gets (None: nothing); it raises ``RequestError`` naming the field.
``messages`` is the field's name in a messages-API body (TGI's Messages API, vLLM, SGLang,
LMI's chat): the value goes there under that name. ``generate`` is what the generate API's
``parameters`` get (``{"inputs", "parameters"}``, TGI's and LMI's): a parameter name, or a
function of the value giving the parameters; ``generate_refused`` says why the generate API
cannot take it. ``chat/request.py`` walks the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..http.errors import RequestError, unsupported
from .messages import checked_messages
from .response_format import engine_response_format
from .target import ChatTarget
from .tools import checked_parallel, checked_tool_choice, checked_tools
from .values import boolean, integer, number, stop_sequences, string, token_count

__all__ = ["FIELDS", "ChatField", "Context"]


@dataclass(frozen=True)
class Context:
    """What a row's check may read beyond its value: the whole request, the values checked
    before it (by field name), and the engine the request goes to."""

    data: dict[str, Any]
    target: ChatTarget
    values: dict[str, Any] = field(default_factory=dict)


Check = Callable[[Any, Context], Any]


@dataclass(frozen=True, kw_only=True)
class ChatField:
    """One top-level field of a chat request.

    :param name: its name in the request.
    :param check: checks a value that is set; returns what is sent (None: nothing).
        @default None: the field is ignored or refused
    :param required: a request without it is a 400. @default False
    :param messages: its name in a messages-API body. @default None (not sent as such)
    :param generate: the generate API's parameter name, or a function of the value giving
        the parameters. @default None (not sent)
    :param generate_refused: why the generate API cannot take it. @default None
    :param ignored: why it is accepted and ignored (it cannot change the answer).
    :param refused: why it is refused (a 400 when set to anything but null or empty).
    """

    name: str
    check: Check | None = None
    required: bool = False
    messages: str | None = None
    generate: str | Callable[[Any], dict[str, Any]] | None = None
    generate_refused: str | None = None
    ignored: str | None = None
    refused: str | None = None


# -- checks ----------------------------------------------------------------------------------


def _one_choice(value: Any, ctx: Context) -> None:
    if isinstance(value, bool) or value != 1:
        raise RequestError(
            f"only n=1 is supported (got {value!r}); send separate requests for several choices",
            param="n",
            code="unsupported_parameter",
        )


def _text_only(value: Any, ctx: Context) -> None:
    if value != ["text"]:
        raise unsupported(
            "modalities",
            f"the runtime answers with text only (got {value!r}); send ['text'] or leave it out",
        )


def _messages(value: Any, ctx: Context) -> list[dict[str, Any]]:
    return checked_messages(value, ctx.target)


_STREAM_OPTIONS = frozenset({"include_usage", "include_obfuscation"})


def _stream_options(value: Any, ctx: Context) -> bool:
    """``include_usage``: end the stream with the usage chunk. ``include_obfuscation`` pads
    OpenAI's own chunks; it cannot change the answer: ignored. Needs ``stream: true``."""
    if not ctx.values.get("stream"):
        raise RequestError(
            "'stream_options' is only allowed with 'stream': true", param="stream_options"
        )
    if not isinstance(value, dict):
        raise RequestError("'stream_options' must be an object", param="stream_options")
    for key in value:
        if key not in _STREAM_OPTIONS:
            raise RequestError(
                f"unrecognized stream option 'stream_options.{key}'",
                param=f"stream_options.{key}",
                code="unknown_parameter",
            )
    usage = value.get("include_usage")
    return usage is not None and boolean(usage, "stream_options.include_usage")


def _tokens(name: str) -> Check:
    return lambda value, ctx: token_count(value, name, ctx.target.max_total_tokens)


def _between(name: str, low: float, high: float) -> Check:
    return lambda value, ctx: number(value, name, low, high)


def _logprobs(value: Any, ctx: Context) -> bool | None:
    """True is sent (the sampled token's log-probability); False is the default."""
    return True if boolean(value, "logprobs") else None


def _top_logprobs(value: Any, ctx: Context) -> None:
    count = integer(value, "top_logprobs", minimum=0, maximum=20)
    if count:
        raise RequestError(
            f"'top_logprobs' > 0 is not supported (got {count}): the runtime relays only the "
            "sampled token's log-probability; use 'logprobs': true alone",
            param="top_logprobs",
            code="unsupported_parameter",
        )
    if not ctx.values.get("logprobs"):
        raise RequestError("'top_logprobs' requires 'logprobs': true", param="top_logprobs")


def _response_format(value: Any, ctx: Context) -> dict[str, Any] | None:
    return engine_response_format(value, generate=ctx.target.generate)


# -- what the generate API takes -------------------------------------------------------------


def _tgi_temperature(value: float) -> dict[str, Any]:
    """TGI rejects temperature 0: 0 means greedy (no sampling)."""
    if value > 0:
        return {"do_sample": True, "temperature": value}
    return {"do_sample": False}


def _tgi_top_p(value: float) -> dict[str, Any]:
    """TGI rejects top_p 1, which means "no nucleus filter": sent only below 1 (and above 0)."""
    return {"top_p": value} if 0 < value < 1 else {}


_ABUSE_MONITORING = "an end-user identifier for OpenAI's abuse monitoring"
_PROMPT_CACHE = "a hint for OpenAI's prompt cache"

FIELDS: tuple[ChatField, ...] = (
    ChatField(name="n", check=_one_choice),
    ChatField(name="modalities", check=_text_only),
    ChatField(name="messages", check=_messages, required=True),
    ChatField(name="stream", check=lambda value, ctx: boolean(value, "stream")),
    ChatField(name="stream_options", check=_stream_options),
    ChatField(name="model", check=lambda value, ctx: string(value, "model")),
    ChatField(
        name="max_tokens",
        check=_tokens("max_tokens"),
        messages="max_tokens",
        generate="max_new_tokens",
    ),
    ChatField(  # after max_tokens: when both are set, it wins
        name="max_completion_tokens",
        check=_tokens("max_completion_tokens"),
        messages="max_tokens",
        generate="max_new_tokens",
    ),
    # The generate streams always carry token log-probs (TGI token.logprob, LMI
    # token.log_prob), so the generate API needs no parameter for them.
    ChatField(name="logprobs", check=_logprobs, messages="logprobs"),
    ChatField(name="top_logprobs", check=_top_logprobs),  # 0 only
    ChatField(
        name="temperature",
        check=_between("temperature", 0.0, 2.0),
        messages="temperature",
        generate=_tgi_temperature,
    ),
    ChatField(
        name="top_p", check=_between("top_p", 0.0, 1.0), messages="top_p", generate=_tgi_top_p
    ),
    ChatField(
        name="stop",
        check=lambda value, ctx: stop_sequences(value, "stop"),
        messages="stop",
        generate="stop",
    ),
    ChatField(
        name="seed",
        check=lambda value, ctx: integer(value, "seed"),
        messages="seed",
        generate="seed",
    ),
    ChatField(  # TGI and LMI take it in their generate parameters, in OpenAI's -2..2 range
        name="frequency_penalty",
        check=_between("frequency_penalty", -2.0, 2.0),
        messages="frequency_penalty",
        generate="frequency_penalty",
    ),
    ChatField(
        name="presence_penalty",
        check=_between("presence_penalty", -2.0, 2.0),
        messages="presence_penalty",
        generate_refused="the generate API (REQUEST_FORMAT=generate) has no presence penalty "
        "(TGI's generate parameters do not take it); use frequency_penalty, or a messages API",
    ),
    ChatField(
        name="tools", check=lambda value, ctx: checked_tools(value, ctx.target), messages="tools"
    ),
    ChatField(
        name="tool_choice",
        check=lambda value, ctx: checked_tool_choice(value, ctx.values.get("tools")),
        messages="tool_choice",
    ),
    ChatField(
        name="parallel_tool_calls",
        check=lambda value, ctx: checked_parallel(value, ctx.values.get("tools")),
        messages="parallel_tool_calls",
    ),
    ChatField(name="response_format", check=_response_format, messages="response_format"),
    ChatField(name="user", ignored=_ABUSE_MONITORING),
    ChatField(name="safety_identifier", ignored=_ABUSE_MONITORING),
    ChatField(name="metadata", ignored="tags for stored completions"),
    ChatField(name="store", ignored="OpenAI's completion storage"),
    ChatField(name="service_tier", ignored="OpenAI's processing tier"),
    ChatField(name="prompt_cache_key", ignored=_PROMPT_CACHE),
    ChatField(name="prompt_cache_retention", ignored=_PROMPT_CACHE),
    ChatField(name="prompt_cache_options", ignored=_PROMPT_CACHE),
    ChatField(name="audio", refused="the runtime relays text only (no audio output)"),
    ChatField(
        name="prediction",
        refused="predicted outputs are an OpenAI latency feature no engine here serves",
    ),
    ChatField(
        name="functions", refused="use 'tools' (the deprecated function-calling API is not served)"
    ),
    ChatField(
        name="function_call",
        refused="use 'tool_choice' (the deprecated function-calling API is not served)",
    ),
    ChatField(
        name="logit_bias",
        refused="not every engine applies it (TGI accepts and ignores it), so it is refused",
    ),
    ChatField(
        name="reasoning_effort",
        refused="the engines pass it to the chat template, if at all; it is refused rather "
        "than silently ignored",
    ),
    ChatField(name="verbosity", refused="no engine here serves it"),
    ChatField(name="web_search_options", refused="the model has no web search"),
    ChatField(name="moderation", refused="the runtime runs no moderation model"),
)
"""The table, in the order the fields are checked."""
