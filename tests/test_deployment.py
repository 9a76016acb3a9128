"""Guarded rollouts: the Endpoint's and a component's DeploymentConfig, their derived timeouts
and rollback alarms, and how guardrails and instance-type changes coexist."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    Alarms,
    Autoscaling,
    Deployment,
    LlmEndpoint,
    Variant,
)
from constructs_llm.operations.deployment import MARGIN_S, Fleet
from tests.matrix.builders import component
from tests.matrix.builders import model as llama3

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"
BAKE = Duration.minutes(10)


def _endpoint(
    stack: Stack,
    *,
    instance_type: str = "ml.g5.12xlarge",
    env: dict[str, str] | None = None,
    **props: Any,
) -> LlmEndpoint:
    model = llama3(stack, instance_type=instance_type, env=env, bound=False)
    return LlmEndpoint(stack, "Endpoint", model=model, **props)


def _physical_name(alarm: cloudwatch.IAlarm) -> str:
    """An alarm's own ``AlarmName``, a literal string."""
    child = alarm.node.default_child
    assert isinstance(child, cloudwatch.CfnAlarm)
    name = child.alarm_name
    assert isinstance(name, str) and not name.startswith("${Token")
    return name


def _deployment_config(template: Template) -> dict[str, Any]:
    (endpoint,) = template.find_resources("AWS::SageMaker::Endpoint").values()
    config: dict[str, Any] = endpoint["Properties"]["DeploymentConfig"]
    return config


@pytest.fixture(scope="module")
def canary(new_stack: Callable[..., Stack]) -> tuple[LlmEndpoint, Template]:
    stack = new_stack()
    endpoint = _endpoint(
        stack,
        instance_count=2,
        deployment=Deployment.canary(percent=10, bake=BAKE),
        autoscaling=Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
    )
    return endpoint, Template.from_stack(stack)


def test_canary_renders_the_blue_green_policy_with_its_traffic_routing(
    canary: tuple[LlmEndpoint, Template],
) -> None:
    _, template = canary
    policy = _deployment_config(template)["BlueGreenUpdatePolicy"]
    assert policy["TrafficRoutingConfiguration"] == {
        "Type": "CANARY",
        "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": 10},
        "WaitIntervalInSeconds": 600,
    }
    assert policy["TerminationWaitInSeconds"] == 600  # the final bake
    # derived: the new fleet's download and health check (15 min each on this GPU), the canary
    # bake and the final bake, and 10 minutes of margin
    assert policy["MaximumExecutionTimeoutInSeconds"] == 900 + 900 + 600 + 600 + MARGIN_S


def test_rollback_watches_the_endpoint_s_own_error_alarms(
    canary: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = canary
    alarms = _deployment_config(template)["AutoRollbackConfiguration"]["Alarms"]
    assert endpoint.alarms is not None
    expected = [endpoint.alarms.errors, endpoint.alarms.model_errors]
    # named as literals (their physical names), so the endpoint does not wait for them and
    # they may wait for the endpoint (tests/contract/test_alarm_delivery.py walks that)
    assert alarms == [{"AlarmName": _physical_name(a)} for a in expected]
    assert [a["AlarmName"].startswith("Test-Endpoint-Alarms-") for a in alarms] == [True, True]
    assert [a["AlarmName"].rsplit("-", 1)[1] for a in alarms] == ["Errors", "ModelErrors"]


def test_a_guarded_endpoint_is_named_so_its_alarms_can_name_it(
    canary: tuple[LlmEndpoint, Template],
) -> None:
    # The rollback alarms watch the endpoint by name and the endpoint names them: the name is
    # generated from the construct path (no CloudFormation cycle), and the alarms use it as is.
    endpoint, template = canary
    name = endpoint.resource.endpoint_name
    assert name is not None and name.startswith("Test-Endpoint-")
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "Invocation5XXErrors",
            "Dimensions": [
                {"Name": "EndpointName", "Value": name},
                {"Name": "VariantName", "Value": "g5-12xlarge"},
            ],
        },
    )


@pytest.mark.parametrize(
    ("deployment", "routing", "termination"),
    [
        (
            Deployment.linear(step_percent=25, bake=BAKE),
            {
                "Type": "LINEAR",
                "LinearStepSize": {"Type": "CAPACITY_PERCENT", "Value": 25},
                "WaitIntervalInSeconds": 600,
            },
            600,
        ),
        (
            Deployment.all_at_once(bake=Duration.minutes(5)),
            {"Type": "ALL_AT_ONCE", "WaitIntervalInSeconds": 0},
            300,
        ),
    ],
    ids=["linear", "all-at-once"],
)
def test_linear_and_all_at_once_traffic_routing(
    new_stack: Callable[..., Stack],
    deployment: Deployment,
    routing: dict[str, Any],
    termination: int,
) -> None:
    stack = new_stack()
    _endpoint(stack, instance_count=4, deployment=deployment)
    policy = _deployment_config(Template.from_stack(stack))["BlueGreenUpdatePolicy"]
    assert policy["TrafficRoutingConfiguration"] == routing
    assert policy["TerminationWaitInSeconds"] == termination
    # four linear steps bake 10 minutes each; all at once bakes once
    bakes = 4 * 600 if routing["Type"] == "LINEAR" else 300
    assert policy["MaximumExecutionTimeoutInSeconds"] == 1800 + bakes + MARGIN_S


def test_rolling_replaces_batches_of_instances(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    _endpoint(stack, instance_count=4, deployment=Deployment.rolling(batch_percent=50, bake=BAKE))
    config = _deployment_config(Template.from_stack(stack))
    assert "BlueGreenUpdatePolicy" not in config
    assert config["RollingUpdatePolicy"] == {
        "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 50},
        "WaitIntervalInSeconds": 600,
        # two batches, each starting within its timeouts and baking
        "MaximumExecutionTimeoutInSeconds": 2 * (1800 + 600) + MARGIN_S,
    }


def test_a_timeout_given_is_used_and_rollback_alarms_given_replace_the_defaults(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    mine = cloudwatch.Alarm(
        stack,
        "Mine",
        metric=cloudwatch.Metric(namespace="Team", metric_name="BadAnswers"),
        threshold=1,
        evaluation_periods=1,
    )
    _endpoint(
        stack,
        instance_count=2,
        alarms=False,
        deployment=Deployment.canary(
            percent=50, bake=BAKE, timeout=Duration.hours(2), rollback_alarms=[mine]
        ),
    )
    template = Template.from_stack(stack)
    config = _deployment_config(template)
    assert config["BlueGreenUpdatePolicy"]["MaximumExecutionTimeoutInSeconds"] == 7200
    assert config["AutoRollbackConfiguration"]["Alarms"] == [
        {"AlarmName": stack.resolve(mine.alarm_name)}
    ]
    template.resource_count_is("AWS::CloudWatch::Alarm", 1)  # alarms=False: only mine


def test_without_deployment_the_endpoint_keeps_sagemaker_s_default_update(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    _endpoint(stack)
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {"DeploymentConfig": Match.absent(), "EndpointName": Match.absent()},
    )


# -- guardrails and the variant named after the instance type -----------------------------------


def _synth_version(new_stack: Callable[..., Stack], **props: Any) -> tuple[Stack, Template]:
    stack = new_stack()
    _endpoint(
        stack,
        instance_count=2,
        deployment=Deployment.canary(percent=25, bake=BAKE),
        autoscaling=Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
        **props,
    )
    return stack, Template.from_stack(stack)


def _variant(template: Template) -> dict[str, Any]:
    (config,) = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    variant: dict[str, Any] = config["Properties"]["ProductionVariants"][0]
    return variant


def _model_env(template: Template) -> dict[str, Any]:
    (model,) = template.find_resources("AWS::SageMaker::Model").values()
    env: dict[str, Any] = model["Properties"]["PrimaryContainer"]["Environment"]
    return env


def test_a_model_or_env_change_on_the_same_hardware_keeps_the_variant_under_guardrails(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN the same endpoint before and after an env change (the same instance type)
    _, before = _synth_version(new_stack)
    _, after = _synth_version(new_stack, env={"MAX_CONCURRENT_REQUESTS": "64"})
    # THEN the model's env differs (a new Model and EndpointConfig), the variant name and the
    # endpoint's name do not, and the canary guards the update: SageMaker requires the variant
    # name kept for a guarded update
    assert _model_env(before) != _model_env(after)
    assert _variant(before)["VariantName"] == _variant(after)["VariantName"] == "g5-12xlarge"
    assert _deployment_config(before) == _deployment_config(after)
    (ep_before,) = before.find_resources("AWS::SageMaker::Endpoint").values()
    (ep_after,) = after.find_resources("AWS::SageMaker::Endpoint").values()
    assert ep_before["Properties"]["EndpointName"] == ep_after["Properties"]["EndpointName"]
    assert (
        _deployment_config(after)["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]["Type"]
        == "CANARY"
    )


def test_an_instance_type_change_is_a_new_variant_and_the_synth_warns_it_shifts_at_once(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN the same endpoint moved from ml.g5.12xlarge to ml.g6.12xlarge
    before_stack, before = _synth_version(new_stack)
    after_stack, after = _synth_version(new_stack, instance_type="ml.g6.12xlarge")
    # THEN the variant (and with it the scalable target) is new, as autoscaling needs for a
    # hardware change in one deploy
    assert _variant(before)["VariantName"] == "g5-12xlarge"
    assert _variant(after)["VariantName"] == "g6-12xlarge"
    targets = [
        t.find_resources("AWS::ApplicationAutoScaling::ScalableTarget") for t in (before, after)
    ]
    assert str(targets[0]).count("variant/g5-12xlarge") == 1
    assert str(targets[1]).count("variant/g6-12xlarge") == 1
    # AND each synth warns what a guarded endpoint's hardware change does
    for stack, instance, variant in (
        (before_stack, "ml.g5.12xlarge", "g5-12xlarge"),
        (after_stack, "ml.g6.12xlarge", "g6-12xlarge"),
    ):
        Annotations.from_stack(stack).has_warning(
            "/Test/Endpoint",
            Match.string_like_regexp(
                rf"canary 25 %, bake 10 min guards updates on {instance} \(variant '{variant}'\)"
                r".*Changing instance_type creates a new variant.*all traffic to the new fleet"
                r" at once, with no canary, bake or auto-rollback"
            ),
        )


# -- inference components: rolling updates of copies --------------------------------------


def test_a_component_rolls_its_copies_in_batches_with_rollback(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    chat = component(
        stack,
        endpoint_props={"max_instances": 2},
        accelerators=1,
        min_memory_mib=16 * 1024,
        copies=4,
        deployment=Deployment.rolling(batch_percent=25, bake=Duration.minutes(5)),
    )
    assert chat.alarms is not None
    (resource,) = (
        Template.from_stack(stack).find_resources("AWS::SageMaker::InferenceComponent").values()
    )
    assert resource["Properties"]["DeploymentConfig"] == {
        "RollingUpdatePolicy": {
            "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 25},
            "WaitIntervalInSeconds": 300,
            # four batches of copies, each starting within 15 + 15 minutes and baking 5
            "MaximumExecutionTimeoutInSeconds": 4 * (1800 + 300) + MARGIN_S,
        },
        "AutoRollbackConfiguration": {
            "Alarms": [
                {"AlarmName": _physical_name(a)}
                for a in (chat.alarms.errors, chat.alarms.model_errors)
            ]
        },
    }


# -- weighted variants ---------------------------------------------------------------------


def test_each_variant_gets_its_alarms_and_a_canary_watches_them_all(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an A/B endpoint of two models, two instances each, under a canary
    stack = new_stack()
    a, b = (llama3(stack, id=name, bound=False) for name in ("A", "B"))
    endpoint = LlmEndpoint(
        stack,
        "AB",
        variants=[
            Variant(model=a, weight=90, instance_count=2),
            Variant(model=b, weight=10, instance_count=2, instance_type="ml.g5.12xlarge"),
        ],
        deployment=Deployment.canary(percent=10, bake=BAKE),
    )
    template = Template.from_stack(stack)
    # THEN each production variant has its own alarms, by its own variant name
    names = [v.name for v in endpoint.variants]
    assert names == ["A-g5-2xlarge", "B-g5-12xlarge"]
    for variant in endpoint.variants:
        assert variant.alarms is not None
        template.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "MetricName": "Invocation5XXErrors",
                "Dimensions": [
                    {"Name": "EndpointName", "Value": endpoint.resource.endpoint_name},
                    {"Name": "VariantName", "Value": variant.name},
                ],
                "AlarmDescription": Match.string_like_regexp(f"^Test/AB variant {variant.name}: "),
            },
        )
    assert endpoint.alarms is endpoint.variants[0].alarms
    # AND the canary rolls back on any variant's error alarms
    rollback = _deployment_config(template)["AutoRollbackConfiguration"]["Alarms"]
    expected = [a for v in endpoint.variants if v.alarms for a in v.alarms.rollback]
    assert rollback == [{"AlarmName": _physical_name(a)} for a in expected]
    assert len(rollback) == 4


# -- the error alarms must be able to catch the first step -------------------------------------


@pytest.mark.parametrize(
    ("deployment", "fleet", "share"),
    [
        (Deployment.canary(percent=10, bake=BAKE), Fleet(10, 10, BAKE), 0.1),
        (Deployment.canary(percent=10, bake=BAKE), Fleet(2, 2, BAKE), 0.5),  # one of two
        (Deployment.canary(percent=15, bake=BAKE), Fleet(2, 10, BAKE), 0.2),  # 1.5 -> 2 of 10
        (Deployment.linear(step_percent=25, bake=BAKE), Fleet(4, 8, BAKE), 0.25),
        (Deployment.rolling(batch_percent=5, bake=BAKE), Fleet(2, 4, BAKE, "copy"), 0.25),
        (Deployment.all_at_once(bake=BAKE), Fleet(2, 4, BAKE), 1.0),
    ],
)
def test_the_first_step_s_share_of_requests_is_its_units_over_the_largest_fleet(
    deployment: Deployment, fleet: Fleet, share: float
) -> None:
    # a step is whole instances (or copies), at least one, rounded up: the most SageMaker may
    # move, so the check below errs on the side of passing
    assert deployment.first_step_share(fleet) == pytest.approx(share)


def test_error_alarms_above_the_first_step_s_share_are_an_error_naming_both_values() -> None:
    canary = Deployment.canary(percent=10, bake=BAKE)
    fleet = Fleet(10, 10, BAKE)
    # at the share: a first step that fails every request trips the alarms
    assert canary.problems_for(fleet, error_rate=0.1) == []
    assert canary.problems_for(fleet, error_rate=0.05) == []
    # above it: it never can
    (found,) = canary.problems_for(fleet, error_rate=0.11)
    assert (found.property, found.value) == ("alarms.error_rate", 0.11)
    problem = str(found)
    assert problem.startswith("canary 10 %, bake 10 min with Alarms(error_rate=0.11): the first")
    assert "about 10% of requests" in problem and "below 11%" in problem
    assert "Alarms(error_rate=0.05)" in problem and "(percent=...)" in problem
    # a tiny canary gets a suggestion at its share
    (tiny_problem,) = Deployment.canary(percent=2, bake=BAKE).problems_for(
        Fleet(50, 50, BAKE), error_rate=0.05
    )
    tiny = str(tiny_problem)
    assert "about 2% of requests" in tiny and "Alarms(error_rate=0.02)" in tiny
    # all at once moves every request: any rate can trip
    assert Deployment.all_at_once(bake=BAKE).problems_for(fleet, error_rate=1) == []


def test_rollback_alarms_given_are_not_held_to_the_default_alarms_error_rate(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN alarms of the user's own choosing roll the update back
    stack = new_stack()
    own = cloudwatch.Alarm(
        stack,
        "Own",
        metric=cloudwatch.Metric(namespace="App", metric_name="Failures"),
        threshold=1,
        evaluation_periods=1,
    )
    # THEN the default alarms' error_rate does not have to catch the canary
    _endpoint(
        stack,
        instance_count=10,
        alarms=Alarms(error_rate=0.5),
        deployment=Deployment.canary(percent=10, bake=BAKE, rollback_alarms=[own]),
    )
