"""LlmModel: a nameless CfnModel with derived env and a least-privilege execution role."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import Engine, LlmModel, ModelSource
from constructs_llm.errors import ConfigurationError, SizingError


def _model(stack: Stack, **overrides: Any) -> LlmModel:
    props: dict[str, Any] = {
        "source": ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct"),
        "engine": Engine.tgi(),
        "instance_type": "ml.g5.2xlarge",
    }
    props.update(overrides)
    return LlmModel(stack, "Model", **props)


@pytest.fixture(scope="module")
def tgi(new_stack: Callable[..., Stack]) -> tuple[LlmModel, Template]:
    stack = new_stack()
    model = _model(stack, max_input_tokens=2048, max_total_tokens=4096)
    return model, Template.from_stack(stack)


def test_model_has_no_physical_name_and_uses_its_role(tgi: tuple[LlmModel, Template]) -> None:
    _, template = tgi
    template.resource_count_is("AWS::SageMaker::Model", 1)
    template.has_resource_properties(
        "AWS::SageMaker::Model",
        {
            "ModelName": Match.absent(),
            "ExecutionRoleArn": {"Fn::GetAtt": [Match.string_like_regexp("ModelRole"), "Arn"]},
            "PrimaryContainer": {
                "Environment": Match.object_like(
                    {"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct", "SM_NUM_GPUS": "1"}
                )
            },
        },
    )


def test_model_waits_for_its_role_policy(tgi: tuple[LlmModel, Template]) -> None:
    _, template = tgi
    model = next(iter(template.find_resources("AWS::SageMaker::Model").values()))
    assert any("DefaultPolicy" in d for d in model["DependsOn"])


def test_role_has_no_managed_policy_and_no_unscoped_ecr_pull(
    tgi: tuple[LlmModel, Template],
) -> None:
    _, template = tgi
    template.has_resource_properties(
        "AWS::IAM::Role",
        {
            "ManagedPolicyArns": Match.absent(),
            "AssumeRolePolicyDocument": Match.object_like(
                {
                    "Statement": [
                        Match.object_like({"Principal": {"Service": "sagemaker.amazonaws.com"}})
                    ]
                }
            ),
        },
    )
    statements = next(iter(template.find_resources("AWS::IAM::Policy").values()))["Properties"][
        "PolicyDocument"
    ]["Statement"]
    for statement in statements:
        actions = (
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        )
        if statement["Resource"] == "*":
            assert set(actions) <= {"ecr:GetAuthorizationToken", "cloudwatch:PutMetricData"}, (
                actions
            )
        if "ecr:BatchGetImage" in actions:
            assert "repository/huggingface-pytorch-tgi-inference" in json.dumps(
                statement["Resource"]
            )


def test_sizing_plan_is_computed_for_the_whole_instance(tgi: tuple[LlmModel, Template]) -> None:
    model, _ = tgi
    assert model.plan is not None
    assert model.plan.weights_gib > 14  # 8B parameters in bf16


def test_hub_model_without_isolation_records_the_checkov_reason(
    tgi: tuple[LlmModel, Template],
) -> None:
    _, template = tgi
    model = next(iter(template.find_resources("AWS::SageMaker::Model").values()))
    (skip,) = model["Metadata"]["checkov"]["skip"]
    assert skip["id"] == "CKV_AWS_370" and "Hub weights" in skip["comment"]


def test_hf_token_is_a_dynamic_reference_under_every_engine_name(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Token", "hf/token")
    _model(
        stack,
        source=ModelSource.hugging_face("meta-llama/Llama-2-13b-chat-hf", token=secret),
        instance_type="ml.g5.12xlarge",
    )
    env = next(iter(Template.from_stack(stack).find_resources("AWS::SageMaker::Model").values()))[
        "Properties"
    ]["PrimaryContainer"]["Environment"]
    names = [k for k in env if "TOKEN" in k]
    assert set(names) >= {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
    for name in names:
        assert "{{resolve:secretsmanager:" in json.dumps(env[name])
    assert "hf_" not in json.dumps(env)


def test_s3_weights_with_network_isolation_and_vpc(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=2, nat_gateways=1)
    _model(
        stack,
        source=ModelSource.s3(bucket, "llama3/"),
        vpc=vpc,
        architecture=None,
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::SageMaker::Model",
        {
            "EnableNetworkIsolation": True,
            "VpcConfig": {"SecurityGroupIds": Match.any_value(), "Subnets": Match.any_value()},
            "PrimaryContainer": Match.object_like(
                {
                    "ModelDataSource": {
                        "S3DataSource": Match.object_like(
                            {"S3DataType": "S3Prefix", "CompressionType": "None"}
                        )
                    }
                }
            ),
        },
    )


@pytest.mark.parametrize(
    ("overrides", "error", "message"),
    [
        ({"instance_type": "g5.2xlarge"}, ConfigurationError, "g5.2xlarge"),
        ({"instance_type": "ml.g5.45xlarge"}, ConfigurationError, r"ml\.g5\.45xlarge.*48xlarge"),
        ({"engine": Engine.tgi_neuronx()}, ConfigurationError, "ml.g5.2xlarge"),
        ({"instance_type": "ml.inf2.xlarge"}, ConfigurationError, "ml.inf2.xlarge"),
        (
            {"env": {"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz123456"}},
            ConfigurationError,
            "HF_TOKEN",
        ),
        ({"env": {"HF_MODEL_ID": "other/model"}}, ConfigurationError, "other/model"),
        ({"max_input_tokens": 4096, "max_total_tokens": 2048}, ConfigurationError, "4096"),
        ({"network_isolation": True}, ConfigurationError, "network_isolation"),
        ({"max_total_tokens": 0}, ConfigurationError, "got 0"),
        ({"engine": Engine.tgi(num_shard=4)}, ConfigurationError, "4"),
    ],
)
def test_bad_input_fails_at_synth_naming_the_value(
    new_stack: Callable[..., Stack], overrides: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        _model(new_stack(), **overrides)


def test_seventy_billion_on_four_a10g_is_rejected(new_stack: Callable[..., Stack]) -> None:
    with pytest.raises(SizingError, match="70"):
        _model(
            new_stack(),
            source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-70B-Instruct"),
            instance_type="ml.g5.12xlarge",
        )


def test_unknown_family_warns_and_skips_hardware_checks(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    _model(stack, instance_type="ml.g9x.2xlarge")
    warnings = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("not in the packaged hardware catalog")
    )
    assert warnings
