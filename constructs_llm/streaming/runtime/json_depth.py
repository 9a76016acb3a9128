"""How deeply a request body may nest JSON arrays and objects. Stdlib only: ships in the Lambda.

Python's ``json`` decoder recurses once per level, so a body nested about a thousand levels
deep (a few kilobytes of ``[``) raises ``RecursionError``, and a shallower one decodes but can
still exhaust the stack of code that walks it (``json.dumps`` of the engine body, the search
for a lone surrogate in ``engine_bodies.py``). So a body deeper than ``MAX_JSON_DEPTH`` is
refused with a 400 however it fails: a ``RecursionError`` while decoding, or a depth found by
an iterative walk of the decoded value. The walk runs only when the body holds more ``[`` and
``{`` bytes than the limit (two ``bytes.count`` calls), which no ordinary chat request does
outside its strings.

128 levels leave room for any real request: a JSON schema nested 10 objects deep (OpenAI's
structured-output limit) in ``response_format`` or a tool's ``parameters`` takes about 25.
"""

from __future__ import annotations

from typing import Any

from .request_errors import RequestError

__all__ = ["MAX_JSON_DEPTH", "check_depth", "too_deep"]

MAX_JSON_DEPTH = 128
"""Levels of arrays and objects a request body may nest, the body's own object included."""


def too_deep() -> RequestError:
    """The 400 for a body nested past ``MAX_JSON_DEPTH``."""
    return RequestError(
        f"request body nests JSON arrays and objects more than {MAX_JSON_DEPTH} levels deep; "
        "send a flatter body",
        code="json_too_deep",
    )


def check_depth(body: bytes, data: Any) -> None:
    """Raise ``too_deep()`` if ``data``, decoded from ``body``, nests past the limit."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return  # it cannot nest deeper than it has brackets
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise too_deep()
        children = value.values() if isinstance(value, dict) else value
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
