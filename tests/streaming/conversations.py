"""Conversations shared by the streaming tests."""

from __future__ import annotations

from typing import Any


def tool_turn(city: str) -> list[dict[str, Any]]:
    """A model's call to ``get_weather`` for ``city`` and the tool's answer (id ``call_1``)."""
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": f'{{"city": "{city}"}}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"celsius": 21}'},
    ]
