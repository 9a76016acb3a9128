"""Token streams in each serving container's real framing, for the fake SageMaker endpoint.

Each function returns the byte payloads a container writes for a list of tokens; ``rechunk``
then cuts them at arbitrary points, as SageMaker ``PayloadPart`` boundaries are arbitrary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def _compact(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def tgi(
    tokens: Sequence[str],
    *,
    finish_reason: str = "length",
    log_prob: float = -0.25,
    input_length: int | None = None,
) -> list[bytes]:
    """TGI generate stream: ``data:{json}`` events (no space), the last one carrying
    ``generated_text`` and ``details`` (with ``input_length`` if given, as TGI 2+ sends it);
    no ``[DONE]``."""
    events: list[bytes] = []
    for index, text in enumerate(tokens):
        event: dict[str, Any] = {
            "index": index + 1,
            "token": {"id": 100 + index, "text": text, "logprob": log_prob, "special": False},
            "generated_text": None,
            "details": None,
        }
        if index == len(tokens) - 1:
            event["generated_text"] = "".join(tokens)
            event["details"] = {
                "finish_reason": finish_reason,
                "generated_tokens": len(tokens),
                "seed": None,
            }
            if input_length is not None:
                event["details"]["input_length"] = input_length
        events.append(b"data:" + _compact(event) + b"\n\n")
    return events


def tgi_error(message: str, error_type: str = "generation") -> bytes:
    """TGI's mid-stream error event."""
    return b"data:" + _compact({"error": message, "error_type": error_type}) + b"\n\n"


def openai(
    tokens: Sequence[str],
    *,
    finish_reason: str = "stop",
    model: str = "engine-model",
    log_prob: float | None = None,
    prompt_tokens: int | None = None,
    cached_tokens: int | None = None,
    reasoning_tokens: int | None = None,
) -> list[bytes]:
    """vLLM / TGI Messages API stream: ``data: {chat.completion.chunk}`` events, role first,
    an empty delta with the finish reason last, then ``data: [DONE]``. With ``prompt_tokens``,
    a usage chunk (empty ``choices``) comes before ``[DONE]``, as for ``include_usage``, with
    ``prompt_tokens_details.cached_tokens`` (vLLM's ``--enable-prompt-tokens-details``) and
    ``completion_tokens_details.reasoning_tokens`` when given."""
    base = {
        "id": "chatcmpl-engine",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
    }

    def chunk(delta: dict[str, Any], reason: str | None, logprobs: Any = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": reason}
        return b"data: " + _compact({**base, "choices": [choice]}) + b"\n\n"

    events = [chunk({"role": "assistant", "content": ""}, None)]
    for text in tokens:
        logprobs = None
        if log_prob is not None:
            entry = {"token": text, "logprob": log_prob, "bytes": None, "top_logprobs": []}
            logprobs = {"content": [entry]}
        events.append(chunk({"content": text}, None, logprobs))
    events.append(chunk({}, finish_reason))
    if prompt_tokens is not None:
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(tokens),
            "total_tokens": prompt_tokens + len(tokens),
        }
        if cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
        if reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        events.append(b"data: " + _compact({**base, "choices": [], "usage": usage}) + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


def openai_tool_calls(
    calls: Sequence[tuple[str, str, Sequence[str]]],
    *,
    text: Sequence[str] = (),
    model: str = "engine-model",
    prompt_tokens: int | None = None,
) -> list[bytes]:
    """vLLM's stream of a reply that calls tools (``--enable-auto-tool-choice``, hermes
    parser): the role, any ``text`` tokens, then for each ``(id, name, argument pieces)`` a
    delta with its index, id, type and name (empty arguments), then one delta per piece; an
    empty delta with finish reason ``tool_calls``, the usage chunk with ``prompt_tokens``, and
    ``[DONE]`` (vllm-project/vllm ``vllm/tool_parsers/hermes_tool_parser.py`` at 02bb669b)."""
    base = {
        "id": "chatcmpl-engine",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
    }

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
        return b"data: " + _compact({**base, "choices": [choice]}) + b"\n\n"

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in text]
    pieces = 0
    for index, (call_id, name, arguments) in enumerate(calls):
        function = {"name": name, "arguments": ""}
        first = {"index": index, "id": call_id, "type": "function", "function": function}
        events.append(chunk({"tool_calls": [first]}))
        for piece in arguments:
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
            pieces += 1
    events.append(chunk({}, "tool_calls"))
    if prompt_tokens is not None:
        completion = len(text) + pieces
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        }
        events.append(b"data: " + _compact({**base, "choices": [], "usage": usage}) + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


def openai_error(message: str, code: int = 500) -> list[bytes]:
    """vLLM's mid-stream error event, followed by ``[DONE]`` as vLLM sends it."""
    error = {
        "error": {"message": message, "type": "InternalServerError", "param": None, "code": code}
    }
    return [b"data: " + _compact(error) + b"\n\n", b"data: [DONE]\n\n"]


def lmi_jsonlines(
    tokens: Sequence[str], *, finish_reason: str = "length", log_prob: float = -0.5
) -> list[bytes]:
    """DJL LMI rolling-batch jsonlines: ``{"token": {"id", "text", "log_prob"}}`` per line, the
    last adding ``generated_text`` and ``details``."""
    lines: list[bytes] = []
    for index, text in enumerate(tokens):
        line: dict[str, Any] = {"token": {"id": 200 + index, "text": text, "log_prob": log_prob}}
        if index == len(tokens) - 1:
            line["generated_text"] = "".join(tokens)
            line["details"] = {
                "finish_reason": finish_reason,
                "generated_tokens": len(tokens),
                "inputs": None,
            }
        lines.append(_compact(line) + b"\n")
    return lines


def rechunk(payloads: Sequence[bytes], size: int) -> list[bytes]:
    """Join the payloads and cut them every ``size`` bytes (boundaries ignore lines and UTF-8)."""
    data = b"".join(payloads)
    return [data[i : i + size] for i in range(0, len(data), size)]
