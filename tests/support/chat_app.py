"""The README's app, examples/chat/app.py, in-process: its stack class compiled from the file
as written (the app's last three lines, which create the App and synthesize it, left out), and
the context its cdk.json gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["APP", "chat_context", "chat_stack_class", "chat_stack_code"]

APP = Path(__file__).resolve().parent.parent.parent / "examples" / "chat" / "app.py"


def chat_stack_code() -> str:
    """The app's source up to its App: imports and the ChatStack class. The rest is exactly
    the one stack the README deploys, synthesized."""
    stack_code, app_code = APP.read_text().split("\napp = App()\n", 1)
    assert app_code.strip() == 'ChatStack(app, "ChatStack")\napp.synth()'
    return stack_code


def chat_stack_class(stack_code: str | None = None) -> Any:
    """The ChatStack class compiled from ``stack_code`` (the app's own by default)."""
    namespace: dict[str, Any] = {}
    exec(compile(stack_code or chat_stack_code(), str(APP), "exec"), namespace)
    return namespace["ChatStack"]


def chat_context() -> dict[str, Any]:
    """The context examples/chat/cdk.json gives the app."""
    context: dict[str, Any] = json.loads((APP.parent / "cdk.json").read_text())["context"]
    return context
