"""The body sent to the engine as UTF-8 JSON, and the generate API's one prompt. Stdlib only:
this file ships in the Lambda asset. Which fields the body holds is ``fields.py``'s table.
"""

from __future__ import annotations

from typing import Any

from ..http.errors import RequestError
from ..http.json_body import engine_json, lone_surrogate


def encode(engine: dict[str, Any], data: dict[str, Any]) -> bytes:
    """The engine body as UTF-8 JSON (``json_body.engine_json``). A lone surrogate escape
    (``"\\udce9"``) parses as JSON but has no UTF-8 form: that is the client's error, named
    like any other."""
    try:
        return engine_json(engine)
    except UnicodeEncodeError:
        raise lone_surrogate(data) from None


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
