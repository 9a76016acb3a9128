"""Tool calling in a Responses request: ``tools``, ``tool_choice`` and ``parallel_tool_calls``,
as the chat fields the engine takes. Stdlib only: this file ships in the Lambda asset.

Responses' function tools are flat (``{"type": "function", "name", "description",
"parameters", "strict"}``); Chat Completions nests them under ``function``. A named choice is
``{"type": "function", "name"}`` here and ``{"type": "function", "function": {"name"}}``
there. Only function tools are served: OpenAI's built-in tools (web search, file search,
computer use, code interpreter, image generation, remote MCP, shell, ...) run on OpenAI's
side, and custom (free-form grammar) tools have no counterpart in the engines' chat APIs; each
is refused with a 400 naming it. A function tool's ``defer_loading``, ``allowed_callers``
(other than ``["direct"]``), ``output_schema`` and ``async`` ask for OpenAI features no engine
here has, so they are refused when set.

``tool_choice`` ``"auto"`` (OpenAI's default) and ``parallel_tool_calls`` mean nothing without
tools and are then not sent; ``"required"`` or a named function without tools is a 400.
Whether the route's engine serves tools at all is the chat validation's call
(``chat/tools.py``), made on the fields built here.
"""

from __future__ import annotations

from typing import Any

from ..chat.tools import check_function, string_choice
from ..http.errors import RequestError, unsupported_value

#: What a function tool carries besides its name, as chat's ``function`` carries it.
_FUNCTION_KEYS = ("description", "parameters", "strict")
_TOOL_KEYS = frozenset({"type", "name", *_FUNCTION_KEYS})
_UNSERVED_TOOL_KEYS = {
    "defer_loading": ("tool search is not served", (None, False)),
    "allowed_callers": ("programmatic tool calling is not served", (None, ["direct"])),
    "output_schema": ("the engines' chat templates take no output schema", (None,)),
    "async": ("asynchronous function calls are not served", (None, False)),
}


def chat_tool_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The chat ``tools``, ``tool_choice`` and ``parallel_tool_calls`` for the request's own;
    raises ``RequestError`` naming the Responses field."""
    tools = data.get("tools")
    choice = data.get("tool_choice")
    parallel = data.get("parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise RequestError(
            f"'parallel_tool_calls' must be a boolean, got {parallel!r}",
            param="parallel_tool_calls",
        )
    if tools is not None and not isinstance(tools, list):
        raise RequestError("'tools' must be an array", param="tools")
    chat_tools = [_chat_tool(tool, f"tools[{i}]") for i, tool in enumerate(tools or [])]
    names = {tool["function"]["name"] for tool in chat_tools}
    if len(names) < len(chat_tools):
        raise RequestError("tool names must be unique in 'tools'", param="tools")
    chat_choice = _chat_choice(choice, names)
    if not chat_tools:
        if chat_choice not in (None, "none", "auto"):
            raise RequestError(
                f"'tool_choice' {choice!r} needs 'tools'; send the tools the model may call",
                param="tool_choice",
            )
        return {}
    fields: dict[str, Any] = {"tools": chat_tools}
    if chat_choice is not None:
        fields["tool_choice"] = chat_choice
    if parallel is not None:
        fields["parallel_tool_calls"] = parallel
    return fields


def _chat_tool(tool: Any, where: str) -> dict[str, Any]:
    if not isinstance(tool, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    kind = tool.get("type")
    if kind != "function":
        raise unsupported_value(
            f"'{where}.type' {kind!r} is not supported by this endpoint: only function tools "
            "are served (OpenAI's built-in tools run on OpenAI's side, and custom tools have "
            "no counterpart in the engines' chat APIs)",
            param=f"{where}.type",
        )
    for key, value in tool.items():
        if key in _TOOL_KEYS:
            continue
        unserved = _UNSERVED_TOOL_KEYS.get(key)
        if unserved is None:
            raise RequestError(
                f"unrecognized field '{where}.{key}' of a function tool",
                param=f"{where}.{key}",
                code="unknown_parameter",
            )
        why, neutral = unserved
        if value not in neutral:
            raise unsupported_value(
                f"'{where}.{key}' is not supported by this endpoint: {why}", param=f"{where}.{key}"
            )
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise RequestError(f"'{where}.name' must be a non-empty string", param=f"{where}.name")
    check_function(tool, where)
    function: dict[str, Any] = {"name": name}
    function.update((key, tool[key]) for key in _FUNCTION_KEYS if tool.get(key) is not None)
    return {"type": "function", "function": function}


def _chat_choice(choice: Any, names: set[str]) -> Any:
    if choice is None:
        return None
    if isinstance(choice, str):
        return string_choice(choice, "{'type': 'function', 'name': ...}")
    kind = choice.get("type") if isinstance(choice, dict) else type(choice).__name__
    if not isinstance(choice, dict) or kind != "function":
        raise unsupported_value(
            f"'tool_choice' {kind!r} is not supported by this endpoint: send 'none', 'auto', "
            "'required' or {'type': 'function', 'name': ...} (only function tools are served)",
            param="tool_choice",
        )
    extra = sorted(set(choice) - {"type", "name"})
    if extra:
        raise RequestError(
            f"unrecognized field 'tool_choice.{extra[0]}'",
            param=f"tool_choice.{extra[0]}",
            code="unknown_parameter",
        )
    name = choice.get("name")
    if name not in names:
        raise RequestError(
            f"'tool_choice.name' {name!r} is not one of the tools {sorted(names)}",
            param="tool_choice.name",
        )
    return {"type": "function", "function": {"name": name}}
