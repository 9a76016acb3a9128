"""The model-gateway example end to end: the routing table its invoker synthesizes, read by the
runtime exactly as Lambda would hand it over (CloudFormation's references filled in), serving
the real ``openai`` SDK from the fake SageMaker; plus its adapter component and IAM."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import openai
import pytest
from aws_cdk import App
from aws_cdk.assertions import Match, Template

from constructs_llm.streaming.runtime.settings import Settings
from stacks.model_gateway import ModelGatewayStack
from tests.conftest import cdk_context
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.test_server import USER
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, ReceivedRequest, Scenario

ENDPOINT = "model-gateway-endpoint"  # what CloudFormation names the endpoint at deploy time


@pytest.fixture(scope="module")
def synthesized() -> tuple[ModelGatewayStack, Template]:
    stack = ModelGatewayStack(App(context=cdk_context()), "ModelGateway")
    return stack, Template.from_stack(stack)


def _resolve(value: Any, names: dict[str, str]) -> Any:
    """A template value as CloudFormation resolves it: Fn::Join, and GetAtt/Ref of ``names``."""
    if isinstance(value, dict) and len(value) == 1:
        ((fn, arg),) = value.items()
        if fn == "Fn::Join":
            return arg[0].join(str(_resolve(part, names)) for part in arg[1])
        if fn == "Fn::GetAtt":
            return names[arg[0]]
        if fn == "Ref":
            return names[arg]
    return value


def _components(template: Template) -> dict[str, dict[str, Any]]:
    """Each inference component's properties, by its InferenceComponentName."""
    found = template.find_resources("AWS::SageMaker::InferenceComponent")
    return {r["Properties"]["InferenceComponentName"]: r["Properties"] for r in found.values()}


@pytest.fixture(scope="module")
def lambda_env(synthesized: tuple[ModelGatewayStack, Template]) -> dict[str, str]:
    _, template = synthesized
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    (endpoint,) = template.find_resources("AWS::SageMaker::Endpoint")
    variables = function["Properties"]["Environment"]["Variables"]
    return {k: str(_resolve(v, {endpoint: ENDPOINT})) for k, v in variables.items()}


# What each component's engine streams: the vLLM DLC and its adapter OpenAI SSE, LMI JSON lines.
FRAMING: dict[str, Callable[[list[str]], list[bytes]]] = {
    "llama": engine_streams.openai,
    "support-bot": engine_streams.openai,
    "qwen": engine_streams.lmi_jsonlines,
}


@pytest.fixture
def gateway(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    lambda_env: dict[str, str],
    synthesized: tuple[ModelGatewayStack, Template],
) -> Runtime:
    stack, _ = synthesized
    names = {
        stack.llama.inference_component_name: "llama",
        stack.qwen.inference_component_name: "qwen",
        stack.support_bot.inference_component_name: "support-bot",
    }

    def answer(request: ReceivedRequest) -> Scenario:
        served = names[request.inference_component or ""]
        return Scenario(parts=FRAMING[served]([f"I am {served}", "."]))

    fake.responder = answer
    settings = Settings.from_env(lambda_env)
    return start_runtime(
        routes=settings.routes, upstream_read_timeout=settings.upstream_read_timeout
    )


def _client(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def test_the_invoker_writes_one_route_per_model(lambda_env: dict[str, str]) -> None:
    assert "ENDPOINT_NAME" not in lambda_env and "MODEL_NAME" not in lambda_env
    routes = json.loads(lambda_env["ROUTES"])
    assert [(r["model"], r["endpoint"]) for r in routes] == [
        ("llama", ENDPOINT),
        ("qwen", ENDPOINT),
        ("support-bot", ENDPOINT),
    ]
    # each keeps its engine's formats; the adapter has its base's
    assert [r["stream_format"] for r in routes] == ["openai", "lmi_jsonlines", "openai"]
    # AND all three serve tools: Llama's parser on the vLLM DLC, hermes for Qwen on LMI
    assert [r["tools"] for r in routes] == [True, True, True]
    # AND each model's max_total_tokens, so the runtime refuses a larger max_tokens itself
    assert [r["max_total_tokens"] for r in routes] == [8192, 8192, 8192]


def test_each_engine_parses_its_model_s_tool_calls(
    synthesized: tuple[ModelGatewayStack, Template],
) -> None:
    _, template = synthesized
    envs = [
        m["Properties"]["PrimaryContainer"]["Environment"]
        for m in template.find_resources("AWS::SageMaker::Model").values()
    ]
    parsers = sorted(
        (name, value) for env in envs for name, value in env.items() if "TOOL_CALL_PARSER" in name
    )
    assert parsers == [
        ("OPTION_TOOL_CALL_PARSER", "hermes"),
        ("SM_VLLM_TOOL_CALL_PARSER", "llama3_json"),
    ]


@pytest.mark.parametrize("model", ["llama", "qwen", "support-bot"])
def test_each_model_answers_by_name_from_its_own_component(
    gateway: Runtime,
    fake: FakeSageMaker,
    synthesized: tuple[ModelGatewayStack, Template],
    model: str,
) -> None:
    stack, template = synthesized
    # WHEN the openai SDK streams from the model by name
    chunks = list(_client(gateway).chat.completions.create(model=model, messages=USER, stream=True))
    # THEN that model's engine answered, labelled with the name the client asked for
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == f"I am {model}."
    assert {c.model for c in chunks} == {model}
    # AND SageMaker got the endpoint and the InferenceComponentName the template created
    component = {
        "llama": stack.llama.inference_component_name,
        "qwen": stack.qwen.inference_component_name,
        "support-bot": stack.support_bot.inference_component_name,
    }[model]
    assert component in _components(template)
    (sent,) = fake.requests
    assert (sent.endpoint_name, sent.inference_component) == (ENDPOINT, component)


def test_max_tokens_above_the_model_s_limit_is_refused_before_sagemaker(
    gateway: Runtime, fake: FakeSageMaker
) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        _client(gateway).chat.completions.create(model="qwen", messages=USER, max_tokens=8193)
    assert info.value.param == "max_tokens"
    assert "max_total_tokens (8192)" in info.value.message
    assert fake.requests == []


def test_models_lists_all_three(gateway: Runtime) -> None:
    assert [m.id for m in _client(gateway).models.list().data] == ["llama", "qwen", "support-bot"]


def test_an_unknown_model_gets_404_model_not_found(gateway: Runtime, fake: FakeSageMaker) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        _client(gateway).chat.completions.create(model="gpt-4o", messages=USER)
    assert info.value.code == "model_not_found"
    assert fake.requests == []


# -- the adapter component and the invoker's IAM in the synthesized template -------------------


def test_the_adapter_component_names_its_base_and_artifact_and_has_no_compute(
    synthesized: tuple[ModelGatewayStack, Template],
) -> None:
    stack, template = synthesized
    adapter = _components(template)[stack.support_bot.inference_component_name]
    assert adapter["Specification"] == {
        "BaseInferenceComponentName": stack.llama.inference_component_name,
        "Container": {"ArtifactUrl": "s3://llm-adapters/support-bot.tar.gz"},
    }
    assert "RuntimeConfig" not in adapter and "VariantName" not in adapter
    # created after its base, which it names by a literal
    base_id = stack.resolve(stack.llama.resource.logical_id)
    template.has_resource(
        "AWS::SageMaker::InferenceComponent",
        {
            "Properties": Match.object_like(
                {"InferenceComponentName": adapter["InferenceComponentName"]}
            ),
            "DependsOn": [base_id],
        },
    )


def _statements(template: Template, role_logical_id: str) -> list[dict[str, Any]]:
    policies = template.find_resources("AWS::IAM::Policy")
    return [
        s
        for p in policies.values()
        if {"Ref": role_logical_id} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_the_adapter_archive_is_readable_by_the_endpoint_and_its_base_model_only(
    synthesized: tuple[ModelGatewayStack, Template],
) -> None:
    stack, template = synthesized
    readers = {
        logical_id
        for logical_id in template.find_resources("AWS::IAM::Role")
        if any(
            "support-bot.tar.gz" in json.dumps(s["Resource"]) and s["Action"] == "s3:GetObject"
            for s in _statements(template, logical_id)
        )
    }
    expected = {stack.endpoint.role, stack.llama.model.role}
    assert readers == {stack.resolve(r.node.default_child.logical_id) for r in expected}  # type: ignore[union-attr]


def test_the_invoker_may_invoke_exactly_the_endpoint_and_its_three_components(
    synthesized: tuple[ModelGatewayStack, Template],
) -> None:
    stack, template = synthesized
    role = stack.resolve(stack.invoker.role.node.default_child.logical_id)  # type: ignore[union-attr]
    (invoke,) = [
        s for s in _statements(template, role) if "sagemaker:InvokeEndpoint" in s["Action"]
    ]
    components = [stack.llama.resource, stack.qwen.resource, stack.support_bot.resource]
    expected = [{"Ref": stack.resolve(stack.endpoint.resource.logical_id)}] + [
        {"Fn::GetAtt": [stack.resolve(c.logical_id), "InferenceComponentArn"]} for c in components
    ]
    assert sorted(map(json.dumps, invoke["Resource"])) == sorted(map(json.dumps, expected))
    assert invoke["Action"] == [
        "sagemaker:InvokeEndpoint",
        "sagemaker:InvokeEndpointWithResponseStream",
    ]
