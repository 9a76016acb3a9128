"""The token form of TGI ``generate_stream`` and DJL LMI jsonlines, DJL LMI's ``3p`` form and
the old LMI ``outputs`` form: one function per shape, each appending its events to ``out``
and returning True once it appended the terminal event.

Stdlib only: this file ships in the Lambda asset. ``parser.py`` documents the rules.
"""

from __future__ import annotations

from typing import Any

from .events import DoneEvent, ErrorEvent, StreamEvent
from .stream_state import (
    ERROR_CODE_MODEL_ERROR,
    StreamState,
    count,
    failed_finish,
    str_or_none,
    token_event,
)


def token_form(
    state: StreamState, obj: dict[str, Any], token: dict[str, Any], out: list[StreamEvent]
) -> bool:
    """TGI / LMI token form; the object with generated_text or details is the last."""
    if "error_msg" in token:
        out.append(ErrorEvent(message=str(token["error_msg"]), code=ERROR_CODE_MODEL_ERROR))
        return True
    text = token.get("text")
    if text and type(text) is str:
        special = token.get("special")
        if special is None:
            special = token.get("special_token")
        if not special:
            log_prob = token.get("logprob")
            if log_prob is None:
                log_prob = token.get("log_prob")
            if type(log_prob) is not float:
                log_prob = float(log_prob) if type(log_prob) is int else None
            token_id = token.get("id")
            if type(token_id) is not int:
                token_id = None
            out.append(token_event(text, token_id, log_prob))
            state.streamed_text = True
    if obj.get("generated_text") is None and not obj.get("details"):
        return False
    return final(state, obj, out)


def final(state: StreamState, obj: dict[str, Any], out: list[StreamEvent]) -> bool:
    """The last object of a TGI / LMI stream: ``generated_text`` and maybe ``details``."""
    details = obj.get("details")
    if type(details) is not dict:
        details = {}
    reason = details.get("finish_reason")
    failed = failed_finish(reason)
    if failed is not None:
        out.append(failed)
        return True
    text = obj.get("generated_text")
    text = text if type(text) is str else None
    if text and not state.streamed_text:
        out.append(token_event(text, None, None))  # a whole, non-streamed response
    prompt_tokens = count(details.get("input_length"))
    if prompt_tokens is None:  # a non-streamed TGI response lists the prompt's tokens
        prefill = details.get("prefill")
        if type(prefill) is list and prefill:
            prompt_tokens = len(prefill)
    out.append(
        DoneEvent(
            finish_reason=str_or_none(reason),
            generated_text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=count(details.get("generated_tokens")),
        )
    )
    return True


def generation(state: StreamState, body: dict[str, Any], out: list[StreamEvent]) -> bool:
    """DJL LMI's ``3p`` form: ``{"body": {"generation", "prompt_token_count",
    "generation_token_count", "stop_reason"}}``, the last line with a ``stop_reason``
    (deepjavalibrary/djl-serving: ``djl_python/output_formatter.py``,
    ``_jsonlines_3p_output_formatter``)."""
    text = body.get("generation")
    if text and type(text) is str:
        out.append(token_event(text, None, None))
        state.streamed_text = True
    prompt = count(body.get("prompt_token_count"))  # on the first line only
    if prompt is not None:
        state.prompt_tokens = prompt
    generated = count(body.get("generation_token_count"))  # running total
    if generated is not None:
        state.completion_tokens = generated
    reason = body.get("stop_reason")
    if reason is None:
        return False
    failed = failed_finish(reason)
    out.append(failed if failed is not None else state.done(str(reason)))
    return True


def outputs(state: StreamState, texts: list[Any], out: list[StreamEvent]) -> bool:
    """The old LMI jsonlines form: ``{"outputs": ["text", ...]}``, which has no final event:
    its end of input is its end."""
    state.open_ended = True
    for text in texts:
        if type(text) is str and text:
            out.append(token_event(text, None, None))
            state.streamed_text = True
    return False
