"""The SageMaker call, and what its failures mean to an OpenAI client.

Stdlib + botocore only: this file ships in the Lambda asset.

Failures before the stream starts become an HTTP status and an OpenAI-shaped error:

============================================ ====== ===================== =========================
upstream failure                             status type                  code
============================================ ====== ===================== =========================
``ValidationError`` (input, unknown endpoint)  400  invalid_request_error upstream_validation_error
``ModelError``, container answered 429         429  rate_limit_error      model_overloaded
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
the deployment failed. The OpenAI SDKs retry 429 and 5xx by themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import (  # type: ignore[import-untyped]
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    ReadTimeoutError,
)

from .settings import Settings

_THROTTLING_CODES = frozenset(
    {"ThrottlingException", "Throttling", "TooManyRequestsException", "RequestLimitExceeded"}
)
_ACCESS_CODES = frozenset(
    {
        "AccessDeniedException",
        "AccessDenied",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
    }
)


@dataclass(frozen=True, kw_only=True)
class UpstreamFailure:
    """A failed SageMaker call, as the HTTP answer to give the client."""

    status: int
    error_type: str
    code: str
    message: str
    upstream_code: str | None = None


def invoke(client: Any, settings: Settings, body: bytes) -> Any:
    """Start the streamed invocation; returns boto3's ``EventStream`` (``response["Body"]``).

    Raises botocore's ``ClientError``/``BotoCoreError``; ``describe_failure`` maps them.
    """
    kwargs: dict[str, Any] = {
        "EndpointName": settings.endpoint_name,
        "ContentType": "application/json",
        "Body": body,
    }
    if settings.inference_component_name:
        kwargs["InferenceComponentName"] = settings.inference_component_name
    return client.invoke_endpoint_with_response_stream(**kwargs)["Body"]


def describe_failure(exc: Exception) -> UpstreamFailure:
    """Map an exception raised by ``invoke`` to the status and error for the client."""
    if isinstance(exc, ClientError):
        return _client_error(exc)
    if isinstance(exc, (ReadTimeoutError, ConnectTimeoutError)):
        return UpstreamFailure(
            status=504,
            error_type="upstream_error",
            code="upstream_timeout",
            message=f"SageMaker did not answer in time: {exc}",
        )
    if isinstance(exc, BotoCoreError):
        return UpstreamFailure(
            status=502,
            error_type="upstream_error",
            code="upstream_unreachable",
            message=f"could not reach SageMaker: {exc}",
        )
    return UpstreamFailure(
        status=502,
        error_type="upstream_error",
        code="upstream_error",
        message=f"calling SageMaker failed: {type(exc).__name__}: {exc}",
    )


def _client_error(exc: ClientError) -> UpstreamFailure:
    error = exc.response.get("Error", {})
    code = str(error.get("Code") or "Unknown")
    message = str(error.get("Message") or exc)
    http = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    status, error_type, our_code, text = 502, "upstream_error", "upstream_error", message
    if code == "ValidationError":
        status, error_type, our_code = 400, "invalid_request_error", "upstream_validation_error"
    elif code == "ModelError":
        original = exc.response.get("OriginalStatusCode")
        original = original if isinstance(original, int) else None
        text = f"the model container answered {original or 'an error'}: {message}"
        if original == 429:
            status, error_type, our_code = 429, "rate_limit_error", "model_overloaded"
        elif original is not None and 400 <= original < 500:
            status, error_type, our_code = 400, "invalid_request_error", "model_rejected_request"
        else:
            our_code = "model_error"
    elif code in _THROTTLING_CODES or http == 429:
        status, error_type, our_code = 429, "rate_limit_error", "upstream_throttled"
    elif code == "ServiceUnavailable" or http == 503:
        status, our_code = 503, "upstream_unavailable"
    elif code in _ACCESS_CODES or http in (401, 403):
        our_code = "upstream_access_denied"
        text = f"the runtime may not invoke the endpoint: {message}"
    return UpstreamFailure(
        status=status,
        error_type=error_type,
        code=our_code,
        message=f"SageMaker {code}: {text}",
        upstream_code=code,
    )
