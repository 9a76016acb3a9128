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

Only JSON is read and written (RFC 8259). ``NaN``, ``Infinity`` and ``-Infinity`` are not
JSON ("Numeric values that cannot be represented in the grammar below (such as Infinity and
NaN) are not permitted", section 6), but Python's decoder takes them, and its encoder writes
them on: so they are refused with a 400 (``parse_constant``), and so is a number too large
for a double (``1e999``, which Python reads as infinity; section 6 lets an implementation
limit the range). The engine's body is written with ``allow_nan=False``, so no such value
reaches an engine whatever path it took (``engine_json``). A lone surrogate escape
(``"\\udce9"``) is valid JSON text but no character: it has no UTF-8 form, and the engine's
body cannot hold it, so it is a 400 naming where it is (``lone_surrogate``), for every API.
"""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from .errors import RequestError

MAX_JSON_DEPTH = 128
"""Levels of arrays and objects a request body may nest, the body's own object included."""


def load_request(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object; ``RequestError`` (400 ``invalid_json``, or
    ``json_too_deep`` past ``MAX_JSON_DEPTH`` levels) otherwise."""
    try:
        data = json.loads(body, parse_constant=_not_json, parse_float=_finite)
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


def _not_json(constant: str) -> NoReturn:
    """``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""
    raise RequestError(
        f"request body is not valid JSON: {constant} is not a JSON number (RFC 8259, section "
        "6); send a finite number, or null",
        code="invalid_json",
    )


def _finite(text: str) -> float:
    """``parse_float``: a number a double holds; ``1e999`` would be infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise RequestError(
            f"request body is not valid JSON here: the number {text[:40]} is out of range for "
            "a double; send a smaller number",
            code="invalid_json",
        )
    return value


def engine_json(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON for an engine: ``ValueError`` for a NaN or an
    infinity (never written), ``UnicodeEncodeError`` for a lone surrogate (the caller names
    it with :func:`lone_surrogate`)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode()


def lone_surrogate(data: dict[str, Any]) -> RequestError:
    """The 400 for a request ``data`` holding a string with no UTF-8 form, naming where."""
    where = _surrogate_path(data, "") or "the request body"
    return RequestError(
        f"'{where}' holds an unpaired UTF-16 surrogate escape (such as \\udce9), which is "
        "not a character; send valid Unicode text",
        param=where if where != "the request body" else None,
    )


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
