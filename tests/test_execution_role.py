"""The execution roles' writes: each host grants its own log groups and metric namespaces, and
cdk-nag accepts what stays a wildcard in any stack, environment-agnostic or concrete."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from constructs_llm import (
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
)
from stacks import EXAMPLES
from tests.conftest import cdk_context

QWEN = "Qwen/Qwen2.5-7B-Instruct"
LOG_ACTIONS = [
    "logs:CreateLogGroup",
    "logs:CreateLogStream",
    "logs:DescribeLogStreams",
    "logs:PutLogEvents",
]
ENDPOINTS = "/aws/sagemaker/Endpoints"
COMPONENTS = "/aws/sagemaker/InferenceComponents"


def _model(stack: Stack, id: str = "Model", **props: Any) -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(QWEN),
        engine=Engine.vllm(),
        instance_type="ml.g5.2xlarge",
        **props,
    )


def _statements(stack: Stack, role: iam.IRole) -> list[dict[str, Any]]:
    role_id = stack.get_logical_id(role.node.default_child)  # type: ignore[arg-type]
    found: list[dict[str, Any]] = []
    for policy in Template.from_stack(stack).find_resources("AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def _logs(statements: list[dict[str, Any]]) -> list[str]:
    """The log ARNs granted, as ``<group>`` and ``<group>:log-stream:*`` after ``log-group:``."""
    (logs,) = [s for s in statements if s["Action"] == LOG_ACTIONS]
    resources = logs["Resource"] if isinstance(logs["Resource"], list) else [logs["Resource"]]
    return [_after_log_group(r) for r in resources]


def _after_log_group(arn: Any) -> str:
    parts = arn["Fn::Join"][1]
    return str(parts[-1]).split(":log-group:", 1)[1]


def _namespaces(statements: list[dict[str, Any]]) -> list[Any]:
    return [
        s["Condition"]
        for s in statements
        if s["Action"] == "cloudwatch:PutMetricData" and s["Resource"] == "*"
    ]


# -- real-time endpoints ----------------------------------------------------------------------


def test_a_model_on_a_named_endpoint_writes_that_group_and_namespace_only(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a model served by an endpoint with a name
    stack = new_stack()
    model = _model(stack)
    LlmEndpoint(stack, "Endpoint", model=model, endpoint_name="chat", alarms=False)
    # WHEN the app synthesizes
    statements = _statements(stack, model.role)
    # THEN its role may write that endpoint's group and its streams, and metrics in the
    # endpoint namespace only
    assert _logs(statements) == [f"{ENDPOINTS}/chat", f"{ENDPOINTS}/chat:log-stream:*"]
    assert _namespaces(statements) == [{"StringEquals": {"cloudwatch:namespace": ENDPOINTS}}]


def test_a_model_on_two_endpoints_writes_both_groups(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    model = _model(stack)
    LlmEndpoint(stack, "Blue", model=model, endpoint_name="chat-blue", alarms=False)
    LlmEndpoint(stack, "Green", model=model, endpoint_name="chat-green", alarms=False)
    statements = _statements(stack, model.role)
    assert sorted(_logs(statements)) == sorted(
        f"{ENDPOINTS}/{name}{suffix}"
        for name in ("chat-blue", "chat-green")
        for suffix in ("", ":log-stream:*")
    )
    assert len(_namespaces(statements)) == 1  # the same statement, merged


def test_a_generated_endpoint_name_keeps_the_endpoint_prefix(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an endpoint whose name CloudFormation generates (known only once it exists)
    stack = new_stack()
    model = _model(stack)
    LlmEndpoint(stack, "Endpoint", model=model, alarms=False)
    # THEN the role keeps the prefix, which the model can wait for without a cycle
    assert _logs(_statements(stack, model.role)) == [
        f"{ENDPOINTS}/*",
        f"{ENDPOINTS}/*:log-stream:*",
    ]


def test_a_model_that_is_not_hosted_writes_nothing(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    model = _model(stack)
    actions = {str(s["Action"]) for s in _statements(stack, model.role)}
    assert not any("logs:" in a or "PutMetricData" in a for a in actions)


def test_a_role_of_the_users_gets_no_writes(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a model with its owner's role
    stack = new_stack()
    role = iam.Role(stack, "Mine", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    model = _model(stack, role=role)
    LlmEndpoint(stack, "Endpoint", model=model, endpoint_name="chat", alarms=False)
    # THEN the library adds the image pull, not logs or metrics: that role is its owner's
    actions = {str(s["Action"]) for s in _statements(stack, role)}
    assert not any("logs:" in a or "PutMetricData" in a for a in actions)


# -- inference components ---------------------------------------------------------------------


def test_a_component_endpoint_and_its_models_write_their_groups_in_both_namespaces(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a named endpoint hosting a component
    stack = new_stack()
    shared = InferenceComponentEndpoint(
        stack, "Shared", instance_type="ml.g5.12xlarge", endpoint_name="shared-llms"
    )
    model = LlmModel(stack, "Model", source=ModelSource.hugging_face(QWEN), engine=Engine.vllm())
    InferenceComponent(
        stack,
        "Chat",
        endpoint=shared,
        model=model,
        accelerators=1,
        min_memory_mib=16 * 1024,
        inference_component_name="chat-qwen",
        alarms=False,
    )
    both = {"StringEquals": {"cloudwatch:namespace": [ENDPOINTS, COMPONENTS]}}
    expected = sorted(
        f"{group}{suffix}"
        for group in (f"{ENDPOINTS}/shared-llms", f"{COMPONENTS}/chat-qwen")
        for suffix in ("", ":log-stream:*")
    )
    # THEN the endpoint's role and the component's model's role write the endpoint's group and
    # the component's, and put metrics in the endpoint and component namespaces only
    for role in (shared.role, model.role):
        statements = _statements(stack, role)
        assert sorted(_logs(statements)) == expected
        assert _namespaces(statements) == [both]


def test_a_components_model_names_a_generated_endpoint_name_through_getatt(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an endpoint whose name CloudFormation generates, hosting a component
    stack = new_stack()
    shared = InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")
    model = LlmModel(stack, "Model", source=ModelSource.hugging_face(QWEN), engine=Engine.vllm())
    InferenceComponent(
        stack,
        "Chat",
        endpoint=shared,
        model=model,
        accelerators=1,
        min_memory_mib=16 * 1024,
        inference_component_name="chat-qwen",
        alarms=False,
    )
    endpoint_id = stack.get_logical_id(shared.resource)
    # THEN the component's model role writes that endpoint's group, named by GetAtt (its Model
    # waits for the role, the component for the Model: the endpoint exists first)
    (logs,) = [s for s in _statements(stack, model.role) if s["Action"] == LOG_ACTIONS]
    groups = [r["Fn::Join"][1] for r in logs["Resource"]]
    named = [g for g in groups if {"Fn::GetAtt": [endpoint_id, "EndpointName"]} in g]
    assert len(named) == 2  # the group and its streams
    assert not [g for g in groups if str(g[-1]).endswith("/aws/sagemaker/Endpoints/*")]
    # while the endpoint's own role, which its config waits for, keeps the prefix
    assert f"{ENDPOINTS}/*" in _logs(_statements(stack, shared.role))


# -- cdk-nag in a stack with a concrete environment -------------------------------------------


@pytest.mark.parametrize("example", ["phi3-lmi", "shared-endpoint"])
def test_an_example_in_a_concrete_region_passes_cdk_nag(tmp_path: Path, example: str) -> None:
    # GIVEN an example in a stack with its account and region, as users deploy it
    app = App(outdir=str(tmp_path), context=cdk_context())
    env = Environment(account="123456789012", region="us-east-1")
    EXAMPLES[example](app, "Concrete", env=env)
    # WHEN cdk-nag runs as a validation plugin (as app.py runs it)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    # THEN the synth passes: the log wildcards' acknowledgments name the ARNs as this stack
    # renders them (literal partition and region)
    app.synth()
    template = (tmp_path / "Concrete.template.json").read_text()
    assert "arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/" in template


# -- cdk-nag: acknowledgments on the library's own policies, never on the role ---------------


def _nag_stack(tmp_path: Path, name: str) -> tuple[App, Stack, LlmModel]:
    app = App(outdir=str(tmp_path / name), context=cdk_context())
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    stack = Stack(app, name)
    model = _model(stack)
    LlmEndpoint(stack, "Endpoint", model=model, alarms=False)
    return app, stack, model


def test_the_libraries_wildcards_pass_cdk_nag_in_policies_of_their_own(tmp_path: Path) -> None:
    # GIVEN a model on an endpoint whose name CloudFormation generates (a log-group prefix,
    # log streams, metrics and the ECR token stay wildcards)
    app, stack, model = _nag_stack(tmp_path, "Clean")
    # WHEN cdk-nag runs THEN the synth passes
    app.synth()
    # and each wildcard sits in a policy of the role's own, not in its default policy
    defaults = [c for c in model.role.node.children if c.node.id == "DefaultPolicy"]
    (default,) = defaults
    statements = stack.resolve(default.document.to_json())["Statement"]  # type: ignore[attr-defined]
    assert not [s for s in statements if "*" in str(s["Resource"])]


def test_a_wildcard_added_to_the_models_role_is_flagged(tmp_path: Path) -> None:
    # GIVEN the same model, whose role then gets a wildcard the library did not add
    app, _, model = _nag_stack(tmp_path, "Widened")
    model.role.add_to_principal_policy(
        iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=["*"])
    )
    # THEN cdk-nag flags it: no acknowledgment sits on the role
    with pytest.raises(RuntimeError, match=r"Model/Role/DefaultPolicy/Resource[\s\S]*IAM5"):
        app.synth()
