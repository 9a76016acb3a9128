"""The fake SageMaker Runtime speaks the real protocol: real boto3 calls against it."""

from __future__ import annotations

from typing import Any

import botocore.exceptions  # type: ignore[import-untyped]
import pytest

from constructs_llm.streaming.runtime.settings import Settings, new_sagemaker_client
from tests.streaming.conftest import ENDPOINT, client_for
from tests.support import engine_streams
from tests.support.fake_sagemaker import CallError, FakeSageMaker, Scenario


def invoke(**extra: Any) -> Any:
    return client_for(5.0).invoke_endpoint_with_response_stream(
        EndpointName=ENDPOINT, ContentType="application/json", Body=b'{"inputs":"x"}', **extra
    )


def test_boto3_finds_the_fake_through_the_standard_endpoint_variable(fake: FakeSageMaker) -> None:
    # GIVEN only AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME in the environment (set by the fixture)
    client = new_sagemaker_client(Settings(endpoint_name=ENDPOINT))
    # THEN a client built the runtime's way targets the fake, with the runtime's retry policy
    assert client.meta.endpoint_url == fake.url
    assert client.meta.config.retries == {"mode": "standard", "total_max_attempts": 2}


def test_the_runtime_client_leaves_the_checks_of_its_own_calls_to_the_runtime(
    fake: FakeSageMaker,
) -> None:
    # GIVEN a call botocore's parameter validation refuses (PrefixAwareId under its minimum)
    call = {"EndpointName": ENDPOINT, "Body": b"{}", "PrefixAwareId": ""}
    checked = new_sagemaker_client(Settings(endpoint_name=ENDPOINT), validate_parameters=True)
    with pytest.raises(botocore.exceptions.ParamValidationError):
        checked.invoke_endpoint_with_response_stream(**call)
    assert fake.requests == []
    # THEN the runtime's client sends it: the runtime checks what it builds (upstream._call)
    fake.enqueue(Scenario(parts=engine_streams.tgi(["ok"])))
    client = new_sagemaker_client(Settings(endpoint_name=ENDPOINT))
    body = client.invoke_endpoint_with_response_stream(**call)["Body"]
    assert [event["PayloadPart"]["Bytes"] for event in body] == engine_streams.tgi(["ok"])
    assert len(fake.requests) == 1


def test_payload_parts_arrive_in_order_even_when_frames_span_tcp_chunks(
    fake: FakeSageMaker,
) -> None:
    parts = engine_streams.tgi(["Hel", "lo"])
    fake.enqueue(Scenario(parts=parts, split_frames=True))
    response = invoke()
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200
    received = [event["PayloadPart"]["Bytes"] for event in response["Body"]]
    assert received == parts
    assert fake.requests[0].endpoint_name == ENDPOINT
    assert fake.requests[0].json() == {"inputs": "x"}


@pytest.mark.parametrize("exception", ["ModelStreamError", "InternalStreamFailure"])
def test_stream_exceptions_surface_as_event_stream_errors_after_the_parts(
    fake: FakeSageMaker, exception: str
) -> None:
    fake.enqueue(
        Scenario(
            parts=[b"data:one\n\n"],
            exception=exception,
            exception_message="model died",
            exception_code="StreamBroken",
        )
    )
    body = invoke()["Body"]
    assert next(iter(body)) == {"PayloadPart": {"Bytes": b"data:one\n\n"}}
    with pytest.raises(botocore.exceptions.EventStreamError) as info:
        next(iter(body))
    assert info.value.response["Error"] == {"Code": exception, "Message": "model died"}


def test_call_time_model_error_is_a_client_error_with_the_original_status(
    fake: FakeSageMaker,
) -> None:
    fake.enqueue(Scenario(call_error=CallError.model_error("container failed", 500)))
    with pytest.raises(botocore.exceptions.ClientError) as info:
        invoke()
    response = info.value.response
    assert response["Error"]["Code"] == "ModelError"
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 424
    assert response["OriginalStatusCode"] == 500
    assert len(fake.requests) == 1  # a 424 is not retried


def test_call_time_validation_error_is_a_client_error(fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(call_error=CallError.validation_error("Endpoint x not found.")))
    with pytest.raises(botocore.exceptions.ClientError) as info:
        invoke()
    assert info.value.response["Error"] == {
        "Code": "ValidationError",
        "Message": "Endpoint x not found.",
    }


def test_inference_component_header_is_recorded(fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=[b"x"]), Scenario(parts=[b"y"]))
    list(invoke(InferenceComponentName="chat-ic")["Body"])
    list(invoke()["Body"])
    assert [r.inference_component for r in fake.requests] == ["chat-ic", None]


def test_a_client_that_hangs_up_is_noticed(fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=[b"a"] * 100, interval=0.02))
    body = invoke()["Body"]
    next(iter(body))
    body.close()
    assert fake.requests[0].client_closed.wait(20)
    assert fake.requests[0].finished.wait(20)
    assert fake.requests[0].parts_sent < 100
