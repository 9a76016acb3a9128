"""The ``messages`` of a chat request: roles, content and content parts, and the tool turns
(``tools.py``). Stdlib only: this file ships in the Lambda asset.
"""

from __future__ import annotations

from typing import Any

from ..http.errors import RequestError
from .target import ChatTarget
from .tools import check_tool_message

__all__ = ["checked_messages"]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_CONTENT_PART_TYPES = frozenset({"text", "image_url"})
_MAX_MESSAGES = 10_000


def checked_messages(value: Any, target: ChatTarget) -> list[dict[str, Any]]:
    """The validated messages, for ``target`` (which may not serve tool turns)."""
    if not isinstance(value, list) or not value:
        raise RequestError("'messages' must be a non-empty array", param="messages")
    if len(value) > _MAX_MESSAGES:
        raise RequestError(f"'messages' has more than {_MAX_MESSAGES} items", param="messages")
    for index, message in enumerate(value):
        _check_message(message, f"messages[{index}]", target)
    return value


def _check_message(message: Any, where: str, target: ChatTarget) -> None:
    if not isinstance(message, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    role = message.get("role")
    if role not in _ROLES:
        raise RequestError(
            f"'{where}.role' must be one of {sorted(_ROLES)}, got {role!r}", param=f"{where}.role"
        )
    check_tool_message(message, where, target)
    content = message.get("content")
    if content is None:
        if role == "assistant":  # an assistant turn may carry only tool calls
            return
        raise RequestError(f"'{where}.content' is required", param=f"{where}.content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise RequestError(
            f"'{where}.content' must be a string or an array of content parts, "
            f"got {type(content).__name__}",
            param=f"{where}.content",
        )
    for index, part in enumerate(content):
        _check_part(part, f"{where}.content[{index}]")


def _check_part(part: Any, where: str) -> None:
    if not isinstance(part, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    kind = part.get("type")
    if kind not in _CONTENT_PART_TYPES:
        raise RequestError(
            f"'{where}.type' must be one of {sorted(_CONTENT_PART_TYPES)}, got {kind!r}",
            param=f"{where}.type",
        )
    if kind == "text" and not isinstance(part.get("text"), str):
        raise RequestError(f"'{where}.text' must be a string", param=f"{where}.text")
