"""The execution role of every SageMaker Model may do what its model needs (the walk and its
AWS facts: ``tests/support/walks/model_access.py``); each dropped or narrowed permission
fails the walk, naming the resource and the action."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.contract_templates import COMBINATIONS, every_template, example_templates
from tests.support.contract_walk import drop_action, narrow_action, of_type
from tests.support.walks.model_access import NAMESPACE, walk_models


@pytest.mark.parametrize("name", [*example_templates(), COMBINATIONS])
def test_every_execution_role_may_do_what_its_model_needs(name: str) -> None:
    walk = walk_models(name, every_template()[name])
    assert walk.walked, f"{name}: no SageMaker Model walked"
    assert not walk.problems, "\n".join(walk.problems)


def test_the_combinations_stack_holds_nothing_the_other_walks_walk() -> None:
    """The invoker, origin and scaling walks read the examples' templates only: the
    combinations stack (synthesized here alone) has no function, distribution or scaling
    target for them to miss."""
    kinds = {r["Type"] for r in every_template()[COMBINATIONS]["Resources"].values()}
    assert not kinds & {
        "AWS::Lambda::Function",
        "AWS::CloudFront::Distribution",
        "AWS::ApplicationAutoScaling::ScalableTarget",
        "AWS::ApplicationAutoScaling::ScalingPolicy",
    }


def test_the_walks_cover_weights_and_keys() -> None:
    """The templates walked hold each kind of access the walk checks, so none of its branches
    passes by finding nothing: S3 objects and prefixes, bucket keys and volume keys."""
    templates = every_template()
    sources = [
        c
        for t in templates.values()
        for m in of_type(t, "AWS::SageMaker::Model").values()
        for c in [m["Properties"].get("PrimaryContainer", {})]
    ]
    assert any("ModelDataUrl" in c for c in sources)
    assert any("ModelDataSource" in c for c in sources)
    assert any(
        "KmsKeyId" in c["Properties"]
        for t in templates.values()
        for c in of_type(t, "AWS::SageMaker::EndpointConfig").values()
    )
    assert any(
        "BucketEncryption" in b["Properties"]
        for t in templates.values()
        for b in of_type(t, "AWS::S3::Bucket").values()
    )


# -- mutants: each dropped or narrowed permission fails the walk, naming what it misses -----


def _fails(template: dict[str, Any], *fragments: str) -> None:
    walk = walk_models("mutant", template)
    assert walk.walked
    assert any(all(f in p for f in fragments) for p in walk.problems), walk.problems


@pytest.mark.parametrize("action", ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"])
def test_a_role_without_image_pull_fails(action: str) -> None:
    _fails(
        drop_action(example_templates()["Phi3Lmi"], action),
        action,
        ":repository/djl-inference",
    )


def test_a_pull_grant_on_another_repository_fails() -> None:
    other = {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":ecr:",
                {"Ref": "AWS::Region"},
                ":763104351884:repository/djl-inference",
            ],
        ]
    }
    _fails(
        narrow_action(example_templates()["Phi3Lmi"], "ecr:BatchGetImage", other),
        "ecr:BatchGetImage",
        "ConstructsLlmDlcRegistry",
    )


def test_a_role_without_the_ecr_token_fails() -> None:
    _fails(
        drop_action(example_templates()["Phi3Lmi"], "ecr:GetAuthorizationToken"),
        "ecr:GetAuthorizationToken",
    )


@pytest.mark.parametrize(
    ("action", "fragment"),
    [("s3:GetObject", "/llama3/config.json"), ("s3:ListBucket", "Weights")],
)
def test_a_role_that_cannot_read_its_prefix_fails(action: str, fragment: str) -> None:
    combinations = every_template()[COMBINATIONS]
    _fails(drop_action(combinations, action), action, fragment)


def test_a_read_grant_on_another_prefix_fails() -> None:
    combinations = every_template()[COMBINATIONS]
    other = {"Fn::Join": ["", [{"Fn::GetAtt": [_bucket(combinations), "Arn"]}, "/other/*"]]}
    _fails(
        narrow_action(combinations, "s3:GetObject", other),
        "s3:GetObject",
        "qwen2.5-7b/model.tar.gz",
    )


def test_a_role_that_cannot_decrypt_its_weights_fails() -> None:
    combinations = every_template()[COMBINATIONS]
    policies = {
        k for k, r in of_type(combinations, "AWS::IAM::Policy").items() if "s3:GetObject" in str(r)
    }
    _fails(
        drop_action(combinations, "kms:Decrypt", policies=policies),
        "kms:Decrypt",
        "WeightsKey",
    )


def test_a_role_that_cannot_use_the_volume_key_fails() -> None:
    _fails(
        drop_action(example_templates()["MistralInf2"], "kms:CreateGrant"),
        "kms:CreateGrant",
        "VolumeKey",
    )


@pytest.mark.parametrize("action", ["logs:CreateLogStream", "logs:PutLogEvents"])
def test_a_role_that_cannot_log_fails(action: str) -> None:
    _fails(drop_action(example_templates()["Falcon40bLmi"], action), action, NAMESPACE)


def test_logs_granted_on_another_endpoint_fail() -> None:
    """OvernightBatch's endpoint has a name: a grant on another endpoint's group misses it."""
    other = {
        "Fn::Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/sagemaker/Endpoints/other:*"
    }
    _fails(
        narrow_action(example_templates()["OvernightBatch"], "logs:PutLogEvents", other),
        "logs:PutLogEvents",
        "/aws/sagemaker/Endpoints/OvernightBatch-Endpoint",
    )


def test_metrics_in_another_namespace_fail() -> None:
    template = example_templates()["NativeOpenai"]
    mutant = narrow_action(template, "cloudwatch:PutMetricData", "*")
    for policy in of_type(mutant, "AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement.get("Action") == "cloudwatch:PutMetricData":
                statement["Condition"] = {"StringEquals": {"cloudwatch:namespace": "Other"}}
    _fails(mutant, "cloudwatch:PutMetricData", NAMESPACE)


def test_a_condition_the_walk_cannot_decide_is_reported() -> None:
    template = example_templates()["NativeOpenai"]
    mutant = narrow_action(template, "cloudwatch:PutMetricData", "*")
    for policy in of_type(mutant, "AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement.get("Action") == "cloudwatch:PutMetricData":
                statement["Condition"] = {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}
    _fails(mutant, "cloudwatch:PutMetricData", "only if IpAddress aws:SourceIp")


def _bucket(template: dict[str, Any]) -> str:
    (bucket,) = of_type(template, "AWS::S3::Bucket")
    return bucket


def _model_role_policies(template: dict[str, Any]) -> set[str]:
    return {k for k in of_type(template, "AWS::IAM::Policy") if k.startswith("ModelRole")}


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ("s3:PutObject", "/outputs/request-id.out"),
        ("sns:Publish", "EndpointConfig24AD0A28's SuccessTopic"),
        ("kms:GenerateDataKey", "DoneKey2F7E0CA1"),
    ],
)
def test_an_async_role_that_cannot_deliver_results_fails(action: str, fragment: str) -> None:
    template = example_templates()["OvernightBatch"]
    policies = _model_role_policies(template)
    _fails(drop_action(template, action, policies=policies), action, fragment)


def test_a_bucket_policy_that_denies_the_role_fails() -> None:
    """The weights bucket's own policy denies every call without TLS; the walk calls over
    TLS, so it passes; a policy that denies the role outright fails it."""
    template = copy.deepcopy(every_template()[COMBINATIONS])
    (policy,) = of_type(template, "AWS::S3::BucketPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any("aws:SecureTransport" in str(s) for s in statements)
    statements.append(
        {
            "Effect": "Deny",
            "Action": "s3:GetObject",
            "Principal": {"AWS": {"Fn::GetAtt": ["PrefixModelRole4E324646", "Arn"]}},
            "Resource": "*",
        }
    )
    _fails(template, "s3:GetObject", "/llama3/config.json", "denied by")


@pytest.mark.parametrize("role", ["LlamaModelRole", "EndpointRole"])
def test_a_role_that_cannot_read_an_adapter_fails(role: str) -> None:
    template = example_templates()["ModelGateway"]
    policies = {k for k in of_type(template, "AWS::IAM::Policy") if k.startswith(role)}
    mutant = narrow_action(template, "s3:GetObject", "arn:aws:s3:::other/*", policies=policies)
    _fails(mutant, role, "s3:GetObject", "llm-adapters/support-bot.tar.gz")
