"""An endpoint deployed elsewhere, fronted by an invoker: imported with its engine
(``LlmEndpoint.from_endpoint_attributes(engine=...)``), the invoker names that engine to the
runtime, so the fields the engine honours pass and an embedding model gets its engine's body;
imported without one, the runtime keeps to the fields every engine honours and TEI's body.
Each case synthesizes the invoker in-process and starts the runtime from the Lambda
environment the template gives it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import openai
import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from openai.types.chat import ChatCompletionMessageParam

from constructs_llm import Engine, LlmEndpoint, StreamingInvoker
from constructs_llm.streaming.runtime.settings import Settings
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, serving
from tests.streaming.stream_fixtures import load_fixtures
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

FIXTURES = {f.name: f for f in load_fixtures()}
USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi"}]
CHAT = "legacy-chat"
EMBEDDER = "legacy-embedder"


def _lambda_env(stack: Stack, engine: Engine | None, name: str) -> dict[str, str]:
    """The invoker's Lambda environment in front of an endpoint imported with ``engine``."""
    imported = LlmEndpoint.from_endpoint_attributes(
        stack, "Elsewhere", endpoint_name=name, engine=engine
    )
    StreamingInvoker(stack, "Stream", target=imported)
    (function,) = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    env: dict[str, str] = function["Properties"]["Environment"]["Variables"]
    return env


@pytest.fixture(scope="module")
def envs(new_stack: Callable[..., Stack]) -> dict[str, dict[str, str]]:
    """Each case's Lambda environment, synthesized once for the module."""
    return {
        "vllm-chat": _lambda_env(new_stack(), Engine.vllm(), CHAT),
        "unknown-chat": _lambda_env(new_stack(), None, CHAT),
        "vllm-embedder": _lambda_env(new_stack(), Engine.vllm(embedding=True), EMBEDDER),
        "tei-embedder": _lambda_env(new_stack(), Engine.tei(), EMBEDDER),
    }


@contextmanager
def _runtime(env: dict[str, str]) -> Iterator[Runtime]:
    """The runtime as its Lambda environment configures it, on a loopback port."""
    settings = replace(
        Settings.from_env(env), port=0, upstream_read_timeout=5.0, client_timeout=SOCKET_TIMEOUT
    )
    with serving(settings) as runtime:
        yield runtime


def _sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def test_an_import_with_its_engine_names_it_to_the_runtime(
    envs: dict[str, dict[str, str]],
) -> None:
    # THEN a chat import says ENGINE, an embedding import its route's "engine"
    assert envs["vllm-chat"]["ENGINE"] == "vllm"
    (route,) = json.loads(envs["vllm-embedder"]["ROUTES"])
    assert (route["engine"], route["request_format"]) == ("vllm", "embed")
    (route,) = json.loads(envs["tei-embedder"]["ROUTES"])
    assert route["engine"] == "tei"
    # AND an import without an engine names none: the runtime stays conservative
    assert "ENGINE" not in envs["unknown-chat"]


def test_a_field_its_engine_honours_reaches_an_imported_vllm(
    envs: dict[str, dict[str, str]], fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.rechunk([FIXTURES["vllm_chat"].raw], 7)))
    with _runtime(envs["vllm-chat"]) as runtime:
        # WHEN a client asks for vLLM's top_k and min_p through the invoker
        _sdk(runtime).chat.completions.create(
            model=CHAT, messages=USER, extra_body={"top_k": 20, "min_p": 0.05}
        )
    # THEN the imported endpoint received them
    (received,) = fake.requests
    assert received.endpoint_name == CHAT
    assert (received.json()["top_k"], received.json()["min_p"]) == (20, 0.05)


def test_an_import_without_its_engine_refuses_what_not_every_engine_honours(
    envs: dict[str, dict[str, str]], fake: FakeSageMaker
) -> None:
    # WHEN the same request goes to an endpoint imported without its engine
    with (
        _runtime(envs["unknown-chat"]) as runtime,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        _sdk(runtime).chat.completions.create(model=CHAT, messages=USER, extra_body={"top_k": 20})
    # THEN a 400 names the field, and SageMaker is not called
    assert "top_k" in str(refused.value)
    assert fake.requests == []


@pytest.mark.parametrize(
    ("case", "body"),
    [
        ("vllm-embedder", {"input": ["a", "b"], "encoding_format": "float"}),
        ("tei-embedder", {"inputs": ["a", "b"], "normalize": True}),
    ],
)
def test_an_imported_embedding_model_gets_its_engine_s_body(
    envs: dict[str, dict[str, str]], fake: FakeSageMaker, case: str, body: dict[str, Any]
) -> None:
    vllm = case.startswith("vllm")
    vectors = [[0.6, 0.8], [1.0, 0.0]]
    answer = (
        {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": 2, "total_tokens": 2},
        }
        if vllm
        else vectors
    )
    fake.enqueue(Scenario(answer=json.dumps(answer).encode()))
    with _runtime(envs[case]) as runtime:
        # WHEN a client embeds two texts through the invoker
        result = _sdk(runtime).embeddings.create(
            model=EMBEDDER, input=["a", "b"], encoding_format="float"
        )
    # THEN the imported endpoint got the body its engine takes, and the client the vectors
    (received,) = fake.requests
    assert received.json() == body
    assert [item.embedding for item in result.data] == vectors
