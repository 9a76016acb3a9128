"""The body sent to the engine: the messages API's (OpenAI names) or the generate API's
(``{"inputs", "parameters"}``), always streaming, as UTF-8 JSON. Stdlib only: this file
ships in the Lambda asset.
"""

from __future__ import annotations

import json
from typing import Any

from .request_errors import RequestError, unsupported
from .request_sampling import Sampling

__all__ = ["encode", "generate_body", "messages_body"]


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


def messages_body(messages: list[dict[str, Any]], s: Sampling) -> dict[str, Any]:
    """The messages API's body: the messages as given, sampling under OpenAI's names."""
    body: dict[str, Any] = {"messages": messages, "stream": True}
    optional = {
        "max_tokens": s.max_tokens,
        "temperature": s.temperature,
        "top_p": s.top_p,
        "stop": s.stop,
        "seed": s.seed,
        "frequency_penalty": s.frequency_penalty,
        "presence_penalty": s.presence_penalty,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if s.logprobs:
        body["logprobs"] = True
    return body


def generate_body(messages: list[dict[str, Any]], s: Sampling) -> dict[str, Any]:
    """The generate API's body: one templated prompt, sampling as TGI's parameters."""
    prompt = _single_prompt(messages)
    if s.presence_penalty is not None:
        raise unsupported(
            "presence_penalty",
            "the generate API (REQUEST_FORMAT=generate) has no presence penalty (TGI's "
            "generate parameters do not take it); use frequency_penalty, or a messages API",
        )
    params: dict[str, Any] = {"details": True}  # details carry the finish reason
    if s.max_tokens is not None:
        params["max_new_tokens"] = s.max_tokens
    # TGI rejects temperature 0 and top_p 1: 0 means greedy, 1 means "no nucleus filter".
    if s.temperature is not None and s.temperature > 0:
        params["do_sample"] = True
        params["temperature"] = s.temperature
    elif s.temperature == 0:
        params["do_sample"] = False
    if s.top_p is not None and 0 < s.top_p < 1:
        params["top_p"] = s.top_p
    if s.stop:
        params["stop"] = s.stop
    if s.seed is not None:
        params["seed"] = s.seed
    if s.frequency_penalty is not None:  # TGI and LMI take it, in OpenAI's -2..2 range
        params["frequency_penalty"] = s.frequency_penalty
    return {"inputs": prompt, "parameters": params, "stream": True}


def _single_prompt(messages: list[dict[str, Any]]) -> str:
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
