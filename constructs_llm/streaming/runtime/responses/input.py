"""The ``instructions`` and ``input`` of a Responses request -> the chat ``messages`` the engine
takes. Stdlib only: this file ships in the Lambda asset.

``input`` is a string (one user message) or a list of items:

- messages: ``{"role", "content"}`` with ``type: "message"`` or without a type, roles
  ``user``, ``system``, ``developer`` and ``assistant``; content a string or a list of text
  parts: ``input_text`` for user, system and developer, ``output_text`` for assistant (the
  earlier output replayed); a user message may hold ``input_image`` parts too, sent to the
  engine as chat's ``image_url`` parts (``image_url`` an https or data URL, its ``detail``; a
  ``file_id`` names a file stored with OpenAI, which this gateway cannot read: a 400). An
  ``output_text`` part's ``annotations`` and ``logprobs``
  describe that earlier answer and are not sent to the engine, whose chat template takes its
  text; nor are an item's ``id``, ``status`` and ``phase``, or a part's
  ``prompt_cache_breakpoint`` (a hint for OpenAI's prompt cache).
- ``function_call`` items (``call_id``, ``name``, ``arguments``): an assistant turn's tool
  calls. Consecutive ones, and the assistant message just before them, make one assistant
  message with ``tool_calls``, as Chat Completions has it.
- ``function_call_output`` items (``call_id``, ``output``): a ``tool`` message answering that
  call; ``output`` a string or a list of ``input_text`` parts.

- ``reasoning`` items (a reasoning model's earlier thinking, which clients replay with the
  conversation): accepted and not sent to the engine, as the reasoning models' chat templates
  leave earlier turns' thinking out of the prompt anyway (Qwen3's and DeepSeek-R1's keep only
  each assistant turn's answer).

``instructions`` becomes a system message before the input. Every other item type is refused
with a 400 naming it: references to stored items (the gateway keeps none), and the items of
built-in or custom tools (not served).

Each message remembers the field it came from (``Conversation.origins``), so an error the
chat validation raises about ``messages[k]`` names ``input[i]`` (or ``instructions``) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..chat.messages import DETAILS, is_image_url
from ..http.errors import RequestError, unsupported_value
from .stateless import STATELESS

_MAX_ITEMS = 10_000
_PART_TYPE = {
    "user": "input_text",
    "system": "input_text",
    "developer": "input_text",
    "assistant": "output_text",
}
_PART_KEYS = {
    "input_text": frozenset({"type", "text", "prompt_cache_breakpoint"}),
    "output_text": frozenset({"type", "text", "annotations", "logprobs"}),
}
_MESSAGE_KEYS = frozenset({"type", "role", "content", "id", "status", "phase"})
_CALL_KEYS = frozenset({"type", "call_id", "name", "arguments", "id", "status"})
_OUTPUT_KEYS = frozenset({"type", "call_id", "output", "id", "status", "name"})
_NULL_ONLY = {
    "namespace": "tool namespaces are not served",
    "caller": "programmatic tool calling is not served",
}
_REFUSED_ITEMS = {
    "item_reference": STATELESS,
    "compaction": "the gateway does not compact the input; leave compaction items out",
    "compaction_trigger": "the gateway does not compact the input; leave compaction items out",
}
_SERVED_ITEMS = "message, function_call, function_call_output and reasoning"


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """The chat messages, and where each came from (``instructions`` or ``input[i]``)."""

    messages: list[dict[str, Any]]
    origins: list[str]


def conversation(value: Any, instructions: Any) -> Conversation:
    """The chat messages of ``instructions`` and ``input``; ``RequestError`` naming the field."""
    messages: list[dict[str, Any]] = []
    origins: list[str] = []
    if instructions is not None:
        if not isinstance(instructions, str):
            raise RequestError(
                f"'instructions' must be a string, got {type(instructions).__name__}",
                param="instructions",
            )
        messages.append({"role": "system", "content": instructions})
        origins.append("instructions")
    if value is None:
        raise RequestError(
            "'input' is required: a string, or a list of message, function_call and "
            "function_call_output items",
            param="input",
            code="missing_required",
        )
    if isinstance(value, str):
        messages.append({"role": "user", "content": value})
        origins.append("input")
        return Conversation(messages=messages, origins=origins)
    if not isinstance(value, list) or not value:
        raise RequestError("'input' must be a string or a non-empty list of items", param="input")
    if len(value) > _MAX_ITEMS:
        raise RequestError(f"'input' has more than {_MAX_ITEMS} items", param="input")
    open_turn: dict[str, Any] | None = None  # the assistant turn function calls join
    for index, item in enumerate(value):
        where = f"input[{index}]"
        kind = _item_type(item, where)
        if kind == "reasoning":
            continue  # not sent: see the module docstring
        if kind == "function_call":
            call = _function_call(item, where)
            if open_turn is None:
                open_turn = {"role": "assistant", "content": None, "tool_calls": []}
                messages.append(open_turn)
                origins.append(where)
            open_turn.setdefault("tool_calls", []).append(call)
            continue
        if kind == "function_call_output":
            messages.append(_function_output(item, where))
            open_turn = None
        else:
            message = _message(item, where)
            messages.append(message)
            open_turn = message if message["role"] == "assistant" else None
        origins.append(where)
    return Conversation(messages=messages, origins=origins)


def _item_type(item: Any, where: str) -> str:
    if not isinstance(item, dict):
        raise RequestError(
            f"'{where}' must be an object (a message, function_call or function_call_output "
            f"item), got {type(item).__name__}",
            param=where,
        )
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    if kind in ("message", "function_call", "function_call_output", "reasoning"):
        return str(kind)
    if kind is None:
        raise RequestError(
            f"'{where}' needs a 'type' ({_SERVED_ITEMS}) or, for a message, a 'role'",
            param=where,
        )
    why = _REFUSED_ITEMS.get(kind) if isinstance(kind, str) else None
    raise unsupported_value(
        f"'{where}.type' {kind!r} is not supported by this endpoint: "
        + (why or f"only {_SERVED_ITEMS} items are served (built-in and custom tools are not)"),
        param=f"{where}.type",
    )


def _check_keys(item: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    for key, value in item.items():
        if key in allowed:
            continue
        if key in _NULL_ONLY:
            if value is None:
                continue
            raise unsupported_value(
                f"'{where}.{key}' is not supported by this endpoint: {_NULL_ONLY[key]}",
                param=f"{where}.{key}",
            )
        raise RequestError(
            f"unrecognized field '{where}.{key}'", param=f"{where}.{key}", code="unknown_parameter"
        )


def _message(item: dict[str, Any], where: str) -> dict[str, Any]:
    _check_keys(item, _MESSAGE_KEYS, where)
    role = item.get("role")
    if role not in _PART_TYPE:
        raise RequestError(
            f"'{where}.role' must be one of {sorted(_PART_TYPE)}, got {role!r}",
            param=f"{where}.role",
        )
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list) or not content:
        raise RequestError(
            f"'{where}.content' must be a string or a non-empty list of content parts",
            param=f"{where}.content",
        )
    parts = [
        _image_part(part, f"{where}.content[{i}]")
        if role == "user" and isinstance(part, dict) and part.get("type") == "input_image"
        else {
            "type": "text",
            "text": _text_part(part, _PART_TYPE[role], f"{where}.content[{i}]", role),
        }
        for i, part in enumerate(content)
    ]
    return {"role": role, "content": _chat_content(parts)}


_IMAGE_KEYS = frozenset({"type", "image_url", "file_id", "detail"})


def _image_part(part: dict[str, Any], where: str) -> dict[str, Any]:
    """An ``input_image`` part as chat's ``image_url`` part."""
    _check_keys(part, _IMAGE_KEYS, where)
    if part.get("file_id") is not None:
        raise unsupported_value(
            f"'{where}.file_id' names a file stored with OpenAI, which this gateway cannot "
            "read; send the image as image_url (an https or data: URL)",
            param=f"{where}.file_id",
        )
    url = part.get("image_url")
    if not is_image_url(url):
        raise RequestError(
            f"'{where}.image_url' must be an https:// URL or a data: URL of the image",
            param=f"{where}.image_url",
        )
    if part.get("detail") not in DETAILS:
        raise RequestError(
            f"'{where}.detail' must be 'auto', 'low' or 'high'", param=f"{where}.detail"
        )
    image: dict[str, Any] = {"url": url}
    if part.get("detail") is not None:
        image["detail"] = part["detail"]
    return {"type": "image_url", "image_url": image}


def _text_part(part: Any, expected: str, where: str, role: str) -> str:
    if not isinstance(part, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    kind = part.get("type")
    if kind != expected:
        why = (
            "the runtime relays text and a user's images only"
            if kind in ("input_image", "input_file", "input_audio")
            else f"a {role} message's parts are {expected!r} parts"
        )
        raise RequestError(
            f"'{where}.type' must be {expected!r}, got {kind!r}: {why}",
            param=f"{where}.type",
            code="unsupported_parameter" if kind in ("input_image", "input_file") else None,
        )
    _check_keys(part, _PART_KEYS[expected], where)
    text = part.get("text")
    if not isinstance(text, str):
        raise RequestError(f"'{where}.text' must be a string", param=f"{where}.text")
    return text


def _chat_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """One text as a string, else the chat parts (the engine joins texts as it does for any
    chat client)."""
    if len(parts) == 1 and parts[0]["type"] == "text":
        text: str = parts[0]["text"]
        return text
    return parts


def _call_id(item: dict[str, Any], where: str) -> str:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(
            f"'{where}.call_id' must be a non-empty string: the id of the function call",
            param=f"{where}.call_id",
        )
    return call_id


def _function_call(item: dict[str, Any], where: str) -> dict[str, Any]:
    _check_keys(item, _CALL_KEYS, where)
    call_id = _call_id(item, where)
    name, arguments = item.get("name"), item.get("arguments")
    if not isinstance(name, str) or not name:
        raise RequestError(f"'{where}.name' must be a non-empty string", param=f"{where}.name")
    if not isinstance(arguments, str):
        raise RequestError(
            f"'{where}.arguments' must be a string of JSON", param=f"{where}.arguments"
        )
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _function_output(item: dict[str, Any], where: str) -> dict[str, Any]:
    _check_keys(item, _OUTPUT_KEYS, where)
    call_id = _call_id(item, where)
    output = item.get("output")
    if isinstance(output, str):
        content: str | list[dict[str, Any]] = output
    elif isinstance(output, list) and output:
        texts = [
            {
                "type": "text",
                "text": _text_part(
                    part, "input_text", f"{where}.output[{i}]", "function_call_output"
                ),
            }
            for i, part in enumerate(output)
        ]
        content = _chat_content(texts)
    else:
        raise RequestError(
            f"'{where}.output' must be a string or a non-empty list of input_text parts",
            param=f"{where}.output",
        )
    return {"role": "tool", "tool_call_id": call_id, "content": content}
