"""TargetFacts: what a target is, one frozen value its host builds from its plan, which the
invoker reads instead of asking which host class a target is. No synthesis: facts are read
from plans, as the invoker reads them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_llm import (
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
)
from constructs_llm.contract import EngineName, ModelKind, RequestFormat, StreamFormat
from constructs_llm.hosting.target import EmbeddingTraits, InvocationTarget, TargetFacts
from constructs_llm.operations.metrics import DashboardView
from constructs_llm.streaming.invoker.targets import check_targets, routes_environment
from tests.matrix.builders import G5_4GPU, LLAMA3

GEMMA3 = "google/gemma-3-4b-it"  # the model table knows it takes images
FAST, SLOW = "ml.g6e.2xlarge", "ml.g5.4xlarge"  # L40S (864 GB/s) and A10G (600 GB/s)


def _model(stack: Stack, id: str, model_id: str, engine: Engine, **props: Any) -> LlmModel:
    source = ModelSource.hugging_face(model_id, needs_token=False)
    return LlmModel(stack, id, source=source, engine=engine, max_total_tokens=4096, **props)


@pytest.fixture(scope="module")
def stack(new_stack: Callable[..., Stack]) -> Stack:
    return new_stack()


@pytest.fixture(scope="module")
def pooled(stack: Stack) -> LlmEndpoint:
    # GIVEN Llama 3 on vLLM over two instance pools, the faster one first
    model = _model(stack, "Pooled", LLAMA3, Engine.vllm())
    return LlmEndpoint(stack, "Chat", model=model, instance_type=[FAST, SLOW])


@pytest.fixture(scope="module")
def slow_only(stack: Stack) -> LlmEndpoint:
    model = _model(stack, "Slow", LLAMA3, Engine.vllm())
    return LlmEndpoint(stack, "SlowChat", model=model, instance_type=SLOW)


@pytest.fixture(scope="module")
def component(stack: Stack) -> InferenceComponent:
    # GIVEN Llama 3 on LMI as a component with adapters on
    model = _model(
        stack,
        "Lmi",
        LLAMA3,
        Engine.lmi(),
        instance_type=G5_4GPU,
        env={"OPTION_ENABLE_LORA": "true"},
    )
    shared = InferenceComponentEndpoint(stack, "Shared", instance_type=G5_4GPU)
    return InferenceComponent(
        stack, "Comp", endpoint=shared, model=model, accelerators=1, min_memory_mib=16 * 1024
    )


def test_an_endpoint_s_facts_come_from_its_plan(pooled: LlmEndpoint) -> None:
    facts = pooled.facts
    # THEN they name its engine, formats, limits and variants, as a frozen value
    assert isinstance(facts, TargetFacts)
    assert (facts.engine, facts.model_kind, facts.hosted_here) == (
        EngineName.VLLM,
        ModelKind.CHAT,
        True,
    )
    assert (facts.stream_format, facts.request_format) == (
        pooled.stream_format,
        pooled.request_format,
    )
    assert facts.inference_component_name is None
    assert facts.variant_names == pooled.variant_names != ()
    assert (facts.max_total_tokens, facts.is_async, facts.embedding_traits) == (4096, False, None)
    assert facts.max_in_flight is None  # no autoscaling
    assert facts.vision is False  # the model table knows Llama 3 as text-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.max_total_tokens = 1  # type: ignore[misc]


def test_the_slowest_pool_decides_the_decode_rate(
    pooled: LlmEndpoint, slow_only: LlmEndpoint
) -> None:
    # THEN the pooled endpoint's decode rate is that of its slower pool alone
    slowest, alone = pooled.facts.slowest_decode, slow_only.facts.slowest_decode
    assert slowest is not None and alone is not None
    assert slowest.tokens_per_s == pytest.approx(alone.tokens_per_s)


def test_autoscaling_bounds_the_requests_in_flight(stack: Stack) -> None:
    # GIVEN an endpoint scaling up to 3 instances at 8 requests each
    model = _model(stack, "ScaledModel", LLAMA3, Engine.vllm())
    scaling = Autoscaling(min_capacity=1, max_capacity=3, target_concurrent_requests=8)
    endpoint = LlmEndpoint(stack, "Scaled", model=model, instance_type=SLOW, autoscaling=scaling)
    # THEN at most 24 are in flight
    assert endpoint.facts.max_in_flight == 24


def test_a_model_that_takes_images_is_said_to(stack: Stack) -> None:
    model = _model(stack, "Gemma", GEMMA3, Engine.vllm())
    endpoint = LlmEndpoint(stack, "Vision", model=model, instance_type=G5_4GPU)
    assert endpoint.facts.vision is True


def test_a_component_and_its_adapter_share_the_base_s_hardware(
    component: InferenceComponent,
) -> None:
    bucket = s3.Bucket.from_bucket_name(component, "Adapters", "my-adapters")
    adapter = component.add_adapter("sql", source=ModelSource.s3_archive(bucket, "sql.tar.gz"))
    base, facts = component.facts, adapter.facts
    # THEN the component names itself and its engine; the adapter is served under its own name
    # on the base's engine and hardware
    assert base.inference_component_name == component.inference_component_name
    assert (base.engine, base.hosted_here) == (EngineName.LMI_VLLM, True)
    assert facts.served_model_name == "sql" != base.served_model_name
    assert facts.inference_component_name == adapter.inference_component_name
    assert (facts.engine, facts.slowest_decode) == (base.engine, base.slowest_decode)
    assert base.slowest_decode is not None


@pytest.mark.parametrize(
    ("engine", "expected"), [(Engine.tgi(), EngineName.TGI), (None, None)], ids=["tgi", "none"]
)
def test_an_import_states_only_what_it_was_imported_with(
    stack: Stack, engine: Engine | None, expected: EngineName | None
) -> None:
    name = f"legacy-{engine.name if engine else 'unknown'}"
    imported = LlmEndpoint.from_endpoint_attributes(stack, name, endpoint_name=name, engine=engine)
    facts = imported.facts
    assert (facts.engine, facts.hosted_here) == (expected, False)
    assert (facts.vision, facts.slowest_decode, facts.max_total_tokens) == (None, None, None)
    assert facts.endpoint_name == name


class _NewHost(Construct):
    """A host the invoker has never heard of: it offers the target members and its facts."""

    def __init__(self, scope: Construct, id: str, facts: TargetFacts) -> None:
        super().__init__(scope, id)
        self._facts = facts
        self.endpoint_name, self.inference_component_name = facts.endpoint_name, None
        self.served_model_name, self.variant_names = facts.served_model_name, ()
        self.stream_format, self.request_format = facts.stream_format, facts.request_format
        self.tool_calls, self.max_total_tokens = facts.tool_calls, facts.max_total_tokens
        self.is_async, self.model_kind = facts.is_async, facts.model_kind
        self.embedding_traits: EmbeddingTraits | None = None

    @property
    def facts(self) -> TargetFacts:
        return self._facts

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=["sagemaker:*"], resource_arns=["*"]
        )

    def dashboard_view(self) -> DashboardView:
        return DashboardView(label="new host", sagemaker=False)


def test_a_new_host_needs_no_edit_in_the_invoker(stack: Stack, pooled: LlmEndpoint) -> None:
    # GIVEN a host class the invoker does not know, whose facts are the pooled endpoint's with
    # another name and engine, beside that endpoint
    facts = dataclasses.replace(
        pooled.facts,
        served_model_name="new-host",
        endpoint_name="new-endpoint",
        engine=EngineName.SGLANG,
        stream_format=StreamFormat.OPENAI,
        request_format=RequestFormat.MESSAGES,
        vision=False,
    )
    host = _NewHost(stack, "NewHost", facts)
    assert isinstance(host, InvocationTarget)
    # WHEN the invoker checks its targets, and writes the new host's environment
    found, problems = check_targets(stack, None, [host, pooled])
    env = routes_environment(stack, found[:1])
    # THEN it takes the new host and routes to it by its facts alone
    assert problems == []
    assert [id(t) for t in found] == [id(host), id(pooled)]
    assert env == {
        "ENDPOINT_NAME": "new-endpoint",
        "STREAM_FORMAT": "openai",
        "REQUEST_FORMAT": "messages",
        "MODEL_NAME": "new-host",
        "TOOLS": "on" if facts.tool_calls else "off",
        "ENGINE": "sglang",
        "VISION": "off",
        "MAX_TOTAL_TOKENS": "4096",
    }
