"""Endpoint log groups: a named (or library-derived) endpoint gets its group from the stack,
with a retention, an optional key and a removal policy, before the Endpoint; an endpoint whose
name CloudFormation generates cannot, and asking for it fails naming the fix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk.assertions import Template

from constructs_llm import (
    Autoscaling,
    EndpointLogs,
    Engine,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
)
from constructs_llm.errors import ConstructsLlmError
from constructs_llm.hosting.endpoint_logs import CONTEXT_KEY

QWEN = "Qwen/Qwen2.5-7B-Instruct"
GROUP = "AWS::Logs::LogGroup"


def _model(stack: Stack) -> LlmModel:
    return LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(QWEN),
        engine=Engine.vllm(),
        instance_type="ml.g5.2xlarge",
    )


def _resources(stack: Stack) -> dict[str, Any]:
    resources: dict[str, Any] = Template.from_stack(stack).to_json()["Resources"]
    return resources


def _groups(stack: Stack) -> dict[str, Any]:
    return {k: v for k, v in _resources(stack).items() if v["Type"] == GROUP}


def test_a_named_endpoint_gets_its_group_before_the_endpoint(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an app whose cdk.json turns the groups on (the repository's does) and a named endpoint
    stack = new_stack()
    assert stack.node.try_get_context(CONTEXT_KEY) is True
    endpoint = LlmEndpoint(
        stack, "Endpoint", model=_model(stack), endpoint_name="chat", alarms=False
    )
    # THEN the stack creates /aws/sagemaker/Endpoints/chat, kept a month and deleted with the stack
    ((group_id, group),) = _groups(stack).items()
    assert group["Properties"] == {
        "LogGroupName": "/aws/sagemaker/Endpoints/chat",
        "RetentionInDays": 30,
    }
    assert group["DeletionPolicy"] == "Delete" and group["UpdateReplacePolicy"] == "Delete"
    # and the Endpoint waits for it, so SageMaker's containers find it when they start
    resource = _resources(stack)[stack.get_logical_id(endpoint.resource)]
    assert group_id in resource["DependsOn"]
    assert endpoint.log_group is not None
    assert stack.get_logical_id(endpoint.log_group.node.default_child) == group_id  # type: ignore[arg-type]


def test_retention_key_and_removal_policy_are_the_callers(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    key = kms.Key(stack, "LogKey", enable_key_rotation=True)
    LlmEndpoint(
        stack,
        "Endpoint",
        model=_model(stack),
        endpoint_name="chat",
        alarms=False,
        logs=EndpointLogs(
            retention=logs.RetentionDays.ONE_YEAR,
            encryption_key=key,
            removal_policy=RemovalPolicy.RETAIN,
        ),
    )
    (group,) = _groups(stack).values()
    assert group["Properties"]["RetentionInDays"] == 365
    key_id = stack.get_logical_id(key.node.default_child)  # type: ignore[arg-type]
    assert group["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert group["DeletionPolicy"] == "Retain"
    # and the key lets CloudWatch Logs use it for this group only
    key_policy = _resources(stack)[stack.get_logical_id(key.node.default_child)]["Properties"]  # type: ignore[arg-type]
    (logs_statement,) = [
        s for s in key_policy["KeyPolicy"]["Statement"] if "Service" in str(s["Principal"])
    ]
    condition = logs_statement["Condition"]["ArnEquals"]["kms:EncryptionContext:aws:logs:arn"]
    assert str(condition).endswith(":log-group:/aws/sagemaker/Endpoints/chat']]}")


def test_a_generated_name_gets_no_group_from_the_context(new_stack: Callable[..., Stack]) -> None:
    # GIVEN an endpoint whose name CloudFormation generates: SageMaker creates its group while
    # CloudFormation creates the endpoint, before any group named after it could be
    stack = new_stack()
    endpoint = LlmEndpoint(stack, "Endpoint", model=_model(stack), alarms=False)
    assert _groups(stack) == {} and endpoint.log_group is None


@pytest.mark.parametrize("asked", [True, EndpointLogs()], ids=["True", "EndpointLogs"])
def test_asking_for_the_group_of_a_generated_name_fails_naming_the_fix(
    new_stack: Callable[..., Stack], asked: object
) -> None:
    stack = new_stack()
    with pytest.raises(
        ConstructsLlmError, match=r"logs=.*no name until CloudFormation creates it.*endpoint_name="
    ):
        LlmEndpoint(stack, "Endpoint", model=_model(stack), alarms=False, logs=asked)  # type: ignore[arg-type]


def test_without_the_context_an_upgrade_creates_no_group(new_stack: Callable[..., Stack]) -> None:
    # An endpoint named by an earlier version already has SageMaker's group: creating it again
    # would fail the deploy, so an app without the flag gets none, unless it asks.
    stack = new_stack(**{CONTEXT_KEY: False})
    model = _model(stack)
    LlmEndpoint(stack, "Old", model=model, endpoint_name="old", alarms=False)
    LlmEndpoint(stack, "New", model=model, endpoint_name="new", alarms=False, logs=True)
    names = [g["Properties"]["LogGroupName"] for g in _groups(stack).values()]
    assert names == ["/aws/sagemaker/Endpoints/new"]


def test_logs_false_leaves_the_group_to_sagemaker(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    LlmEndpoint(
        stack, "Endpoint", model=_model(stack), endpoint_name="chat", alarms=False, logs=False
    )
    assert _groups(stack) == {}


def test_an_endpoint_named_after_its_fleet_gets_that_name_s_group(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint = LlmEndpoint(
        stack,
        "Endpoint",
        model=_model(stack),
        alarms=False,
        autoscaling=Autoscaling(min_capacity=1, max_capacity=2, target_concurrent_requests=8),
    )
    name = stack.resolve(endpoint.resource.endpoint_name)
    assert name.endswith("-g5-2xlarge")
    ((group_id, group),) = _groups(stack).items()
    assert group["Properties"]["LogGroupName"] == f"/aws/sagemaker/Endpoints/{name}"
    assert group_id in _resources(stack)[stack.get_logical_id(endpoint.resource)]["DependsOn"]


def test_a_named_component_endpoint_gets_its_group_too(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    shared = InferenceComponentEndpoint(
        stack, "Shared", instance_type="ml.g5.12xlarge", endpoint_name="shared-llms"
    )
    ((group_id, group),) = _groups(stack).items()
    assert group["Properties"]["LogGroupName"] == "/aws/sagemaker/Endpoints/shared-llms"
    assert group_id in _resources(stack)[stack.get_logical_id(shared.resource)]["DependsOn"]
    unnamed = new_stack()
    with pytest.raises(
        ConstructsLlmError, match=r"InferenceComponentEndpoint 'Test/Shared'.*endpoint_name="
    ):
        InferenceComponentEndpoint(unnamed, "Shared", instance_type="ml.g5.12xlarge", logs=True)


@pytest.mark.parametrize(
    ("build", "names"),
    [
        (lambda: EndpointLogs(retention=30), "retention"),  # type: ignore[arg-type]
        (lambda: EndpointLogs(encryption_key="alias/logs"), "encryption_key"),  # type: ignore[arg-type]
        (lambda: EndpointLogs(removal_policy="destroy"), "removal_policy"),  # type: ignore[arg-type]
    ],
    ids=["retention", "encryption_key", "removal_policy"],
)
def test_wrong_settings_fail_naming_them(build: Callable[[], object], names: str) -> None:
    with pytest.raises(ConstructsLlmError, match=rf"EndpointLogs.*{names}.*got"):
        build()


def test_a_bad_context_value_fails_naming_the_key(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(**{CONTEXT_KEY: "yes"})
    with pytest.raises(
        ConstructsLlmError, match=rf"{CONTEXT_KEY} must be true or false, got 'yes'"
    ):
        LlmEndpoint(stack, "Endpoint", model=_model(stack), endpoint_name="chat", alarms=False)
