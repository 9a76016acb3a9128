"""An engine's error payload -> one ``ErrorEvent``. Stdlib only: this file ships in the Lambda.

Shapes, each read from the engine's own source:

- TGI generate: ``{"error": "text", "error_type": "validation" | "generation" | ...}``
  (huggingface/text-generation-inference: ``router/src/server.rs``, ``impl From<InferError>
  for Event``).
- TGI Messages API: ``{"error": {"message", "http_status_code": 422}}``. The status is 422
  for every failure, overload and generation errors included (TGI's
  ``router/src/infer/mod.rs``, ``InferError::into_openai_event`` at db931fcf), so the error
  type is read back from the message, which starts with the ``InferError`` variant's display
  text.
- vLLM, SGLang: ``{"error": {"message", "type", "param", "code": <HTTP status>}}``; SGLang's
  aborts name the status in ``type`` (``"TOO_MANY_REQUESTS"``; sgl-project/sglang:
  ``python/sglang/srt/entrypoints/openai/serving_chat.py`` at 002897c2), older vLLM sends the
  same fields flat with ``"object": "error"``.
- DJL LMI: ``{"code": 400, "error": "text"}`` (the Java frontend's line for a failed Python
  worker, deepjavalibrary/djl-serving: ``engines/python/.../Request.java`` at d21927c4), and
  the ``3p`` formatters' ``{"error": {"error_code": 400, "error_msg"}}``, nested once more in
  the non-streamed form (deepjavalibrary/djl-serving:
  ``engines/python/setup/djl_python/output_formatter.py``).
"""

from __future__ import annotations

import json
from typing import Any

from .events import ErrorEvent

# TGI's InferError display prefixes -> its error_type names (huggingface/text-generation-inference:
# router/src/infer/mod.rs).
# "Incomplete generation stream" precedes "Incomplete generation", which it extends.
_TGI_PREFIXES = (
    ("Input validation error:", "validation"),
    ("Model is overloaded", "overloaded"),
    ("Request failed during generation:", "generation"),
    ("Incomplete generation stream", "incomplete_generation_stream"),
    ("Incomplete generation", "incomplete_generation"),
    ("Template error:", "template_error"),
    ("Missing template vatiable:", "missing_template_variable"),  # TGI's own spelling
    ("Tool error:", "tool_error"),
    ("Stream event serialization error", "stream_serialization_error"),
)
_TGI_MESSAGES_STATUS = 422


def engine_error(obj: dict[str, Any]) -> ErrorEvent:
    """The ``ErrorEvent`` for an object whose ``error`` key is set (see the module doc)."""
    error = obj["error"]
    if type(error) is dict:
        inner = error.get("error")
        return _error_object(inner if type(inner) is dict else error, obj)
    status = _http_status(obj.get("code"))
    code = obj.get("error_type")
    if code is None and status is not None:
        code = status
    return _event(error, code, status, obj)


def _tgi_error_type(message: str) -> str | None:
    """TGI's ``error_type`` for the display text of one of its errors, if it is one."""
    for prefix, name in _TGI_PREFIXES:
        if message.startswith(prefix):
            return name
    return None


def _error_object(error: dict[str, Any], obj: dict[str, Any]) -> ErrorEvent:
    message = error.get("message")
    if message is None:
        message = error.get("error_msg")
    number = error.get("code")
    if number is None:
        number = error.get("error_code")
    status = _http_status(number)
    code = error.get("type") or number
    if "http_status_code" in error and not error.get("type"):
        status = _http_status(error.get("http_status_code"))
        if status == _TGI_MESSAGES_STATUS:  # says nothing: classify by the message instead
            status = None
            code = _tgi_error_type(message) if type(message) is str else None
    return _event(message, code, status, obj)


def _event(message: Any, code: Any, status: int | None, obj: dict[str, Any]) -> ErrorEvent:
    if message is None or message == "":
        message = f"the model reported an error: {json.dumps(obj, ensure_ascii=False)}"
    return ErrorEvent(message=str(message), code=None if code is None else str(code), status=status)


def _http_status(value: Any) -> int | None:
    """An HTTP error status given as an int or a string of digits, else None."""
    if type(value) is str and value.isdigit():
        value = int(value)
    return value if type(value) is int and 400 <= value <= 599 else None
