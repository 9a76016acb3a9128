"""Holding a request while an inference component scaled to zero wakes up
(``CAPACITY_WAIT_SECONDS``). Stdlib + botocore only: this file ships in the Lambda asset.

An inference component whose copies scaled to zero has nothing to serve a request with, and
SageMaker refuses the call at once: "An error occurred (ValidationError) when calling the
InvokeEndpoint operation: Inference Component has no capacity to process this request.
ApplicationAutoScaling may be in-progress (if configured) or try to increase the capacity by
invoking UpdateInferenceComponentRuntimeConfig API." (AWS Machine Learning Blog, "Unlock cost
savings with the new scale down to zero feature in SageMaker Inference", 2024-12-03). The
refusal is what wakes it: it counts in the component's ``NoCapacityInvocationFailures``
metric, whose alarm drives the step policy that adds the first copy ("your endpoint will
automatically provision an instance soon after it receives an inference request that it
can't respond to. Be aware that the provisioning process takes several minutes. During that
time, any attempts to invoke the endpoint will produce an error", SageMaker Developer Guide,
"Scale an endpoint to zero instances"; ``hosting/components/scaling.py`` renders that policy).

Without a wait the refusal is a 503 ``no_capacity`` with ``Retry-After`` (``upstream.py``): the
client's request is not at fault. With ``CAPACITY_WAIT_SECONDS`` (``StreamingInvoker(
capacity_wait=...)``) a chat or Responses request is held instead: the call is made again
after 1 s, 2 s, 4 s ... (at most ``MAX_BACKOFF_S`` apart) until it is taken or the wait is
over, and then the 503 goes out. A stream gets an SSE comment every ``HOLD_BEAT_S`` while it
is held (or every ``HEARTBEAT_SECONDS`` when that is set), so a proxy in front does not drop
it; once a comment went out the 200 is committed, and a wait that ends without capacity ends
the stream with the error event instead. The request's log line records ``held_ms`` and
``capacity_retries``, from which the metrics ``HeldRequests`` and ``HeldTime`` come
(``metrics.py``). Embeddings are not held: they get the 503 at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from .http.exchange import ClientGone

FIRST_BACKOFF_S = 1.0
"""The first wait before the call is made again."""
MAX_BACKOFF_S = 15.0
"""The longest wait between two calls."""
HOLD_BEAT_S = 10.0
"""How often a held stream gets an SSE comment, unless ``HEARTBEAT_SECONDS`` says otherwise:
well inside CloudFront's 30 s origin read timeout."""
RETRY_AFTER_NO_CAPACITY = 60
"""``Retry-After`` of the 503 when no copy came in time: a scale-out from zero takes minutes,
and the OpenAI SDKs honour at most 60 s."""
_NO_CAPACITY = "no capacity to process this request"

Result = TypeVar("Result")


def is_no_capacity(exc: BaseException) -> bool:
    """Whether ``exc`` is SageMaker's refusal of a component with no copy (see the module)."""
    response: Any = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return False
    error = response.get("Error") or {}
    message = str(error.get("Message") or "")
    return error.get("Code") == "ValidationError" and _NO_CAPACITY in message.lower()


def call_when_capacity(
    call: Callable[[], Result],
    *,
    wait_s: float,
    record: dict[str, Any],
    held: Callable[[], None],
    gone: Callable[[], bool],
) -> Result:
    """``call()``, made again while it fails for want of capacity and ``wait_s`` seconds have
    not passed since the first refusal. ``held()`` runs once, at that first refusal; ``gone()``
    is asked before each new call (``ClientGone`` if the client left). ``record`` gets ``held_ms``
    and ``capacity_retries`` when the request was held. The last refusal is raised."""
    started: float | None = None
    retries = 0
    delay = FIRST_BACKOFF_S
    try:
        while True:
            try:
                return call()
            except Exception as exc:
                if wait_s <= 0 or not is_no_capacity(exc):
                    raise
                now = time.monotonic()
                if started is None:
                    started = now
                    held()
                remaining = started + wait_s - now
                if remaining <= 0:
                    raise
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, MAX_BACKOFF_S)
                if gone():
                    raise ClientGone from exc
                retries += 1
    finally:
        if started is not None:
            record["held_ms"] = round((time.monotonic() - started) * 1000, 3)
            record["capacity_retries"] = retries
