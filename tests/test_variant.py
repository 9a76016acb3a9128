"""LlmEndpoint(variants=..., shadow=...): weighted production variants across models and
instance types, each with its own autoscaling and metrics, and a shadow variant."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Match, Template

from constructs_llm import (
    Autoscaling,
    Engine,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamFormat,
    StreamingInvoker,
    Variant,
)
from tests.matrix.builders import G5, G5_4GPU, LLAMA3, MISTRAL


def _model(stack: Stack, id: str, hub_id: str, engine: Engine | None = None) -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(hub_id, needs_token=False),
        engine=engine or Engine.tgi(),
        instance_type=G5,
    )


@pytest.fixture(scope="module")
def ab(new_stack: Callable[..., Stack]) -> tuple[LlmEndpoint, Template]:
    # GIVEN a 90/10 A/B test across two models, the second on bigger hardware, each scaling
    stack = new_stack()
    llama = _model(stack, "Llama", LLAMA3)
    mistral = _model(stack, "Mistral", MISTRAL, Engine.lmi())
    endpoint = LlmEndpoint(
        stack,
        "AB",
        variants=[
            Variant(
                model=llama,
                weight=90,
                autoscaling=Autoscaling(max_capacity=4, target_concurrent_requests=8),
            ),
            Variant(
                model=mistral,
                weight=10,
                instance_type=G5_4GPU,
                autoscaling=Autoscaling(max_capacity=2, target_invocations_per_instance=20),
            ),
        ],
    )
    StreamingInvoker(stack, "Stream", target=endpoint)
    return endpoint, Template.from_stack(stack)


def _variants(template: Template, key: str = "ProductionVariants") -> list[dict[str, Any]]:
    (config,) = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    variants: list[dict[str, Any]] = config["Properties"].get(key, [])
    return variants


def test_each_variant_serves_its_model_on_its_hardware_with_its_weight(
    ab: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = ab
    variants = _variants(template)
    assert [(v["VariantName"], v["InstanceType"], v["InitialVariantWeight"]) for v in variants] == [
        ("Llama-g5-2xlarge", "ml.g5.2xlarge", 90),
        ("Mistral-g5-12xlarge", "ml.g5.12xlarge", 10),
    ]
    # each variant's Model is its model bound to that variant's instance type
    llama, mistral = endpoint.variants
    assert [v["ModelName"] for v in variants] == [
        Stack.of(endpoint).resolve(b.binding.model_name) for b in (llama, mistral)
    ]
    assert mistral.binding.environment["OPTION_TENSOR_PARALLEL_DEGREE"] == "4"
    assert endpoint.shadow_variant is None
    assert (
        "ShadowProductionVariants"
        not in template.to_json()["Resources"][
            Stack.of(endpoint).resolve(endpoint.config.logical_id)
        ]["Properties"]
    )


def test_each_variant_scales_on_its_own_target_and_counts_are_kept(
    ab: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = ab
    targets = template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget")
    resource_ids = sorted(
        (
            t["Properties"]["ResourceId"]["Fn::Join"][1][-1],
            t["Properties"]["MinCapacity"],
            t["Properties"]["MaxCapacity"],
        )
        for t in targets.values()
    )
    assert resource_ids == [
        ("/variant/Llama-g5-2xlarge", 1, 4),
        ("/variant/Mistral-g5-12xlarge", 1, 2),
    ]
    metrics = sorted(
        p["Properties"]["TargetTrackingScalingPolicyConfiguration"][
            "PredefinedMetricSpecification"
        ]["PredefinedMetricType"]
        for p in template.find_resources("AWS::ApplicationAutoScaling::ScalingPolicy").values()
    )
    assert metrics == [
        "SageMakerVariantConcurrentRequestsPerModelHighResolution",
        "SageMakerVariantInvocationsPerInstance",
    ]
    template.has_resource_properties(
        "AWS::SageMaker::Endpoint", {"RetainAllVariantProperties": True}
    )
    assert [v.scalable_target is not None for v in endpoint.variants] == [True, True]


def test_each_variant_has_its_own_metrics(ab: tuple[LlmEndpoint, Template]) -> None:
    endpoint, _ = ab
    stack = Stack.of(endpoint)
    for variant in endpoint.variants:
        metric = variant.metric_invocations()
        assert stack.resolve(metric.dimensions)["VariantName"] == variant.name
        assert metric.statistic == "Sum"
        gpu = variant.metric_gpu_utilization(statistic="Maximum")
        assert (gpu.namespace, gpu.statistic) == ("/aws/sagemaker/Endpoints", "Maximum")
    # the endpoint's own metrics are its first variant's
    first = endpoint.variants[0].name
    assert stack.resolve(endpoint.metric_invocations().dimensions)["VariantName"] == first


def test_the_invoker_may_pin_either_variant_and_detects_the_framing(
    ab: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = ab
    assert endpoint.variant_names == ("Llama-g5-2xlarge", "Mistral-g5-12xlarge")
    # TGI answers OpenAI SSE, LMI JSON lines: the invoker detects the framing per line
    assert endpoint.stream_format is StreamFormat.AUTO
    # two models: clients address the endpoint by its id
    assert endpoint.served_model_name == "AB"
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Environment": {
                "Variables": Match.object_like({"STREAM_FORMAT": "auto", "MODEL_NAME": "AB"})
            }
        },
    )


def test_a_shadow_variant_gets_a_copy_of_the_traffic_next_to_one_production_variant(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    current = _model(stack, "Current", LLAMA3)
    candidate = _model(stack, "Candidate", LLAMA3)
    endpoint = LlmEndpoint(
        stack,
        "Shadowed",
        variants=[Variant(model=current)],
        shadow=Variant(model=candidate, instance_type="ml.g6.2xlarge", weight=0.5),
    )
    template = Template.from_stack(stack)
    (production,) = _variants(template)
    (shadow,) = _variants(template, "ShadowProductionVariants")
    assert production["VariantName"] == "Current-g5-2xlarge"
    assert (shadow["VariantName"], shadow["InstanceType"], shadow["InitialVariantWeight"]) == (
        "Candidate-g6-2xlarge",
        "ml.g6.2xlarge",
        0.5,
    )
    assert endpoint.shadow_variant is not None and endpoint.shadow_variant.shadow
    # shadow answers never reach clients: it cannot be pinned, and clients see one model
    assert endpoint.variant_names == ("Current-g5-2xlarge",)
    assert endpoint.served_model_name == LLAMA3


def test_a_variant_may_be_named_and_the_model_path_keeps_its_single_variant(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    model = _model(stack, "Model", LLAMA3)
    named = LlmEndpoint(stack, "Named", variants=[Variant(model=model, name="blue")])
    single = LlmEndpoint(stack, "Single", model=model)
    assert [v.name for v in named.variants] == ["blue"]
    # model=...: the variant is named after the instance type, as before variants existed
    assert [v.name for v in single.variants] == ["g5-2xlarge"] == [single.variant_plan.name]
    assert single.variants[0].binding is named.variants[0].binding  # one placement, one Model


def test_generated_variant_names_fit_sagemaker(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    model = _model(stack, "A" * 80 + "_model!", LLAMA3)
    (variant,) = LlmEndpoint(stack, "Long", variants=[Variant(model=model)]).variants
    # the model's id loses what SageMaker refuses and is cut so the name holds 63 characters
    assert variant.name == "A" * 52 + "-g5-2xlarge"
