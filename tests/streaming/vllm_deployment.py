"""The deployment the engine harness runs: a Qwen3 chat model and a Qwen3 embedding model on
``Engine.vllm()``, each on its endpoint, behind one ``StreamingInvoker``. Synthesized in
process; what the harness runs is read from the template, so it is what users deploy: each
model's container env (the ``SM_VLLM_*`` flags vLLM starts with) and the invoker's Lambda env
(the runtime's routes), with CloudFormation's references filled in as at deploy time.

The model ids pick the rows of the packaged model table, so the library derives the parsers
and the runner for the Qwen3 family and for an embedding model; the weights vLLM loads are the
tiny crafted checkpoint of ``tests/support/tiny_model.py``, served under those ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aws_cdk import App, Stack
from aws_cdk.assertions import Template

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, StreamingInvoker
from tests.conftest import cdk_context

__all__ = ["CHAT_MODEL", "EMBEDDING_MODEL", "ENDPOINTS", "Deployment", "synthesize"]

CHAT_MODEL = "Qwen/Qwen3-8B"
EMBEDDING_MODEL = "Qwen/Qwen3-Embedding-0.6B"
#: Endpoint name -> the model it serves.
ENDPOINTS = {"qwen3-chat": CHAT_MODEL, "qwen3-embed": EMBEDDING_MODEL}
CHAT_MAX_TOTAL_TOKENS = 2048
EMBEDDING_MAX_TOTAL_TOKENS = 512
# The Lambda Web Adapter's settings (it is not part of the local runtime process).
_ADAPTER_KEYS = ("AWS_LAMBDA_EXEC_WRAPPER", "PORT")


@dataclass(frozen=True)
class Deployment:
    """What the template gives the harness.

    :param containers: each endpoint's model container env.
    :param runtime_env: the invoker's Lambda env, without the Lambda Web Adapter's keys.
    """

    containers: Mapping[str, Mapping[str, str]]
    runtime_env: Mapping[str, str]


def synthesize() -> Deployment:
    stack = Stack(App(context=cdk_context()), "VllmHarness")
    endpoints = []
    for name, model_id, limit in (
        ("qwen3-chat", CHAT_MODEL, CHAT_MAX_TOTAL_TOKENS),
        ("qwen3-embed", EMBEDDING_MODEL, EMBEDDING_MAX_TOTAL_TOKENS),
    ):
        model = LlmModel(
            stack,
            f"Model-{name}",
            source=ModelSource.hugging_face(model_id),
            engine=Engine.vllm(),
            instance_type="ml.g5.2xlarge",
            max_total_tokens=limit,
        )
        endpoints.append(LlmEndpoint(stack, f"Endpoint-{name}", model=model, endpoint_name=name))
    StreamingInvoker(stack, "Invoker", targets=endpoints)
    template = Template.from_stack(stack).to_json()
    return Deployment(containers=_containers(template), runtime_env=_runtime_env(template))


def _resources(template: Mapping[str, Any], kind: str) -> dict[str, Mapping[str, Any]]:
    found = template["Resources"].items()
    return {key: r["Properties"] for key, r in found if r["Type"] == kind}


def _containers(template: Mapping[str, Any]) -> dict[str, Mapping[str, str]]:
    models = _resources(template, "AWS::SageMaker::Model")
    configs = _resources(template, "AWS::SageMaker::EndpointConfig")
    containers = {}
    for endpoint in _resources(template, "AWS::SageMaker::Endpoint").values():
        config = configs[endpoint["EndpointConfigName"]["Fn::GetAtt"][0]]
        (variant,) = config["ProductionVariants"]
        model = models[variant["ModelName"]["Fn::GetAtt"][0]]
        containers[endpoint["EndpointName"]] = model["PrimaryContainer"]["Environment"]
    return containers


def _runtime_env(template: Mapping[str, Any]) -> dict[str, str]:
    names = {
        key: props["EndpointName"]
        for key, props in _resources(template, "AWS::SageMaker::Endpoint").items()
    }
    (function,) = _resources(template, "AWS::Lambda::Function").values()
    variables = function["Environment"]["Variables"]
    return {
        key: _filled(value, names)
        for key, value in variables.items()
        if key not in _ADAPTER_KEYS and not key.startswith("AWS_LWA_")
    }


def _filled(value: Any, endpoint_names: Mapping[str, str]) -> str:
    """A Lambda env value with CloudFormation's ``Fn::Join`` and the endpoints' ``Fn::GetAtt``
    evaluated; anything else fails, so the harness never runs on a value it misread."""
    if isinstance(value, str):
        return value
    ((function, argument),) = value.items()
    if function == "Fn::Join":
        separator, parts = argument
        return str(separator).join(_filled(part, endpoint_names) for part in parts)
    if function == "Fn::GetAtt" and argument[1] == "EndpointName":
        return endpoint_names[argument[0]]
    raise ValueError(f"the harness does not evaluate {function} in the invoker's env")
