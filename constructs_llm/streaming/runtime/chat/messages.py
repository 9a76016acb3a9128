"""The ``messages`` of a chat request: roles, content and content parts, and the tool turns
(``tools.py``). Stdlib only: this file ships in the Lambda asset.

Content parts are ``text`` and ``image_url`` (``{"url": "https://..." | "data:image/...",
"detail": "auto" | "low" | "high"}``, the ``openai`` SDK's ``ChatCompletionContentPartImage``),
sent to the engine as they come: vLLM, SGLang and TGI read OpenAI's image parts for a vision
model. A model known to take no images (its route's ``vision`` is false) gets a 400 naming the
part instead of an engine error or an answer that ignored the picture.
"""

from __future__ import annotations

from typing import Any

from ..http.errors import RequestError, unsupported_value
from .target import ChatTarget
from .tools import check_tool_message

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


def _tag(item: Any, key: str, allowed: frozenset[str], where: str) -> str:
    """What an object says it is (a message's ``role``, a part's ``type``): one of
    ``allowed``."""
    if not isinstance(item, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    tag = item.get(key)
    if tag not in allowed:
        raise RequestError(
            f"'{where}.{key}' must be one of {sorted(allowed)}, got {tag!r}", param=f"{where}.{key}"
        )
    return str(tag)


def _check_message(message: Any, where: str, target: ChatTarget) -> None:
    """One message: its role, its content, its tool parts."""
    role = _tag(message, "role", _ROLES, where)
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
        _check_part(part, f"{where}.content[{index}]", target)


def _check_part(part: Any, where: str, target: ChatTarget) -> None:
    kind = _tag(part, "type", _CONTENT_PART_TYPES, where)
    if kind == "text" and not isinstance(part.get("text"), str):
        raise RequestError(f"'{where}.text' must be a string", param=f"{where}.text")
    if kind == "image_url":
        _check_image(part.get("image_url"), where, target)


#: An image part's ``detail``: absent, or one of OpenAI's three.
DETAILS = (None, "auto", "low", "high")


def is_image_url(url: Any) -> bool:
    """Whether ``url`` is one an engine fetches or decodes: https, http or a data URL."""
    return isinstance(url, str) and url.startswith(("https://", "http://", "data:"))


def _check_image(image: Any, where: str, target: ChatTarget) -> None:
    if target.vision is False:
        raise unsupported_value(
            f"'{where}' is an image, and this model takes no images (a text-only model); "
            "send text only, or serve a vision model",
            param=where,
        )
    if not is_image_url(image.get("url") if isinstance(image, dict) else None):
        raise RequestError(
            f"'{where}.image_url.url' must be an https:// URL or a data: URL of the image",
            param=f"{where}.image_url.url",
        )
    if isinstance(image, dict) and image.get("detail") not in DETAILS:
        raise RequestError(
            f"'{where}.image_url.detail' must be 'auto', 'low' or 'high'",
            param=f"{where}.image_url.detail",
        )
