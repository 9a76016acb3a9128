"""LlmModel: a definition with a least-privilege role; each binding is a nameless CfnModel."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.assertions import Match, Template

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, Placement
from constructs_llm.errors import ConfigurationError
from constructs_llm.notes import notes_of

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"


def _model(stack: Stack, **overrides: Any) -> LlmModel:
    props: dict[str, Any] = {
        "source": ModelSource.hugging_face(LLAMA3, needs_token=False),
        "engine": Engine.tgi(),
        "instance_type": "ml.g5.2xlarge",
    }
    props.update(overrides)
    return LlmModel(stack, "Model", **props)


def _hosted(model: LlmModel, **props: Any) -> LlmEndpoint:
    """An endpoint serving ``model`` on its default placement, which renders its Model."""
    return LlmEndpoint(Stack.of(model), "Endpoint", model=model, alarms=False, **props)


def _only(template: Template, kind: str) -> dict[str, Any]:
    (resource,) = template.find_resources(kind).values()
    return dict(resource)


@pytest.fixture(scope="module")
def tgi(new_stack: Callable[..., Stack]) -> tuple[LlmModel, Template]:
    stack = new_stack()
    model = _model(stack, max_input_tokens=2048, max_total_tokens=4096)
    _hosted(model)  # the default placement: its Model is rendered at synth
    return model, Template.from_stack(stack)


def test_model_has_no_physical_name_and_uses_its_role(tgi: tuple[LlmModel, Template]) -> None:
    model, template = tgi
    props = _only(template, "AWS::SageMaker::Model")["Properties"]
    role_id = Stack.of(model).get_logical_id(model.role.node.default_child)  # type: ignore[arg-type]
    assert "ModelName" not in props
    assert props["ExecutionRoleArn"] == {"Fn::GetAtt": [role_id, "Arn"]}
    assert props["PrimaryContainer"]["Environment"] == {
        "HF_MODEL_ID": LLAMA3,
        "SM_NUM_GPUS": "1",
        "MAX_INPUT_TOKENS": "2048",
        "MAX_TOTAL_TOKENS": "4096",
        "MAX_BATCH_TOTAL_TOKENS": "26112",
        "MESSAGES_API_ENABLED": "true",
    }


def test_the_default_placement_keeps_the_resource_id(tgi: tuple[LlmModel, Template]) -> None:
    model, _ = tgi
    binding = model.bind()
    assert model.node.default_child is binding.resource
    assert binding.resource.node.id == binding.construct_id == "Resource"
    assert binding is model.bind(Placement("ml.g5.2xlarge"))  # one binding per placement


def test_model_waits_for_its_role_policy(tgi: tuple[LlmModel, Template]) -> None:
    _, template = tgi
    depends = _only(template, "AWS::SageMaker::Model")["DependsOn"]
    assert [d for d in depends if "DefaultPolicy" in d] and all("Role" in d for d in depends)


def test_role_has_no_managed_policy_and_no_unscoped_ecr_pull(
    tgi: tuple[LlmModel, Template],
) -> None:
    _, template = tgi
    role = _only(template, "AWS::IAM::Role")["Properties"]
    assert "ManagedPolicyArns" not in role
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "sagemaker.amazonaws.com"}
    pulls, wildcards = [], []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            actions = actions if isinstance(actions, list) else [actions]
            if statement["Resource"] == "*":
                wildcards.append(set(actions))
            if "ecr:BatchGetImage" in actions:
                pulls.append(json.dumps(statement["Resource"]))
    # only the calls that take no resource are on "*"; the image pull is on one repository
    assert all(a <= {"ecr:GetAuthorizationToken", "cloudwatch:PutMetricData"} for a in wildcards)
    assert any("ecr:GetAuthorizationToken" in a for a in wildcards)
    (pull,) = pulls
    assert "repository/huggingface-pytorch-tgi-inference" in pull


def test_sizing_plan_is_computed_for_the_whole_instance(tgi: tuple[LlmModel, Template]) -> None:
    model, _ = tgi
    plan = model.bind().plan
    assert plan is not None
    assert (plan.devices, plan.weights_gib) == (1, 14.96)  # 8.03B in bf16


def test_hub_model_without_isolation_records_the_checkov_reason(
    tgi: tuple[LlmModel, Template],
) -> None:
    _, template = tgi
    (skip,) = _only(template, "AWS::SageMaker::Model")["Metadata"]["checkov"]["skip"]
    assert skip["id"] == "CKV_AWS_370" and "Hub weights" in skip["comment"]


def test_hf_token_is_a_dynamic_reference_under_every_engine_name(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Token", "hf/token")
    model = _model(
        stack,
        source=ModelSource.hugging_face("meta-llama/Llama-2-13b-chat-hf", token=secret),
        instance_type="ml.g5.12xlarge",
    )
    _hosted(model)
    env = _only(Template.from_stack(stack), "AWS::SageMaker::Model")["Properties"][
        "PrimaryContainer"
    ]["Environment"]
    names = [k for k in env if "TOKEN" in k]
    assert set(names) == {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
    for name in names:
        assert "{{resolve:secretsmanager:" in json.dumps(env[name])
    assert "hf_" not in json.dumps(env)


def test_s3_weights_with_network_isolation_and_vpc(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=2, nat_gateways=1)
    model = _model(stack, source=ModelSource.s3(bucket, "llama3/"), vpc=vpc, architecture=None)
    _hosted(model)
    group = Stack.of(model).get_logical_id(
        model.node.find_child("SecurityGroup").node.default_child  # type: ignore[arg-type]
    )
    props = _only(Template.from_stack(stack), "AWS::SageMaker::Model")["Properties"]
    assert props["EnableNetworkIsolation"] is True
    assert props["VpcConfig"]["SecurityGroupIds"] == [{"Fn::GetAtt": [group, "GroupId"]}]
    assert len(props["VpcConfig"]["Subnets"]) == 2  # the private subnet of each of 2 AZs
    assert props["PrimaryContainer"]["ModelDataSource"] == {
        "S3DataSource": {
            "S3Uri": "s3://my-weights/llama3/",
            "S3DataType": "S3Prefix",
            "CompressionType": "None",
        }
    }


def test_a_model_is_a_grantable_with_its_role(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a model and a key it must use
    stack = new_stack()
    model = _model(stack)
    key = kms.Key(stack, "Key")
    # WHEN the key is granted to the model, as to any IGrantable
    key.grant_decrypt(model)
    iam.Grant.add_to_principal(grantee=model, actions=["s3:GetObject"], resource_arns=["*"])
    # THEN the model's role holds the grants
    assert model.grant_principal is model.role
    template = Template.from_stack(stack)
    role_id = stack.get_logical_id(model.role.node.default_child)  # type: ignore[arg-type]
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "Roles": [{"Ref": role_id}],
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like({"Action": "kms:Decrypt"}),
                        Match.object_like({"Action": "s3:GetObject", "Resource": "*"}),
                    ]
                )
            },
        },
    )


def test_a_vpc_model_exposes_the_connections_of_the_group_it_creates(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    vpc = ec2.Vpc(stack, "Vpc", max_azs=2, nat_gateways=1)
    model = _model(stack, vpc=vpc)
    database = ec2.SecurityGroup(stack, "Database", vpc=vpc)
    # WHEN another resource lets the model in
    database.connections.allow_from(model.connections, ec2.Port.tcp(5432))
    # THEN the rule names the model's own security group
    group = model.node.find_child("SecurityGroup").node.default_child
    Template.from_stack(stack).has_resource_properties(
        "AWS::EC2::SecurityGroupIngress",
        {
            "FromPort": 5432,
            "SourceSecurityGroupId": {
                "Fn::GetAtt": [stack.get_logical_id(group), "GroupId"]  # type: ignore[arg-type]
            },
        },
    )


def test_connections_outside_a_vpc_name_the_fix(new_stack: Callable[..., Stack]) -> None:
    with pytest.raises(ConfigurationError, match=r"runs outside a VPC; pass vpc=\.\.\."):
        _ = _model(new_stack()).connections


def test_a_model_without_instance_type_creates_nothing_until_bound(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a model with no default placement
    stack = new_stack()
    model = _model(stack, instance_type=None)
    # THEN nothing derived from hardware exists, and asking for it names the fix
    assert model.default_placement is None
    assert model.node.try_find_child("Resource") is None
    with pytest.raises(ConfigurationError, match=r"has no default placement.*instance_type="):
        model.bind()
    # WHEN an endpoint serves it THEN the placement's Model gets an id of its own
    binding = model.bind(Placement("ml.g5.12xlarge"))
    _hosted(model, instance_type="ml.g5.12xlarge")
    Template.from_stack(stack).resource_count_is("AWS::SageMaker::Model", 1)
    assert (binding.resource.node.id, binding.environment["SM_NUM_GPUS"]) == ("G5-12xlarge", "4")


def test_binding_a_model_creates_nothing_its_host_renders_the_model(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a model with a default placement, bound but hosted by nothing
    stack = new_stack()
    model = _model(stack, instance_type="ml.g5.2xlarge")
    binding = model.bind()
    # WHEN the app synthesizes THEN there is no Model, and reading it says none serves it
    Template.from_stack(stack).resource_count_is("AWS::SageMaker::Model", 0)
    with pytest.raises(ConfigurationError, match=r"no endpoint or component serves it on"):
        _ = binding.resource
    # AND an endpoint that hosts it renders it when the app synthesizes, not before
    hosted = _model(new_stack())
    _hosted(hosted)
    with pytest.raises(ConfigurationError, match=r"read it after app\.synth\(\)"):
        _ = hosted.bind().model_name
    Template.from_stack(Stack.of(hosted)).resource_count_is("AWS::SageMaker::Model", 1)
    assert hosted.bind().resource.node.path == "Test/Model/Resource"


def test_a_tgi_model_notes_tgi_s_upstream_status_once(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a TGI model served on two placements, and a vLLM model
    stack = new_stack()
    tgi = _model(stack)
    _hosted(tgi)
    LlmEndpoint(stack, "Big", model=tgi, instance_type="ml.g5.12xlarge", alarms=False)
    vllm = LlmModel(
        stack,
        "Vllm",
        source=ModelSource.hugging_face(LLAMA3, needs_token=False),
        engine=Engine.vllm(),
    )
    # THEN the TGI model says once that TGI is archived and what to use instead
    (note,) = [n for n in notes_of(tgi) if "TGI" in n]
    assert "archived" in note and "2026-03-21" in note and "3.3.6" in note
    assert "Engine.vllm() or Engine.lmi()" in note
    Template.from_stack(stack)
    resource = tgi.bind().resource
    assert not [n for n in notes_of(resource) if "TGI" in n]  # on the model, not per Model
    # AND a model on another engine says nothing of the kind
    assert notes_of(vllm) == []
