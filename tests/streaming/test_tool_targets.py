"""Tool calls end to end as synthesized: an invoker in front of a model whose engine parses tool
calls (Llama 3.1 on the vLLM DLC) and one whose engine cannot (Phi-3 on LMI: no tool-call
format), with the runtime configured exactly as the template's Lambda environment says, the
real ``openai`` SDK as the client and the fake SageMaker replaying vLLM's tool-call stream."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Template

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, StreamingInvoker
from constructs_llm.streaming.runtime.settings import Settings
from tests.conftest import cdk_context
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.test_gateway_example import _resolve
from tests.streaming.test_tool_calls import ASK, FIXTURES, WEATHER
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

ENDPOINTS = {"Llama": "llama-endpoint", "Phi": "phi-endpoint"}  # as CloudFormation names them


@pytest.fixture(scope="module")
def synthesized() -> tuple[Stack, Template]:
    stack = Stack(App(context=cdk_context()), "ToolTargets")
    targets = []
    for name, hub_id, engine in (
        ("Llama", "meta-llama/Llama-3.1-8B-Instruct", Engine.vllm()),
        ("Phi", "microsoft/Phi-3-mini-4k-instruct", Engine.lmi()),
    ):
        model = LlmModel(
            stack,
            f"{name}Model",
            source=ModelSource.hugging_face(hub_id, needs_token=False),
            engine=engine,
            instance_type="ml.g5.2xlarge",
            max_total_tokens=4096,
        )
        targets.append(LlmEndpoint(stack, name, model=model, served_model_name=name.lower()))
    StreamingInvoker(stack, "Api", targets=targets)
    return stack, Template.from_stack(stack)


@pytest.fixture(scope="module")
def lambda_env(synthesized: tuple[Stack, Template]) -> dict[str, str]:
    stack, template = synthesized
    names = {
        stack.resolve(endpoint.resource.logical_id): ENDPOINTS[endpoint.node.id]  # type: ignore[attr-defined]
        for endpoint in stack.node.children
        if isinstance(endpoint, LlmEndpoint)
    }
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    variables = function["Properties"]["Environment"]["Variables"]
    return {k: str(_resolve(v, names)) for k, v in variables.items()}


@pytest.fixture
def api(start_runtime: StartRuntime, lambda_env: dict[str, str]) -> Runtime:
    settings = Settings.from_env(lambda_env)
    return start_runtime(routes=settings.routes)


def _sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def test_the_template_turns_vllm_tool_parsing_on_and_tells_the_runtime_per_route(
    synthesized: tuple[Stack, Template], lambda_env: dict[str, str]
) -> None:
    _, template = synthesized
    envs = [
        m["Properties"]["PrimaryContainer"]["Environment"]
        for m in template.find_resources("AWS::SageMaker::Model").values()
    ]
    llama = next(e for e in envs if "SM_VLLM_MODEL" in e)
    phi = next(e for e in envs if "OPTION_ENTRYPOINT" in e)
    assert (llama["SM_VLLM_ENABLE_AUTO_TOOL_CHOICE"], llama["SM_VLLM_TOOL_CALL_PARSER"]) == (
        "",
        "llama3_json",
    )
    assert not any("TOOL" in key for key in phi)
    routes = json.loads(lambda_env["ROUTES"])
    assert [(r["model"], r["endpoint"], r["tools"]) for r in routes] == [
        ("llama", "llama-endpoint", True),
        ("phi", "phi-endpoint", False),
    ]


@pytest.mark.parametrize("stream", [True, False])
def test_the_openai_sdk_gets_tool_calls_from_the_target_with_tools(
    api: Runtime, fake: FakeSageMaker, stream: bool
) -> None:
    # GIVEN vLLM answering with a tool call, cut into 9-byte parts
    fake.enqueue(Scenario(parts=engine_streams.rechunk([FIXTURES["vllm_tool_calls"].raw], 9)))
    # WHEN the openai SDK asks the model with tools
    client = _sdk(api)
    if stream:
        chunks = list(
            client.chat.completions.create(
                model="llama", messages=ASK, tools=[WEATHER], stream=True
            )
        )
        calls = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
        names = [d.function.name for d in calls if d.function and d.function.name]
        finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
    else:
        reply = client.chat.completions.create(model="llama", messages=ASK, tools=[WEATHER])
        message_calls: Any = reply.choices[0].message.tool_calls or []
        names = [c.function.name for c in message_calls]
        finish = reply.choices[0].finish_reason
    # THEN the call comes back, and the Llama endpoint received the tools as sent
    assert names == ["get_weather"] and finish == "tool_calls"
    (sent,) = fake.requests
    assert sent.endpoint_name == "llama-endpoint"
    assert sent.json()["tools"] == [WEATHER]


def test_the_target_without_tools_refuses_them_and_still_answers_without(
    api: Runtime, fake: FakeSageMaker
) -> None:
    client = _sdk(api)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="phi", messages=ASK, tools=[WEATHER])
    assert info.value.code == "unsupported_parameter"
    assert "tools" in str(info.value) and "TOOLS=off" in str(info.value)
    assert fake.requests == []  # refused before SageMaker is called
    fake.enqueue(Scenario(parts=engine_streams.lmi_jsonlines(["Sunny", "."])))
    reply = client.chat.completions.create(model="phi", messages=ASK)
    assert reply.choices[0].message.content == "Sunny."
    assert fake.requests[0].endpoint_name == "phi-endpoint"
