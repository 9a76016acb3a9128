"""The SageMaker call, and what its failures mean to an OpenAI client.

Stdlib + botocore only: this file ships in the Lambda asset.

Failures before the stream starts become an HTTP status and an OpenAI-shaped error:

============================================ ====== ===================== =========================
upstream failure                             status type                  code
============================================ ====== ===================== =========================
``ValidationError``: no capacity (scaled to 0)  503  upstream_error        no_capacity
``ValidationError`` (input, unknown endpoint)  400  invalid_request_error upstream_validation_error
``ModelError``, container answered 429         429  rate_limit_error      model_overloaded
``ModelError``, container answered 404         404  invalid_request_error model_not_found
``ModelError``, container answered 503         503  upstream_error        model_unavailable
``ModelError``, container answered 424         502  upstream_error        model_error
``ModelError``, container answered other 4xx   400  invalid_request_error model_rejected_request
``ModelError``, container answered 5xx         502  upstream_error        model_error
throttling (``ThrottlingException``, 429)      429  rate_limit_error      upstream_throttled
``ServiceUnavailable`` (503)                   503  upstream_error        upstream_unavailable
access denied, bad credentials (401, 403)      502  upstream_error        upstream_access_denied
``InternalFailure`` and anything else          502  upstream_error        upstream_error
connect or read timeout                        504  upstream_error        upstream_timeout
endpoint unreachable, connection dropped       502  upstream_error        upstream_unreachable
============================================ ====== ===================== =========================

4xx means the client can fix the request (or retry later, for 429); 5xx means the model or
the deployment failed. A 429 or a 503 carries ``Retry-After`` (RFC 9110, section 10.2.3:
seconds to wait), which the OpenAI SDKs honour up to a minute before their own backoff: the
upstream answer's own ``Retry-After`` when it gave one in seconds, else
``RETRY_AFTER_BUSY`` for a throttled call or a busy engine (429) and ``RETRY_AFTER_UNAVAILABLE``
for a model that is not ready or a service that is unavailable (503, and SageMaker's
``ModelNotReadyException``, a 429 while a serverless variant or a multi-model endpoint
loads). Neither is a promise: SageMaker states no wait, so they are the shortest that does
not flood an endpoint scaling out. An inference component scaled to zero
(``capacity_wait.py``) says ``RETRY_AFTER_NO_CAPACITY``: its first copy takes minutes.
The OpenAI SDKs retry 429 and 5xx by themselves. 424 is DJL LMI's status for its own Python
worker failing (a formatter or the input parser), not the client's request, so it is a 502.

A stream that fails (``ErrorEvent``) maps by the HTTP status the engine gave the error
(``ErrorEvent.status``: vLLM's and SGLang's ``code``, DJL's ``code``/``error_code``) with the
same rule (429, 404, 503, 424 as above, other 4xx 400, other 5xx 502), else by its code: a
status name (SGLang's ``BAD_REQUEST``), an engine's client error (TGI ``validation``,
``template_error``, ``missing_template_variable``, ``tool_error``, vLLM ``BadRequestError``)
is 400, ``overloaded`` 429, a read timeout 504, anything else (``ModelStreamError``,
``InternalStreamFailure``, TGI ``generation``, ``abort``, ``truncated``: a stream that
ended before the engine said it was done) 502. That status is used when
nothing was sent yet; once tokens went out, the same error ends the SSE stream as
``data: {"error": ...}``. Messages never carry the SageMaker URL (it names the endpoint and
region); the log line keeps the upstream error's name.
"""

from __future__ import annotations

import contextlib
import http
import itertools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from botocore.exceptions import (  # type: ignore[import-untyped]
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    ReadTimeoutError,
)

from .capacity_wait import RETRY_AFTER_NO_CAPACITY, is_no_capacity
from .parsing.events import ErrorEvent
from .routing import Route

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11: only mypy reads it (the package takes 3.10)

    from .http.exchange import Exchange

_THROTTLING_CODES = frozenset(
    {"ThrottlingException", "Throttling", "TooManyRequestsException", "RequestLimitExceeded"}
)
_STREAM_TIMEOUT_CODES = frozenset({"ReadTimeoutError", "ReadTimeout", "TimeoutError", "timeout"})
_STREAM_CLIENT_CODES = frozenset(
    {
        "validation",
        "template_error",
        "missing_template_variable",
        "tool_error",
        "BadRequestError",
        "invalid_request_error",
    }
)
_STREAM_BUSY_CODES = frozenset({"overloaded", "RateLimitError", "rate_limit_error"})
_URL = re.compile(r"https?://[^\s\"'<>]+")
_ARN = re.compile(r"\barn:aws[\w-]*:[^\s\"'<>]+")
_ACCOUNT = re.compile(r"\b\d{12}\b")
_ACCESS_CODES = frozenset(
    {
        "AccessDeniedException",
        "AccessDenied",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
    }
)


RETRY_AFTER_BUSY = 1
"""Seconds a 429 tells the client to wait: SageMaker throttled the call, or the engine is busy."""
RETRY_AFTER_UNAVAILABLE = 5
"""Seconds a 503 (or a model that is not ready) tells the client to wait."""
_NOT_READY_CODES = frozenset({"ModelNotReadyException"})


@dataclass(frozen=True, kw_only=True)
class UpstreamFailure:
    """A failed SageMaker call, as the HTTP answer to give the client.

    ``retry_after``: the seconds of its ``Retry-After`` header (a 429 or a 503), else None.
    """

    status: int
    error_type: str
    code: str
    message: str
    upstream_code: str | None = None
    retry_after: int | None = None

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        """The headers the answer carries besides the error: ``Retry-After`` when set."""
        return () if self.retry_after is None else (("Retry-After", str(self.retry_after)),)


def send_failure(exchange: Exchange, failure: UpstreamFailure) -> None:
    """Answer a failure before anything was sent: its status, OpenAI error and headers."""
    exchange.send_error(
        failure.status,
        failure.message,
        error_type=failure.error_type,
        code=failure.code,
        headers=failure.headers,
    )


def _retry_after(status: int, code: str | None, given: object = None) -> int | None:
    """``Retry-After`` seconds for an answer of ``status``: the upstream's own (``given``,
    when it is whole seconds), else the wait for a busy (429) or unavailable (503) target."""
    if status not in (429, 503):
        return None
    if isinstance(given, str) and given.strip().isdigit() and given.strip().isascii():
        return int(given.strip())
    if status == 503 or code in _NOT_READY_CODES:
        return RETRY_AFTER_UNAVAILABLE
    return RETRY_AFTER_BUSY


class CallOptions(TypedDict, total=False):
    """What both invoke calls may add to a route and a body: ``target_variant`` pins a
    production variant (``TargetVariant``); ``prefix_aware_id`` is the prefix-aware routing id
    (``PrefixAwareId``, ``prefix_aware_id.py``). Both operations take both in botocore
    1.44.5's service model."""

    target_variant: str | None
    prefix_aware_id: str | None


def invoke(client: Any, route: Route, body: bytes, **options: Unpack[CallOptions]) -> Any:
    """Start the streamed invocation of ``route``; returns boto3's ``EventStream``
    (``response["Body"]``).

    Raises botocore's ``ClientError``/``BotoCoreError``; ``describe_failure`` maps them.
    """
    return client.invoke_endpoint_with_response_stream(**_call(route, body, **options))["Body"]


def invoke_once(client: Any, route: Route, body: bytes, **options: Unpack[CallOptions]) -> bytes:
    """Call ``InvokeEndpoint`` (no stream: an embedding model answers one JSON body) on
    ``route`` and return the container's answer. Raises as :func:`invoke` does."""
    call = _call(route, body, **options)
    stream = client.invoke_endpoint(**call, Accept="application/json")["Body"]
    try:
        answer: bytes = stream.read()
    finally:
        stream.close()
    return answer


def _call(
    route: Route,
    body: bytes,
    target_variant: str | None = None,
    prefix_aware_id: str | None = None,
) -> dict[str, Any]:
    """The arguments both invoke calls take: the route's endpoint (and component), the JSON
    body and the ``CallOptions``."""
    kwargs: dict[str, Any] = {
        "EndpointName": route.endpoint_name,
        "ContentType": "application/json",
        "Body": body,
    }
    if route.inference_component_name:
        kwargs["InferenceComponentName"] = route.inference_component_name
    if target_variant:
        kwargs["TargetVariant"] = target_variant
    if prefix_aware_id:
        kwargs["PrefixAwareId"] = prefix_aware_id
    return kwargs


def release(parts: Iterator[bytes], *, completed: bool) -> None:
    """Give the stream's HTTP connection back: to the pool if the stream ``completed``.

    The parser stops at the engine's final event, before the HTTP body's end; closing the
    body then would drop a keep-alive connection and make the next request pay a new TLS
    handshake. So a completed stream's remaining parts (normally just the end of the body,
    already received) are read on a background thread, which returns the connection to
    boto3's pool; when that end is already received (``PayloadParts.rest_received``, the
    usual case), it is read here instead, as nothing can wait, and no thread is started (a
    thread costs about 0.1 ms of CPU, a tenth of what the runtime adds to the call per
    request). Any other stream is closed at once, which stops the upstream generation.
    """
    if completed:
        received = getattr(parts, "rest_received", None)
        if received is not None and received():
            _drain(parts)
            return
        _drain_in_background(parts)
    else:
        close = getattr(parts, "close", None)
        if close is not None:
            close()


_MAX_DRAIN_PARTS = 64  # a stream still talking after its final event is closed instead


def _drain_in_background(parts: Iterator[bytes]) -> None:
    """Reads a completed stream to its end on its own daemon thread, so one slow body never
    holds up another's connection, then closes it."""
    threading.Thread(target=_drain, args=(parts,), name="upstream-drain", daemon=True).start()


def _drain(parts: Iterator[bytes]) -> None:
    # The answer is already sent: a failure here only costs the connection.
    with contextlib.suppress(Exception):
        for _ in itertools.islice(parts, _MAX_DRAIN_PARTS):
            pass
    with contextlib.suppress(Exception):
        close = getattr(parts, "close", None)
        if close is not None:
            close()  # a no-op once the body was read to its end


def describe_failure(exc: Exception) -> UpstreamFailure:
    """Map an exception raised by ``invoke`` to the status and error for the client."""
    if isinstance(exc, ClientError):
        return _client_error(exc)
    if isinstance(exc, (ReadTimeoutError, ConnectTimeoutError)):
        waited = "read" if isinstance(exc, ReadTimeoutError) else "connect"
        status, code = 504, "upstream_timeout"
        message = f"SageMaker did not answer in time ({waited} timeout)"
    elif isinstance(exc, BotoCoreError):
        status, code, message = 502, "upstream_unreachable", f"could not reach SageMaker: {exc}"
    else:
        status, code = 502, "upstream_error"
        message = f"calling SageMaker failed: {type(exc).__name__}: {exc}"
    return UpstreamFailure(
        status=status,
        error_type="upstream_error",
        code=code,
        message=_without_urls(message),
        upstream_code=type(exc).__name__,
    )


def _client_error(exc: ClientError) -> UpstreamFailure:
    error = exc.response.get("Error", {})
    code = str(error.get("Code") or "Unknown")
    message = str(error.get("Message") or exc)
    http = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    status, error_type, our_code, text = 502, "upstream_error", "upstream_error", message
    if code == "ValidationError" and is_no_capacity(exc):  # a component scaled to zero
        return UpstreamFailure(
            status=503,
            error_type="upstream_error",
            code="no_capacity",
            message=(
                "the model has no copy running to serve the request (its inference component "
                "scaled to zero) and is starting one, which takes minutes; retry later"
            ),
            upstream_code=code,
            retry_after=RETRY_AFTER_NO_CAPACITY,
        )
    if code == "ValidationError":
        status, error_type, our_code = 400, "invalid_request_error", "upstream_validation_error"
    elif code == "ModelError":
        original = exc.response.get("OriginalStatusCode")
        original = original if isinstance(original, int) else None
        said = exc.response.get("OriginalMessage")  # the container's own words, unwrapped
        said = said if isinstance(said, str) and said else message
        text = f"the model container answered {original or 'an error'}: {said}"
        status, error_type = engine_status(original)
        our_code = _MODEL_ERROR_CODES.get(status, "model_error")
    elif code in _THROTTLING_CODES or http == 429:
        status, error_type, our_code = 429, "rate_limit_error", "upstream_throttled"
    elif code == "ServiceUnavailable" or http == 503:
        status, our_code = 503, "upstream_unavailable"
    elif code in _ACCESS_CODES or http in (401, 403):
        our_code = "upstream_access_denied"
        text = f"the runtime may not invoke the endpoint: {message}"
    headers = exc.response.get("ResponseMetadata", {}).get("HTTPHeaders") or {}
    return UpstreamFailure(
        status=status,
        error_type=error_type,
        code=our_code,
        message=f"SageMaker {code}: {_without_urls(text)}",
        upstream_code=code,
        retry_after=_retry_after(status, code, headers.get("retry-after")),
    )


_MODEL_ERROR_CODES = {
    429: "model_overloaded",
    404: "model_not_found",
    503: "model_unavailable",
    400: "model_rejected_request",
}


def engine_status(status: int | None) -> tuple[int, str]:
    """The client's status and error type for an error the engine gave ``status``."""
    if status == 429:
        return 429, "rate_limit_error"
    if status == 404:
        return 404, "invalid_request_error"
    if status == 503:
        return 503, "upstream_error"
    if status is not None and 400 <= status < 500 and status != 424:
        return 400, "invalid_request_error"
    return 502, "upstream_error"


def describe_stream_error(event: ErrorEvent) -> UpstreamFailure:
    """The status and error for a stream that ended with ``event`` (see the module doc)."""
    code = event.code or "upstream_stream_error"
    status = event.status or _status_named(code)
    if status is not None:
        client_status, error_type = engine_status(status)
    elif code in _STREAM_TIMEOUT_CODES:
        client_status, error_type = 504, "upstream_error"
    elif code in _STREAM_BUSY_CODES:
        client_status, error_type = 429, "rate_limit_error"
    elif code in _STREAM_CLIENT_CODES:
        client_status, error_type = 400, "invalid_request_error"
    else:
        client_status, error_type = 502, "upstream_error"
    message = event.message
    if code in _STREAM_TIMEOUT_CODES:
        message = "SageMaker sent nothing within the read timeout (UPSTREAM_READ_TIMEOUT)"
    return UpstreamFailure(
        status=client_status,
        error_type=error_type,
        code=code,
        message=f"the model stream failed: {_without_urls(message)}",
        upstream_code=event.code,
        retry_after=_retry_after(client_status, code),
    )


def _status_named(code: str) -> int | None:
    """The HTTP status a code names: digits (``"400"``) or a status name (``"BAD_REQUEST"``,
    as SGLang's ``HTTPStatus.X.name`` error types are)."""
    if code.isdigit():
        return int(code)
    member = http.HTTPStatus.__members__.get(code)
    return None if member is None else member.value


def _without_urls(text: str) -> str:
    """``text`` without URLs, ARNs or account ids: botocore's and SageMaker's messages name
    the endpoint URL, the caller's role ARN (access denied) and the account ("Endpoint x of
    account 123456789012 not found", "... in account 123456789012 for more information"),
    none of which a client should learn."""
    text = _URL.sub("<SageMaker endpoint URL>", text)
    return _ACCOUNT.sub("<account>", _ARN.sub("<ARN>", text))
