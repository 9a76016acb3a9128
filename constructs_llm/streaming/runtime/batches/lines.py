"""The checks a batch's input file passes before its execution starts. Stdlib only: this file
ships in the Lambda asset.

Each line of the JSONL file is one request, as OpenAI's Batch API takes it (OpenAI's
reference, "The request input object"): ``{"custom_id", "method": "POST", "url", "body"}``,
``custom_id`` unique within the file. A file that breaks any of these fails the batch before
anything is invoked, with OpenAI's ``errors`` object naming each bad line (1-based, as
``BatchError.line``): a line that is not a JSON object, a ``method`` other than POST, a ``url``
other than the batch's ``endpoint``, a ``body`` that is not an object, a ``model`` this invoker
does not serve (or of another kind than the endpoint takes: an embedding model for
``/v1/embeddings``, a chat model for the others, ``endpoints.py``; a model on an asynchronous
endpoint, ``BATCH_ASYNC``, in ``/v1/chat/completions`` batches only), a second model in one
batch (one batch goes to one target, whose capacity bounds its concurrency), and a repeated
``custom_id``. A request that passes here but that its model refuses (a bad field) gets its
400 in the error file, as OpenAI does.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ...formats import ModelKind
from ..routing import RoutingTable
from .endpoints import CHAT, KINDS

#: The errors named at most; the rest are counted in the last one's message.
MAX_ERRORS = 20


@dataclass
class CheckedFile:
    """What the check found: the requests' model, how many there are, and the errors."""

    total: int = 0
    model: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    _more: int = 0

    def error(self, code: str, message: str, line: int | None, param: str | None) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append({"code": code, "message": message, "param": param, "line": line})
        else:
            self._more += 1

    def wire_errors(self) -> dict[str, Any] | None:
        """OpenAI's ``errors`` object (``{"object": "list", "data": [BatchError]}``), or None."""
        if not self.errors:
            return None
        data = list(self.errors)
        if self._more:
            last = dict(data[-1])
            last["message"] += f" ({self._more} more errors not shown)"
            data[-1] = last
        return {"object": "list", "data": data}


def check_file(
    data: bytes,
    *,
    endpoint: str,
    routes: RoutingTable,
    queued: Collection[str] = (),
) -> CheckedFile:
    """Check every line of ``data`` for a batch on ``endpoint``; ``queued`` names the chat
    models on asynchronous endpoints, served in ``/v1/chat/completions`` batches only."""
    checked = CheckedFile()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        checked.error("invalid_file", f"the file is not UTF-8 text: {exc}", None, None)
        return checked
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        checked.total += 1
        _check_line(line.rstrip("\r"), number, endpoint, (routes, queued), checked, seen)
    if checked.total == 0:
        checked.error("empty_file", "the input file has no requests", None, None)
    return checked


def _check_line(
    line: str,
    number: int,
    endpoint: str,
    served: tuple[RoutingTable, Collection[str]],
    checked: CheckedFile,
    seen: dict[str, int],
) -> None:
    try:
        request = json.loads(line, parse_constant=_refuse_constant)
    except ValueError as exc:
        checked.error("invalid_json_line", f"line {number} is not valid JSON: {exc}", number, None)
        return
    if not isinstance(request, dict):
        checked.error("invalid_json_line", f"line {number} is not a JSON object", number, None)
        return
    custom_id = request.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        checked.error(
            "missing_custom_id", f"line {number} has no custom_id string", number, "custom_id"
        )
    elif custom_id in seen:
        checked.error(
            "duplicate_custom_id",
            f"line {number} repeats custom_id {custom_id[:100]!r} of line {seen[custom_id]}; "
            "each request needs its own",
            number,
            "custom_id",
        )
    else:
        seen[custom_id] = number
    if request.get("method") != "POST":
        checked.error(
            "invalid_method",
            f"line {number} has method {request.get('method')!r}; batch requests are POST",
            number,
            "method",
        )
    if request.get("url") != endpoint:
        checked.error(
            "invalid_url",
            f"line {number} has url {_shown(request.get('url'))}, but the batch's endpoint is "
            f"{endpoint!r}; every line must name it",
            number,
            "url",
        )
    body = request.get("body")
    if not isinstance(body, dict):
        checked.error("invalid_body", f"line {number} has no body object", number, "body")
        return
    _check_model(body.get("model"), number, endpoint, served, checked)


def _check_model(
    model: object,
    number: int,
    endpoint: str,
    served: tuple[RoutingTable, Collection[str]],
    checked: CheckedFile,
) -> None:
    routes, queued = served
    if not isinstance(model, str) or not model:
        checked.error("missing_model", f"line {number} has no model", number, "body.model")
        return
    if model in queued:
        if endpoint != CHAT:
            checked.error(
                "invalid_model",
                f"line {number} asks for model {model[:200]!r}, served asynchronously, in "
                f"{CHAT} batches only",
                number,
                "body.model",
            )
            return
        _one_model(model, number, checked)
        return
    route = routes.find(model)
    if route is None:
        names = ", ".join(repr(m) for m in [*routes.models, *queued])
        checked.error(
            "model_not_found",
            f"line {number} asks for model {model[:200]!r}, which this endpoint does not "
            f"serve; it serves {names}",
            number,
            "body.model",
        )
        return
    wanted = KINDS[endpoint]
    if route.kind is not wanted:
        checked.error(
            "invalid_model",
            f"line {number} asks for model {model[:200]!r}, {_a(route.kind)} model; a "
            f"{endpoint} batch needs {_a(wanted)} model",
            number,
            "body.model",
        )
        return
    _one_model(model, number, checked)


def _one_model(model: str, number: int, checked: CheckedFile) -> None:
    if checked.model is None:
        checked.model = model
    elif model != checked.model:
        checked.error(
            "mismatched_model",
            f"line {number} asks for model {model[:200]!r} but earlier lines for "
            f"{checked.model!r}; put each model's requests in a batch of its own",
            number,
            "body.model",
        )


def _a(kind: ModelKind) -> str:
    return f"an {kind.value}" if kind is ModelKind.EMBEDDING else f"a {kind.value}"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _shown(value: object) -> str:
    return repr(value)[:200]
