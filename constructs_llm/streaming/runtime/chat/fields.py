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

**The engine decides what passes.** ``engines`` names the engines that honour a field; a value
that asks for something (its check returned a value to send) reaches only those, and any other
engine's request gets a 400 naming the field and the engine. A field without ``engines`` is
honoured by every engine, and so by a route whose engine is not known (a custom image, an
endpoint deployed elsewhere), which is refused the rest. Each engine's own request schema:

- vLLM (and DJL LMI's vLLM backend, whose async service builds vLLM's own
  ``ChatCompletionRequest`` from the body: deepjavalibrary/djl-serving:
  ``engines/python/setup/djl_python/lmi_vllm/vllm_async_service.py``):
  vllm-project/vllm: ``vllm/entrypoints/openai/chat_completion/protocol.py``,
  ``ChatCompletionRequest`` (``n``, ``logit_bias``, ``top_logprobs``, ``reasoning_effort``,
  ``top_k``, ``min_p``, ``repetition_penalty``, ``chat_template_kwargs``).
- SGLang: sgl-project/sglang: ``python/sglang/srt/entrypoints/openai/protocol.py``,
  ``ChatCompletionRequest`` (the same fields).
- TGI (and TGI NeuronX, the same router): huggingface/text-generation-inference:
  ``router/src/lib.rs``, ``ChatRequest``: ``top_logprobs`` (its ``top_n_tokens``); ``n`` and
  ``logit_bias`` are documented "UNUSED" (read and ignored), and the others are not fields
  at all (serde drops them), so each is a 400 here rather than a silently different answer.
- LMI's TensorRT-LLM backend and unknown engines: the fields every engine honours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...formats import EngineName
from ..http.errors import RequestError, unsupported
from .messages import checked_messages
from .response_format import engine_response_format
from .target import ChatTarget
from .tools import checked_parallel, checked_tool_choice, checked_tools
from .values import boolean, integer, number, stop_sequences, stream_options, string, token_count


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
    :param engines: the engines that honour a value of it that asks for something.
        @default None: every engine
    :param unused_by: engines that read it and ignore it, and what they do instead (a 400
        says so). @default none
    :param ignored: why it is accepted and ignored (it cannot change the answer).
    :param refused: why it is refused (a 400 when set to anything but null or empty).
    """

    name: str
    check: Check | None = None
    required: bool = False
    messages: str | None = None
    generate: str | Callable[[Any], dict[str, Any]] | None = None
    generate_refused: str | None = None
    engines: frozenset[EngineName] | None = None
    unused_by: str | None = None
    ignored: str | None = None
    refused: str | None = None


# -- checks ----------------------------------------------------------------------------------


def _choices(value: Any, ctx: Context) -> int | None:
    """``n``: 1 (the default) is not sent; more choices only to engines that generate them,
    at most 128 (OpenAI's limit)."""
    count = integer(value, "n", minimum=1, maximum=_MAX_CHOICES)
    return None if count == 1 else count


_MAX_CHOICES = 128


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
    options = stream_options(
        value, streaming=bool(ctx.values.get("stream")), options=_STREAM_OPTIONS
    )
    return bool(options.get("include_usage"))


def _tokens(name: str) -> Check:
    return lambda value, ctx: token_count(value, name, ctx.target.max_total_tokens)


def _between(name: str, low: float, high: float) -> Check:
    return lambda value, ctx: number(value, name, low, high)


def _logprobs(value: Any, ctx: Context) -> bool | None:
    """True is sent (the sampled token's log-probability); False is the default."""
    return True if boolean(value, "logprobs") else None


def _top_logprobs(value: Any, ctx: Context) -> int | None:
    """0 (the default) is not sent; 1 to 20 (OpenAI's range) to engines that give them."""
    count = integer(value, "top_logprobs", minimum=0, maximum=20)
    if not ctx.values.get("logprobs"):
        raise RequestError("'top_logprobs' requires 'logprobs': true", param="top_logprobs")
    return count or None


def _logit_bias(value: Any, ctx: Context) -> dict[str, float] | None:
    """Token ids (as strings) to a bias from -100 to 100, as OpenAI's API takes them."""
    if not isinstance(value, dict):
        raise RequestError(
            "'logit_bias' must be an object of token ids to biases", param="logit_bias"
        )
    for key, bias in value.items():
        if not (isinstance(key, str) and key.isascii() and key.isdecimal()):
            raise RequestError(
                f"'logit_bias' keys must be token ids (digits), got {key[:40]!r}",
                param="logit_bias",
            )
        number(bias, f"logit_bias.{key}", -100.0, 100.0)
    return value or None


_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


def _reasoning_effort(value: Any, ctx: Context) -> str | None:
    """One of OpenAI's efforts (the ``openai`` SDK's ``ReasoningEffort``). ``none`` asks an
    engine that is not known for nothing it could be doing: accepted, and not sent."""
    if value not in _EFFORTS:
        raise RequestError(
            f"'reasoning_effort' must be one of {', '.join(_EFFORTS)}, got {value!r:.60}",
            param="reasoning_effort",
        )
    if value == "none" and ctx.target.engine is None:
        return None
    return str(value)


def _template_kwargs(value: Any, ctx: Context) -> dict[str, Any] | None:
    """Keyword arguments for the model's chat template, such as Qwen3's
    ``{"enable_thinking": false}``."""
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise RequestError(
            "'chat_template_kwargs' must be an object of keyword arguments for the chat "
            'template, such as {"enable_thinking": false}',
            param="chat_template_kwargs",
        )
    return value or None


def _top_k(value: Any, ctx: Context) -> int:
    """-1 or 0 keep every token (vLLM and SGLang alike); else the k most likely."""
    return integer(value, "top_k", minimum=-1)


def _repetition_penalty(value: Any, ctx: Context) -> float:
    """Above 0: below 1 favours repeats, above 1 penalizes them (vLLM's and SGLang's range)."""
    penalty = number(value, "repetition_penalty", 0.0, _MAX_PENALTY)
    if penalty <= 0:
        raise RequestError(
            f"'repetition_penalty' must be above 0 (1 is none), got {value}",
            param="repetition_penalty",
        )
    return penalty


_MAX_PENALTY = 1e6


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


#: vLLM, LMI's vLLM backend and SGLang: the engines with vLLM's and SGLang's extra fields.
_OPEN_ENGINES = frozenset({EngineName.VLLM, EngineName.LMI_VLLM, EngineName.SGLANG})
#: ... and TGI, whose router takes top_logprobs as its top_n_tokens.
_TOP_LOGPROBS_ENGINES = _OPEN_ENGINES | {EngineName.TGI, EngineName.TGI_NEURONX}
_GENERATE_NONE = (
    "the generate API (REQUEST_FORMAT=generate) does not take it here; deploy the model with "
    "a messages (chat) API"
)
_TGI_UNUSED = 'TGI reads it and ignores it ("UNUSED" in its router\'s ChatRequest)'


def _open_field(name: str, check: Check, *, unused_by: str | None = None) -> ChatField:
    """One of vLLM's and SGLang's extra fields, honoured by ``_OPEN_ENGINES`` only: sent under
    its own name in a messages-API body, refused by the generate API."""
    return ChatField(
        name=name,
        check=check,
        messages=name,
        engines=_OPEN_ENGINES,
        unused_by=unused_by,
        generate_refused=_GENERATE_NONE,
    )


_ABUSE_MONITORING = "an end-user identifier for OpenAI's abuse monitoring"
_PROMPT_CACHE = "a hint for OpenAI's prompt cache"

FIELDS: tuple[ChatField, ...] = (
    _open_field("n", _choices, unused_by=_TGI_UNUSED),
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
    ChatField(
        name="top_logprobs",
        check=_top_logprobs,
        messages="top_logprobs",
        engines=_TOP_LOGPROBS_ENGINES,
        generate_refused=_GENERATE_NONE,
    ),
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
    _open_field("logit_bias", _logit_bias, unused_by=_TGI_UNUSED),
    _open_field("top_k", _top_k),
    _open_field("min_p", _between("min_p", 0.0, 1.0)),
    _open_field("repetition_penalty", _repetition_penalty),
    _open_field("reasoning_effort", _reasoning_effort),
    _open_field("chat_template_kwargs", _template_kwargs),
    ChatField(name="user", ignored=_ABUSE_MONITORING),
    ChatField(name="safety_identifier", ignored=_ABUSE_MONITORING),
    ChatField(name="metadata", ignored="tags for stored completions"),
    ChatField(name="store", ignored="OpenAI's completion storage"),
    ChatField(name="service_tier", ignored="OpenAI's processing tier"),
    ChatField(  # SageMaker's prefix-aware routing id, not a body field (prefix_aware_id.py)
        name="prompt_cache_key", check=lambda value, ctx: string(value, "prompt_cache_key")
    ),
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
    ChatField(name="verbosity", refused="no engine here serves it"),
    ChatField(name="web_search_options", refused="the model has no web search"),
    ChatField(name="moderation", refused="the runtime runs no moderation model"),
)
"""The table, in the order the fields are checked."""
