"""Routing: the strategy is rendered as ``RoutingConfig`` on every variant and instance pool
(least outstanding requests by default, as before), prefix-aware routing's ranges are checked
naming the value and the range, KV-aware routing is allowed only where every model runs the
vLLM DLC, and prefix-aware routing on a single instance gets a note."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from botocore.loaders import Loader

from constructs_llm import (
    ConfigurationError,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Routing,
    Variant,
)
from constructs_llm.hosting.routing import CFN_SCHEMA_STRATEGIES, RoutingStrategy
from constructs_llm.notes import notes_of
from scripts import refresh_catalogs as refresh
from tests.support.synth_errors import synthesize

QWEN = "Qwen/Qwen2.5-7B-Instruct"
PREFIX = Routing.prefix_aware(prefix_length=4096, concurrency_threshold=8)


def _model(stack: Stack, engine: Engine, id: str = "Model") -> LlmModel:
    source = ModelSource.hugging_face(QWEN)
    return LlmModel(stack, id, source=source, engine=engine, max_total_tokens=8192)


def _routing(template: Template) -> list[dict[str, Any]]:
    configs = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    return [v["RoutingConfig"] for c in configs for v in c["Properties"]["ProductionVariants"]]


@pytest.fixture(scope="module")
def routed(new_stack: Callable[..., Stack]) -> tuple[Stack, dict[str, LlmEndpoint], Template]:
    """One stack: an endpoint of two variants (one on instance pools) routed prefix-aware on
    two instances, one prefix-aware on one instance, one by default, a component endpoint
    routed at random."""
    stack = new_stack()
    model = _model(stack, Engine.vllm())
    endpoints = {
        "pooled": LlmEndpoint(
            stack,
            "Pooled",
            variants=[
                Variant(model=model, instance_type=["ml.g6e.2xlarge", "ml.g5.2xlarge"], weight=50),
                Variant(model=model, instance_type="ml.g5.2xlarge", weight=50, instance_count=2),
            ],
            routing=PREFIX,
        ),
        "single": LlmEndpoint(
            stack, "Single", model=model, instance_type="ml.g5.2xlarge", routing=PREFIX
        ),
        "default": LlmEndpoint(stack, "Default", model=model, instance_type="ml.g5.2xlarge"),
    }
    InferenceComponentEndpoint(
        stack, "Hosts", instance_type="ml.g5.12xlarge", max_instances=2, routing=Routing.random()
    )
    return stack, endpoints, Template.from_stack(stack)


def _of(stack: Stack, template: Template, endpoint: LlmEndpoint) -> list[dict[str, Any]]:
    logical = stack.get_logical_id(endpoint.config)
    config = template.to_json()["Resources"][logical]
    return [v["RoutingConfig"] for v in config["Properties"]["ProductionVariants"]]


def test_every_variant_and_pool_gets_the_endpoint_s_routing(
    routed: tuple[Stack, dict[str, LlmEndpoint], Template],
) -> None:
    stack, endpoints, template = routed
    prefix = {
        "RoutingStrategy": "PREFIX_AWARE",
        "PrefixAwareRoutingConfig": {"PrefixLength": 4096, "ConcurrencyThreshold": 8},
    }
    assert _of(stack, template, endpoints["pooled"]) == [prefix, prefix]
    assert {"RoutingStrategy": "RANDOM"} in _routing(template)


def test_the_default_renders_as_before(
    routed: tuple[Stack, dict[str, LlmEndpoint], Template],
) -> None:
    stack, endpoints, template = routed
    assert _of(stack, template, endpoints["default"]) == [
        {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
    ]
    assert Routing.least_outstanding_requests() == Routing(
        RoutingStrategy.LEAST_OUTSTANDING_REQUESTS
    )


def test_prefix_aware_routing_on_one_instance_gets_a_note(
    routed: tuple[Stack, dict[str, LlmEndpoint], Template],
) -> None:
    _, endpoints, _ = routed
    (note,) = [n for n in notes_of(endpoints["single"]) if n.startswith("Routing:")]
    assert "acts only when two or more instances can serve, and at most 1 does" in note
    # the pooled endpoint's second variant has two instances, its first one
    pooled = [n for n in notes_of(endpoints["pooled"]) if n.startswith("Routing:")]
    first = endpoints["pooled"].plan.variants[0].name
    assert len(pooled) == 1 and f"variant {first!r}" in pooled[0]
    assert not [n for n in notes_of(endpoints["default"]) if n.startswith("Routing:")]


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        (
            {"prefix_length": 1023, "concurrency_threshold": 8},
            "prefix_length must be an integer from 1,024 to 65,536, got int 1023",
        ),
        (
            {"prefix_length": 65537, "concurrency_threshold": 8},
            "prefix_length must be an integer from 1,024 to 65,536, got int 65537",
        ),
        (
            {"prefix_length": "4096", "concurrency_threshold": 8},
            "prefix_length must be an integer from 1,024 to 65,536, got str '4096'",
        ),
        (
            {"prefix_length": 4096, "concurrency_threshold": 0},
            "concurrency_threshold must be an integer from 1 to 1,024, got int 0",
        ),
        (
            {"prefix_length": 4096, "concurrency_threshold": 1025},
            "concurrency_threshold must be an integer from 1 to 1,024, got int 1025",
        ),
        (
            {"prefix_length": 4096, "concurrency_threshold": True},
            "concurrency_threshold must be an integer from 1 to 1,024, got bool True",
        ),
    ],
)
def test_prefix_aware_ranges_name_the_value_and_the_range(
    keywords: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        Routing.prefix_aware(**keywords)
    assert [str(p) for p in raised.value.problems] == [message]


@pytest.mark.parametrize(("length", "threshold"), [(1024, 1), (65536, 1024)])
def test_the_range_ends_are_accepted(length: int, threshold: int) -> None:
    routing = Routing.prefix_aware(prefix_length=length, concurrency_threshold=threshold)
    assert (routing.prefix_length, routing.concurrency_threshold) == (length, threshold)


def test_the_strategies_are_botocore_s_and_cloudformation_s_schema_lacks_kv_aware() -> None:
    shapes = Loader().load_service_model("sagemaker", "service-2")["shapes"]
    assert set(shapes["RoutingStrategy"]["enum"]) == {s.value for s in RoutingStrategy}
    prefix = shapes["PrefixAwareRoutingConfig"]["members"]
    length = shapes[prefix["PrefixLength"]["shape"]]
    threshold = shapes[prefix["ConcurrencyThreshold"]["shape"]]
    assert (length["min"], length["max"], threshold["min"], threshold["max"]) == (
        1024,
        65536,
        1,
        1024,
    )
    # the installed cfn-lint's schema, the same file in every region
    schemas = refresh._cfn_lint_schemas()
    digest = json.loads((schemas / "providers" / "us-east-1.json").read_text())[
        "AWS::SageMaker::EndpointConfig"
    ]
    schema = json.loads((schemas / "resources" / f"{digest}.json").read_text())
    enum = schema["definitions"]["RoutingConfig"]["properties"]["RoutingStrategy"]["enum"]
    assert set(enum) == CFN_SCHEMA_STRATEGIES


def test_kv_aware_routing_needs_the_vllm_dlc_naming_the_engine(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint = LlmEndpoint(
        stack,
        "Vllm",
        model=_model(stack, Engine.vllm()),
        instance_type="ml.g5.2xlarge",
        routing=Routing.kv_aware(),
    )
    assert _of(stack, Template.from_stack(stack), endpoint) == [{"RoutingStrategy": "KV_AWARE"}]
    with pytest.raises(ConfigurationError) as raised:
        LlmEndpoint(
            stack,
            "Tgi",
            model=_model(stack, Engine.tgi(), "TgiModel"),
            instance_type="ml.g5.2xlarge",
            routing=Routing.kv_aware(),
        )
    assert "Routing.kv_aware() works only with" in str(raised.value)
    assert "model 'Test/TgiModel' runs Engine.tgi()" in str(raised.value)


def test_a_component_off_the_vllm_dlc_is_refused_on_a_kv_aware_endpoint(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    hosts = InferenceComponentEndpoint(
        stack, "Hosts", instance_type="ml.g5.2xlarge", max_instances=2, routing=Routing.kv_aware()
    )
    InferenceComponent(
        stack,
        "Vllm",
        endpoint=hosts,
        model=_model(stack, Engine.vllm()),
        min_memory_mib=20000,
        accelerators=1,
    )
    InferenceComponent(
        stack,
        "Tgi",
        endpoint=hosts,
        model=_model(stack, Engine.tgi(), "TgiModel"),
        min_memory_mib=20000,
        accelerators=1,
    )
    with pytest.raises(
        ConfigurationError,
        match=r"^InferenceComponentEndpoint 'Test/Hosts': .*model 'Test/TgiModel' runs "
        r"Engine\.tgi\(\)",
    ) as raised:
        synthesize(stack)
    assert "Test/Model'" not in str(raised.value)  # the vLLM DLC's model is fine


@pytest.mark.parametrize("value", ["PREFIX_AWARE", {"RoutingStrategy": "RANDOM"}])
def test_routing_must_be_a_routing(new_stack: Callable[..., Stack], value: object) -> None:
    stack = new_stack()
    with pytest.raises(
        ConfigurationError, match=r"routing must be a Routing, got .*Routing\.random"
    ):
        LlmEndpoint(
            stack,
            "Endpoint",
            model=_model(stack, Engine.vllm()),
            instance_type="ml.g5.2xlarge",
            routing=value,  # type: ignore[arg-type]
        )
