"""A request body as a JSON object, and how deeply it may nest JSON arrays and objects.
Stdlib only: this file ships in the Lambda asset.

Python's ``json`` decoder recurses once per level, so a body nested about a thousand levels
deep (a few kilobytes of ``[``) raises ``RecursionError``, and a shallower one decodes but can
still exhaust the stack of code that walks it (``json.dumps`` of the engine body, the search
for a lone surrogate in ``chat/engine_body.py``). So a body deeper than ``MAX_JSON_DEPTH`` is
refused with a 400 however it fails: a ``RecursionError`` while decoding, or a depth found by
an iterative walk of the decoded value. The walk runs only when the body holds more ``[`` and
``{`` bytes than the limit (two ``bytes.count`` calls), which no ordinary chat request does
outside its strings.

128 levels leave room for any real request: a JSON schema nested 10 objects deep (OpenAI's
structured-output limit) in ``response_format`` or a tool's ``parameters`` takes about 25.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import RequestError

MAX_JSON_DEPTH = 128
"""Levels of arrays and objects a request body may nest, the body's own object included."""


def load_request(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object; ``RequestError`` (400 ``invalid_json``, or
    ``json_too_deep`` past ``MAX_JSON_DEPTH`` levels) otherwise."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise _too_deep() from None
    except (UnicodeDecodeError, ValueError) as err:
        raise RequestError(
            f"request body is not valid JSON: {err}", code="invalid_json", param=None
        ) from None
    if not isinstance(data, dict):
        raise RequestError(
            f"request body must be a JSON object, got {type(data).__name__}", code="invalid_json"
        )
    _check_depth(body, data)
    return data


def _too_deep() -> RequestError:
    """The 400 for a body nested past ``MAX_JSON_DEPTH``."""
    return RequestError(
        f"request body nests JSON arrays and objects more than {MAX_JSON_DEPTH} levels deep; "
        "send a flatter body",
        code="json_too_deep",
    )


def _check_depth(body: bytes, data: Any) -> None:
    """Raise ``_too_deep()`` if ``data``, decoded from ``body``, nests past the limit."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return  # it cannot nest deeper than it has brackets
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise _too_deep()
        children = value.values() if isinstance(value, dict) else value
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
