"""Reasoning at synth: the parser each engine gets for a model family
(``data/reasoning_parsers.json``), the user's override, the env each engine derives, and the
name the invoker's chat answers carry the thinking under (``reasoning_field``). The bad inputs
are rows of the validation matrix (``engine-*-reasoning*``, ``model-env-*-reasoning*``,
``invoker-reasoning-field-*``); ``make test-engines`` starts a real vLLM with these flags."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import (
    Engine,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    ReasoningField,
    StreamingInvoker,
    catalogs,
)
from constructs_llm.engines.context import EngineContext
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement
from tests.matrix.builders import G5

QWEN3 = "Qwen/Qwen3-8B"
R1_QWEN = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"


def _ctx(family: str | None) -> EngineContext:
    return EngineContext(
        placement=Placement(InstanceType(G5)), model_location="org/model", model_family=family
    )


def _reasoning_env(engine: Engine, family: str | None) -> dict[str, str]:
    env = engine.derive_env(_ctx(family))
    return {k: v for k, v in env.items() if "REASONING" in k}


# -- the catalog: a row per model family, each parser one its engine registers ----------------


def test_every_model_family_has_a_reasoning_parser_row() -> None:
    families = {row.family for row in catalogs.models().models if row.kind == "chat"}
    assert families == set(catalogs.reasoning_parsers().families)


def test_a_row_with_a_parser_cites_where_each_engine_registers_it() -> None:
    for family, parsers in catalogs.reasoning_parsers().families.items():
        if parsers.vllm or parsers.sglang:
            assert "vllm/reasoning/__init__.py @" in parsers.source, family
            assert "reasoning_parser.py @" in parsers.source, family


@pytest.mark.parametrize(
    ("model_id", "vllm", "sglang"),
    [
        (QWEN3, "qwen3", "qwen3"),
        ("Qwen/Qwen3-30B-A3B", "qwen3", "qwen3"),
        (R1_QWEN, "deepseek_r1", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "deepseek_r1", "deepseek-r1"),
        ("Qwen/Qwen2.5-7B-Instruct", None, None),
        ("meta-llama/Llama-3.1-8B-Instruct", None, None),
    ],
)
def test_a_hub_id_finds_its_reasoning_parsers(
    model_id: str, vllm: str | None, sglang: str | None
) -> None:
    family = catalogs.model_family(model_id)
    parsers = catalogs.reasoning_parsers().families[family or ""]
    assert (parsers.vllm, parsers.sglang) == (vllm, sglang)


# -- what each engine derives ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "family", "expected"),
    [
        # the DLCs: the flag's env, the engine's own parser name
        (Engine.vllm(), "qwen3", {"SM_VLLM_REASONING_PARSER": "qwen3"}),
        (Engine.vllm(), "deepseek-r1-distill-qwen", {"SM_VLLM_REASONING_PARSER": "deepseek_r1"}),
        (Engine.sglang(), "qwen3", {"SM_SGLANG_REASONING_PARSER": "qwen3"}),
        (
            Engine.sglang(),
            "deepseek-r1-distill-llama",
            {"SM_SGLANG_REASONING_PARSER": "deepseek-r1"},
        ),
        # LMI with vLLM: LMI's options (the switch makes LMI check the name at start-up)
        (
            Engine.lmi(),
            "qwen3",
            {"OPTION_ENABLE_REASONING": "true", "OPTION_REASONING_PARSER": "qwen3"},
        ),
        # the user's parser, for a model the table does not know or over the family's
        (
            Engine.vllm(reasoning_parser="deepseek_r1"),
            None,
            {"SM_VLLM_REASONING_PARSER": "deepseek_r1"},
        ),
        (
            Engine.sglang(reasoning_parser="qwen3-thinking"),
            "qwen3",
            {"SM_SGLANG_REASONING_PARSER": "qwen3-thinking"},
        ),
        # none known, switched off, TensorRT-LLM, engines without reasoning parsers
        (Engine.vllm(), "llama-3.1", {}),
        (Engine.vllm(), None, {}),
        (Engine.vllm(reasoning=False), "qwen3", {}),
        (Engine.lmi(backend="trtllm"), "qwen3", {}),
        (Engine.tgi(), "qwen3", {}),
    ],
)
def test_each_engine_derives_the_family_parser(
    engine: Engine, family: str | None, expected: dict[str, str]
) -> None:
    assert _reasoning_env(engine, family) == expected
    assert engine.reasoning_parsing(family=family).parser == (
        next(iter(v for k, v in expected.items() if k.endswith("PARSER")), None)
    )


def test_why_no_parser_runs_names_the_fix() -> None:
    assert "reasoning_parser=" in Engine.vllm().reasoning_parsing(family="llama-3.1").reason
    off = Engine.sglang(reasoning=False).reasoning_parsing(family="qwen3")
    assert off.reason == "Engine.sglang(reasoning=False) turns reasoning parsing off"
    assert "backend='vllm'" in Engine.lmi(backend="trtllm").reasoning_parsing().reason
    assert "no reasoning parser" in Engine.tgi().reasoning_parsing().reason


def _qwen3_endpoint(stack: Stack) -> LlmEndpoint:
    """A Qwen3 reasoning model on vLLM, on an endpoint of its own."""
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(QWEN3),
        engine=Engine.vllm(),
        instance_type=G5,
        max_total_tokens=4096,
    )
    return LlmEndpoint(stack, "Endpoint", model=model)


def test_a_qwen3_model_gets_its_parser_in_the_template(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    _qwen3_endpoint(stack)
    (resource,) = Template.from_stack(stack).find_resources("AWS::SageMaker::Model").values()
    env = resource["Properties"]["PrimaryContainer"]["Environment"]
    assert env["SM_VLLM_REASONING_PARSER"] == "qwen3"
    assert env["SM_VLLM_TOOL_CALL_PARSER"] == "hermes"  # tools and reasoning side by side


def test_user_env_may_restate_the_derived_parser() -> None:
    ctx = _ctx("qwen3")
    assert Engine.vllm().validate(ctx, {"SM_VLLM_REASONING_PARSER": "qwen3"}) == []
    assert Engine.lmi().validate(ctx, {"OPTION_ENABLE_REASONING": "TRUE"}) == []


@pytest.mark.parametrize(
    ("given", "variable"),
    [
        (None, None),
        (ReasoningField.REASONING, None),
        ("reasoning_content", "reasoning_content"),
        (ReasoningField.BOTH, "both"),
    ],
)
def test_the_invoker_names_the_reasoning_field_only_when_it_is_not_the_default(
    new_stack: Callable[..., Stack], given: ReasoningField | str | None, variable: str | None
) -> None:
    # GIVEN an invoker of a reasoning model, with or without reasoning_field=
    stack = new_stack()
    StreamingInvoker(stack, "Stream", target=_qwen3_endpoint(stack), reasoning_field=given)
    # THEN the runtime is told the name only when it is not its default (reasoning)
    (function,) = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    env = function["Properties"]["Environment"]["Variables"]
    assert env.get("REASONING_FIELD") == variable
