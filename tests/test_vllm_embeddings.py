"""Embedding models on ``Engine.vllm()`` (vLLM's pooling runner): how the library knows the
model is an embedding model (the packaged table, or ``embedding=True``), the env it derives,
and the route the invoker gets. ``Engine.sglang()`` serves chat models only (SGLang's
``/invocations`` takes chat requests alone). The bad inputs are rows of the validation matrix
(``engine-*-embedding*``, ``model-env-*-embedding*``); ``make test-engines`` serves such a
model on a real vLLM."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, StreamingInvoker
from constructs_llm.contract import ModelKind, RequestFormat
from tests.matrix.builders import G5, bucket

QWEN_EMBED = "Qwen/Qwen3-Embedding-0.6B"  # a Matryoshka embedding model of the table
QWEN3 = "Qwen/Qwen3-8B"


def _synth(
    stack: Stack, engine: Engine, source: ModelSource, **props: Any
) -> tuple[LlmModel, dict[str, Any], dict[str, Any]]:
    """The model, its container env and the invoker's Lambda env."""
    model = LlmModel(stack, "Model", source=source, engine=engine, instance_type=G5, **props)
    endpoint = LlmEndpoint(stack, "Endpoint", model=model)
    StreamingInvoker(stack, "Invoker", target=endpoint)
    template = Template.from_stack(stack)
    (resource,) = template.find_resources("AWS::SageMaker::Model").values()
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    return (
        model,
        resource["Properties"]["PrimaryContainer"]["Environment"],
        function["Properties"]["Environment"]["Variables"],
    )


def test_an_embedding_model_of_the_table_is_served_as_one(
    new_stack: Callable[..., Stack],
) -> None:
    model, env, lambda_env = _synth(
        new_stack(), Engine.vllm(), ModelSource.hugging_face(QWEN_EMBED), max_total_tokens=512
    )
    assert env["SM_VLLM_RUNNER"] == "pooling"
    assert not [k for k in env if "TOOL" in k or "REASONING" in k]
    assert model.engine.model_kind is ModelKind.EMBEDDING
    assert model.engine.request_format is RequestFormat.EMBED
    # the invoker serves it on POST /v1/embeddings, with the table's dimensions; the route
    # names vLLM, so the runtime sends OpenAI's embeddings body (vLLM refuses TEI's)
    (route,) = json.loads(_joined(lambda_env["ROUTES"]))
    assert route["request_format"] == "embed"
    assert route["engine"] == "vllm"
    assert (route["dimensions"], route["min_dimensions"]) == (1024, 32)


def _joined(value: Any) -> str:
    """ROUTES with its endpoint reference left as a placeholder."""
    if isinstance(value, str):
        return value
    separator, parts = value["Fn::Join"]
    return str(separator).join(p if isinstance(p, str) else "endpoint" for p in parts)


def test_embedding_true_serves_a_model_the_table_does_not_know(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    model, env, _ = _synth(stack, Engine.vllm(embedding=True), ModelSource.s3(bucket(stack), "e/"))
    assert env["SM_VLLM_RUNNER"] == "pooling"
    assert model.engine.model_kind is ModelKind.EMBEDDING


def test_a_chat_model_keeps_its_engine_unchanged(new_stack: Callable[..., Stack]) -> None:
    engine = Engine.vllm()
    model, env, _ = _synth(
        new_stack(), engine, ModelSource.hugging_face(QWEN3), max_total_tokens=4096
    )
    assert model.engine is engine
    assert "SM_VLLM_RUNNER" not in env
    assert model.engine.model_kind is ModelKind.CHAT


def test_an_embedding_engine_calls_no_tools_and_parses_no_reasoning() -> None:
    engine = Engine.vllm(embedding=True)
    assert not engine.tool_calling(family="qwen3").served
    assert "embedding=True" in engine.tool_calling(family="qwen3").reason
    assert engine.reasoning_parsing(family="qwen3").parser is None


def test_vllm_sizes_an_embedding_batch_by_its_batched_tokens() -> None:
    assert Engine.vllm(embedding=True, max_num_batched_tokens=8192).batch_tokens == 8192
    assert Engine.vllm(max_num_batched_tokens=8192).batch_tokens is None  # a chat model


def test_sglang_serves_chat_models_only(new_stack: Callable[..., Stack]) -> None:
    engine = Engine.sglang()
    assert engine.for_model_kind(ModelKind.EMBEDDING) is engine
    assert engine.model_kind is ModelKind.CHAT
