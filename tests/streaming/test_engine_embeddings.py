"""Embedding models on vLLM and SGLang: the body each engine takes on SageMaker's
``/invocations``, chosen by the route's engine; TEI keeps its own."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from constructs_llm.contract import EngineName, RequestFormat
from constructs_llm.streaming.runtime.routing import Route
from tests.streaming.conftest import ENDPOINT, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.support.fake_sagemaker import FakeSageMaker
from tests.support.tei_model import TeiModel
from tests.support.vllm_embedder import VllmEmbedder


def route(model: str, engine: EngineName | None, *, min_dimensions: int | None = None) -> Route:
    return Route(
        model=model,
        endpoint_name=ENDPOINT,
        request_format=RequestFormat.EMBED,
        engine=engine,
        dimensions=8,
        min_dimensions=min_dimensions,
    )


def sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


@pytest.fixture
def vllm(fake: FakeSageMaker) -> Iterator[VllmEmbedder]:
    model = VllmEmbedder(dimensions=8)
    fake.responder = model.responder
    yield model


def test_a_vllm_embedding_model_gets_openai_s_body_and_its_answer_comes_back(
    start_runtime: StartRuntime, vllm: VllmEmbedder
) -> None:
    runtime = start_runtime(routes=(route("embed", EngineName.VLLM), route("other", None)))
    texts = ["first passage", "the second one"]
    # WHEN the unchanged openai SDK asks (base64, its default, and floats)
    encoded = sdk(runtime).embeddings.create(model="embed", input=texts)
    floats = sdk(runtime).embeddings.create(model="embed", input=texts, encoding_format="float")
    # THEN vLLM got OpenAI's body, and every vector comes back in input order
    assert vllm.bodies[0] == {"input": texts, "encoding_format": "float"}
    for answer in (encoded, floats):
        for item, text in zip(answer.data, texts, strict=True):
            assert item.embedding == pytest.approx(vllm.embed(text), abs=1e-6)
        assert [item.index for item in answer.data] == [0, 1]
    # AND the usage is vLLM's own count
    assert floats.usage.prompt_tokens == 5


def test_dimensions_reach_vllm(start_runtime: StartRuntime, vllm: VllmEmbedder) -> None:
    runtime = start_runtime(routes=(route("embed", EngineName.VLLM, min_dimensions=2),))
    answer = sdk(runtime).embeddings.create(
        model="embed", input="text", dimensions=4, encoding_format="float"
    )
    assert vllm.bodies[0]["dimensions"] == 4
    assert answer.data[0].embedding == pytest.approx(vllm.embed("text", 4), abs=1e-6)


def test_tei_s_body_would_fail_on_vllm_which_is_why_the_engine_picks_it(
    start_runtime: StartRuntime, vllm: VllmEmbedder
) -> None:
    # GIVEN a vLLM model whose route does not name its engine (the TEI body is sent)
    runtime = start_runtime(routes=(route("embed", None),))
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(runtime).embeddings.create(model="embed", input="text")
    assert "use 'use_activation' instead" in refused.value.message


def test_tei_keeps_its_own_body(start_runtime: StartRuntime, fake: FakeSageMaker) -> None:
    tei = TeiModel(dimensions=8)
    fake.responder = tei.responder
    runtime = start_runtime(routes=(route("embed", EngineName.TEI),))
    answer = sdk(runtime).embeddings.create(model="embed", input=["a b"], encoding_format="float")
    assert tei.bodies == [{"inputs": ["a b"], "normalize": True}]
    assert answer.data[0].embedding == pytest.approx(tei.embed("a b"), abs=1e-6)
    assert answer.usage.prompt_tokens == 0  # TEI's count never reaches the runtime


def test_an_sglang_embedding_model_is_refused_naming_why_before_sagemaker(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(routes=(route("embed", EngineName.SGLANG),))
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(runtime).embeddings.create(model="embed", input="text")
    body = json.loads(refused.value.response.text)["error"]
    assert (body["param"], body["code"]) == ("model", "unsupported_model")
    assert "chat completion requests only on /invocations" in body["message"]
    assert fake.requests == []
