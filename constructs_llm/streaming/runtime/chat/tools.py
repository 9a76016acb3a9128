"""Tool calling in a chat request: ``tools``, ``tool_choice``, ``parallel_tool_calls`` and the
tool turns of the conversation. Stdlib only: this file ships in the Lambda asset.

Validated against the OpenAI schema (function tools only) and forwarded unchanged to engines
whose chat API serves them: TGI's Messages API (huggingface/text-generation-inference:
``router/src/lib.rs``, ``ChatRequest.tools``, ``ToolChoice``), vLLM
(``--enable-auto-tool-choice`` and a ``--tool-call-parser`` for ``"auto"``; named and
``"required"`` choices use structured outputs) and SGLang (``--tool-call-parser``). When the
runtime's ``TOOLS`` setting is off (the default for the generate API, which has no tools),
every one of them is refused with a 400 naming the field.
"""

from __future__ import annotations

import re
from typing import Any

from ..http.errors import RequestError, unsupported_value
from .target import ChatTarget

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The most tools one request may offer, as OpenAI's API allows.
MAX_TOOLS = 128
#: ``tool_choice`` as a string: the model calls no tool, chooses, or must call one.
_CHOICES = ("none", "auto", "required")


def checked_tools(value: Any, target: ChatTarget) -> list[Any] | None:
    """``tools``, checked: None when empty (nothing to send), else the tools as given."""
    if not value:
        if not isinstance(value, list):
            raise RequestError("'tools' must be an array", param="tools")
        return None
    if not target.serves_tools:
        raise unsupported_value(
            f"'tools' is not supported by this endpoint: {target.why_no_tools}", param="tools"
        )
    if isinstance(value, list) and len(value) > MAX_TOOLS:
        raise RequestError(
            f"'tools' holds {len(value)} tools; at most {MAX_TOOLS} are allowed (OpenAI's "
            "limit): send the ones this turn may call",
            param="tools",
        )
    _tool_names(value)
    return list(value)


def checked_tool_choice(choice: Any, tools: list[Any] | None) -> Any:
    """``tool_choice`` for the checked ``tools``: None (nothing to send) without tools."""
    if not tools:
        if choice != "none":
            raise RequestError(
                f"'tool_choice' {choice!r} needs 'tools'; send the tools the model may call",
                param="tool_choice",
            )
        return None
    return _tool_choice(choice, _tool_names(tools))


def checked_parallel(parallel: Any, tools: list[Any] | None) -> bool:
    if not tools:
        raise RequestError("'parallel_tool_calls' needs 'tools'", param="parallel_tool_calls")
    if not isinstance(parallel, bool):
        raise RequestError(
            f"'parallel_tool_calls' must be a boolean, got {parallel!r}",
            param="parallel_tool_calls",
        )
    return parallel


def check_tool_message(message: dict[str, Any], where: str, target: ChatTarget) -> bool:
    """Validate the tool parts of one message; True when it is an assistant turn whose
    ``tool_calls`` stand in for its content (so ``content`` may be null)."""
    role = message.get("role")
    calls = message.get("tool_calls")
    if (role == "tool" or calls) and not target.serves_tools:
        raise unsupported_value(
            f"'{where}' is a tool turn, which this endpoint does not serve: {target.why_no_tools}",
            param=where,
        )
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise RequestError(
                f"'{where}.tool_call_id' is required for a tool message: the id of the call "
                "it answers",
                param=f"{where}.tool_call_id",
            )
        return False
    if calls is None or calls == []:
        return False
    if role != "assistant":
        raise RequestError(
            f"'{where}.tool_calls' is only allowed on assistant messages", param=f"{where}"
        )
    if not isinstance(calls, list):
        raise RequestError(f"'{where}.tool_calls' must be an array", param=f"{where}.tool_calls")
    for index, call in enumerate(calls):
        _check_call(call, f"{where}.tool_calls[{index}]")
    return bool(calls)


def _tool_names(tools: Any) -> set[str]:
    """The names of ``tools``, each checked against the schema (function tools only)."""
    if not isinstance(tools, list):
        raise RequestError("'tools' must be an array", param="tools")
    names: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise RequestError(f"'{where}' must be an object", param=where)
        if tool.get("type") != "function":
            raise unsupported_value(
                f"'{where}.type' must be 'function', got {tool.get('type')!r}: only function "
                "tools are served",
                param=f"{where}.type",
            )
        function = tool.get("function")
        if not isinstance(function, dict):
            raise RequestError(f"'{where}.function' must be an object", param=f"{where}.function")
        name = _function_name(function.get("name"), f"{where}.function.name")
        if name in names:
            raise RequestError(
                f"'{where}.function.name' {name!r} is a duplicate; tool names must be unique",
                param=f"{where}.function.name",
            )
        names.add(name)
        check_function(function, f"{where}.function")
    return names


def check_function(function: dict[str, Any], where: str) -> None:
    """A function's ``description``, ``parameters`` and ``strict``, when set."""
    if function.get("description") is not None and not isinstance(function["description"], str):
        raise RequestError(f"'{where}.description' must be a string", param=f"{where}.description")
    if function.get("parameters") is not None and not isinstance(function["parameters"], dict):
        raise RequestError(
            f"'{where}.parameters' must be a JSON Schema object", param=f"{where}.parameters"
        )
    if function.get("strict") is not None and not isinstance(function["strict"], bool):
        raise RequestError(f"'{where}.strict' must be a boolean", param=f"{where}.strict")


def _function_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RequestError(
            f"'{where}' must be 1-64 letters, digits, '_' or '-', got {name!r}", param=where
        )
    return name


def string_choice(choice: str, named: str) -> str:
    """A ``tool_choice`` given as a string, one of ``_CHOICES``; ``named`` is how the API writes
    the other form, a named function (for the message)."""
    if choice not in _CHOICES:
        raise RequestError(
            f"'tool_choice' must be one of {list(_CHOICES)} or {named}, got {choice!r}",
            param="tool_choice",
        )
    return choice


def _tool_choice(choice: Any, names: set[str]) -> Any:
    if isinstance(choice, str):
        return string_choice(choice, "a named function")
    if not isinstance(choice, dict) or choice.get("type") != "function":
        kind = choice.get("type") if isinstance(choice, dict) else type(choice).__name__
        raise unsupported_value(
            f"'tool_choice' must be 'none', 'auto', 'required' or "
            f"{{'type': 'function', 'function': {{'name': ...}}}}, got {kind!r}",
            param="tool_choice",
        )
    function = choice.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if name not in names:
        raise RequestError(
            f"'tool_choice.function.name' {name!r} is not one of the tools {sorted(names)}",
            param="tool_choice.function.name",
        )
    return choice


def _check_call(call: Any, where: str) -> None:
    if not isinstance(call, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    if not isinstance(call.get("id"), str) or not call["id"]:
        raise RequestError(f"'{where}.id' must be a non-empty string", param=f"{where}.id")
    if call.get("type") != "function":
        raise unsupported_value(
            f"'{where}.type' must be 'function', got {call.get('type')!r}", param=f"{where}.type"
        )
    function = call.get("function")
    if not isinstance(function, dict):
        raise RequestError(f"'{where}.function' must be an object", param=f"{where}.function")
    _function_name(function.get("name"), f"{where}.function.name")
    if not isinstance(function.get("arguments"), str):
        raise RequestError(
            f"'{where}.function.arguments' must be a string of JSON",
            param=f"{where}.function.arguments",
        )
