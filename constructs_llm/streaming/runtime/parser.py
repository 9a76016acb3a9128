"""Pure, incremental parser for LLM token streams. Stdlib only: this file ships in the Lambda.

``parse_stream(chunks, fmt)`` turns the raw bytes a serving container streams (in whatever
parts they arrive) into ``TokenEvent``s and ``ToolCallEvent``s, then exactly one terminal
``DoneEvent`` or ``ErrorEvent``. Any chunking of the same bytes gives the same events, and
bad input gives an ``ErrorEvent``, never an exception.

Framing, per line (``LineBuffer`` splits lines; CRLF and a missing final newline are fine):

- ``data:{json}`` with or without a space after the colon (SSE), or a bare ``{json}`` line
  (JSON lines), in every format. ``data: [DONE]`` marks the end (see the terminal rule).
- Blank lines, SSE comments / keep-alives (``:...``) and the SSE fields ``event:``, ``id:``
  and ``retry:`` are skipped. Each ``data:`` line is parsed on its own, without waiting for
  the blank line that closes the SSE event: no engine splits one JSON object over several
  ``data:`` lines, and this saves a line of latency.
- Any other line: in the SSE formats (``TGI``, ``OPENAI``) it is an unknown SSE field and is
  skipped, as the SSE spec says; in ``LMI_JSONLINES`` and ``AUTO`` it is an ``ErrorEvent``
  (``code="invalid_json"``). A line that is not valid JSON, or JSON that is not an object
  (a JSON array hints that streaming is off), is an ``ErrorEvent`` in every format; so is a
  line over ``max_line_bytes`` (``code="line_too_long"``).

Payload shapes are recognised by their keys in every format, so a container whose output
option differs from the configured format (for example LMI with ``tgi_compat``) still parses:

- Errors: any object with a non-null ``error`` key, and older vLLM's ``{"object": "error",
  ...}``; ``engine_errors.py`` lists the shapes. ``ErrorEvent.code`` is the engine's own
  error type (TGI's ``error_type``, else ``type``, else the code), ``ErrorEvent.status`` the
  HTTP status the engine gave the error, if any.
- ``{"token": {"id", "text", "logprob" | "log_prob", "special"}, "generated_text",
  "details"}``: TGI ``generate_stream`` and DJL LMI jsonlines. Special tokens and empty
  texts give no ``TokenEvent``. The object with a non-null ``generated_text`` or ``details``
  is the last one: ``DoneEvent(details.finish_reason, generated_text)``, with the token
  counts ``details.generated_tokens`` and ``details.input_length`` (else the length of a
  non-empty ``details.prefill``) when present. LMI errors are
  ``token.error_msg`` or ``details.finish_reason == "error"`` (``code="model_error"``).
  The LMI transition form also carries ``"outputs"``: its text is the token's, so it is
  not emitted twice.
- ``{"choices": [{"delta": {"content", "tool_calls"}, "logprobs", "finish_reason"}]}``:
  OpenAI ``chat.completion.chunk`` (TGI Messages, vLLM, SGLang, LMI chat; ``text_completion``
  chunks with ``choices[].text`` and a whole ``chat.completion``'s ``choices[].message``
  too). Only choice index 0 is read; role and reasoning deltas carry no text, tool-call
  deltas become ``ToolCallEvent``s (``tool_calls.py``). ``log_prob`` is the sum of
  ``logprobs.content[].logprob`` (one entry in practice; DJL wraps the object in a list).
  A chunk with empty ``choices`` (the usage chunk) gives no event. ``finish_reason`` and the
  last ``usage`` object's ``prompt_tokens``/``completion_tokens`` are remembered for the
  ``DoneEvent``; ``finish_reason`` ``"error"`` or ``"abort"`` is an ``ErrorEvent``.
- ``{"body": {"generation", "prompt_token_count", "generation_token_count",
  "stop_reason"}}``: DJL LMI's ``3p`` form; the line with a ``stop_reason`` is the last.
- ``{"outputs": ["text", ...]}``: the old LMI jsonlines form.
- An object with ``generated_text`` but no token (a non-streamed response): ``DoneEvent``,
  preceded by one ``TokenEvent`` with that text if no text was streamed before it.
- Other objects are skipped, so new metadata events do not break the parser.

Terminal rule: the stream ends at the first of a token-form object with
``generated_text``/``details``, a ``3p`` line with a ``stop_reason``, an error, or the end of
the input. ``data: [DONE]`` marks the answer complete, but the input is still read to its
end: DJL's ``sse_chat`` formatter can write ``[DONE]`` before the last token of the same
step, and nothing read after the marker can turn the stream into an error (a failed or
stalled read after it ends the stream normally). Reaching the end of the input gives
``DoneEvent(finish_reason=<last finish_reason seen, else None>)`` (and the remembered usage):
the normal end for OpenAI streams and LMI chat jsonlines. ``DoneEvent.generated_text`` and
the token counts are set only when the engine sends them; a count that is not a
non-negative integer is ignored. Nothing is emitted after the terminal event, and the rest
of the input is not read.

If the chunk iterable raises ``UpstreamStreamError`` (as ``iter_payload_parts`` does for
SageMaker ``ModelStreamError``/``InternalStreamFailure`` and failed reads), that becomes the
terminal ``ErrorEvent``. When ``parse_stream`` stops, early or not, it calls ``close()`` on
the chunk iterator if it has one, so closing the event generator closes the upstream stream
(a generator that was never started ignores ``close()``; ``stream_events`` in
``sagemaker_stream`` covers that case too).
"""

from __future__ import annotations

import dataclasses
import json
import json.scanner
import types
from collections.abc import Callable, Generator, Iterable
from typing import Any, cast

from .engine_errors import engine_error
from .events import DoneEvent, ErrorEvent, StreamEvent, StreamFormat, TokenEvent
from .line_buffer import DEFAULT_MAX_LINE_BYTES, LineBuffer, LineTooLongError
from .tool_calls import ToolCallDeltas

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "ERROR_CODE_INVALID_JSON",
    "ERROR_CODE_LINE_TOO_LONG",
    "ERROR_CODE_MODEL_ERROR",
    "UpstreamStreamError",
    "parse_stream",
]

ERROR_CODE_INVALID_JSON = "invalid_json"
"""``ErrorEvent.code`` for a line that is not a JSON object (nor a known SSE line)."""
ERROR_CODE_LINE_TOO_LONG = "line_too_long"
"""``ErrorEvent.code`` for a line longer than ``max_line_bytes``."""
ERROR_CODE_MODEL_ERROR = "model_error"
"""``ErrorEvent.code`` for an engine error that names no code of its own (DJL LMI)."""

_MAX_QUOTED_LINE = 120  # characters of a bad line quoted in an error message

# The C scanner behind json.loads, without its two whitespace regex passes per call: it
# parses one JSON value starting at an index, so "data:" needs no slicing either.
_scan = cast(
    "Callable[[str, int], tuple[Any, int]]",
    json.scanner.make_scanner(cast(Any, json.JSONDecoder())),
)
_FINISH_REASON_ERROR = ErrorEvent(
    message="the model stopped with finish_reason 'error'", code=ERROR_CODE_MODEL_ERROR
)
# vLLM (FinishReason.ABORT, vllm/v1/engine/__init__.py) and SGLang (a graceful abort,
# serving_chat.py) end an aborted request with this finish reason: an error, not a stop.
_FINISH_REASON_ABORT = ErrorEvent(
    message="the engine aborted the request (finish_reason 'abort')", code="abort"
)
_FAILED_FINISH_REASONS = {"error": _FINISH_REASON_ERROR, "abort": _FINISH_REASON_ABORT}
_SSE_FIELDS = frozenset({"data", "event", "id", "retry"})


def _make_token_event_factory() -> Callable[[str, int | None, float | None], TokenEvent]:
    """A TokenEvent constructor for the hot path.

    TokenEvent is a frozen, slotted dataclass: its __init__ sets each field through
    object.__setattr__, about 0.5 us per event. Filling the slots through their descriptors
    gives an equal object in less than half the time. Should the class gain a field or lose
    its slots, this falls back to the constructor.
    """
    names = ("text", "token_id", "log_prob")
    slots: list[Any] = [getattr(TokenEvent, name, None) for name in names]
    fields = tuple(field.name for field in dataclasses.fields(TokenEvent))
    if fields != names or not all(isinstance(s, types.MemberDescriptorType) for s in slots):
        return TokenEvent
    set_text, set_token_id, set_log_prob = (slot.__set__ for slot in slots)
    new = object.__new__

    def token_event(text: str, token_id: int | None, log_prob: float | None) -> TokenEvent:
        event = new(TokenEvent)
        set_text(event, text)
        set_token_id(event, token_id)
        set_log_prob(event, log_prob)
        return event

    return token_event


_token_event = _make_token_event_factory()


class UpstreamStreamError(Exception):
    """The byte source failed mid-stream; ``parse_stream`` ends with this as an ErrorEvent.

    Raise it from the chunk iterable (``iter_payload_parts`` does, for SageMaker's in-stream
    ``ModelStreamError`` and ``InternalStreamFailure``).
    """

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message if code is None else f"{code}: {message}")
        self.message = message
        self.code = code

    def to_event(self) -> ErrorEvent:
        return ErrorEvent(message=self.message, code=self.code)


def parse_stream(
    chunks: Iterable[bytes],
    fmt: StreamFormat | str = StreamFormat.AUTO,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Generator[StreamEvent, None, None]:
    """Yield the events in a streamed model response; see the module docstring for the rules.

    ``chunks`` are the raw parts as they arrive (``bytes``, any split). ``fmt`` is the
    ``StreamFormat`` (or its value, such as ``"tgi"``) the engine was set up for.
    ``max_line_bytes`` bounds memory: a longer line ends the stream with an ErrorEvent.
    """
    state = _LineParser(StreamFormat(fmt))
    return _events(chunks, state, LineBuffer(max_line_bytes))


def _events(
    chunks: Iterable[bytes], state: _LineParser, buffer: LineBuffer
) -> Generator[StreamEvent, None, None]:
    source = iter(chunks)
    handle = state.handle
    out: list[StreamEvent] = []
    terminal: StreamEvent
    try:
        try:
            for lines in buffer.iter_lines(source):
                for line in lines:
                    if line and handle(line, out):
                        yield from state.settle(out)
                        return
                if out:
                    yield from out
                    out.clear()
            last = buffer.flush()
            if last and handle(last, out):
                yield from state.settle(out)
                return
        except UpstreamStreamError as exc:
            terminal = state.done() if state.after_done else exc.to_event()
        except LineTooLongError as exc:
            for line in exc.lines:
                if line and handle(line, out):
                    yield from state.settle(out)
                    return
            terminal = ErrorEvent(message=str(exc), code=ERROR_CODE_LINE_TOO_LONG)
            if state.after_done:
                terminal = state.done()
        else:
            terminal = state.done()
        yield from out
        yield terminal
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


class _LineParser:
    """Per-stream state and the per-line dispatch. ``handle`` appends the line's events to
    ``out`` and returns True once it appended the terminal event."""

    __slots__ = (
        "after_done",
        "completion_tokens",
        "finish_reason",
        "prompt_tokens",
        "sse",
        "streamed_text",
        "tool_calls",
    )

    def __init__(self, fmt: StreamFormat) -> None:
        # SSE formats skip unknown lines (unknown SSE fields); the others report them.
        self.sse = fmt is StreamFormat.TGI or fmt is StreamFormat.OPENAI
        self.finish_reason: str | None = None
        self.streamed_text = False
        self.prompt_tokens: int | None = None  # from an OpenAI-style usage object
        self.completion_tokens: int | None = None
        self.tool_calls = ToolCallDeltas()
        self.after_done = False  # a [DONE] marker was read: the answer is complete

    def settle(self, out: list[StreamEvent]) -> list[StreamEvent]:
        """``out`` ending in its terminal event: after ``[DONE]`` the answer is complete, so a
        failure read after it (a stalled or broken end of the body) does not undo it."""
        if self.after_done and type(out[-1]) is ErrorEvent:
            out[-1] = self.done()
        return out

    def done(self, finish_reason: str | None = None) -> DoneEvent:
        """The terminal event of a stream that ends at the end of the input (or a final line
        whose ``finish_reason`` is given)."""
        return DoneEvent(
            finish_reason=finish_reason or self.finish_reason,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
        )

    def handle(self, line: str, out: list[StreamEvent]) -> bool:
        """Parse one non-empty line."""
        if line.startswith("data:{"):  # TGI
            start = 5
        elif line.startswith("data:"):
            start = 6 if line[5:6] == " " else 5
        elif line[0] == "{":
            start = 0
        elif line[0] == ":":
            return False  # SSE comment / keep-alive
        else:
            return self._other_line(line, out)
        try:
            obj, end = _scan(line, start)
        except (StopIteration, ValueError, RecursionError):
            return self._slow_payload(line[start:], out)
        if end != len(line) and not line[end:].isspace():
            return self._slow_payload(line[start:], out)
        if type(obj) is not dict:
            return self._not_an_object(obj, line, out)
        token = obj.get("token")
        if type(token) is dict and "error" not in obj:
            return self._token(obj, token, out)  # the hot path: one call fewer
        return self._object(obj, out)

    # -- the JSON object: dispatch on keys, most frequent shapes first ---------------------

    def _object(self, obj: dict[str, Any], out: list[StreamEvent]) -> bool:
        if "error" in obj and obj["error"] is not None:
            out.append(engine_error(obj))
            return True
        token = obj.get("token")
        if type(token) is dict:
            return self._token(obj, token, out)
        choices = obj.get("choices")
        if choices is not None:
            usage = obj.get("usage")
            if usage:  # the usage chunk, or every chunk with vLLM's continuous usage stats
                self._usage(usage)
            return self._chat_chunk(choices, out)
        body = obj.get("body")
        if type(body) is dict and "generation" in body:
            return self._generation(body, out)
        outputs = obj.get("outputs")
        if type(outputs) is list:
            for text in outputs:
                if type(text) is str and text:
                    out.append(_token_event(text, None, None))
                    self.streamed_text = True
            return False
        if obj.get("generated_text") is not None or obj.get("details"):
            return self._final(obj, out)
        if obj.get("object") == "error":  # older vLLM: {"object": "error", "message", ...}
            out.append(engine_error({"error": obj}))
            return True
        return False  # an object of no known shape: skip it

    def _token(self, obj: dict[str, Any], token: dict[str, Any], out: list[StreamEvent]) -> bool:
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
                out.append(_token_event(text, token_id, log_prob))
                self.streamed_text = True
        if obj.get("generated_text") is None and not obj.get("details"):
            return False
        return self._final(obj, out)

    def _final(self, obj: dict[str, Any], out: list[StreamEvent]) -> bool:
        """The last object of a TGI / LMI stream: ``generated_text`` and maybe ``details``."""
        details = obj.get("details")
        if type(details) is not dict:
            details = {}
        reason = details.get("finish_reason")
        if reason == "error":
            out.append(_FINISH_REASON_ERROR)
            return True
        text = obj.get("generated_text")
        text = text if type(text) is str else None
        if text and not self.streamed_text:
            out.append(_token_event(text, None, None))  # a whole, non-streamed response
        prompt_tokens = _count(details.get("input_length"))
        if prompt_tokens is None:  # a non-streamed TGI response lists the prompt's tokens
            prefill = details.get("prefill")
            if type(prefill) is list and prefill:
                prompt_tokens = len(prefill)
        out.append(
            DoneEvent(
                finish_reason=_str_or_none(reason),
                generated_text=text,
                prompt_tokens=prompt_tokens,
                completion_tokens=_count(details.get("generated_tokens")),
            )
        )
        return True

    def _generation(self, body: dict[str, Any], out: list[StreamEvent]) -> bool:
        """DJL LMI's ``3p`` form: ``{"body": {"generation", "prompt_token_count",
        "generation_token_count", "stop_reason"}}``, the last line with a ``stop_reason``
        (``djl_python/output_formatter.py`` ``_jsonlines_3p_output_formatter``)."""
        text = body.get("generation")
        if text and type(text) is str:
            out.append(_token_event(text, None, None))
            self.streamed_text = True
        prompt = _count(body.get("prompt_token_count"))  # on the first line only
        if prompt is not None:
            self.prompt_tokens = prompt
        generated = _count(body.get("generation_token_count"))  # running total
        if generated is not None:
            self.completion_tokens = generated
        reason = body.get("stop_reason")
        if reason is None:
            return False
        failed = _FAILED_FINISH_REASONS.get(reason)
        out.append(failed if failed is not None else self.done(str(reason)))
        return True

    def _usage(self, usage: Any) -> None:
        """Remember an OpenAI ``usage`` object's counts (the last one wins: it is cumulative)."""
        if type(usage) is dict:
            self.prompt_tokens = _count(usage.get("prompt_tokens"))
            self.completion_tokens = _count(usage.get("completion_tokens"))

    def _chat_chunk(self, choices: Any, out: list[StreamEvent]) -> bool:
        if type(choices) is not list:
            return False
        for choice in choices:
            if type(choice) is not dict:
                continue
            index = choice.get("index")
            if index is not None and index != 0:
                continue  # only the first choice: n > 1 is not one text
            delta = choice.get("delta")
            if type(delta) is dict:
                text = delta.get("content")
                log_prob = _chat_log_prob(choice.get("logprobs"))
            else:  # a completions chunk, or a whole chat.completion's message
                delta = choice.get("message")
                if type(delta) is not dict:
                    delta = {}
                text = delta.get("content") or choice.get("text")
                log_prob = None if "message" in choice else _chat_log_prob(choice.get("logprobs"))
            if text and type(text) is str:
                out.append(_token_event(text, None, log_prob))
                self.streamed_text = True
            calls = delta.get("tool_calls")
            if calls:
                self.tool_calls.add(calls, out)
            reason = choice.get("finish_reason")
            if reason is not None:
                failed = _FAILED_FINISH_REASONS.get(reason)
                if failed is not None:
                    out.append(failed)
                    return True
                self.finish_reason = _str_or_none(reason)
        return False

    # -- rarer lines -----------------------------------------------------------------------

    def _slow_payload(self, payload: str, out: list[StreamEvent]) -> bool:
        """A payload the fast path could not take: [DONE], padded JSON or a bad line."""
        stripped = payload.strip()
        if stripped == "[DONE]":
            # Not terminal yet: DJL's sse_chat formatter can write [DONE] and then the last
            # token of the same step (djl_python/output_formatter.py,
            # _sse_chat_output_formatter, at 76158f2a), so the body is read to its end.
            self.after_done = True
            return False
        if not stripped:
            return False  # "data:" with no value
        try:
            obj = json.loads(stripped)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
            message = f"stream line is not valid JSON ({exc}): {_quote(payload)}"
            out.append(ErrorEvent(message=message, code=ERROR_CODE_INVALID_JSON))
            return True
        if type(obj) is dict:
            return self._object(obj, out)
        return self._not_an_object(obj, payload, out)

    def _not_an_object(self, obj: Any, line: str, out: list[StreamEvent]) -> bool:
        hint = " (a JSON array: is streaming enabled on the request?)" if type(obj) is list else ""
        message = f"stream line is JSON but not an object{hint}: {_quote(line)}"
        out.append(ErrorEvent(message=message, code=ERROR_CODE_INVALID_JSON))
        return True

    def _other_line(self, line: str, out: list[StreamEvent]) -> bool:
        if line.isspace():
            return False
        stripped = line.lstrip()
        if stripped[0] == "{" or stripped.startswith("data:"):
            return self.handle(stripped, out)  # indented JSON or SSE line
        if stripped[0] == "[":
            return self._slow_payload(stripped, out)  # JSON, but not an object
        if self.sse or line.partition(":")[0] in _SSE_FIELDS:
            return False
        message = f"stream line is neither JSON nor an SSE line: {_quote(line)}"
        out.append(ErrorEvent(message=message, code=ERROR_CODE_INVALID_JSON))
        return True


def _chat_log_prob(logprobs: Any) -> float | None:
    """Log-prob of a chunk's text: the sum over its tokens (usually exactly one)."""
    if type(logprobs) is list and len(logprobs) == 1:
        # DJL's jsonlines_chat formatter wraps the object in a one-element list (a trailing
        # comma makes it a tuple: djl_python/output_formatter.py at 76158f2a).
        logprobs = logprobs[0]
    if type(logprobs) is not dict:
        return None
    entries = logprobs.get("content")
    values: Any
    if type(entries) is list and entries:
        values = [entry.get("logprob") if type(entry) is dict else None for entry in entries]
    else:
        values = logprobs.get("token_logprobs")  # completions chunks
        if type(values) is not list or not values:
            return None
    total = 0.0
    for value in values:
        if type(value) is not float and type(value) is not int:
            return None
        total += value
    return total


def _count(value: Any) -> int | None:
    """A token count: a non-negative int (not a bool), else unknown."""
    return value if type(value) is int and value >= 0 else None


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _quote(line: str) -> str:
    if len(line) <= _MAX_QUOTED_LINE:
        return repr(line)
    return repr(line[:_MAX_QUOTED_LINE]) + f" ... ({len(line)} characters)"
