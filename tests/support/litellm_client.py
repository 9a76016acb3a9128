"""LiteLLM as a user runs it, in its own venv (``.venv-litellm``: LiteLLM pins ``openai<3``).

Run as a script by that venv's Python, so it imports nothing from this repository. It reads
``{"base_url", "model", "timeout", "calls": [{"api_key", "messages", "params", "api"?}]}`` on
stdin (``timeout``: each call's, in seconds, which the test scales by its patience factor), makes
each call through LiteLLM's ``openai/`` provider (the one LiteLLM documents for
OpenAI-compatible servers): ``litellm.completion`` (chat completions), or
``litellm.responses`` with the messages as its input when ``api`` is ``"responses"``. It prints
a JSON list with one result per call: the response (chat streams rebuilt by
``litellm.stream_chunk_builder``, with the streamed text pieces; Responses streams as their
final response, with the streamed event types and the items each ``output_item.done`` event
carried) or the exception raised.
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
    common = {
        "model": "openai/" + plan["model"],
        "api_base": plan["base_url"],
        "timeout": plan["timeout"],
    }
    print(json.dumps([_call(common, call) for call in plan["calls"]], default=str))


def _call(common: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    kwargs = {**common, **call.get("params", {})}
    try:
        if call.get("api") == "responses":
            return _responses(kwargs, call)
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


def _responses(kwargs: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    response = litellm.responses(input=call["messages"], api_key=call["api_key"], **kwargs)
    if not kwargs.get("stream"):
        return {"response": response.model_dump()}
    events = [event.model_dump() for event in response]
    (done,) = [e["response"] for e in events if e["type"] == "response.completed"]
    items = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    return {"response": done, "types": [e["type"] for e in events], "items": items}


if __name__ == "__main__":
    main()
