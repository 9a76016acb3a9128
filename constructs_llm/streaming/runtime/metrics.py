"""LLM metrics of each chat, responses or embeddings request, as one CloudWatch Embedded
Metric Format (EMF) record.

Stdlib only: this file ships in the Lambda asset. The record is the request's own JSON log
line with the EMF metadata added, so it costs no API call and no extra line: "On Lambda, ...
writing JSON to standard out in the embedded metric format is sufficient", and CloudWatch
Logs extracts the metrics (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
CloudWatch_Embedded_Metric_Format_Specification.html).

Dimensions are bounded: ``Target`` (the endpoint or inference component the request was sent
to) and ``Model`` (the served model's name), both from the request's route, never from the
client's input (a request refused before a runtime that serves several models knew its model,
for want of a key or a readable body, or for an unknown model, counts under ``-``, as
:data:`UNROUTED`); errors add ``ErrorKind``, one of :data:`ERROR_KINDS`. Metrics (the log
line's fields they come from in brackets):

================= ============ ==========================================================
metric            unit         meaning
================= ============ ==========================================================
Requests          Count        1 per chat, responses or embeddings request
Duration          Milliseconds request start to the answer's end (``duration_ms``)
TimeToFirstToken  Milliseconds request start to the first token relayed (``ttft_ms``)
OutputTokens      Count        tokens (and tool-call pieces) relayed (``tokens``)
TokensPerSecond   Count/Second (OutputTokens - 1) / (Duration - TimeToFirstToken): the pace
                               after the first token, for answers of two tokens or more
OverheadLatency   Milliseconds the runtime's time before SageMaker is called: reading and
                               checking the request and its key (``overhead_ms``)
Errors            Count        1 if the request failed, else 0
ClientDisconnects Count        1 if the client went away before the end, else 0
EmbeddedInputs    Count        an embeddings request's inputs (``inputs``)
HeldRequests      Count        1 if the request was held while its inference component had
                               no copy (``capacity_wait.py``), absent otherwise
HeldTime          Milliseconds how long it was held (``held_ms``)
================= ============ ==========================================================

An embeddings request has no tokens to relay: its record carries Requests, Duration,
OverheadLatency, Errors, ClientDisconnects and EmbeddedInputs.

With API keys, each failed refresh of the keys writes a record of its own (``msg``
``api_key_refresh_failed``) with the metric ``ApiKeyRefreshFailures`` (Count) by ``Outcome``:
``stale`` while the last good keys are still served, ``closed`` once every request gets a 503
(``http/auth.py``). An alarm on ``Outcome=stale`` warns before the invoker fails closed.
"""

from __future__ import annotations

import time
from typing import Any

from ..formats import NAMESPACE

#: The metric of a failed refresh of the API keys, by ``Outcome`` (``stale`` or ``closed``).
_KEY_REFRESH_FAILURES = "ApiKeyRefreshFailures"

UNROUTED = "-"
METRIC_UNITS = {
    "Requests": "Count",
    "Duration": "Milliseconds",
    "TimeToFirstToken": "Milliseconds",
    "OutputTokens": "Count",
    "TokensPerSecond": "Count/Second",
    "OverheadLatency": "Milliseconds",
    "Errors": "Count",
    "ClientDisconnects": "Count",
    "EmbeddedInputs": "Count",
    "HeldRequests": "Count",
    "HeldTime": "Milliseconds",
}
_DIMENSIONS = ["Target", "Model"]


def error_kind(record: dict[str, Any]) -> str | None:
    """The kind of failure a request's log record shows, or None if it did not fail."""
    if "exception" in record:
        return "internal"
    status = record.get("status")
    if not isinstance(status, int):
        return None
    if status < 400:
        return "stream" if "stream_error" in record else None
    if status in (401, 403):  # no valid key; not from the distribution, or a refused origin
        return "auth"
    if status == 429:
        return "throttled"
    if status == 504:
        return "timeout"
    return "invalid_request" if status < 500 else "upstream"


def with_metrics(
    record: dict[str, Any],
    *,
    target: str,
    model: str,
    namespace: str = NAMESPACE,
    timestamp_ms: int | None = None,
) -> dict[str, Any]:
    """``record`` with the EMF metadata and metric members of its request added."""
    values = _values(record)
    kind = error_kind(record)
    values["Errors"] = 0 if kind is None else 1
    values["ClientDisconnects"] = 1 if record.get("client_disconnected") else 0
    directives = [_directive(namespace, _DIMENSIONS, values)]
    dimensions: dict[str, Any] = {"Target": target, "Model": model}
    if kind is not None:
        directives.append(_directive(namespace, [*_DIMENSIONS, "ErrorKind"], {"Errors": 1}))
        dimensions["ErrorKind"] = kind
    when = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    return {
        **record,
        **dimensions,
        **values,
        "_aws": {"Timestamp": when, "CloudWatchMetrics": directives},
    }


def key_refresh_record(
    error: str, outcome: str, *, namespace: str = NAMESPACE, timestamp_ms: int | None = None
) -> dict[str, Any]:
    """The log line and EMF record of one failed refresh of the API keys."""
    when = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    directive = {
        "Namespace": namespace,
        "Dimensions": [["Outcome"]],
        "Metrics": [{"Name": _KEY_REFRESH_FAILURES, "Unit": "Count"}],
    }
    return {
        "msg": "api_key_refresh_failed",
        "error": error,
        "Outcome": outcome,
        _KEY_REFRESH_FAILURES: 1,
        "_aws": {"Timestamp": when, "CloudWatchMetrics": [directive]},
    }


def _values(record: dict[str, Any]) -> dict[str, float]:
    values: dict[str, float] = {"Requests": 1}
    duration, ttft = record.get("duration_ms"), record.get("ttft_ms")
    tokens, overhead = record.get("tokens"), record.get("overhead_ms")
    if isinstance(duration, int | float):
        values["Duration"] = duration
    if isinstance(ttft, int | float):
        values["TimeToFirstToken"] = ttft
    if isinstance(tokens, int):
        values["OutputTokens"] = tokens
    if isinstance(overhead, int | float):
        values["OverheadLatency"] = overhead
    held = record.get("held_ms")
    if isinstance(held, int | float):
        values["HeldRequests"] = 1
        values["HeldTime"] = held
    inputs = record.get("inputs")
    if isinstance(inputs, int) and not isinstance(inputs, bool):
        values["EmbeddedInputs"] = inputs
    if isinstance(tokens, int) and tokens >= 2 and isinstance(duration, int | float):
        decoding_ms = duration - ttft if isinstance(ttft, int | float) else 0
        if decoding_ms > 0:
            values["TokensPerSecond"] = round((tokens - 1) / (decoding_ms / 1000), 3)
    return values


def _directive(namespace: str, dimensions: list[str], values: dict[str, float]) -> dict[str, Any]:
    return {
        "Namespace": namespace,
        "Dimensions": [dimensions],
        "Metrics": [{"Name": name, "Unit": METRIC_UNITS[name]} for name in values],
    }
