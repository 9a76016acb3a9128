"""The body sent to the engine as UTF-8 JSON, and the generate API's one prompt. Stdlib only:
this file ships in the Lambda asset. Which fields the body holds is ``fields.py``'s table.
"""

from __future__ import annotations

import json
from typing import Any

from ..http.errors import RequestError


def encode(engine: dict[str, Any], data: dict[str, Any]) -> bytes:
    """The engine body as UTF-8 JSON. A lone surrogate escape (``"\\udce9"``) parses as JSON
    but has no UTF-8 form: that is the client's error, named like any other."""
    text = json.dumps(engine, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        where = _surrogate_path(data, "") or "the request body"
        raise RequestError(
            f"'{where}' holds an unpaired UTF-16 surrogate escape (such as \\udce9), which is "
            "not a character; send valid Unicode text",
            param=where if where != "the request body" else None,
        ) from None


def _surrogate_path(value: Any, where: str) -> str | None:
    """The path of the first string in ``value`` that has no UTF-8 form."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return where
        return None
    items: Any = ()
    if isinstance(value, dict):
        items = ((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    for path, item in items:
        found = _surrogate_path(item, path)
        if found is not None:
            return found
    return None


def single_prompt(messages: list[dict[str, Any]]) -> str:
    """The generate API's prompt: the one user message's text."""
    limitation = (
        "this endpoint uses the generate API (REQUEST_FORMAT=generate): no chat template is "
        "applied, so send exactly one 'user' message whose content is the fully templated "
        "prompt, or deploy the model with a messages (chat) API"
    )
    if len(messages) != 1 or messages[0].get("role") != "user":
        roles = [m.get("role") for m in messages]
        raise RequestError(
            f"{limitation} (got roles {roles})", param="messages", code="unsupported_messages"
        )
    content = messages[0].get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    if len(parts) == 1 and parts[0].get("type") == "text":
        return str(parts[0]["text"])
    raise RequestError(
        f"{limitation} (got {len(parts)} content parts; only one text part is accepted)",
        param="messages[0].content",
        code="unsupported_messages",
    )
