"""Upstream failures that are not SageMaker error responses, and the call itself."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import (  # type: ignore[import-untyped]
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from constructs_llm.streaming.runtime.events import ErrorEvent
from constructs_llm.streaming.runtime.settings import Settings
from constructs_llm.streaming.runtime.upstream import (
    describe_failure,
    describe_stream_error,
    invoke,
)


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (ReadTimeoutError(endpoint_url="https://x"), 504, "upstream_timeout"),
        (ConnectTimeoutError(endpoint_url="https://x"), 504, "upstream_timeout"),
        (EndpointConnectionError(endpoint_url="https://x"), 502, "upstream_unreachable"),
        (RuntimeError("odd"), 502, "upstream_error"),
    ],
)
def test_transport_failures_map_to_gateway_errors(exc: Exception, status: int, code: str) -> None:
    failure = describe_failure(exc)
    assert (failure.status, failure.code, failure.error_type) == (status, code, "upstream_error")
    assert str(exc) in failure.message


@pytest.mark.parametrize(
    ("code", "status", "error_type"),
    [
        ("ModelStreamError", 502, "upstream_error"),
        ("InternalStreamFailure", 502, "upstream_error"),
        ("generation", 502, "upstream_error"),  # TGI
        ("ReadTimeoutError", 504, "upstream_error"),
        ("validation", 400, "invalid_request_error"),  # TGI
        ("BadRequestError", 400, "invalid_request_error"),  # vLLM
        ("422", 400, "invalid_request_error"),  # TGI Messages API http_status_code
        ("overloaded", 429, "rate_limit_error"),  # TGI
        ("429", 429, "rate_limit_error"),
        ("500", 502, "upstream_error"),
        (None, 502, "upstream_error"),
    ],
)
def test_stream_errors_map_by_their_code(code: str | None, status: int, error_type: str) -> None:
    failure = describe_stream_error(ErrorEvent(message="it broke", code=code))
    assert (failure.status, failure.error_type) == (status, error_type)
    assert failure.code == (code or "upstream_stream_error")
    assert failure.message == "the model stream failed: it broke"


class _Client:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def invoke_endpoint_with_response_stream(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"Body": "the event stream"}


def test_invoke_names_the_inference_component_only_when_set() -> None:
    client = _Client()
    assert invoke(client, Settings(endpoint_name="ep"), b"{}") == "the event stream"
    invoke(client, Settings(endpoint_name="ep", inference_component_name="ic"), b"{}")
    assert client.calls == [
        {"EndpointName": "ep", "ContentType": "application/json", "Body": b"{}"},
        {
            "EndpointName": "ep",
            "ContentType": "application/json",
            "Body": b"{}",
            "InferenceComponentName": "ic",
        },
    ]
