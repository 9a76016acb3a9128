"""Every top-level field of an OpenAI Responses request, one row each: how it is checked, the
chat fields it becomes (which ``chat/fields.py`` checks again and turns into what each engine
receives), and how the ``response`` object states it. Adding a field is adding a row.

Stdlib only: this file ships in the Lambda asset. The fields are those of the ``openai`` SDK's
``ResponseCreateParams`` (openai 3.54.0), plus ``stream``. Each one is

- honoured: checked and served (``check``, ``chat``),
- ignored, because it cannot change the answer (an identifier for OpenAI's abuse monitoring,
  a hint for OpenAI's prompt cache or processing tier),
- accepted only with a neutral value (``neutral``), which asks for nothing this gateway would
  have to do differently: the OpenAI Agents SDK (openai-agents 0.24.0,
  ``OpenAIResponsesModel._build_response_create_kwargs``) always sends ``include`` (an empty
  list unless a tool or a setting asks for more), and sends ``store``, ``truncation``,
  ``reasoning``, ``context_management`` and the prompt-cache fields when its ``ModelSettings``
  set them,
- or refused with a 400 naming it and saying why.

The gateway is stateless: it stores no response and no conversation. ``store: true``,
``previous_response_id``, ``conversation`` and ``background: true`` are refused with that
reason. OpenAI's default for ``store`` is true, but the openai SDK sends ``store`` only when
it is given, so an absent ``store`` is accepted: nothing is stored either way. A field outside
the schema is refused, as OpenAI's API does.

A row's ``check`` takes a value that is set (not null) with the request's ``Context`` and
returns it checked; ``chat`` turns the checked value into chat fields (a name: the same value
under that name); ``echo`` gives the ``response`` object's field from the value as sent and as
checked (both None when it is absent), or ``OMIT``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..chat.values import boolean, integer, stream_options
from ..http.errors import RequestError, unsupported, unsupported_value
from .input import Conversation, conversation
from .stateless import STATELESS
from .tools import chat_tool_fields

_LOGPROBS = "message.output_text.logprobs"
_ENCRYPTED_REASONING = "reasoning.encrypted_content"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_METADATA = 16
_SCHEMA_KEYS = frozenset({"type", "name", "schema", "strict", "description"})

OMIT = object()
"""What an ``echo`` returns for a field the ``response`` object leaves out."""


@dataclass(frozen=True)
class Context:
    """What a row's check may read beyond its value: the whole request, and the values
    checked before it (by field name)."""

    data: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict)


Check = Callable[[Any, Context], Any]
_Echo = Callable[[Any, Any], Any]


@dataclass(frozen=True, kw_only=True)
class ResponsesField:
    """One top-level field of a Responses request.

    :param name: its name in the request.
    :param check: checks a value that is set; returns it checked. @default None: passed on
        as given (the chat field's check judges it) or ignored
    :param always: its check runs when it is absent too. @default False
    :param chat: the chat fields the checked value becomes: a chat field's name, or a function
        giving the fields. @default None (none)
    :param echo: the ``response`` object's field from the value as sent and as checked.
        @default None (not stated)
    :param ignored: why it is accepted and ignored (it cannot change the answer).
    :param neutral: accepted only when this is true of its value; ``why`` says why not.
    :param why: why a value that is not neutral is refused.
    """

    name: str
    check: Check | None = None
    always: bool = False
    chat: str | Callable[[Any], dict[str, Any]] | None = None
    echo: _Echo | None = None
    ignored: str | None = None
    neutral: Callable[[Any], bool] | None = None
    why: str = ""


# -- checks ----------------------------------------------------------------------------------


def _input(value: Any, ctx: Context) -> Conversation:
    return conversation(value, ctx.data.get("instructions"))


_STREAM_OPTIONS = frozenset({"include_obfuscation"})


def _stream_options(value: Any, ctx: Context) -> None:
    """Only ``include_obfuscation``, which pads OpenAI's own events: nothing to do here."""
    stream_options(value, streaming=bool(ctx.values.get("stream")), options=_STREAM_OPTIONS)


def _tools(value: Any, ctx: Context) -> dict[str, Any]:
    """``tools``, ``tool_choice`` and ``parallel_tool_calls`` as the chat fields."""
    return chat_tool_fields(ctx.data)


def _text(value: Any, ctx: Context) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The chat ``response_format`` for ``text`` (None for plain text), and ``text.format``
    as the response states it."""
    plain = {"type": "text"}
    if not isinstance(value, dict):
        raise RequestError("'text' must be an object", param="text")
    for key, setting in value.items():
        if key == "verbosity" and setting is not None:
            raise unsupported("text.verbosity", "no engine here serves it")
        if key not in ("format", "verbosity"):
            raise RequestError(
                f"unrecognized field 'text.{key}'", param=f"text.{key}", code="unknown_parameter"
            )
    spec = value.get("format")
    if spec is None:
        return None, plain
    if not isinstance(spec, dict):
        raise RequestError("'text.format' must be an object", param="text.format")
    kind = spec.get("type")
    if kind in ("text", "json_object"):
        extra = sorted(set(spec) - {"type"})
        if extra:
            raise RequestError(
                f"unrecognized field 'text.format.{extra[0]}' of a {kind!r} format",
                param=f"text.format.{extra[0]}",
                code="unknown_parameter",
            )
        return (None if kind == "text" else {"type": "json_object"}), {"type": kind}
    if kind != "json_schema":
        raise RequestError(
            f"'text.format.type' must be 'text', 'json_schema' or 'json_object', got {kind!r}",
            param="text.format.type",
        )
    return _json_schema(spec), spec


def _json_schema(spec: dict[str, Any]) -> dict[str, Any]:
    extra = sorted(set(spec) - _SCHEMA_KEYS)
    if extra:
        raise RequestError(
            f"unrecognized field 'text.format.{extra[0]}' of a 'json_schema' format",
            param=f"text.format.{extra[0]}",
            code="unknown_parameter",
        )
    name, schema = spec.get("name"), spec.get("schema")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RequestError(
            f"'text.format.name' must be 1-64 letters, digits, '_' or '-', got {name!r}",
            param="text.format.name",
        )
    if not isinstance(schema, dict):
        raise RequestError(
            "'text.format.schema' must be a JSON Schema object: the engines constrain the "
            "output to it",
            param="text.format.schema",
        )
    for key, kind in (("strict", bool), ("description", str)):
        if spec.get(key) is not None and not isinstance(spec[key], kind):
            raise RequestError(
                f"'text.format.{key}' must be a {kind.__name__}", param=f"text.format.{key}"
            )
    chat_spec = {k: v for k, v in spec.items() if k != "type" and v is not None}
    return {"type": "json_schema", "json_schema": chat_spec}


def _include(value: Any, ctx: Context) -> bool:
    """Whether ``include`` asks for output text log-probabilities; other values refused."""
    if not isinstance(value, list):
        raise RequestError("'include' must be an array", param="include")
    for index, item in enumerate(value):
        if item not in (_LOGPROBS, _ENCRYPTED_REASONING):
            raise unsupported_value(
                f"'include[{index}]' {item!r} is not supported by this endpoint: it names "
                "output of OpenAI's built-in tools or image input, neither of which is served; "
                f"{_LOGPROBS!r} and {_ENCRYPTED_REASONING!r} are",
                param=f"include[{index}]",
            )
    return _LOGPROBS in value


def _top_logprobs(value: Any, ctx: Context) -> int:
    """0 to 20; more than 0 asks for log-probs (as ``include`` does) with that many
    alternatives, which the route's engine must give (``chat/fields.py``)."""
    return integer(value, "top_logprobs", minimum=0, maximum=20)


_SUMMARIES = (None, "auto", "concise", "detailed")


def _reasoning(value: Any, ctx: Context) -> dict[str, Any]:
    """``effort`` goes to the engine as chat's ``reasoning_effort``; a ``summary`` is asked
    for, but none is made: the reasoning item carries the engine's whole reasoning text."""
    if not isinstance(value, dict):
        raise RequestError("'reasoning' must be an object", param="reasoning")
    for key, setting in value.items():
        if key not in ("effort", "summary", "generate_summary"):
            raise RequestError(
                f"unrecognized field 'reasoning.{key}'",
                param=f"reasoning.{key}",
                code="unknown_parameter",
            )
        if key != "effort" and setting not in _SUMMARIES:
            raise RequestError(
                f"'reasoning.{key}' must be 'auto', 'concise' or 'detailed', got {setting!r:.40}",
                param=f"reasoning.{key}",
            )
    return value


def _metadata(value: Any, ctx: Context) -> dict[str, str]:
    """``metadata`` within OpenAI's limits: 16 pairs, keys of 64 characters at most, string
    values of 512 at most."""
    if not isinstance(value, dict) or len(value) > _MAX_METADATA:
        raise RequestError(
            f"'metadata' must be an object of at most {_MAX_METADATA} string pairs",
            param="metadata",
        )
    for key, item in value.items():
        if len(key) > 64 or not isinstance(item, str) or len(item) > 512:
            raise RequestError(
                f"'metadata.{key[:64]}': keys are at most 64 characters and values strings of "
                "at most 512",
                param=f"metadata.{key[:64]}",
            )
    return value


# -- neutral values --------------------------------------------------------------------------


def _absent(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _off(value: Any) -> bool:
    return value is None or value is False


def _not_truncated(value: Any) -> bool:
    return value is None or value == "disabled"


# -- echoes ----------------------------------------------------------------------------------


def _as_given(raw: Any, checked: Any) -> Any:
    return raw


def _as_checked(raw: Any, checked: Any) -> Any:
    return checked


def _number(raw: Any, checked: Any) -> float | None:
    return None if raw is None else float(raw)


def _string_or_omit(raw: Any, checked: Any) -> Any:
    return raw if isinstance(raw, str) else OMIT


_ABUSE_MONITORING = "an end-user identifier for OpenAI's abuse monitoring"
_PROMPT_CACHE = "a hint for OpenAI's prompt cache"

FIELDS: tuple[ResponsesField, ...] = (
    ResponsesField(name="instructions", echo=_as_given),  # read with input
    ResponsesField(
        name="input", check=_input, always=True, chat=lambda talk: {"messages": talk.messages}
    ),
    ResponsesField(name="model", chat="model"),  # picks the route; echoed as the served model
    ResponsesField(name="stream", check=lambda value, ctx: boolean(value, "stream"), chat="stream"),
    ResponsesField(name="stream_options", check=_stream_options),
    ResponsesField(
        name="tools",
        check=_tools,
        always=True,
        chat=lambda fields: fields,
        echo=lambda raw, _: raw or [],
    ),
    ResponsesField(name="tool_choice", echo=lambda raw, _: raw or "auto"),  # with tools
    ResponsesField(name="parallel_tool_calls", echo=lambda raw, _: raw is not False),  # with tools
    ResponsesField(
        name="text",
        check=_text,
        chat=lambda text: {} if text[0] is None else {"response_format": text[0]},
        echo=lambda raw, text: {"format": text[1] if text else {"type": "text"}},
    ),
    ResponsesField(
        name="include",
        check=_include,
        chat=lambda logprobs: {"logprobs": True} if logprobs else {},
    ),
    ResponsesField(
        name="top_logprobs",
        check=_top_logprobs,
        chat=lambda top: {"logprobs": True, "top_logprobs": top} if top else {},
        echo=_as_given,
    ),
    ResponsesField(
        name="reasoning",
        check=_reasoning,
        chat=lambda given: {"reasoning_effort": given.get("effort")},
        echo=lambda raw, given: (
            {"effort": given.get("effort"), "summary": given.get("summary")} if given else OMIT
        ),
    ),
    ResponsesField(
        name="max_output_tokens",
        check=lambda value, ctx: integer(value, "max_output_tokens", minimum=1),
        chat="max_completion_tokens",
        echo=_as_checked,
    ),
    ResponsesField(name="temperature", chat="temperature", echo=_number),
    ResponsesField(name="top_p", chat="top_p", echo=_number),
    ResponsesField(
        name="metadata", check=_metadata, echo=lambda raw, checked: checked or {}
    ),  # echoed back
    ResponsesField(name="user", ignored=_ABUSE_MONITORING, echo=_string_or_omit),
    ResponsesField(name="safety_identifier", ignored=_ABUSE_MONITORING, echo=_string_or_omit),
    ResponsesField(name="service_tier", ignored="OpenAI's processing tier"),
    ResponsesField(  # the chat field: SageMaker's prefix-aware routing id
        name="prompt_cache_key", chat="prompt_cache_key", echo=_string_or_omit
    ),
    ResponsesField(name="prompt_cache_retention", ignored=_PROMPT_CACHE),
    ResponsesField(name="prompt_cache_options", ignored=_PROMPT_CACHE),
    ResponsesField(
        name="max_tool_calls",
        ignored="a limit on calls to OpenAI's built-in tools, of which none is served",
    ),
    ResponsesField(
        name="store", neutral=_off, why=STATELESS + "; send 'store': false or leave it out"
    ),
    ResponsesField(name="previous_response_id", neutral=_absent, why=STATELESS),
    ResponsesField(name="conversation", neutral=_absent, why=STATELESS),
    ResponsesField(
        name="background",
        neutral=_off,
        why=STATELESS + ", so a response cannot run in the background and be fetched later; "
        "leave 'background' out, or send work no one waits on as a batch (POST /v1/files, "
        "then POST /v1/batches: StreamingInvoker.add_batch_api())",
    ),
    ResponsesField(
        name="background_options",
        neutral=_absent,
        why=STATELESS + "; leave 'background_options' out",
    ),
    ResponsesField(
        name="truncation",
        neutral=_not_truncated,
        why="the gateway does not truncate the input: an input longer than the model's context "
        "gets the engine's 400; send 'disabled' or leave it out",
        echo=lambda raw, _: "disabled",
    ),
    ResponsesField(
        name="context_management",
        neutral=_absent,
        why="the gateway does not compact the input; leave it out",
    ),
    ResponsesField(
        name="prompt",
        neutral=_absent,
        why="prompt templates are stored by OpenAI, and this gateway keeps none; send the "
        "prompt in 'instructions' and 'input'",
    ),
    ResponsesField(name="moderation", neutral=_absent, why="the runtime runs no moderation model"),
    ResponsesField(
        name="image", neutral=_absent, why="the runtime relays text only (no image input)"
    ),
    ResponsesField(
        name="access_programs",
        neutral=_absent,
        why="OpenAI's access programs do not apply to this model",
    ),
)
"""The table, in the order the fields are checked."""
