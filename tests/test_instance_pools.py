"""Instance pools: ``instance_type=[...]`` as an ordered preference that SageMaker falls back
through when a type has no capacity (guide "Deploy to multiple instance types with instance
pools", realtime-endpoints-heterogeneous). Each pool is a placement the model is bound to and
checked on; the variant keeps its name whatever the pools, so pool changes update in place."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, Duration, Size, Stack
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    Autoscaling,
    ContainerImage,
    Deployment,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Placement,
    StreamFormat,
    Variant,
)
from constructs_llm.errors import ConfigurationError, InstanceTypeError, SizingError
from constructs_llm.hardware.pools import InstancePools, host_ami_problem
from constructs_llm.hosting.production_variant import startup_timeouts
from constructs_llm.notes import notes_of
from tests.conftest import cdk_context

QWEN = "Qwen/Qwen2.5-7B-Instruct"  # 7.6B parameters, 14.2 GiB in bf16
POOLS = ["ml.g6e.2xlarge", "ml.g5.4xlarge", "ml.g5.12xlarge"]  # 1 x L40S, 1 x A10G, 4 x A10G


def _qwen(stack: Stack, id: str = "Model", **props: Any) -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(QWEN),
        engine=Engine.vllm(),
        max_total_tokens=8192,
        **props,
    )


def _endpoint(stack: Stack, instance_type: Any = POOLS, **props: Any) -> LlmEndpoint:
    return LlmEndpoint(stack, "Chat", model=_qwen(stack), instance_type=instance_type, **props)


def _variant(template: Template) -> dict[str, Any]:
    (config,) = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    (variant,) = config["Properties"]["ProductionVariants"]
    result: dict[str, Any] = variant
    return result


@pytest.fixture(scope="module")
def pooled(new_stack: Callable[..., Stack]) -> tuple[LlmEndpoint, Template]:
    # GIVEN a 7B model on three pools, the last with four GPUs, scaling on concurrency
    stack = new_stack()
    endpoint = _endpoint(
        stack,
        provision_timeout=Duration.minutes(30),
        autoscaling=Autoscaling(max_capacity=4, target_concurrent_requests=8),
    )
    LlmDashboard(stack, "Dashboard", endpoints=[endpoint])
    return endpoint, Template.from_stack(stack)


# -- the endpoint config ------------------------------------------------------------------------


def test_a_list_becomes_instance_pools_in_priority_order(
    pooled: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = pooled
    # THEN the variant has InstancePools (priority 1 first) instead of InstanceType, the
    # provision timeout, and a name that does not depend on the types
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ProductionVariants": [
                Match.object_like(
                    {
                        "VariantName": "pools",
                        "InstanceType": Match.absent(),
                        "InstancePools": [
                            {"InstanceType": "ml.g6e.2xlarge", "Priority": 1},
                            {"InstanceType": "ml.g5.4xlarge", "Priority": 2},
                            Match.object_like({"InstanceType": "ml.g5.12xlarge", "Priority": 3}),
                        ],
                        "VariantInstanceProvisionTimeoutInSeconds": 1800,
                        "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
                    }
                )
            ]
        },
    )
    # AND the plan holds the pools in priority order, each with its one placement
    (variant_plan,) = endpoint.plan.variants
    assert variant_plan.name == "pools"
    assert [p.priority for p in variant_plan.pools] == [1, 2, 3]
    assert endpoint.instance_type.name == "ml.g6e.2xlarge"  # priority 1


def test_the_variant_model_is_the_first_pool_s_and_a_pool_with_other_settings_gets_its_own(
    pooled: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = pooled
    variant = _variant(template)
    resolve = Stack.of(endpoint).resolve
    plan = endpoint.plan.variants[0]
    first, second, third = (pool.binding for pool in plan.pools)
    assert first is not None and second is not None and third is not None
    # THEN ModelName is the priority-1 pool's Model; the one-GPU A10G pool runs it (same env,
    # image and host AMI); the four-GPU pool runs its own Model, sharded over four GPUs
    assert variant["ModelName"] == resolve(first.model_name)
    assert [pool.model_pool for pool in plan.pools] == [1, 1, 3]
    assert plan.model_binding(plan.pools[1]) is first
    assert "ModelNameOverride" not in variant["InstancePools"][1]
    # AND the A10G pool's binding is its own: its memory plan is for its own GPU, and no Model
    # is rendered for its placement
    assert second.placement.instance_type.name == "ml.g5.4xlarge"
    assert second.plan is not None and first.plan is not None
    assert second.plan.kv_budget_gib < first.plan.kv_budget_gib
    with pytest.raises(ConfigurationError, match=r"no endpoint or component serves it on"):
        _ = second.model_name
    assert variant["InstancePools"][2]["ModelNameOverride"] == resolve(third.model_name)
    assert first.environment["SM_VLLM_TENSOR_PARALLEL_SIZE"] == "1"
    assert third.environment["SM_VLLM_TENSOR_PARALLEL_SIZE"] == "4"
    assert len(template.find_resources("AWS::SageMaker::Model")) == 2
    # one host AMI serves every pool (the vLLM image is CUDA 13)
    assert variant["InferenceAmiVersion"] == "al2023-ami-sagemaker-inference-gpu-4-1"
    # all three types have local NVMe: no volume size
    assert "VolumeSizeInGB" not in variant


def test_one_instance_type_as_a_string_renders_as_before(new_stack: Callable[..., Stack]) -> None:
    # GIVEN the same model on one type given as a string
    stack = new_stack()
    _endpoint(stack, instance_type="ml.g6e.2xlarge")
    variant = _variant(Template.from_stack(stack))
    # THEN a plain InstanceType, the variant named after it, no pools or provision timeout
    assert variant["InstanceType"] == "ml.g6e.2xlarge"
    assert variant["VariantName"] == "g6e-2xlarge"
    assert "InstancePools" not in variant
    assert "VariantInstanceProvisionTimeoutInSeconds" not in variant


def test_a_list_of_one_type_is_one_pool(new_stack: Callable[..., Stack]) -> None:
    # GIVEN one type in a list, with a provision timeout
    stack = new_stack()
    _endpoint(stack, instance_type=["ml.g6e.2xlarge"], provision_timeout=Duration.minutes(10))
    variant = _variant(Template.from_stack(stack))
    # THEN one pool (botocore's InstancePoolList takes 1-5), named as any list is
    assert variant["InstancePools"] == [{"InstanceType": "ml.g6e.2xlarge", "Priority": 1}]
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 600
    assert variant["VariantName"] == "pools"


def test_notes_give_each_pool_s_memory_plan_and_quota(
    pooled: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, _ = pooled
    notes = notes_of(endpoint)
    plans = [n for n in notes if n.startswith("Memory plan")]
    assert [re.sub(r": .*", "", n) for n in plans] == [
        "Memory plan, pool 1 of 3",
        "Memory plan, pool 2 of 3",
        "Memory plan, pool 3 of 3 (own Model",
    ]
    assert "(ml.g5.4xlarge)" in plans[1] and "9 concurrent 8,192-token sequences" in plans[1]
    # each pool may be the one provisioned at max capacity, for the old fleet and the new one
    # of a blue/green update alike: each type needs the quota for 4 + 4
    quotas = [n for n in notes if n.startswith("Service Quotas")]
    assert quotas == [
        f"Service Quotas: '{t} for endpoint usage' must allow at least 8 instance(s) in the "
        "target region (new accounts often have 0): 4 in service at most, and 4 more while a "
        "blue/green update runs the new fleet beside the old"
        for t in POOLS
    ]
    assert any(
        n.startswith(
            "Capacity: at minimum 1 x ml.g6e.2xlarge (or fallback pools ml.g5.4xlarge, "
            "ml.g5.12xlarge)"
        )
        for n in notes
    )


def test_startup_timeouts_cover_the_slowest_pool() -> None:
    # GIVEN pools whose defaults differ (Neuron may compile for an hour; built directly, as
    # such a mix is refused for an endpoint)
    pools = InstancePools(Placement("ml.g5.2xlarge"), Placement("ml.inf2.xlarge"), listed=True)
    # WHEN the defaults are derived
    health, download = startup_timeouts(pools, None, None, None)
    # THEN the slowest pool's apply, and given timeouts win
    assert (health.to_seconds(), download.to_seconds()) == (3600, 3600)
    given = startup_timeouts(pools, None, Duration.minutes(20), None)[0]
    assert given.to_seconds() == 1200


# -- updates: cdk diff semantics ----------------------------------------------------------------


def _synth(types: list[str]) -> dict[str, Any]:
    app = App(context=cdk_context())
    stack = Stack(app, "Chat")
    _endpoint(stack, types, autoscaling=Autoscaling(max_capacity=4, target_concurrent_requests=8))
    template: dict[str, Any] = Template.from_stack(stack).to_json()["Resources"]
    return template


def _of_type(resources: dict[str, Any], kind: str) -> tuple[str, dict[str, Any]]:
    ((logical_id, resource),) = [(k, v) for k, v in resources.items() if v["Type"] == kind]
    return logical_id, resource


@pytest.mark.parametrize(
    "after",
    [
        ["ml.g6e.2xlarge", "ml.g5.4xlarge", "ml.g6.4xlarge"],  # a pool added
        ["ml.g5.4xlarge", "ml.g6e.2xlarge"],  # reordered
    ],
    ids=["added", "reordered"],
)
def test_adding_or_reordering_pools_replaces_the_config_and_updates_the_endpoint(
    after: list[str],
) -> None:
    # GIVEN a deployed endpoint on two pools, and the same stack with the pools changed
    before = _synth(["ml.g6e.2xlarge", "ml.g5.4xlarge"])
    changed = _synth(after)
    # THEN the EndpointConfig keeps its logical ID with new properties: it has no physical
    # name, so CloudFormation creates a new one and updates the Endpoint to it
    config_id, old_config = _of_type(before, "AWS::SageMaker::EndpointConfig")
    new_id, new_config = _of_type(changed, "AWS::SageMaker::EndpointConfig")
    assert new_id == config_id
    assert new_config["Properties"] != old_config["Properties"]
    assert "EndpointConfigName" not in new_config["Properties"]
    # the Endpoint is the same resource, updated in place (same logical ID and variant name)
    endpoint_id, _ = _of_type(before, "AWS::SageMaker::Endpoint")
    assert _of_type(changed, "AWS::SageMaker::Endpoint")[0] == endpoint_id
    assert _variant_names(new_config) == _variant_names(old_config) == ["pools"]
    # and the scalable target keeps its ResourceId: no deregistration, no replacement
    target_id, old_target = _of_type(before, "AWS::ApplicationAutoScaling::ScalableTarget")
    new_target_id, new_target = _of_type(changed, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert new_target_id == target_id
    assert new_target["Properties"]["ResourceId"] == old_target["Properties"]["ResourceId"]


def _variant_names(config: dict[str, Any]) -> list[str]:
    return [v["VariantName"] for v in config["Properties"]["ProductionVariants"]]


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance_type", "props", "error", "message"),
    [
        (
            [],
            {},
            ConfigurationError,
            r"instance_type=\[\] names no instance type; give one or more \(at most 5\)",
        ),
        (
            [
                "ml.g6e.2xlarge",
                "ml.g5.4xlarge",
                "ml.g6.4xlarge",
                "ml.g5.8xlarge",
                "ml.g6.8xlarge",
                "ml.g5.12xlarge",
            ],
            {},
            ConfigurationError,
            r"instance_type lists 6 instance types \(ml.g6e.2xlarge, .*ml.g5.12xlarge\); "
            r"SageMaker allows at most 5 instance pools per variant: drop the least preferred",
        ),
        (
            ["ml.g5.4xlarge", "ml.g6e.2xlarge", "ml.g5.4xlarge"],
            {},
            ConfigurationError,
            r"instance_type lists ml.g5.4xlarge 2 times \(at 0, 2\); a type is one pool",
        ),
        (
            ["ml.g5.4xlarge", "ml.g5.45xlarge"],
            {},
            InstanceTypeError,
            r"instance_type\[1\]: Unknown instance size for family ml.g5: got 'ml.g5.45xlarge'",
        ),
        (
            ["ml.g5.4xlarge", "ml.inf2.8xlarge"],
            {},
            ConfigurationError,
            r"instance_type mixes accelerators: ml.g5.4xlarge \(nvidia\) and ml.inf2.8xlarge "
            r"\(neuron\)\. The instance-pools guide .* documents no such mix, the variant has one "
            r"host AMI \(InferenceAmiVersion\), and one engine image cannot serve both",
        ),
        (
            ["ml.g5.12xlarge", "ml.p3.8xlarge"],
            {},
            ConfigurationError,
            r"instance_type mixes instance types with local NVMe storage \(ml.g5.12xlarge\) and "
            r"EBS-only ones \(ml.p3.8xlarge\): VolumeSizeInGB is set once per variant.*keep the "
            r"pools to types with local NVMe, or to EBS-only types",
        ),
        (
            POOLS,
            {"provision_timeout": Duration.minutes(2)},
            ConfigurationError,
            r"provision_timeout must be between 300 and 3600 seconds \(5-60 minutes\), got 120 s",
        ),
        (
            POOLS,
            {"provision_timeout": Duration.minutes(61)},
            ConfigurationError,
            r"provision_timeout must be between 300 and 3600 seconds \(5-60 minutes\), got 3660 s",
        ),
        (
            "ml.g6e.2xlarge",
            {"provision_timeout": Duration.minutes(30)},
            ConfigurationError,
            r"provision_timeout bounds the fallback across instance pools .*, got it with the "
            r"single instance type ml.g6e.2xlarge; pass instance_type=\[\.\.\.\] as a list",
        ),
        (
            ["ml.g5.12xlarge", "ml.g5.4xlarge"],
            {"volume_size": Size.gibibytes(100)},
            ConfigurationError,
            r"volume_size cannot be set on ml.g5.12xlarge: it has local NVMe storage",
        ),
        (
            {"ml.g5.4xlarge"},
            {},
            InstanceTypeError,
            r"instance_type must be an instance type such as 'ml.g5.2xlarge' or a list of them in "
            r"order of preference, got set \{'ml.g5.4xlarge'\}",
        ),
    ],
    ids=[
        "empty",
        "six",
        "duplicate",
        "typo",
        "neuron-and-gpu",
        "nvme-and-ebs",
        "timeout-short",
        "timeout-long",
        "timeout-without-list",
        "volume-on-nvme",
        "not-a-list",
    ],
)
def test_bad_pools_fail_at_synth_naming_the_value_and_the_fix(
    new_stack: Callable[..., Stack],
    instance_type: Any,
    props: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    stack = new_stack()
    with pytest.raises(error, match=message):
        _endpoint(stack, instance_type, **props)


def test_a_pool_the_model_does_not_fit_names_the_pool_and_the_fix(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a 14.2 GiB model with a T4 (16 GiB) among its pools
    stack = new_stack()
    # THEN the synth fails naming that pool, its priority and what to do
    with pytest.raises(SizingError) as raised:
        _endpoint(stack, ["ml.g6e.2xlarge", "ml.g4dn.xlarge"])
    text = str(raised.value)
    assert text.startswith(
        "LlmEndpoint 'Test/Chat': instance_type[1] (ml.g4dn.xlarge, priority 2): LlmModel "
        "'Test/Model' does not fit on ml.g4dn.xlarge: "
    )
    assert text.endswith(
        "every pool may be the one SageMaker provisions: drop ml.g4dn.xlarge from "
        "instance_type=[...] or replace it with a larger type"
    )


def test_a_kms_key_on_a_pool_with_nvme_is_refused(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    key = kms.Key(stack, "Key")
    with pytest.raises(ConfigurationError, match=r"kms_key cannot be used with ml.g6e.2xlarge"):
        _endpoint(stack, ["ml.g6e.2xlarge", "ml.g5.4xlarge"], kms_key=key)


def test_pools_whose_images_need_other_host_amis_cannot_share_a_variant() -> None:
    # InferenceAmiVersion is a variant property (botocore ProductionVariant)
    pools = InstancePools(Placement("ml.g5.4xlarge"), Placement("ml.p3.2xlarge"), listed=True)
    problem = host_ami_problem(pools, ["al2023-ami-sagemaker-inference-gpu-4-1", None])
    assert problem is not None and problem.property == "instance_type"
    assert problem.fix == "keep pools whose images need the same host AMI"
    assert str(problem) == (
        "the pools' images need different host AMIs (ml.g5.4xlarge: "
        "al2023-ami-sagemaker-inference-gpu-4-1, ml.p3.2xlarge: the default), but "
        "InferenceAmiVersion is set once per variant: keep pools whose images need the same "
        "host AMI"
    )
    assert host_ami_problem(pools, [None, None]) is None


def test_ebs_only_pools_get_a_volume_sized_for_the_weights(new_stack: Callable[..., Stack]) -> None:
    # GIVEN pools of EBS-only types (V100s; a 3.8B model fits one)
    stack = new_stack()
    model = LlmModel(
        stack,
        "Phi",
        source=ModelSource.hugging_face("microsoft/Phi-3-mini-4k-instruct"),
        engine=Engine.tgi(),
    )
    LlmEndpoint(stack, "Chat", model=model, instance_type=["ml.p3.2xlarge", "ml.p3.8xlarge"])
    variant = _variant(Template.from_stack(stack))
    assert variant["InstancePools"][0] == {"InstanceType": "ml.p3.2xlarge", "Priority": 1}
    assert variant["VolumeSizeInGB"] >= 30


# -- variants, rollouts, autoscaling ------------------------------------------------------------


def test_a_variant_with_pools_is_named_after_its_model(new_stack: Callable[..., Stack]) -> None:
    # GIVEN an A/B test whose candidate runs on pools, with a shadow on pools too
    stack = new_stack()
    model = _qwen(stack, instance_type="ml.g6e.2xlarge")
    candidate = _qwen(stack, "Candidate")
    endpoint = LlmEndpoint(
        stack,
        "AB",
        variants=[
            Variant(model=model, weight=90),
            Variant(
                model=candidate,
                weight=10,
                instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"],
                provision_timeout=Duration.minutes(20),
            ),
        ],
    )
    (config,) = Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values()
    variants = config["Properties"]["ProductionVariants"]
    # THEN the pooled variant is named after its model and "pools", independent of the types
    assert [v["VariantName"] for v in variants] == ["Model-g6e-2xlarge", "Candidate-pools"]
    assert variants[1]["VariantInstanceProvisionTimeoutInSeconds"] == 1200
    assert [p["InstanceType"] for p in variants[1]["InstancePools"]] == [
        "ml.g6e.2xlarge",
        "ml.g5.4xlarge",
    ]
    assert endpoint.variants[1].pool_instance_types[1].name == "ml.g5.4xlarge"


def test_provision_timeout_goes_on_each_variant(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    model = _qwen(stack, instance_type="ml.g6e.2xlarge")
    with pytest.raises(
        ConfigurationError,
        match=r"provision_timeout= applies to one variant; with variants=\[\.\.\.\] give it to "
        r"each Variant",
    ):
        LlmEndpoint(
            stack,
            "AB",
            variants=[Variant(model=model)],
            provision_timeout=Duration.minutes(20),
        )


def test_a_shadow_variant_may_use_pools(new_stack: Callable[..., Stack]) -> None:
    # The guide excludes no variant kind from pools; ShadowProductionVariants share the shape
    stack = new_stack()
    model = _qwen(stack, instance_type="ml.g6e.2xlarge")
    LlmEndpoint(
        stack,
        "Shadowed",
        variants=[Variant(model=model)],
        shadow=Variant(model=model, instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"]),
    )
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ShadowProductionVariants": [
                Match.object_like(
                    {
                        "VariantName": "Model-pools",
                        "InstancePools": [
                            {"InstanceType": "ml.g6e.2xlarge", "Priority": 1},
                            {"InstanceType": "ml.g5.4xlarge", "Priority": 2},
                        ],
                    }
                )
            ]
        },
    )


def test_autoscaling_over_pools_warns_what_to_verify(
    pooled: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, _ = pooled
    warnings = Annotations.from_stack(Stack.of(endpoint)).find_warning(
        "/Test/Chat", Match.string_like_regexp("scales over instance pools")
    )
    (warning,) = [str(w.entry.data) for w in warnings]
    assert "removes the lowest-priority pool's first" in warning
    assert (
        "The pools differ in capacity (ml.g6e.2xlarge 1 x 45 GiB, ml.g5.4xlarge 1 x 22 GiB, "
        "ml.g5.12xlarge 4 x 22 GiB)"
    ) in warning
    # a pool change replaces the endpoint (FleetChange.NEW_ENDPOINT, from cdk.json), so there is
    # no in-place change to try on staging (tests/test_updates.py covers TWO_DEPLOYS)
    assert "staging endpoint" not in warning


def test_a_guarded_rollout_over_pools_says_which_changes_it_guards(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a canary rollout on pools
    stack = new_stack()
    _endpoint(
        stack,
        ["ml.g6e.2xlarge", "ml.g5.4xlarge"],
        instance_count=2,
        deployment=Deployment.canary(percent=50, bake=Duration.minutes(5)),
    )
    # THEN the Endpoint has the canary, and the warning says pool changes keep the variant
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {"DeploymentConfig": Match.object_like({"BlueGreenUpdatePolicy": Match.any_value()})},
    )
    warnings = Annotations.from_stack(stack).find_warning(
        "/Test/Chat", Match.string_like_regexp("guards updates on pools")
    )
    (warning,) = [str(w.entry.data) for w in warnings]
    assert (
        "guards updates on pools ml.g6e.2xlarge > ml.g5.4xlarge (variant 'pools'): a new model, "
        "image, env or timeout, and adding, dropping or reordering pools, keep the variant name"
    ) in warning


def test_guardrails_are_refused_when_any_pool_is_inf1(new_stack: Callable[..., Stack]) -> None:
    # deployment-guardrails-exclusions: no guardrails on Inf1 endpoints, whichever pool is Inf1
    stack = new_stack()
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("mistralai/Mistral-7B-Instruct-v0.2", needs_token=False),
        engine=Engine.custom(
            image=ContainerImage.from_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/neuron:1"),
            stream_format=StreamFormat.OPENAI,
        ),
    )
    with pytest.raises(
        ConfigurationError,
        match=r"deployment guardrails are not available on ml.inf1.6xlarge: SageMaker falls back",
    ):
        LlmEndpoint(
            stack,
            "Chat",
            model=model,
            instance_type=["ml.inf2.48xlarge", "ml.inf1.6xlarge"],
            instance_count=2,
            deployment=Deployment.canary(percent=50, bake=Duration.minutes(5)),
        )


# -- operations ---------------------------------------------------------------------------------


def test_gpu_memory_is_watched_per_pool_with_that_type_s_gpus(
    pooled: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = pooled
    alarms = template.find_resources(
        "AWS::CloudWatch::Alarm", {"Properties": {"MetricName": "GPUMemoryUtilization"}}
    )
    # THEN one alarm per pool on its InstanceType dimension, its threshold 98 % of each GPU of
    # that type (an instance sums its GPUs), and no alarm across the mixed fleet
    found = {
        next(d["Value"] for d in a["Properties"]["Dimensions"] if d["Name"] == "InstanceType"): a[
            "Properties"
        ]["Threshold"]
        for a in alarms.values()
    }
    assert found == {"ml.g6e.2xlarge": 98, "ml.g5.4xlarge": 98, "ml.g5.12xlarge": 392}
    assert endpoint.alarms is not None and endpoint.alarms.gpu_memory is None
    assert set(endpoint.alarms.gpu_memory_by_instance_type) == set(POOLS)
    # errors, model errors, per pool, disk; no engine alarms: PromQL alarms are on by default only
    # where the stack's region is concrete and CloudWatch lists it (tests/test_engine_signals.py)
    assert len(list(endpoint.alarms)) == 2 + 3 + 1
    ids = [k for k in alarms if "GpuMemoryg512xlarge" in k]
    assert len(ids) == 1  # named by type, not by priority: a reorder keeps each alarm


def test_metrics_can_be_narrowed_to_one_pool(pooled: tuple[LlmEndpoint, Template]) -> None:
    endpoint, _ = pooled
    metric = endpoint.metric_model_latency(
        dimensions_map=endpoint.instance_type_dimensions("ml.g5.4xlarge")
    )
    dimensions = Stack.of(endpoint).resolve(metric.dimensions)
    assert set(dimensions) == {"EndpointName", "VariantName", "InstanceType"}
    assert dimensions["VariantName"] == "pools"
    assert dimensions["InstanceType"] == "ml.g5.4xlarge"


def test_the_dashboard_draws_a_line_per_pool(pooled: tuple[LlmEndpoint, Template]) -> None:
    _, template = pooled
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    body = "".join(
        p if isinstance(p, str) else "<token>"
        for p in dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    )
    assert "### Test/Chat (endpoint, pools ml.g6e.2xlarge > ml.g5.4xlarge > ml.g5.12xlarge)" in body
    for pool in POOLS:
        assert f'"label":"{pool} instances"' in body
        assert f'"label":"ModelLatency p90 on {pool} (ms)"' in body
        assert f'"InstanceType","{pool}"' in body
    # each pool's GPU lines are divided by that type's GPU count
    assert '"expression":"gpu2 / 4"' in body and '"expression":"gpu0 / 1"' in body


# -- inference components -----------------------------------------------------------------------


def test_a_component_endpoint_takes_pools(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a shared endpoint on two four-GPU pools, and a one-GPU component
    stack = new_stack()
    endpoint = InferenceComponentEndpoint(
        stack,
        "Shared",
        instance_type=["ml.g6e.12xlarge", "ml.g5.12xlarge"],
        provision_timeout=Duration.minutes(20),
        max_instances=2,
    )
    InferenceComponent(
        stack, "Chat", endpoint=endpoint, model=_qwen(stack), accelerators=1, min_memory_mib=16384
    )
    template = Template.from_stack(stack)
    # THEN the config has the pools; the copy is the same on both, so one Specification
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ProductionVariants": [
                Match.object_like(
                    {
                        "VariantName": "pools",
                        "InstanceType": Match.absent(),
                        "InstancePools": [
                            {"InstanceType": "ml.g6e.12xlarge", "Priority": 1},
                            {"InstanceType": "ml.g5.12xlarge", "Priority": 2},
                        ],
                        "VariantInstanceProvisionTimeoutInSeconds": 1200,
                    }
                )
            ]
        },
    )
    template.has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {
            "VariantName": "pools",
            "Specification": Match.object_like(
                {
                    "ComputeResourceRequirements": Match.object_like(
                        {"NumberOfAcceleratorDevicesRequired": 1}
                    )
                }
            ),
            "Specifications": Match.absent(),
        },
    )
    assert len(template.find_resources("AWS::SageMaker::Model")) == 1
    quotas = [n for n in notes_of(endpoint) if n.startswith("Service Quotas")]
    assert len(quotas) == 2


def test_a_component_whose_copy_differs_by_pool_gets_a_specification_per_type(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN pools of one and of four GPUs, and a component taking every GPU of an instance
    stack = new_stack()
    endpoint = InferenceComponentEndpoint(
        stack, "Shared", instance_type=["ml.g6e.2xlarge", "ml.g5.12xlarge"]
    )
    component = InferenceComponent(
        stack, "Chat", endpoint=endpoint, model=_qwen(stack), min_memory_mib=16384
    )
    template = Template.from_stack(stack)
    first, second = (pool.binding for pool in component.plan.pools)
    assert first is not None and second is not None
    resolve = stack.resolve
    # THEN one specification per instance type, each with its Model and devices
    template.has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {
            "Specification": Match.absent(),
            "Specifications": [
                Match.object_like(
                    {
                        "InstanceType": "ml.g6e.2xlarge",
                        "ModelName": resolve(first.model_name),
                        "ComputeResourceRequirements": Match.object_like(
                            {"NumberOfAcceleratorDevicesRequired": 1}
                        ),
                    }
                ),
                Match.object_like(
                    {
                        "InstanceType": "ml.g5.12xlarge",
                        "ModelName": resolve(second.model_name),
                        "ComputeResourceRequirements": Match.object_like(
                            {"NumberOfAcceleratorDevicesRequired": 4}
                        ),
                    }
                ),
            ],
        },
    )
    assert second.environment["SM_VLLM_TENSOR_PARALLEL_SIZE"] == "4"


def test_a_component_that_does_not_fit_one_pool_names_it(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a copy of 100 GiB host memory: a g6e.12xlarge (384 GiB) has it, a g5.4xlarge not
    stack = new_stack()
    endpoint = InferenceComponentEndpoint(
        stack, "Shared", instance_type=["ml.g6e.12xlarge", "ml.g5.4xlarge"]
    )
    with pytest.raises(ConfigurationError) as raised:
        InferenceComponent(
            stack,
            "Chat",
            endpoint=endpoint,
            model=_qwen(stack),
            accelerators=1,
            min_memory_mib=100 * 1024,
        )
    text = str(raised.value)
    assert "instance_type[1] (ml.g5.4xlarge, priority 2): " in text
    assert (
        "drop ml.g5.4xlarge from InferenceComponentEndpoint(instance_type=[...]) or replace it "
        "with a larger type"
    ) in text
    assert "ml.g6e.12xlarge, priority 1" not in text


def test_copy_autoscaling_must_fit_the_fleet_on_every_pool(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN pools of four GPUs and of one, two instances at most, one GPU per copy
    stack = new_stack()
    endpoint = InferenceComponentEndpoint(
        stack, "Shared", instance_type=["ml.g6e.12xlarge", "ml.g6e.2xlarge"], max_instances=2
    )
    # WHEN copies may scale to 8: two g6e.12xlarge hold them, two g6e.2xlarge hold 2
    with pytest.raises(ConfigurationError) as raised:
        InferenceComponent(
            stack,
            "Chat",
            endpoint=endpoint,
            model=_qwen(stack),
            accelerators=1,
            min_memory_mib=16384,
            copies=1,
            autoscaling=Autoscaling(min_capacity=1, max_capacity=8, target_concurrent_requests=4),
        )
    # THEN only the smaller pool is named, with the fix
    text = str(raised.value)
    assert re.search(
        r"instance_type\[1\] \(ml.g6e.2xlarge, priority 2\): autoscaling max_capacity=8 .*"
        r"drop ml.g6e.2xlarge from InferenceComponentEndpoint\(instance_type=\[\.\.\.\]\)",
        text,
    ), text
    assert "priority 1" not in text
