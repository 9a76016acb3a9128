"""Endpoints deployed elsewhere: invoke grants and a streaming invoker in front of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from constructs_llm import Engine, LlmEndpoint, RequestFormat, StreamFormat, StreamingInvoker
from constructs_llm.errors import ConfigurationError

INVOKE = ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]
ARN = [
    "arn:",
    {"Ref": "AWS::Partition"},
    ":sagemaker:",
    {"Ref": "AWS::Region"},
    ":",
    {"Ref": "AWS::AccountId"},
    ":endpoint/chat-llama3",
]


@pytest.fixture(scope="module")
def fronted(new_stack: Callable[..., Stack]) -> tuple[Any, Template]:
    # GIVEN an endpoint another team deployed, known by name
    stack = new_stack()
    existing = LlmEndpoint.from_endpoint_name(stack, "Existing", "Chat-Llama3")
    # WHEN a caller is granted it and a streaming invoker fronts it
    existing.grant_invoke(iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal()))
    StreamingInvoker(stack, "Stream", target=existing)
    return existing, Template.from_stack(stack)


def test_grants_name_the_endpoint_arn_in_lower_case(fronted: tuple[Any, Template]) -> None:
    _, template = fronted
    statements = [
        s
        for policy in template.find_resources("AWS::IAM::Policy").values()
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == INVOKE
    ]
    # the caller and the invoker's role, each on exactly this endpoint
    assert [s["Resource"] for s in statements] == [{"Fn::Join": ["", ARN]}] * 2


def test_the_invoker_calls_it_with_chat_requests_and_detects_the_framing(
    fronted: tuple[Any, Template],
) -> None:
    _, template = fronted
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    env = function["Properties"]["Environment"]["Variables"]
    assert (env["ENDPOINT_NAME"], env["MODEL_NAME"]) == ("Chat-Llama3", "Chat-Llama3")
    assert (env["STREAM_FORMAT"], env["REQUEST_FORMAT"]) == ("auto", "messages")
    assert "INFERENCE_COMPONENT_NAME" not in env
    # imported by name alone, its engine is not known: the runtime keeps to the fields every
    # engine honours (with engine=..., ENGINE names it: tests/streaming/test_imported_targets.py)
    assert "ENGINE" not in env


def test_attributes_state_the_engine_formats_and_metrics(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    existing = LlmEndpoint.from_endpoint_attributes(
        stack,
        "Existing",
        endpoint_name="chat",
        engine=Engine.lmi(),
        variant_name="g5-2xlarge",
        served_model_name="llama",
    )
    assert (existing.stream_format, existing.request_format) == (
        StreamFormat.LMI_JSONLINES,
        RequestFormat.MESSAGES,
    )
    assert existing.metric_invocations().dimensions == {
        "EndpointName": "chat",
        "VariantName": "g5-2xlarge",
    }
    explicit = LlmEndpoint.from_endpoint_attributes(
        stack, "Explicit", endpoint_name="other", stream_format=StreamFormat.TGI
    )
    assert explicit.stream_format is StreamFormat.TGI


def test_metrics_without_the_variant_name_the_fix(fronted: tuple[Any, Template]) -> None:
    existing, _ = fronted
    with pytest.raises(ConfigurationError, match=r"without its variant name.*variant_name="):
        existing.metric_invocations()


def test_created_and_imported_endpoints_share_one_interface(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an endpoint this app creates and two it imports
    from constructs_llm import IEndpoint, InvocationTarget
    from tests.matrix.builders import endpoint

    stack = new_stack()
    created = endpoint(stack)
    by_name = LlmEndpoint.from_endpoint_name(stack, "ByName", "other-endpoint")
    by_attributes = LlmEndpoint.from_endpoint_attributes(
        stack, "ByAttributes", endpoint_name="third", variant_name="AllTraffic"
    )
    # THEN each is an IEndpoint (and an invocation target), with the same members
    for each in (created, by_name, by_attributes):
        assert isinstance(each, IEndpoint) and isinstance(each, InvocationTarget)
        each.grant_invoke(iam.Role(stack, f"Caller{each.node.id}", assumed_by=iam.AnyPrincipal()))
    assert stack.resolve(by_attributes.metric_invocations().dimensions) == {
        "EndpointName": "third",
        "VariantName": "AllTraffic",
    }
