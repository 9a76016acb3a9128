"""Upstream failures that are not SageMaker error responses, and the call itself."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import (  # type: ignore[import-untyped]
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from constructs_llm.streaming.runtime.parsing.events import ErrorEvent
from constructs_llm.streaming.runtime.routing import Route
from constructs_llm.streaming.runtime.upstream import (
    describe_failure,
    describe_stream_error,
    invoke,
)

URL = "https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/prod-llm/invocations"


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (ReadTimeoutError(endpoint_url=URL), 504, "upstream_timeout"),
        (ConnectTimeoutError(endpoint_url=URL), 504, "upstream_timeout"),
        (EndpointConnectionError(endpoint_url=URL), 502, "upstream_unreachable"),
        (RuntimeError(f"odd: {URL}"), 502, "upstream_error"),
    ],
)
def test_transport_failures_map_to_gateway_errors_without_the_endpoint_url(
    exc: Exception, status: int, code: str
) -> None:
    failure = describe_failure(exc)
    assert (failure.status, failure.code, failure.error_type) == (status, code, "upstream_error")
    assert failure.upstream_code == type(exc).__name__
    # the URL names the endpoint and region: it stays out of what the client reads
    assert "amazonaws.com" not in failure.message and "prod-llm" not in failure.message


@pytest.mark.parametrize(
    ("code", "engine_status", "status", "error_type"),
    [
        ("ModelStreamError", None, 502, "upstream_error"),
        ("InternalStreamFailure", None, 502, "upstream_error"),
        ("generation", None, 502, "upstream_error"),  # TGI, also from a Messages API 422
        ("incomplete_generation_stream", None, 502, "upstream_error"),  # TGI
        ("abort", None, 502, "upstream_error"),  # vLLM / SGLang finish_reason
        ("ReadTimeoutError", None, 504, "upstream_error"),
        ("validation", None, 400, "invalid_request_error"),  # TGI
        ("template_error", None, 400, "invalid_request_error"),  # TGI
        ("tool_error", None, 400, "invalid_request_error"),  # TGI
        ("BadRequestError", None, 400, "invalid_request_error"),  # vLLM, no code
        ("overloaded", None, 429, "rate_limit_error"),  # TGI
        ("NotFoundError", 404, 404, "invalid_request_error"),  # vLLM
        ("InternalServerError", 500, 502, "upstream_error"),  # vLLM
        ("TOO_MANY_REQUESTS", 429, 429, "rate_limit_error"),  # SGLang
        ("BAD_REQUEST", 400, 400, "invalid_request_error"),  # SGLang
        ("SERVICE_UNAVAILABLE", 503, 503, "upstream_error"),  # SGLang
        ("SERVICE_UNAVAILABLE", None, 503, "upstream_error"),  # the name alone says it
        ("400", 400, 400, "invalid_request_error"),  # DJL {"code": 400, "error": ...}
        ("424", 424, 502, "upstream_error"),  # DJL: its own worker failed
        ("429", None, 429, "rate_limit_error"),
        ("500", None, 502, "upstream_error"),
        (None, None, 502, "upstream_error"),
    ],
)
def test_stream_errors_map_by_the_engines_status_else_their_code(
    code: str | None, engine_status: int | None, status: int, error_type: str
) -> None:
    event = ErrorEvent(message="it broke", code=code, status=engine_status)
    failure = describe_stream_error(event)
    assert (failure.status, failure.error_type) == (status, error_type)
    assert failure.code == (code or "upstream_stream_error")
    expected = "it broke"
    if code == "ReadTimeoutError":
        expected = "SageMaker sent nothing within the read timeout (UPSTREAM_READ_TIMEOUT)"
    assert failure.message == f"the model stream failed: {expected}"


def test_a_stream_error_message_loses_the_endpoint_url() -> None:
    event = ErrorEvent(message=f'Connection broken: "{URL}"', code="ProtocolError")
    assert "amazonaws" not in describe_stream_error(event).message


class _Client:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def invoke_endpoint_with_response_stream(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"Body": "the event stream"}


def test_invoke_names_the_inference_component_and_variant_only_when_set() -> None:
    client = _Client()
    assert invoke(client, Route(model="m", endpoint_name="ep"), b"{}") == "the event stream"
    invoke(client, Route(model="m", endpoint_name="ep", inference_component_name="ic"), b"{}")
    invoke(client, Route(model="m", endpoint_name="ep"), b"{}", target_variant="b")
    assert client.calls == [
        {"EndpointName": "ep", "ContentType": "application/json", "Body": b"{}"},
        {
            "EndpointName": "ep",
            "ContentType": "application/json",
            "Body": b"{}",
            "InferenceComponentName": "ic",
        },
        {
            "EndpointName": "ep",
            "ContentType": "application/json",
            "Body": b"{}",
            "TargetVariant": "b",
        },
    ]
