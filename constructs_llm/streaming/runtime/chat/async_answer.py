"""An answer an asynchronous endpoint wrote to S3, as an OpenAI ``chat.completion``, and the
engine body that asks for one answer. Stdlib only: this file ships in the Lambda asset (the
batch worker's asynchronous lines) and serves ``constructs_llm.streaming.async_chat`` (the
client helpers).

An asynchronous endpoint writes one answer per request, so the engine is asked not to stream
(``one_answer_body``). A chat engine's answer is already an OpenAI ``chat.completion``; a
generate engine's (``{"generated_text": ..., "details": {...}}``, or TGI's list of one, "wrap
generation inside a Vec to match api-inference", text-generation-inference
``router/src/server.rs`` ``compat_generate``) becomes one, without the prompt TGI repeats for
text-generation models there (its ``compat_return_full_text``); an answer written as a stream
(a container that streams whatever it is asked) is parsed as the invoker parses streams.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...formats import StreamFormat
from ..parsing.events import DoneEvent, ErrorEvent
from ..parsing.parser import parse_stream
from ..whole_answer import answered
from .completion import CompletionBuilder
from .wire import CompletionShape

#: The largest body ``InvokeEndpointAsync`` takes inline (botocore ``AsyncBodyBlob`` max:
#: "The inline payload can be up to 128,000 bytes", ``InvokeEndpointAsyncInput``).
INLINE_LIMIT = 128_000


class AnswerError(Exception):
    """The answer is an error, or not an answer.

    :param message: what was found.
    :param failure: the engine's error, or the body that is not an answer.
    """

    def __init__(self, message: str, *, failure: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.failure = failure


def one_answer_body(engine_body: bytes) -> bytes:
    """The invoker's engine body, asking for one answer instead of a stream (a stream's
    options go with it: vLLM refuses ``stream_options`` without ``stream``)."""
    engine = json.loads(engine_body)
    engine["stream"] = False
    engine.pop("stream_options", None)
    return json.dumps(engine, ensure_ascii=False, separators=(",", ":")).encode()


def chat_completion(
    body: bytes,
    *,
    stream_format: StreamFormat | str = StreamFormat.AUTO,
    model: str = "",
    logprobs: bool = False,
    prompt: str | None = None,
) -> dict[str, Any]:
    """An answer SageMaker wrote to S3, as an OpenAI ``chat.completion``: a chat engine's as
    it is, a generate engine's converted (``prompt``: the prompt to drop where the engine
    repeats it), a stream's aggregated as the invoker aggregates one."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return _from_stream(body, StreamFormat(stream_format), model, logprobs)
    if isinstance(data, dict) and data.get("object") == "chat.completion":
        return data
    if isinstance(data, dict) and "choices" in data:
        return data
    generation = data[0] if isinstance(data, list) and len(data) == 1 else data
    if isinstance(generation, dict) and isinstance(generation.get("generated_text"), str):
        return _from_generation(generation, model, prompt)
    if isinstance(data, dict) and "error" in data:
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise AnswerError(f"the engine answered with an error: {message}", failure=str(message))
    return _from_stream(body, StreamFormat(stream_format), model, logprobs)


# -- helpers ----------------------------------------------------------------------------------


def _from_generation(generation: dict[str, Any], model: str, prompt: str | None) -> dict[str, Any]:
    text: str = generation["generated_text"]
    if prompt and text.startswith(prompt):
        text = text[len(prompt) :]
    found = generation.get("details")
    details: dict[str, Any] = found if isinstance(found, dict) else {}
    done = DoneEvent(
        finish_reason=details.get("finish_reason"),
        generated_text=text,
        completion_tokens=details.get("generated_tokens"),
    )
    builder = _builder(model, logprobs=False)
    return builder.build(done)


def _from_stream(body: bytes, fmt: StreamFormat, model: str, logprobs: bool) -> dict[str, Any]:
    builder = _builder(model, logprobs=logprobs)
    end = answered(builder, parse_stream([body], fmt))
    if isinstance(end, DoneEvent):
        return builder.build(end)
    if isinstance(end, ErrorEvent):
        raise AnswerError(f"the answer holds an error: {end.message}", failure=end.message)
    shown = body[:200].decode(errors="replace")
    raise AnswerError(
        f"the answer is not a chat completion, a generation or a complete stream: {shown!r}",
        failure=body.decode(errors="replace"),
    )


def _builder(model: str, *, logprobs: bool) -> CompletionBuilder:
    return CompletionBuilder(CompletionShape(model=model, logprobs=logprobs))


def generate_prompt(data: Mapping[str, Any]) -> str | None:
    """A generate request's prompt: its one user message's text (checked by the builder)."""
    content = data["messages"][0].get("content")
    if isinstance(content, str):
        return content
    return str(content[0].get("text")) if isinstance(content, list) and content else None
