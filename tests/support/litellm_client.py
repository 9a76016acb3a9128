"""LiteLLM as a user runs it, in its own venv (``.venv-litellm``: LiteLLM pins ``openai<3``).

Run as a script by that venv's Python, so it imports nothing from this repository. It reads
``{"base_url", "model", "calls": [{"api_key", "messages", "params"}]}`` on stdin, makes each
call through LiteLLM's ``openai/`` provider (the one LiteLLM documents for OpenAI-compatible
servers) and prints a JSON list with one result per call: the response (streams rebuilt by
``litellm.stream_chunk_builder``, with the streamed text pieces) or the exception raised.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

# LiteLLM fetches its model price table at import unless told to use the packaged copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

litellm.suppress_debug_info = True  # no "Provider List" banners on stdout


def main() -> None:
    plan = json.load(sys.stdin)
    common = {"model": "openai/" + plan["model"], "api_base": plan["base_url"], "timeout": 10}
    print(json.dumps([_call(common, call) for call in plan["calls"]], default=str))


def _call(common: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    kwargs = {**common, **call.get("params", {})}
    try:
        response = litellm.completion(
            api_key=call["api_key"], messages=call["messages"], num_retries=0, **kwargs
        )
        if not kwargs.get("stream"):
            return {"response": response.model_dump()}
        chunks = list(response)
        pieces = [c.choices[0].delta.content for c in chunks if c.choices]
        rebuilt = litellm.stream_chunk_builder(chunks, messages=call["messages"])
        return {"response": rebuilt.model_dump(), "pieces": [p for p in pieces if p]}
    except Exception as error:  # the test asserts which one, and its status
        status = getattr(error, "status_code", None)
        return {"error": type(error).__name__, "status": status, "message": str(error)[:300]}


if __name__ == "__main__":
    main()
