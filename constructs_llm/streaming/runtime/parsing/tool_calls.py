"""Engines' tool-call deltas -> ``ToolCallEvent``s. Stdlib only: this file ships in the Lambda.

Engines stream a tool call as ``delta.tool_calls[]`` entries ``{"index", "id", "type",
"function": {"name", "arguments"}}``, but differ in what they repeat:

- vLLM sends ``id``, ``type`` and ``name`` once, then ``{"index", "function": {"arguments"}}``
  pieces, sometimes two entries for one index in one delta (vllm-project/vllm:
  ``vllm/tool_parsers/hermes_tool_parser.py`` at 02bb669b).
- SGLang sends every field on every entry, ``null`` after the first (sgl-project/sglang:
  ``python/sglang/srt/entrypoints/openai/serving_chat.py`` at 0c078e6f).
- TGI repeats the same ``id`` on every entry, ``name`` only on the first
  (huggingface/text-generation-inference: ``router/src/chat.rs`` at db931fcf).

OpenAI clients join string fields across deltas (the ``openai`` SDK's stream accumulator and
LangChain both concatenate a repeated name), so each call's ``id`` and ``name`` are passed on
once, on the first entry that has them. A whole ``message.tool_calls`` list (a non-streamed
reply) has no ``index``: the position is used, and arguments sent as a JSON object (TGI's
non-streamed form) become their JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from .events import StreamEvent, ToolCallEvent

_ID_SENT = 1
_NAME_SENT = 2


class ToolCallDeltas:
    """Per-stream state: which calls already had their id and name passed on."""

    __slots__ = ("_sent",)

    def __init__(self) -> None:
        self._sent: dict[tuple[int, int], int] = {}

    def add(self, calls: Any, out: list[StreamEvent], choice: int = 0) -> None:
        """Append the ``ToolCallEvent``s of one ``tool_calls`` list (of ``choice``) to ``out``."""
        if type(calls) is not list:
            return
        for position, call in enumerate(calls):
            if type(call) is dict:
                event = self._event(call, position, choice)
                if event is not None:
                    out.append(event)

    def _event(self, call: dict[str, Any], position: int, choice: int) -> ToolCallEvent | None:
        index = call.get("index")
        if type(index) is not int or index < 0:
            index = position
        function = call.get("function")
        if type(function) is not dict:
            function = {}
        key = (choice, index)
        sent = self._sent.get(key, 0)
        call_id = call.get("id")
        if type(call_id) is not str or not call_id or sent & _ID_SENT:
            call_id = None
        else:
            sent |= _ID_SENT
        name = function.get("name")
        if type(name) is not str or not name or sent & _NAME_SENT:
            name = None
        else:
            sent |= _NAME_SENT
        self._sent[key] = sent
        arguments = _arguments(function.get("arguments"))
        if call_id is None and name is None and not arguments:
            return None
        return ToolCallEvent(index=index, id=call_id, name=name, arguments=arguments, choice=choice)


def _arguments(value: Any) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
