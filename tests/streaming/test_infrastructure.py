"""StreamingInvoker: the Lambda, its Web Adapter layer, the streaming function URL and the
least-privilege wiring to the endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from constructs_llm import StreamingInvoker
from constructs_llm.errors import ConfigurationError
from tests.matrix.builders import endpoint as llama3_endpoint


@pytest.fixture(scope="module")
def synthesized(new_stack: Callable[..., Stack]) -> tuple[StreamingInvoker, Template]:
    stack = new_stack()
    invoker = StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack))
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    invoker.grant_invoke_url(caller)
    return invoker, Template.from_stack(stack)


def _function(template: Template) -> dict[str, Any]:
    functions = template.find_resources("AWS::Lambda::Function")
    (function,) = functions.values()
    return dict(function)


def test_function_url_streams_and_requires_iam(synthesized: tuple[Any, Template]) -> None:
    _, template = synthesized
    template.has_resource_properties(
        "AWS::Lambda::Url", {"AuthType": "AWS_IAM", "InvokeMode": "RESPONSE_STREAM"}
    )


def test_function_runs_the_runtime_behind_the_web_adapter(
    synthesized: tuple[Any, Template],
) -> None:
    _, template = synthesized
    props = _function(template)["Properties"]
    assert props["Runtime"] == "python3.14"
    assert props["Architectures"] == ["arm64"]
    assert props["Handler"] == "streaming/runtime/run.sh"
    assert props["Timeout"] == 300
    layer = json.dumps(props["Layers"])
    assert "753240598075:layer:LambdaAdapterLayerArm64:28" in layer
    env = props["Environment"]["Variables"]
    assert env["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert env["AWS_LWA_INVOKE_MODE"] == "response_stream"
    assert env["AWS_LWA_READINESS_CHECK_PATH"] == "/health"
    assert env["STREAM_FORMAT"] == "openai"  # TGI's messages API
    assert env["REQUEST_FORMAT"] == "messages"
    assert env["ENDPOINT_NAME"]["Fn::GetAtt"][1] == "EndpointName"
    assert int(env["UPSTREAM_READ_TIMEOUT"]) < props["Timeout"]
    assert "INFERENCE_COMPONENT_NAME" not in env


def test_no_retries_and_log_retention(synthesized: tuple[Any, Template]) -> None:
    _, template = synthesized
    template.has_resource_properties("AWS::Lambda::EventInvokeConfig", {"MaximumRetryAttempts": 0})
    template.has_resource_properties("AWS::Logs::LogGroup", {"RetentionInDays": 30})


def test_function_may_only_invoke_its_endpoint(synthesized: tuple[Any, Template]) -> None:
    _, template = synthesized
    role = _function(template)["Properties"]["Role"]["Fn::GetAtt"][0]
    policies = [
        p
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
    ]
    statements = [s for p in policies for s in p["Properties"]["PolicyDocument"]["Statement"]]
    invoke = [s for s in statements if "sagemaker:InvokeEndpoint" in json.dumps(s["Action"])]
    assert len(invoke) == 1
    assert invoke[0]["Action"] == [
        "sagemaker:InvokeEndpoint",
        "sagemaker:InvokeEndpointWithResponseStream",
    ]
    assert "Ref" in invoke[0]["Resource"]  # the endpoint's ARN, not *
    assert all(s["Resource"] != "*" for s in statements)
    template.has_resource_properties(
        "AWS::IAM::Role", {"ManagedPolicyArns": Match.absent(), "RoleName": Match.absent()}
    )


def test_grant_invoke_url_adds_both_statements_function_urls_need(
    synthesized: tuple[Any, Template],
) -> None:
    _, template = synthesized
    dumped = json.dumps(template.find_resources("AWS::IAM::Policy"))
    assert "lambda:InvokeFunctionUrl" in dumped
    assert "lambda:InvokedViaFunctionUrl" in dumped


def test_china_regions_use_the_x86_layer(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(region="cn-north-1")
    StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack))
    props = _function(Template.from_stack(stack))["Properties"]
    assert props["Architectures"] == ["x86_64"]
    # the stack's partition, which CDK knows for a concrete region (aws-cn here)
    assert props["Layers"] == [
        "arn:aws-cn:lambda:cn-north-1:041581134020:layer:LambdaAdapterLayerX86:28"
    ]


def test_the_layer_arn_names_the_stack_s_partition_and_region(
    synthesized: tuple[Any, Template],
) -> None:
    _, template = synthesized
    (layer,) = _function(template)["Properties"]["Layers"]
    assert layer == {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":lambda:",
                {"Ref": "AWS::Region"},
                ":753240598075:layer:LambdaAdapterLayerArm64:28",
            ],
        ]
    }


def test_unpublished_partition_fails_naming_region_and_override(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(region="us-gov-west-1")
    with pytest.raises(ConfigurationError, match="'us-gov-west-1'.*adapter_layer="):
        StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack))


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"timeout": Duration.minutes(16)}, "timeout .* got 960 s"),
        ({"timeout": Duration.seconds(10)}, "timeout .* got 10 s"),
        ({"memory_size": 64}, "memory_size .* got 64"),
    ],
)
def test_bad_props_fail_naming_the_value(
    new_stack: Callable[..., Stack], props: dict[str, Any], message: str
) -> None:
    stack = new_stack()
    with pytest.raises(ConfigurationError, match=message):
        StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack), **props)


def test_asset_holds_only_the_runtime_package_and_the_shared_vocabulary(
    synthesized: tuple[Any, Template],
) -> None:
    invoker, _ = synthesized
    staged = Stack.of(invoker).node.root.synth().directory  # type: ignore[attr-defined]
    assets = [p for p in Path(staged).glob("asset.*") if p.is_dir()]
    (asset,) = assets
    assert sorted(p.name for p in asset.iterdir()) == ["contract.py", "streaming"]
    assert sorted(p.name for p in (asset / "streaming").iterdir()) == ["formats.py", "runtime"]
    runtime = asset / "streaming" / "runtime"
    files = {p.relative_to(runtime).as_posix() for p in runtime.rglob("*")}
    assert {"run.sh", "server.py", "parsing/parser.py", "chat/fields.py", "__main__.py"} <= files
    assert not [name for name in files if "__pycache__" in name]


def test_agnostic_stack_asserts_the_commercial_partition(
    synthesized: tuple[Any, Template],
) -> None:
    _, template = synthesized
    rules = template.to_json()["Rules"]
    (assertion,) = rules["ConstructsLlmAdapterPartition"]["Assertions"]
    assert assertion["Assert"] == {"Fn::Equals": [{"Ref": "AWS::Partition"}, "aws"]}
    assert "adapter_layer=" in assertion["AssertDescription"]


def test_a_log_key_lets_cloudwatch_logs_use_it_for_each_invoker_s_log_group_only(
    new_stack: Callable[..., Stack],
) -> None:
    from aws_cdk import aws_kms as kms

    # GIVEN two invokers whose log groups share one customer key
    stack = new_stack()
    key = kms.Key(stack, "LogKey", enable_key_rotation=True)
    target = llama3_endpoint(stack)
    StreamingInvoker(stack, "Stream", target=target, log_encryption_key=key)
    StreamingInvoker(stack, "Other", target=target, log_encryption_key=key)
    template = Template.from_stack(stack)
    # THEN each log group is encrypted with the key under a name of its own
    groups = template.find_resources("AWS::Logs::LogGroup")
    assert len(groups) == 2
    names = []
    for group in groups.values():
        props = group["Properties"]
        assert props["KmsKeyId"] == {
            "Fn::GetAtt": [template.get_resource_id("AWS::KMS::Key"), "Arn"]
        }
        (parts,) = props["LogGroupName"]["Fn::Join"][1:]
        assert parts[:2] == ["/constructs-llm/", {"Ref": "AWS::StackName"}]
        names.append(parts)
        assert "checkov" not in json.dumps(group.get("Metadata", {}))
    # AND the key policy lets the regional CloudWatch Logs principal use the key only with the
    # encryption context of one of those log groups (the guide's condition), one statement each
    (key_resource,) = template.find_resources("AWS::KMS::Key").values()
    statements = key_resource["Properties"]["KeyPolicy"]["Statement"]
    logs_statements = [s for s in statements if "Service" in s["Principal"]]
    assert len(logs_statements) == 2
    scoped = []
    for statement in logs_statements:
        assert statement["Principal"]["Service"] == {
            "Fn::Join": ["", ["logs.", {"Ref": "AWS::Region"}, ".", {"Ref": "AWS::URLSuffix"}]]
        }
        assert "kms:GenerateDataKey" in statement["Action"] and "kms:*" not in statement["Action"]
        (condition,) = statement["Condition"]["ArnEquals"].values()
        assert list(statement["Condition"]["ArnEquals"]) == ["kms:EncryptionContext:aws:logs:arn"]
        arn = condition["Fn::Join"][1]
        assert arn[:7] == [
            "arn:",
            {"Ref": "AWS::Partition"},
            ":logs:",
            {"Ref": "AWS::Region"},
            ":",
            {"Ref": "AWS::AccountId"},
            ":log-group:/constructs-llm/",
        ]
        scoped.append(["/constructs-llm/", *arn[7:]])
    assert sorted(map(json.dumps, scoped)) == sorted(map(json.dumps, names))


def test_without_a_log_key_the_log_group_keeps_a_generated_name(
    synthesized: tuple[Any, Template],
) -> None:
    _, template = synthesized
    template.has_resource_properties(
        "AWS::Logs::LogGroup", {"LogGroupName": Match.absent(), "KmsKeyId": Match.absent()}
    )


def test_a_custom_layer_sets_the_architecture(new_stack: Callable[..., Stack]) -> None:
    from aws_cdk import aws_lambda as lambda_

    stack = new_stack()
    layer = lambda_.LayerVersion.from_layer_version_arn(
        stack, "Lwa", "arn:aws:lambda:us-east-1:123456789012:layer:MyAdapterX86:1"
    )
    StreamingInvoker(
        stack,
        "Stream",
        target=llama3_endpoint(stack),
        adapter_layer=layer,
        architecture=lambda_.Architecture.X86_64,
    )
    props = _function(Template.from_stack(stack))["Properties"]
    assert props["Architectures"] == ["x86_64"]
    assert props["Layers"] == ["arn:aws:lambda:us-east-1:123456789012:layer:MyAdapterX86:1"]


def test_an_architecture_without_its_layer_is_refused(new_stack: Callable[..., Stack]) -> None:
    from aws_cdk import aws_lambda as lambda_

    stack = new_stack()
    with pytest.raises(ConfigurationError, match="architecture=x86_64 needs adapter_layer="):
        StreamingInvoker(
            stack, "Stream", target=llama3_endpoint(stack), architecture=lambda_.Architecture.X86_64
        )


def test_a_region_without_a_published_layer_is_named_with_the_other_problems(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a GovCloud stack (no published adapter layer, and no function URLs in CloudFormation's
    # schemas there) and a memory size out of range
    stack = new_stack(region="us-gov-west-1")
    # WHEN the invoker is built THEN one error names all three
    with pytest.raises(
        ConfigurationError,
        match=r"(?s)StreamingInvoker 'Test/Stream' has 3 problems:.*no published Lambda Web "
        r"Adapter layer is known for region 'us-gov-west-1'.*AWS::Lambda::Url.*"
        r"memory_size must be 128-10240 MiB",
    ):
        StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack), memory_size=64)


def test_heartbeat_and_capacity_wait_are_passed_to_the_runtime(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    StreamingInvoker(
        stack,
        "Stream",
        target=llama3_endpoint(stack),
        heartbeat=Duration.seconds(15),
        capacity_wait=Duration.minutes(4),
    )
    env = _function(Template.from_stack(stack))["Properties"]["Environment"]["Variables"]
    assert env["HEARTBEAT_SECONDS"] == "15"
    assert env["CAPACITY_WAIT_SECONDS"] == "240"


def test_heartbeat_and_capacity_wait_are_off_by_default(
    synthesized: tuple[Any, Template],
) -> None:
    _, template = synthesized
    env = _function(template)["Properties"]["Environment"]["Variables"]
    assert "HEARTBEAT_SECONDS" not in env and "CAPACITY_WAIT_SECONDS" not in env


def test_heartbeat_out_of_range_fails_naming_the_value(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    with pytest.raises(
        ConfigurationError, match="heartbeat must be between 1 and 300 seconds, got 600 s"
    ):
        StreamingInvoker(
            stack, "Stream", target=llama3_endpoint(stack), heartbeat=Duration.minutes(10)
        )
