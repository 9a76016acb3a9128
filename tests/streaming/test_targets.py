"""StreamingInvoker(targets=[...]): the routing table it writes for the runtime, and the IAM it
gets, for endpoints, components and endpoints deployed elsewhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import (
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    Variant,
)
from tests.matrix.builders import G5, G5_4GPU, LLAMA3, MISTRAL


def _model(stack: Stack, id: str, hub_id: str = LLAMA3, **props: Any) -> LlmModel:
    props.setdefault("instance_type", G5)
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(hub_id, needs_token=False),
        engine=Engine.tgi(),
        **props,
    )


def _env(template: Template) -> dict[str, Any]:
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return variables


@pytest.fixture(scope="module")
def gateway(new_stack: Callable[..., Stack]) -> tuple[StreamingInvoker, Template]:
    # GIVEN an A/B endpoint, a component and an endpoint deployed elsewhere, behind one URL
    stack = new_stack()
    ab = LlmEndpoint(
        stack,
        "AB",
        variants=[
            Variant(model=_model(stack, "Llama"), weight=50),
            Variant(model=_model(stack, "Mistral", MISTRAL), weight=50),
        ],
        served_model_name="assistant",
    )
    shared = InferenceComponentEndpoint(stack, "Shared", instance_type=G5_4GPU)
    coder = InferenceComponent(
        stack,
        "Coder",
        endpoint=shared,
        model=_model(stack, "CoderModel", instance_type=G5_4GPU),
        accelerators=1,
        min_memory_mib=1024,
        served_model_name="coder",
    )
    legacy = LlmEndpoint.from_endpoint_attributes(
        stack, "Legacy", endpoint_name="Legacy-Endpoint", engine=Engine.lmi()
    )
    invoker = StreamingInvoker(stack, "Gateway", targets=[ab, coder, legacy])
    return invoker, Template.from_stack(stack)


def test_several_targets_become_one_route_each_in_order(
    gateway: tuple[StreamingInvoker, Template],
) -> None:
    invoker, template = gateway
    env = _env(template)
    for single in ("ENDPOINT_NAME", "MODEL_NAME", "STREAM_FORMAT", "INFERENCE_COMPONENT_NAME"):
        assert single not in env
    # ROUTES is JSON whose endpoint names CloudFormation fills in: read it back with markers
    parts = env["ROUTES"]["Fn::Join"][1]
    text = "".join(p if isinstance(p, str) else "<endpoint>" for p in parts)
    routes = json.loads(text)
    assert routes == [
        {
            "model": "assistant",
            "endpoint": "<endpoint>",
            "stream_format": "openai",
            "request_format": "messages",
            "tools": True,  # TGI serves tools for any model (grammar)
            "engine": "tgi",  # both variants' engine: the fields TGI honours pass
            "vision": False,  # the model table knows both as text-only: images get a 400
            "variants": ["Llama-g5-2xlarge", "Mistral-g5-2xlarge"],
        },
        {
            "model": "coder",
            "endpoint": "<endpoint>",
            "stream_format": "openai",
            "request_format": "messages",
            "tools": True,
            "engine": "tgi",
            "vision": False,
            "component": invoker.targets[1].inference_component_name,
        },
        {
            "model": "Legacy-Endpoint",
            "endpoint": "Legacy-Endpoint",
            "stream_format": "lmi_jsonlines",
            "request_format": "messages",
            "tools": False,  # LMI's vLLM, model not known: no parser, so off
            # the engine it was imported with: the fields LMI's vLLM honours pass
            "engine": "lmi-vllm",
        },
    ]
    assert invoker.target is invoker.targets[0]


def test_the_function_may_invoke_exactly_its_targets(
    gateway: tuple[StreamingInvoker, Template],
) -> None:
    invoker, template = gateway
    stack = Stack.of(invoker)
    role = stack.resolve(invoker.role.node.default_child.logical_id)  # type: ignore[union-attr]
    statements = [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if "sagemaker:InvokeEndpoint" in s["Action"]
    ]
    (invoke,) = statements
    ab, coder, legacy = invoker.targets
    expected = [
        ab.endpoint_arn,  # type: ignore[attr-defined]
        coder.endpoint.endpoint_arn,  # type: ignore[attr-defined]
        coder.inference_component_arn,  # type: ignore[attr-defined]
        legacy.endpoint_arn,  # type: ignore[attr-defined]
    ]
    assert sorted(map(json.dumps, invoke["Resource"])) == sorted(
        json.dumps(stack.resolve(arn)) for arn in expected
    )
    assert "endpoint/legacy-endpoint" in json.dumps(invoke["Resource"])  # SageMaker lowers ARNs


def test_one_target_in_a_list_synthesizes_as_target_does(
    new_stack: Callable[..., Stack],
) -> None:
    envs = []
    for form in ("target", "targets"):
        stack = new_stack()
        endpoint = LlmEndpoint(stack, "Endpoint", model=_model(stack, "Model"))
        kwargs: dict[str, Any] = (
            {"target": endpoint} if form == "target" else {"targets": [endpoint]}
        )
        StreamingInvoker(stack, "Stream", **kwargs)
        envs.append(_env(Template.from_stack(stack)))
    assert envs[0] == envs[1]
    assert envs[0]["MODEL_NAME"] == LLAMA3 and "ROUTES" not in envs[0]


def test_each_target_s_max_total_tokens_reaches_the_runtime(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN one model with max_total_tokens and one without (its engine's own default)
    stack = new_stack()
    limited = LlmEndpoint(stack, "Limited", model=_model(stack, "L", max_total_tokens=4096))
    open_ended = LlmEndpoint(stack, "Open", model=_model(stack, "O", MISTRAL))
    StreamingInvoker(stack, "One", target=limited)
    StreamingInvoker(stack, "Two", targets=[limited, open_ended])
    functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
    envs = [f["Properties"]["Environment"]["Variables"] for f in functions.values()]
    (single,) = [env for env in envs if "ROUTES" not in env]
    (routed,) = [env for env in envs if "ROUTES" in env]
    # THEN one target's limit is MAX_TOTAL_TOKENS, and each route carries its own, if known
    assert single["MAX_TOTAL_TOKENS"] == "4096"
    parts = routed["ROUTES"]["Fn::Join"][1]
    routes = json.loads("".join(p if isinstance(p, str) else "<endpoint>" for p in parts))
    assert [r.get("max_total_tokens") for r in routes] == [4096, None]
