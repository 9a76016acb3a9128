"""The template does not depend on the order the user creates constructs in.

One app: two models whose weights are in two different S3 buckets, each served by an
inference component on one shared endpoint, an adapter on the first, an endpoint of the first
model on its own, an endpoint of the second whose path sorts after the model's (each model
renders its own SageMaker Models, between hosts that render before and after it), a
StreamingInvoker over all of them and an LlmDashboard. Its steps depend on
each other (a component needs its endpoint and model); the app is built in orders such that
every two steps that may come in either order come in both, and each order gives the same
template: resources compared as JSON with sorted keys (an object's keys have no order), lists
as they are, policy statements included.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Template

from constructs_llm import (
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
)
from tests.conftest import cdk_context

Step = Callable[[Stack, dict[str, Any]], None]


def _buckets(stack: Stack, made: dict[str, Any]) -> None:
    made["weights"] = s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")
    made["other"] = s3.Bucket.from_bucket_name(stack, "OtherWeights", "other-weights")
    made["key"] = kms.Key(stack, "VolumeKey", enable_key_rotation=True)


def _llama(stack: Stack, made: dict[str, Any]) -> None:
    made["llama"] = LlmModel(
        stack,
        "Llama",
        source=ModelSource.s3(
            made["weights"], "llama-3.1-8b/", model_id="meta-llama/Llama-3.1-8B-Instruct"
        ),
        engine=Engine.vllm(),
        max_total_tokens=8192,
        env={"SM_VLLM_ENABLE_LORA": "true", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"},
    )


def _qwen(stack: Stack, made: dict[str, Any]) -> None:
    made["qwen"] = LlmModel(
        stack,
        "Qwen",
        source=ModelSource.s3(made["other"], "qwen2.5-7b/", model_id="Qwen/Qwen2.5-7B-Instruct"),
        engine=Engine.vllm(),
        max_total_tokens=8192,
    )


def _endpoint(stack: Stack, made: dict[str, Any]) -> None:
    made["endpoint"] = LlmEndpoint(
        stack,
        "Endpoint",
        model=made["llama"],
        instance_type="ml.g5.2xlarge",
        served_model_name="llama-small",
        autoscaling=Autoscaling(min_capacity=1, max_capacity=2, target_concurrent_requests=8),
    )


def _zeta(stack: Stack, made: dict[str, Any]) -> None:
    made["zeta"] = LlmEndpoint(
        stack, "Zeta", model=made["qwen"], instance_type="ml.g5.2xlarge", alarms=False
    )


def _shared(stack: Stack, made: dict[str, Any]) -> None:
    made["shared"] = InferenceComponentEndpoint(
        stack,
        "Shared",
        instance_type="ml.p3.8xlarge",
        min_instances=1,
        max_instances=2,
        kms_key=made["key"],
    )


def _component(name: str, model: str) -> Step:
    def build(stack: Stack, made: dict[str, Any]) -> None:
        made[name] = InferenceComponent(
            stack,
            name.capitalize(),
            endpoint=made["shared"],
            model=made[model],
            accelerators=2,
            min_memory_mib=24 * 1024,
        )

    return build


def _adapter(stack: Stack, made: dict[str, Any]) -> None:
    made["adapter"] = made["chat"].add_adapter(
        "support-bot", source=ModelSource.s3_archive(made["other"], "adapters/support.tar.gz")
    )


def _invoker(stack: Stack, made: dict[str, Any]) -> None:
    made["invoker"] = StreamingInvoker(
        stack, "Api", targets=[made["endpoint"], made["chat"], made["coder"]]
    )


def _dashboard(stack: Stack, made: dict[str, Any]) -> None:
    LlmDashboard(
        stack,
        "Dashboard",
        endpoints=[made["endpoint"]],
        components=[made["chat"], made["coder"]],
        invokers=[made["invoker"]],
    )


#: Each step, and the steps it needs before it.
STEPS: dict[str, tuple[Step, tuple[str, ...]]] = {
    "buckets": (_buckets, ()),
    "llama": (_llama, ("buckets",)),
    "qwen": (_qwen, ("buckets",)),
    "endpoint": (_endpoint, ("llama",)),
    # after Endpoint only to keep the covering orders at three (a synth each): its pairs with
    # every other step still come in both orders
    "zeta": (_zeta, ("qwen", "endpoint")),
    "shared": (_shared, ("buckets",)),
    "chat": (_component("chat", "llama"), ("shared", "llama")),
    "coder": (_component("coder", "qwen"), ("shared", "qwen")),
    "adapter": (_adapter, ("chat",)),
    "invoker": (_invoker, ("endpoint", "chat", "coder")),
    "dashboard": (_dashboard, ("endpoint", "chat", "coder", "invoker")),
}


def _orders(done: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every order of the steps in which each step comes after what it needs."""
    if len(done) == len(STEPS):
        yield done
    for name, (_, needs) in STEPS.items():
        if name not in done and all(n in done for n in needs):
            yield from _orders((*done, name))


def _before(order: tuple[str, ...]) -> set[tuple[str, str]]:
    return set(itertools.combinations(order, 2))


def _covering_orders() -> list[tuple[str, ...]]:
    """Orders in which every two steps that may come in either order come in both (greedy:
    each next order adds the most pairs not seen yet)."""
    every = list(_orders())
    wanted = set().union(*map(_before, every))
    chosen: list[tuple[str, ...]] = []
    seen: set[tuple[str, str]] = set()
    while seen != wanted:
        order = max(every, key=lambda o: len(_before(o) - seen))
        chosen.append(order)
        seen |= _before(order)
    return chosen


ORDERS = _covering_orders()


def _synth(order: tuple[str, ...]) -> str:
    app = App(context=cdk_context())
    stack = Stack(app, "Order")
    made: dict[str, Any] = {}
    for name in order:
        STEPS[name][0](stack, made)
    return json.dumps(Template.from_stack(stack).to_json(), sort_keys=True)


@pytest.fixture(scope="module")
def templates() -> list[str]:
    return [_synth(order) for order in ORDERS]


def test_every_two_steps_come_in_both_orders() -> None:
    orders = list(_orders())
    assert len(orders) > len(ORDERS) >= 2
    assert set().union(*map(_before, ORDERS)) == set().union(*map(_before, orders))
    assert ("coder", "chat") in set().union(*map(_before, ORDERS))  # the buckets' order flips


def test_the_template_does_not_depend_on_construction_order(templates: list[str]) -> None:
    first, *others = templates
    assert all(other == first for other in others)


def test_the_shared_role_reads_both_buckets_and_the_adapter(templates: list[str]) -> None:
    # the case that used to differ: the shared endpoint's role reads each component's weights
    # (its default policy, and the WeightsPrefix policies of the models, attached to it)
    template = json.loads(templates[0])
    (role,) = [
        k
        for k, v in template["Resources"].items()
        if k.startswith("SharedRole") and v["Type"] == "AWS::IAM::Role"
    ]
    statements = json.dumps(
        [
            resource["Properties"]["PolicyDocument"]["Statement"]
            for resource in template["Resources"].values()
            if resource["Type"] == "AWS::IAM::Policy"
            and {"Ref": role} in resource["Properties"]["Roles"]
        ]
    )
    for read in ("my-weights/llama-3.1-8b/*", "other-weights/qwen2.5-7b/*", "support.tar.gz"):
        assert read in statements


def test_each_model_renders_the_models_of_its_placements_in_its_own_scope(
    templates: list[str],
) -> None:
    # THEN every SageMaker Model is its model's, one per placement served, whether its hosts'
    # paths sort before the model's (Endpoint, Chat, Coder) or after it (Zeta)
    template = json.loads(templates[0])
    models = {  # the logical id without its hash: the Model's path under the stack
        logical_id[:-8]: logical_id
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::SageMaker::Model"
    }
    assert sorted(models) == [
        "LlamaG52xlarge",
        "LlamaP38xlarge2Devices",
        "QwenG52xlarge",
        "QwenP38xlarge2Devices",
    ]
    # AND each host names its model's Model for its placement
    named = {
        logical_id: resource["Properties"]["ProductionVariants"][0]["ModelName"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::SageMaker::EndpointConfig"
        and "ModelName" in resource["Properties"]["ProductionVariants"][0]
    }
    assert sorted(named.values(), key=json.dumps) == [
        {"Fn::GetAtt": [models["LlamaG52xlarge"], "ModelName"]},
        {"Fn::GetAtt": [models["QwenG52xlarge"], "ModelName"]},
    ]
