"""``response_format`` (structured output) -> the engine's field. Stdlib only: ships in the Lambda.

``text`` is the default and is not sent. ``json_object`` and ``json_schema`` are forwarded in
a body every messages-API engine here reads:

- vLLM and SGLang take OpenAI's shape, ``{"type", "json_schema": {"name", "schema",
  "strict"}}``, and ignore other keys (``ResponseFormat`` in vllm-project/vllm:
  ``vllm/entrypoints/openai/engine/protocol.py`` and in sgl-project/sglang:
  ``python/sglang/srt/entrypoints/openai/protocol.py``).
- TGI's Messages API reads an adjacently tagged grammar, ``{"type": "json" | "json_object" |
  "json_schema", "value": ...}``, where ``json_schema``'s value is ``{"name", "schema"}``
  (huggingface/text-generation-inference: ``router/src/lib.rs`` ``GrammarType`` at db931fcf);
  serde skips the other keys of an adjacently tagged enum.

So the runtime sends OpenAI's fields plus TGI's ``value``: for ``json_object`` the schema of
any JSON object, for ``json_schema`` the given schema. The generate API has no such field
(TGI's generate ``grammar`` is not OpenAI's), so there it is a 400.
"""

from __future__ import annotations

import re
from typing import Any

from ..http.errors import RequestError, unsupported_value

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ANY_OBJECT = {"type": "object"}


def engine_response_format(value: Any, *, generate: bool) -> dict[str, Any] | None:
    """The ``response_format`` to send, or None for plain text; raises ``RequestError``."""
    if not isinstance(value, dict):
        raise RequestError("'response_format' must be an object", param="response_format")
    kind = value.get("type")
    if kind == "text":
        return None
    if kind not in ("json_object", "json_schema"):
        raise RequestError(
            f"'response_format.type' must be 'text', 'json_object' or 'json_schema', got {kind!r}",
            param="response_format.type",
        )
    if generate:
        raise unsupported_value(
            "'response_format' is not supported by this endpoint: its engine takes the "
            "generate API (REQUEST_FORMAT=generate), which has no structured output; deploy "
            "the model with a messages (chat) API",
            param="response_format",
        )
    if kind == "json_object":
        return {"type": "json_object", "value": _ANY_OBJECT}
    spec = value.get("json_schema")
    if not isinstance(spec, dict):
        raise RequestError(
            "'response_format.json_schema' must be an object with 'name' and 'schema'",
            param="response_format.json_schema",
        )
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RequestError(
            f"'response_format.json_schema.name' must be 1-64 letters, digits, '_' or '-', "
            f"got {name!r}",
            param="response_format.json_schema.name",
        )
    schema = spec.get("schema")
    if not isinstance(schema, dict):
        raise RequestError(
            "'response_format.json_schema.schema' must be a JSON Schema object: the engines "
            "constrain the output to it",
            param="response_format.json_schema.schema",
        )
    return {"type": "json_schema", "json_schema": spec, "value": {"name": name, "schema": schema}}
