"""The template does not depend on the order the user creates constructs in: models, endpoints,
inference components, adapters, invokers and dashboards built in several orders (each
construct keeping its id) synthesize to the same template."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
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


def _bucket(stack: Stack, made: dict[str, Any]) -> None:
    made["bucket"] = s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")
    made["key"] = kms.Key(stack, "VolumeKey", enable_key_rotation=True)


def _llama(stack: Stack, made: dict[str, Any]) -> None:
    made["llama"] = LlmModel(
        stack,
        "Llama",
        source=ModelSource.hugging_face("meta-llama/Llama-3.1-8B-Instruct", needs_token=False),
        engine=Engine.vllm(),
        max_total_tokens=8192,
        env={"SM_VLLM_ENABLE_LORA": "true", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"},
    )


def _qwen(stack: Stack, made: dict[str, Any]) -> None:
    made["qwen"] = LlmModel(
        stack,
        "Qwen",
        source=ModelSource.s3(made["bucket"], "qwen2.5-7b/", model_id="Qwen/Qwen2.5-7B-Instruct"),
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
        "support-bot", source=ModelSource.s3_archive(made["bucket"], "adapters/support.tar.gz")
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


ORDERS: dict[str, list[Step]] = {
    "as-written": [
        _bucket,
        _llama,
        _qwen,
        _endpoint,
        _shared,
        _component("chat", "llama"),
        _component("coder", "qwen"),
        _adapter,
        _invoker,
        _dashboard,
    ],
    "components-first": [
        _bucket,
        _qwen,
        _llama,
        _shared,
        _component("coder", "qwen"),
        _component("chat", "llama"),
        _adapter,
        _endpoint,
        _invoker,
        _dashboard,
    ],
    "adapter-last": [
        _bucket,
        _llama,
        _shared,
        _component("chat", "llama"),
        _endpoint,
        _qwen,
        _component("coder", "qwen"),
        _invoker,
        _dashboard,
        _adapter,
    ],
}


def _synth(steps: list[Step]) -> dict[str, Any]:
    app = App(context=cdk_context())
    stack = Stack(app, "Order")
    made: dict[str, Any] = {}
    for step in steps:
        step(stack, made)
    template = dict(Template.from_stack(stack).to_json())
    return template


@pytest.fixture(scope="module")
def templates() -> dict[str, str]:
    return {name: json.dumps(_synth(steps), sort_keys=True) for name, steps in ORDERS.items()}


@pytest.mark.parametrize("pair", list(itertools.combinations(ORDERS, 2)), ids="-vs-".join)
def test_the_template_does_not_depend_on_construction_order(
    templates: dict[str, str], pair: tuple[str, str]
) -> None:
    first, second = pair
    assert templates[first] == templates[second]
