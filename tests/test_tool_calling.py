"""Tool calling at synth: the env each engine derives for a model family's parser, what the
model and its targets tell the invoker, and user env checked against it. The bad inputs are
rows of the validation matrix (``engine-*-tool*``, ``model-env-*-tool*``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import (
    Engine,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Placement,
    StreamingInvoker,
    ToolCalling,
    Variant,
)
from constructs_llm.engines.context import EngineContext
from constructs_llm.hardware.instance_type import InstanceType
from tests.matrix.builders import G5, bucket, custom

LLAMA31 = "meta-llama/Llama-3.1-8B-Instruct"
QWEN = "Qwen/Qwen2.5-7B-Instruct"
PHI3 = "microsoft/Phi-3-mini-4k-instruct"
TOOL_KEYS = ("ENABLE_AUTO_TOOL_CHOICE", "TOOL_CALL_PARSER", "GRAMMAR")


def _ctx(family: str | None) -> EngineContext:
    return EngineContext(
        placement=Placement(InstanceType(G5)), model_location="org/model", model_family=family
    )


def _tool_env(engine: Engine, family: str | None) -> dict[str, str]:
    env = engine.derive_env(_ctx(family))
    return {k: v for k, v in env.items() if any(t in k for t in TOOL_KEYS)}


# -- what each engine derives ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "family", "expected", "served"),
    [
        # vLLM DLC: a bare --enable-auto-tool-choice (empty value) and the family's parser
        (
            Engine.vllm(),
            "llama-3.1",
            {"SM_VLLM_ENABLE_AUTO_TOOL_CHOICE": "", "SM_VLLM_TOOL_CALL_PARSER": "llama3_json"},
            True,
        ),
        (
            Engine.vllm(),
            "qwen3",
            {"SM_VLLM_ENABLE_AUTO_TOOL_CHOICE": "", "SM_VLLM_TOOL_CALL_PARSER": "hermes"},
            True,
        ),
        # SGLang DLC: the parser only (no auto-choice flag)
        (Engine.sglang(), "qwen2.5", {"SM_SGLANG_TOOL_CALL_PARSER": "qwen25"}, True),
        (Engine.sglang(), "mistral-7b-v0.3", {"SM_SGLANG_TOOL_CALL_PARSER": "mistral"}, True),
        # LMI with vLLM: LMI's option names, vLLM's parser names
        (
            Engine.lmi(),
            "qwen2.5",
            {"OPTION_ENABLE_AUTO_TOOL_CHOICE": "true", "OPTION_TOOL_CALL_PARSER": "hermes"},
            True,
        ),
        # no parser for the family, tool calling off, TensorRT-LLM, TGI NeuronX: nothing to
        # set and nothing served
        (Engine.vllm(), "phi-3", {}, False),
        (Engine.vllm(), None, {}, False),
        (Engine.vllm(tool_calls=False), "llama-3.1", {}, False),
        (Engine.lmi(backend="trtllm"), "qwen2.5", {}, False),
        (Engine.tgi_neuronx(), "llama-3.1", {}, False),
        # TGI: nothing to set, yet served (its grammar constrains the output to the tools)
        (Engine.tgi(), "llama-3.1", {}, True),
        (Engine.tgi(), None, {}, True),
        # a named parser serves a model the table does not know, and overrides the family's
        (
            Engine.sglang(tool_call_parser="pythonic"),
            None,
            {"SM_SGLANG_TOOL_CALL_PARSER": "pythonic"},
            True,
        ),
        (
            Engine.vllm(tool_call_parser="pythonic"),
            "llama-3.2",
            {"SM_VLLM_ENABLE_AUTO_TOOL_CHOICE": "", "SM_VLLM_TOOL_CALL_PARSER": "pythonic"},
            True,
        ),
    ],
)
def test_each_engine_derives_the_tool_env_of_the_family_s_parser(
    engine: Engine, family: str | None, expected: dict[str, str], served: bool
) -> None:
    assert _tool_env(engine, family) == expected
    assert engine.tool_calling(family=family).served is served


def test_tgi_serves_tools_for_any_model_unless_its_grammar_is_off() -> None:
    tgi = Engine.tgi()
    assert tgi.tool_calling(family=None) == ToolCalling(served=True)
    for value in ("true", "1", "TRUE"):
        off = tgi.tool_calling(user_env={"DISABLE_GRAMMAR_SUPPORT": value})
        assert not off.served and "DISABLE_GRAMMAR_SUPPORT" in off.reason
    for value in ("false", "0", ""):
        assert tgi.tool_calling(user_env={"DISABLE_GRAMMAR_SUPPORT": value}).served
    assert not Engine.tgi(tool_calls=False).tool_calling().served


def test_engines_without_tools_say_why() -> None:
    assert "vLLM backend only" in Engine.lmi(backend="trtllm").tool_calling().reason
    assert "does not serve tool calls" in Engine.tgi_neuronx().tool_calling().reason
    declared = custom("nvidia").tool_calling()
    assert not declared.served and "tool_calls=True" in declared.reason
    assert custom("nvidia", tool_calls=True).tool_calling().served


# -- the model and its targets -------------------------------------------------------------------


def _model(stack: Stack, id: str, source: ModelSource, engine: Engine, **props: Any) -> LlmModel:
    props.setdefault("max_total_tokens", 4096)
    return LlmModel(stack, id, source=source, engine=engine, instance_type=G5, **props)


def _lambda_env(stack: Stack) -> dict[str, Any]:
    (function,) = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return variables


def test_the_model_s_family_comes_from_its_hub_id_or_its_declared_s3_copy(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    hub = _model(stack, "Hub", ModelSource.hugging_face(QWEN), Engine.vllm())
    copy = _model(
        stack, "Copy", ModelSource.s3(bucket(stack), "qwen/", model_id=QWEN), Engine.lmi()
    )
    assert hub.tool_calling == ToolCalling(served=True, parser="hermes")
    assert copy.tool_calling == ToolCalling(served=True, parser="hermes")
    assert copy.bind().environment["OPTION_TOOL_CALL_PARSER"] == "hermes"
    assert hub.bind().environment["SM_VLLM_TOOL_CALL_PARSER"] == "hermes"


@pytest.mark.parametrize(
    ("hub_id", "engine", "tools"),
    [
        (LLAMA31, Engine.vllm(), "on"),
        (PHI3, Engine.lmi(), "off"),  # Phi-3: no tool-call format, so no parser
        (PHI3, Engine.tgi(), "on"),  # TGI's grammar serves any model
        (LLAMA31, Engine.vllm(tool_calls=False), "off"),
    ],
)
def test_one_target_tells_the_runtime_tools_on_or_off(
    new_stack: Callable[..., Stack], hub_id: str, engine: Engine, tools: str
) -> None:
    stack = new_stack()
    model = _model(stack, "Model", ModelSource.hugging_face(hub_id, needs_token=False), engine)
    StreamingInvoker(stack, "Stream", target=LlmEndpoint(stack, "Endpoint", model=model))
    assert _lambda_env(stack)["TOOLS"] == tools


def test_an_endpoint_serves_tools_only_if_every_production_variant_does(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    llama = _model(
        stack, "Llama", ModelSource.hugging_face(LLAMA31, needs_token=False), Engine.vllm()
    )
    phi = _model(stack, "Phi", ModelSource.hugging_face(PHI3), Engine.vllm())
    mixed = LlmEndpoint(stack, "Mixed", variants=[Variant(model=llama), Variant(model=phi)])
    shadowed = LlmEndpoint(
        stack, "Shadowed", variants=[Variant(model=llama)], shadow=Variant(model=phi)
    )
    assert not mixed.tool_calls
    assert shadowed.tool_calls  # the shadow's answers never reach the client


def test_an_imported_endpoint_serves_tools_only_as_declared(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    unknown = LlmEndpoint.from_endpoint_name(stack, "Unknown", "unknown-endpoint")
    tgi = LlmEndpoint.from_endpoint_attributes(
        stack, "Tgi", endpoint_name="tgi", engine=Engine.tgi()
    )
    vllm = LlmEndpoint.from_endpoint_attributes(
        stack, "Vllm", endpoint_name="vllm", engine=Engine.vllm()
    )
    named = LlmEndpoint.from_endpoint_attributes(
        stack, "Named", endpoint_name="named", engine=Engine.vllm(tool_call_parser="hermes")
    )
    declared = LlmEndpoint.from_endpoint_attributes(
        stack, "Declared", endpoint_name="declared", tool_calls=True
    )
    assert [t.tool_calls for t in (unknown, tgi, vllm, named, declared)] == [
        False,
        True,
        False,  # vLLM with a model the library cannot see: no parser known
        True,
        True,
    ]
