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
option differs from the configured format (for example LMI with ``tgi_compat``) still parses
(the token, ``3p`` and ``outputs`` forms are read in ``token_forms.py``, OpenAI chunks in
``chat_chunks.py``, with the state of ``stream_state.py``):

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
  ``token.error_msg`` (``code="model_error"``) or a failed ``details.finish_reason``.
  The LMI transition form also carries ``"outputs"``: its text is the token's, so it is
  not emitted twice.
- ``{"choices": [{"delta": {"content", "reasoning", "tool_calls"}, "logprobs",
  "finish_reason"}]}``: OpenAI ``chat.completion.chunk`` (TGI Messages, vLLM, SGLang, LMI
  chat; ``text_completion`` chunks with ``choices[].text`` and a whole ``chat.completion``'s
  ``choices[].message`` too). Every choice is read, each event carrying its choice's
  ``index`` (``n`` > 1). A reasoning delta (``reasoning``, vLLM's name since 0.25, or
  ``reasoning_content``, SGLang's and older vLLM's) becomes a ``ReasoningEvent``; a role
  delta carries nothing; tool-call deltas become ``ToolCallEvent``s (``tool_calls.py``).
  ``log_prob`` is the sum of ``logprobs.content[].logprob`` (one entry in practice; DJL
  wraps the object in a list), ``top_logprobs`` that entry's alternatives. A chunk with
  empty ``choices`` (the usage chunk) gives no event. Each choice's ``finish_reason`` and the
  last ``usage`` object's counts (``prompt_tokens``, ``completion_tokens``, reasoning tokens)
  are remembered for the ``DoneEvent``; a failed ``finish_reason`` is an ``ErrorEvent``.
- ``{"body": {"generation", "prompt_token_count", "generation_token_count",
  "stop_reason"}}``: DJL LMI's ``3p`` form; the line with a ``stop_reason`` is the last.
- ``{"outputs": ["text", ...]}``: the old LMI jsonlines form.
- A failed finish reason (``details.finish_reason``, ``finish_reason``, ``stop_reason``) is
  the string ``"error"`` (``code="model_error"``) or ``"abort"`` (``code="abort"``); a value
  that is not a string is never looked up, so it cannot raise.
- An object with ``generated_text`` but no token (a non-streamed response): ``DoneEvent``,
  preceded by one ``TokenEvent`` with that text if no text was streamed before it.
- Other objects are skipped, so new metadata events do not break the parser.

Terminal rule: the stream ends at the first of a token-form object with
``generated_text``/``details``, a ``3p`` line with a ``stop_reason``, an error, or the end of
the input. ``data: [DONE]`` marks the answer complete, but the input is still read to its
end: DJL's ``sse_chat`` formatter can write ``[DONE]`` before the last token of the same
step, and nothing read after the marker can turn the stream into an error (a failed or
stalled read after it ends the stream normally). Reaching the end of the input after the
engine said it was done (a ``finish_reason`` on the first choice, or ``[DONE]``) gives
``DoneEvent(finish_reason=<last finish_reason seen, else None>)`` (and the remembered usage):
the normal end for OpenAI streams and LMI chat jsonlines, whose last chunk carries the finish
reason. Reaching it without either is a truncated stream (a container that died, a
connection cut between parts): ``ErrorEvent(code="truncated")``, never a normal stop. So is
a TGI or LMI token stream that ends before its final object, and a ``3p`` stream before its
``stop_reason``. The old LMI ``outputs`` form alone has no final event at all, so its end of
input is its normal end. ``DoneEvent.generated_text`` and
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

import json
import json.scanner
from collections.abc import Callable, Generator, Iterable
from typing import Any, cast

from ...formats import StreamFormat
from .chat_chunks import chat_chunk, remember_usage
from .engine_errors import engine_error
from .events import ErrorEvent, StreamEvent
from .line_buffer import DEFAULT_MAX_LINE_BYTES, LineBuffer, LineTooLongError
from .stream_state import StreamState
from .token_forms import final, generation, outputs, token_form

ERROR_CODE_INVALID_JSON = "invalid_json"
"""``ErrorEvent.code`` for a line that is not a JSON object (nor a known SSE line)."""
ERROR_CODE_LINE_TOO_LONG = "line_too_long"
"""``ErrorEvent.code`` for a line longer than ``max_line_bytes``."""
ERROR_CODE_TRUNCATED = "truncated"
"""``ErrorEvent.code`` for a stream that ended before the engine said it was done."""

_MAX_QUOTED_LINE = 120  # characters of a bad line quoted in an error message

# The C scanner behind json.loads, without its two whitespace regex passes per call: it
# parses one JSON value starting at an index, so "data:" needs no slicing either.
_scan = cast(
    "Callable[[str, int], tuple[Any, int]]",
    json.scanner.make_scanner(cast(Any, json.JSONDecoder())),
)
_SSE_FIELDS = frozenset({"data", "event", "id", "retry"})


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
    events = _parsed(chunks, state, LineBuffer(max_line_bytes), batched=False)
    return cast("Generator[StreamEvent, None, None]", events)


def parse_batches(
    chunks: Iterable[bytes],
    fmt: StreamFormat | str = StreamFormat.AUTO,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Generator[list[StreamEvent], None, None]:
    """``parse_stream``'s events in lists: one list for each part of ``chunks`` that gives any
    (its events, all there at once), the terminal event last in the last list; the same rules
    and the same ``close()`` of ``chunks``. A streamed answer writes each list in one send
    (TGI's last token and its end come in one part)."""
    state = _LineParser(StreamFormat(fmt))
    batches = _parsed(chunks, state, LineBuffer(max_line_bytes), batched=True)
    return cast("Generator[list[StreamEvent], None, None]", batches)


def _parsed(
    chunks: Iterable[bytes], state: _LineParser, buffer: LineBuffer, *, batched: bool
) -> Generator[StreamEvent | list[StreamEvent], None, None]:
    """The events one by one, or (``batched``) in a list per part: one generator for both, as
    a generator over this one's lists would cost ``parse_stream`` a resume per event."""
    source = iter(chunks)
    handle = state.handle
    out: list[StreamEvent] = []
    terminal: StreamEvent
    try:
        try:
            for lines in buffer.iter_lines(source):
                for line in lines:
                    if line and handle(line, out):
                        if batched:
                            yield state.settle(out)
                        else:
                            yield from state.settle(out)
                        return
                if out:
                    if batched:
                        yield out
                        out = []
                    else:
                        yield from out
                        out.clear()
            last = buffer.flush()
            if last and handle(last, out):
                if batched:
                    yield state.settle(out)
                else:
                    yield from state.settle(out)
                return
        except UpstreamStreamError as exc:
            terminal = state.done() if state.after_done else exc.to_event()
        except LineTooLongError as exc:
            for line in exc.lines:
                if line and handle(line, out):
                    if batched:
                        yield state.settle(out)
                    else:
                        yield from state.settle(out)
                    return
            terminal = ErrorEvent(message=str(exc), code=ERROR_CODE_LINE_TOO_LONG)
            if state.after_done:
                terminal = state.done()
        else:
            terminal = state.done() if state.complete else _truncated()
        out.append(terminal)
        if batched:
            yield out
        else:
            yield from out
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


class _LineParser(StreamState):
    """Per-stream state and the per-line dispatch. ``handle`` appends the line's events to
    ``out`` and returns True once it appended the terminal event."""

    __slots__ = ("sse",)

    def __init__(self, fmt: StreamFormat) -> None:
        super().__init__()
        # SSE formats skip unknown lines (unknown SSE fields); the others report them.
        self.sse = fmt is StreamFormat.TGI or fmt is StreamFormat.OPENAI

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
            return token_form(self, obj, token, out)  # the hot path: one call fewer
        return self._object(obj, out)

    # -- the JSON object: dispatch on keys, most frequent shapes first ---------------------

    def _object(self, obj: dict[str, Any], out: list[StreamEvent]) -> bool:
        if "error" in obj and obj["error"] is not None:
            out.append(engine_error(obj))
            return True
        token = obj.get("token")
        if type(token) is dict:
            return token_form(self, obj, token, out)
        choices = obj.get("choices")
        if choices is not None:
            usage = obj.get("usage")
            if usage:  # the usage chunk, or every chunk with vLLM's continuous usage stats
                remember_usage(self, usage)
            return chat_chunk(self, choices, out)
        body = obj.get("body")
        if type(body) is dict and "generation" in body:
            return generation(self, body, out)
        texts = obj.get("outputs")
        if type(texts) is list:
            return outputs(self, texts, out)
        if obj.get("generated_text") is not None or obj.get("details"):
            return final(self, obj, out)
        if obj.get("object") == "error":  # older vLLM: {"object": "error", "message", ...}
            out.append(engine_error({"error": obj}))
            return True
        return False  # an object of no known shape: skip it

    # -- rarer lines -----------------------------------------------------------------------

    def _slow_payload(self, payload: str, out: list[StreamEvent]) -> bool:
        """A payload the fast path could not take: [DONE], padded JSON or a bad line."""
        stripped = payload.strip()
        if stripped == "[DONE]":
            # Not terminal yet: DJL's sse_chat formatter can write [DONE] and then the last
            # token of the same step (deepjavalibrary/djl-serving: djl_python/output_formatter.py,
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


def _truncated() -> ErrorEvent:
    return ErrorEvent(
        message=(
            "the model stream ended before the engine said it was done (no finish_reason, "
            "[DONE] or final event): the answer may be cut short"
        ),
        code=ERROR_CODE_TRUNCATED,
    )


def _quote(line: str) -> str:
    if len(line) <= _MAX_QUOTED_LINE:
        return repr(line)
    return repr(line[:_MAX_QUOTED_LINE]) + f" ... ({len(line)} characters)"
