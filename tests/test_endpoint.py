"""LlmEndpoint: config and endpoint wiring, LLM-sized defaults, autoscaling that survives
instance-type changes, grants and metrics."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Duration, Size, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from constructs_llm import (
    Autoscaling,
    Engine,
    FleetChange,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Variant,
)
from constructs_llm.errors import ConfigurationError
from constructs_llm.hosting.storage import storage_problem
from constructs_llm.notes import notes_of


def _endpoint(
    stack: Stack,
    instance_type: str = "ml.g5.2xlarge",
    engine: Engine | None = None,
    model_id: str = "meta-llama/Meta-Llama-3-8B-Instruct",
    **props: Any,
) -> LlmEndpoint:
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(model_id, needs_token=False),
        engine=engine or Engine.tgi(),
        instance_type=instance_type,
    )
    return LlmEndpoint(stack, "Endpoint", model=model, **props)


def _variant(template: Template) -> dict[str, Any]:
    config = next(iter(template.find_resources("AWS::SageMaker::EndpointConfig").values()))
    variant: dict[str, Any] = config["Properties"]["ProductionVariants"][0]
    return variant


@pytest.fixture(scope="module")
def scaled(new_stack: Callable[..., Stack]) -> tuple[LlmEndpoint, Template]:
    stack = new_stack()
    endpoint = _endpoint(
        stack,
        endpoint_name="chat-llama3",
        autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8),
        fleet_change=FleetChange.TWO_DEPLOYS,  # a name of the user's (not the fleet's)
    )
    role = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    endpoint.grant_invoke(role)
    return endpoint, Template.from_stack(stack)


def test_only_the_endpoint_has_a_physical_name(scaled: tuple[LlmEndpoint, Template]) -> None:
    _, template = scaled
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig", {"EndpointConfigName": Match.absent()}
    )
    template.has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {
            "EndpointName": "chat-llama3",
            "EndpointConfigName": {"Fn::GetAtt": [Match.any_value(), "EndpointConfigName"]},
            "RetainAllVariantProperties": True,
        },
    )


def test_variant_gets_llm_timeouts_and_is_named_after_the_fleet(
    scaled: tuple[LlmEndpoint, Template],
) -> None:
    _, template = scaled
    variant = _variant(template)
    assert variant["VariantName"] == "g5-2xlarge"
    assert variant["InstanceType"] == "ml.g5.2xlarge"
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 900  # the GPU floor
    assert variant["ModelDataDownloadTimeoutInSeconds"] == 900
    assert "VolumeSizeInGB" not in variant  # g5 has local NVMe
    assert variant["RoutingConfig"] == {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}


def test_autoscaling_tracks_concurrency_on_the_fleet_variant(
    scaled: tuple[LlmEndpoint, Template],
) -> None:
    _, template = scaled
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget",
        {
            "MinCapacity": 1,
            "MaxCapacity": 4,
            "ScalableDimension": "sagemaker:variant:DesiredInstanceCount",
            "ResourceId": {
                "Fn::Join": [
                    "",
                    [
                        "endpoint/",
                        {"Fn::GetAtt": [Match.any_value(), "EndpointName"]},
                        "/variant/g5-2xlarge",
                    ],
                ]
            },
        },
    )
    target = template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget")
    assert "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint" in json.dumps(target)
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": Match.object_like(
                {
                    "TargetValue": 8,
                    "PredefinedMetricSpecification": {
                        "PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"
                    },
                    "ScaleInCooldown": 600,
                    "ScaleOutCooldown": 120,
                }
            ),
        },
    )
    template.resource_count_is("AWS::IAM::Role", 2)  # model role + caller; no scaling role


def test_changing_the_instance_type_replaces_the_variant_and_scalable_target(
    new_stack: Callable[..., Stack],
) -> None:
    def resource_id(instance_type: str) -> str:
        stack = new_stack()
        _endpoint(
            stack,
            instance_type=instance_type,
            autoscaling=Autoscaling(max_capacity=2, target_concurrent_requests=4),
        )
        target = next(
            iter(
                Template.from_stack(stack)
                .find_resources("AWS::ApplicationAutoScaling::ScalableTarget")
                .values()
            )
        )
        return str(target["Properties"]["ResourceId"])

    # ResourceId is create-only, so CloudFormation creates the new target and deletes the old.
    assert "g5-2xlarge" in resource_id("ml.g5.2xlarge")
    assert "g6-2xlarge" in resource_id("ml.g6.2xlarge")


def test_grant_invoke_covers_streaming_on_this_endpoint_only(
    scaled: tuple[LlmEndpoint, Template],
) -> None:
    _, template = scaled
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": [
                    Match.object_like(
                        {
                            "Action": [
                                "sagemaker:InvokeEndpoint",
                                "sagemaker:InvokeEndpointWithResponseStream",
                            ],
                            "Resource": {"Ref": Match.string_like_regexp("Endpoint")},
                        }
                    )
                ]
            }
        },
    )


def test_metrics_use_the_endpoint_and_variant(scaled: tuple[LlmEndpoint, Template]) -> None:
    endpoint, _ = scaled
    metric = endpoint.metric_concurrent_requests()
    assert metric.metric_name == "ConcurrentRequestsPerModel"
    assert set(metric.dimensions or {}) == {"EndpointName", "VariantName"}
    assert endpoint.metric_invocations().statistic == "Sum"
    assert endpoint.metric_gpu_utilization().namespace == "/aws/sagemaker/Endpoints"


def test_memory_plan_is_annotated_per_endpoint(scaled: tuple[LlmEndpoint, Template]) -> None:
    endpoint, _ = scaled
    assert any(re.match("Memory plan: .*weights", note) for note in notes_of(endpoint))


def test_quota_note_names_instance_type_and_maximum(scaled: tuple[LlmEndpoint, Template]) -> None:
    # the most instances autoscaling may run (4), and a second fleet as large while the default
    # blue/green update runs the new fleet beside the old
    endpoint, _ = scaled
    notes = notes_of(endpoint)
    assert (
        "Service Quotas: 'ml.g5.2xlarge for endpoint usage' must allow at least 8 instance(s) in "
        "the target region (new accounts often have 0): 4 in service at most, and 4 more while "
        "a blue/green update runs the new fleet beside the old"
    ) in notes


def test_neuron_defaults_to_an_hour_and_ebs_volume_with_key(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    _endpoint(
        stack,
        instance_type="ml.inf2.xlarge",
        engine=Engine.tgi_neuronx(),
        model_id="mistralai/Mistral-7B-Instruct-v0.2",
        kms_key=key,
        volume_size=Size.gibibytes(64),
    )
    template = Template.from_stack(stack)
    variant = _variant(template)
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 3600
    assert variant["VolumeSizeInGB"] == 64
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig", {"KmsKeyId": {"Fn::GetAtt": [Match.any_value(), "Arn"]}}
    )


@pytest.mark.parametrize(
    ("model_id", "engine", "loaded_gib", "volume_gb"),
    [
        # stored and loaded in bf16: the checkpoint as downloaded is the weights as loaded
        ("meta-llama/Meta-Llama-3-8B-Instruct", Engine.vllm(), 15.0, 48),
        # a bf16 70B quantized to 4 bits at load time downloads four times what it loads
        (
            "meta-llama/Meta-Llama-3-70B-Instruct",
            Engine.tgi(quantize="bitsandbytes-nf4"),
            32.9,
            339,
        ),
    ],
)
def test_the_default_volume_holds_the_checkpoint_as_downloaded(
    new_stack: Callable[..., Stack],
    model_id: str,
    engine: Engine,
    loaded_gib: float,
    volume_gb: int,
) -> None:
    # GIVEN an EBS-only instance type and no volume_size
    stack = new_stack()
    endpoint = _endpoint(stack, instance_type="ml.p3.16xlarge", engine=engine, model_id=model_id)
    (variant_plan,) = endpoint.plan.variants
    assert variant_plan.binding is not None and variant_plan.binding.plan is not None
    assert round(variant_plan.binding.plan.weights_gib, 1) == loaded_gib
    # THEN the volume is sized from the download (2.5 times it, plus 10 GiB), not the load
    assert _variant(Template.from_stack(stack))["VolumeSizeInGB"] == volume_gb
    # AND the same size given as volume_size passes the library's own storage check (the
    # checkpoint with 10 % headroom), where a size from the weights as loaded would not
    architecture = variant_plan.model.architecture if variant_plan.model else None
    assert architecture is not None
    instance = variant_plan.first.instance_type
    assert storage_problem(instance, Size.gibibytes(volume_gb), architecture) is None
    from_load = max(30, math.ceil(loaded_gib * 2.5 + 10))
    fails = storage_problem(instance, Size.gibibytes(from_load), architecture)
    assert (fails is not None) == (from_load != volume_gb), fails


def test_timeouts_grow_with_model_size(new_stack: Callable[..., Stack]) -> None:
    small = _variant(
        Template.from_stack(_stack_with(new_stack, "microsoft/Phi-3-mini-4k-instruct"))
    )
    big = _variant(Template.from_stack(_stack_with(new_stack, "tiiuae/falcon-40b-instruct")))
    key = "ContainerStartupHealthCheckTimeoutInSeconds"
    # 600 s + 30 s per billion parameters, in minutes, at least 15 minutes
    assert (small[key], big[key]) == (900, 1860)


def _stack_with(new_stack: Callable[..., Stack], model_id: str) -> Stack:
    stack = new_stack()
    _endpoint(stack, instance_type="ml.g5.48xlarge", model_id=model_id, engine=Engine.lmi())
    return stack


def test_metrics_take_the_usual_overrides(scaled: tuple[LlmEndpoint, Template]) -> None:
    endpoint, _ = scaled
    metric = endpoint.metric_invocations(
        period=Duration.minutes(5), label="Chat requests", color="#ff0000"
    )
    assert (metric.statistic, metric.label, metric.color) == ("Sum", "Chat requests", "#ff0000")
    assert metric.period.to_minutes() == 5
    latency = endpoint.metric_model_latency(statistic="p99", unit=cloudwatch.Unit.MICROSECONDS)
    assert (latency.statistic, latency.unit) == ("p99", cloudwatch.Unit.MICROSECONDS)
    assert endpoint.metric("ModelSetupTime", dimensions_map={"EndpointName": "x"}).dimensions == {
        "EndpointName": "x"
    }


def test_an_endpoint_on_another_instance_type_binds_the_model_again(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a model whose default placement is ml.g5.2xlarge
    stack = new_stack()
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", needs_token=False),
        engine=Engine.tgi(),
        instance_type="ml.g5.2xlarge",
    )
    # WHEN an endpoint serves it on ml.g5.12xlarge
    endpoint = LlmEndpoint(stack, "Endpoint", model=model, instance_type="ml.g5.12xlarge")
    # THEN that endpoint's Model is derived for 4 GPUs, under an id of the placement's own
    template = Template.from_stack(stack)
    (model_id,) = template.find_resources("AWS::SageMaker::Model")
    assert model_id.startswith("ModelG512xlarge")
    assert endpoint.variants[0].binding.environment["SM_NUM_GPUS"] == "4"
    assert _variant(template)["ModelName"] == {"Fn::GetAtt": [model_id, "ModelName"]}


def test_cuda13_images_get_the_driver_580_host_ami(new_stack: Callable[..., Stack]) -> None:
    lmi = _variant(Template.from_stack(_stack_with(new_stack, "microsoft/Phi-3-mini-4k-instruct")))
    assert lmi["InferenceAmiVersion"] == "al2023-ami-sagemaker-inference-gpu-4-1"


def test_cuda12_images_keep_the_default_host_ami(scaled: tuple[LlmEndpoint, Template]) -> None:
    _, template = scaled  # TGI 3.3.6 is a CUDA 12.4 build
    assert "InferenceAmiVersion" not in _variant(template)


def test_a_new_model_replaces_model_and_config_but_updates_the_same_endpoint(
    new_stack: Callable[..., Stack],
) -> None:
    def synth(model_id: str) -> dict[str, Any]:
        stack = new_stack()
        _endpoint(
            stack,
            model_id=model_id,
            endpoint_name="chat",
            autoscaling=Autoscaling(max_capacity=2, target_concurrent_requests=4),
            fleet_change=FleetChange.TWO_DEPLOYS,
        )
        return dict(Template.from_stack(stack).to_json()["Resources"])

    before = synth("meta-llama/Meta-Llama-3-8B-Instruct")
    after = synth("mistralai/Mistral-7B-Instruct-v0.2")

    def by_type(resources: dict[str, Any], kind: str) -> tuple[str, dict[str, Any]]:
        (item,) = [(k, v) for k, v in resources.items() if v["Type"] == kind]
        return item

    # The Model keeps its logical id but changes create-only properties, and has no fixed
    # name: CloudFormation creates the replacement first, then deletes the old one.
    (model_id, old_model), (model_id_after, new_model) = (
        by_type(before, "AWS::SageMaker::Model"),
        by_type(after, "AWS::SageMaker::Model"),
    )
    assert model_id == model_id_after and old_model["Properties"] != new_model["Properties"]
    assert "ModelName" not in new_model["Properties"]
    # The config names the model by GetAtt, so the new model name replaces the config too.
    _, config = by_type(after, "AWS::SageMaker::EndpointConfig")
    assert "EndpointConfigName" not in config["Properties"]
    (variant,) = config["Properties"]["ProductionVariants"]
    assert variant["ModelName"] == {"Fn::GetAtt": [model_id, "ModelName"]}
    (ep_before, old_ep), (ep_after, new_ep) = (
        by_type(before, "AWS::SageMaker::Endpoint"),
        by_type(after, "AWS::SageMaker::Endpoint"),
    )
    # The Endpoint keeps its logical id and name and only points at the new config.
    assert ep_before == ep_after and old_ep == new_ep
    assert old_ep["Properties"]["EndpointName"] == "chat"
    (target_before, old_target), (target_after, new_target) = (
        by_type(before, "AWS::ApplicationAutoScaling::ScalableTarget"),
        by_type(after, "AWS::ApplicationAutoScaling::ScalableTarget"),
    )
    # Same instance type, same variant: the scalable target is untouched.
    assert target_before == target_after and old_target == new_target


# -- 2026 options: enhanced metrics and capacity reservations --------------------------------

RESERVATION = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/g5-chat-endpoint"


def test_enhanced_metrics_and_publish_frequency_render_metrics_config(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    _endpoint(stack, enhanced_metrics=True, metric_publish_frequency=Duration.seconds(10))
    config = next(
        iter(Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values())
    )
    assert config["Properties"]["MetricsConfig"] == {
        "EnableDetailedObservability": True,
        "EnableEnhancedMetrics": True,
        "MetricPublishFrequencyInSeconds": 10,
    }


def test_a_frequency_alone_sets_only_the_frequency(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    _endpoint(stack, metric_publish_frequency=Duration.minutes(5))
    config = next(
        iter(Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values())
    )
    assert config["Properties"]["MetricsConfig"] == {
        "EnableDetailedObservability": True,
        "MetricPublishFrequencyInSeconds": 300,
    }


def test_by_default_nothing_new_is_rendered(scaled: tuple[LlmEndpoint, Template]) -> None:
    _, template = scaled
    (config,) = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    # detailed observability is the one metrics setting rendered by default, and always
    assert config["Properties"]["MetricsConfig"] == {"EnableDetailedObservability": True}
    assert "CapacityReservationConfig" not in _variant(template)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"enhanced_metrics": "true"},
            r"enhanced_metrics must be True or False, got str 'true'; pass the bool True",
        ),
        (
            {"metric_publish_frequency": Duration.seconds(45)},
            r"metric_publish_frequency must be 10, 30, 60, 120, 180, 240 or 300 seconds, got 45 s; use Duration\.seconds\(30\)",
        ),
        ({"metric_publish_frequency": 60}, r"got int 60; use Duration\.seconds\(60\)"),
        (
            {"capacity_reservation": "g5-chat"},
            r"capacity_reservation must be a training plan's ARN, got 'g5-chat'; pass the ARN of a training plan",
        ),
        ({"capacity_reservation": 42}, r"capacity_reservation must be an ARN string, got int 42"),
    ],
)
def test_bad_metrics_and_reservation_settings_name_the_value(
    new_stack: Callable[..., Stack], props: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        _endpoint(new_stack(), **props)


def test_a_capacity_reservation_launches_only_into_it(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    _endpoint(stack, capacity_reservation=RESERVATION)
    assert _variant(Template.from_stack(stack))["CapacityReservationConfig"] == {
        "CapacityReservationPreference": "capacity-reservations-only",
        "MlReservationArn": RESERVATION,
    }


def test_each_variant_takes_its_own_reservation(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", needs_token=False),
        engine=Engine.vllm(),
        instance_type="ml.g5.2xlarge",
    )
    LlmEndpoint(
        stack,
        "Endpoint",
        variants=[
            Variant(model=model, name="reserved", capacity_reservation=RESERVATION),
            Variant(model=model, name="on-demand", instance_type="ml.g5.4xlarge"),
        ],
    )
    (config,) = Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values()
    reserved, on_demand = config["Properties"]["ProductionVariants"]
    assert reserved["CapacityReservationConfig"]["MlReservationArn"] == RESERVATION
    assert "CapacityReservationConfig" not in on_demand
    # the endpoint-wide argument belongs on each Variant once there are several
    with pytest.raises(ConfigurationError, match=r"capacity_reservation= applies to one variant"):
        LlmEndpoint(
            stack,
            "Other",
            variants=[Variant(model=model)],
            capacity_reservation=RESERVATION,
        )
    with pytest.raises(
        ConfigurationError,
        match=r"variants\[0\]: capacity_reservation must be a training plan's ARN, got 'nope'",
    ):
        LlmEndpoint(stack, "Bad", variants=[Variant(model=model, capacity_reservation="nope")])
