"""Network isolation and the VPC of an endpoint hosting inference components: SageMaker applies
them to the whole endpoint (CreateEndpointConfig), so the endpoint renders what its components'
models agree on, and components that disagree fail at synth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template

from constructs_llm import (
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmModel,
    ModelSource,
)
from constructs_llm.errors import ConfigurationError
from tests.support.synth_errors import synthesize

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"
QWEN = "Qwen/Qwen2.5-7B-Instruct"


def _shared(stack: Stack) -> InferenceComponentEndpoint:
    return InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")


def _s3_model(stack: Stack, id: str, model_id: str, **props: Any) -> LlmModel:
    weights = s3.Bucket.from_bucket_name(stack, f"{id}Weights", "my-weights")
    return LlmModel(
        stack,
        id,
        source=ModelSource.s3(weights, f"{id.lower()}/", model_id=model_id),
        engine=Engine.vllm(),
        **props,
    )


def _component(stack: Stack, id: str, shared: InferenceComponentEndpoint, model: LlmModel) -> None:
    InferenceComponent(
        stack,
        id,
        endpoint=shared,
        model=model,
        accelerators=1,
        min_memory_mib=16 * 1024,
        alarms=False,
    )


def _vpc(stack: Stack) -> ec2.Vpc:
    return ec2.Vpc(
        stack,
        "Vpc",
        max_azs=2,
        nat_gateways=0,
        subnet_configuration=[
            ec2.SubnetConfiguration(name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        ],
    )


ISOLATED = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)


def test_isolated_components_isolate_the_endpoint_config(new_stack: Callable[..., Stack]) -> None:
    # GIVEN two components whose models read S3 weights (network isolation by default)
    stack = new_stack()
    shared = _shared(stack)
    _component(stack, "Chat", shared, _s3_model(stack, "Llama", LLAMA3))
    _component(stack, "Coder", shared, _s3_model(stack, "Qwen", QWEN))
    # THEN the endpoint config isolates every container, and each Model keeps its own
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig", {"EnableNetworkIsolation": True}
    )
    models = template.find_resources("AWS::SageMaker::Model")
    assert [m["Properties"]["EnableNetworkIsolation"] for m in models.values()] == [True, True]


def test_hub_components_leave_the_endpoint_config_open(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a component whose model downloads from the Hub (no isolation)
    stack = new_stack()
    model = LlmModel(stack, "Model", source=ModelSource.hugging_face(QWEN), engine=Engine.vllm())
    _component(stack, "Chat", _shared(stack), model)
    # THEN the config states neither isolation nor a VPC
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {"EnableNetworkIsolation": Match.absent(), "VpcConfig": Match.absent()},
    )


def test_components_in_one_vpc_put_the_endpoint_config_in_it(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN two models in the same subnets with the same security group
    stack = new_stack()
    vpc = _vpc(stack)
    group = ec2.SecurityGroup(stack, "Models", vpc=vpc)
    network: dict[str, Any] = {"vpc": vpc, "vpc_subnets": ISOLATED, "security_groups": [group]}
    shared = _shared(stack)
    _component(stack, "Chat", shared, _s3_model(stack, "Llama", LLAMA3, **network))
    _component(stack, "Coder", shared, _s3_model(stack, "Qwen", QWEN, **network))
    # THEN the endpoint config carries that VPC, and its role may attach network interfaces
    template = Template.from_stack(stack)
    config = next(iter(template.find_resources("AWS::SageMaker::EndpointConfig").values()))
    vpc_config = config["Properties"]["VpcConfig"]
    assert vpc_config["SecurityGroupIds"] == [
        {"Fn::GetAtt": [stack.get_logical_id(group.node.default_child), "GroupId"]}  # type: ignore[arg-type]
    ]
    assert len(vpc_config["Subnets"]) == 2
    role_id = stack.get_logical_id(shared.role.node.default_child)  # type: ignore[arg-type]
    actions = [
        s["Action"]
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    assert any("ec2:CreateNetworkInterface" in a for a in actions)


def test_components_that_disagree_on_isolation_fail_naming_both(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN the component that sorts last by path created first
    stack = new_stack()
    shared = _shared(stack)
    hub = LlmModel(stack, "Qwen", source=ModelSource.hugging_face(QWEN), engine=Engine.vllm())
    _component(stack, "Coder", shared, hub)
    _component(stack, "Chat", shared, _s3_model(stack, "Llama", LLAMA3))
    # WHEN the app synthesizes THEN the endpoint fails, the first component by path the
    # reference and the other named
    with pytest.raises(ConfigurationError) as error:
        synthesize(stack)
    message = str(error.value)
    assert message.startswith("InferenceComponentEndpoint 'Test/Shared': components")
    assert "components 'Test/Chat' (network_isolation=True) and 'Test/Coder' (False)" in message
    assert "CreateEndpointConfig" in message and "separate endpoints" in message


def test_components_in_other_security_groups_fail_naming_the_vpc(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN two models in one VPC, each with the security group it creates by default
    stack = new_stack()
    vpc = _vpc(stack)
    shared = _shared(stack)
    network: dict[str, Any] = {"vpc": vpc, "vpc_subnets": ISOLATED}
    _component(stack, "Chat", shared, _s3_model(stack, "Llama", LLAMA3, **network))
    _component(stack, "Coder", shared, _s3_model(stack, "Qwen", QWEN, **network))
    with pytest.raises(ConfigurationError) as error:
        synthesize(stack)
    message = str(error.value)
    assert (
        "'Test/Chat' (in a VPC) and 'Test/Coder' (in other subnets or security groups)" in message
    )
    assert "security_groups" in message
