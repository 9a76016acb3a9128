"""The rag example end to end: one URL and one key in front of a chat model (vLLM) and an
embedding model (TEI) on one inference-component endpoint. The runtime reads the routing table
and the key's secret the invoker synthesizes, exactly as Lambda hands them over (the secret in
a real Secrets Manager API, moto's server); unchanged clients embed and chat through it."""

from __future__ import annotations

import json
import uuid
from typing import Any

import openai
import pytest
from aws_cdk import App
from aws_cdk.assertions import Template

from constructs_llm.streaming.runtime.settings import Settings
from stacks.rag import CHAT_MODEL, EMBEDDING_MODEL, RagStack
from tests.conftest import cdk_context
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.test_gateway_example import _resolve
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, ReceivedRequest, Scenario
from tests.support.secrets_manager import LocalSecretsManager
from tests.support.tei_model import TeiModel

ENDPOINT = "rag-endpoint"  # what CloudFormation names the endpoint at deploy time
KEY = "sk-rag-4f1e9a7c2b8d6e0f3a5c7b9d"


@pytest.fixture(scope="module")
def synthesized() -> tuple[RagStack, Template]:
    stack = RagStack(App(context=cdk_context()), "Rag")
    return stack, Template.from_stack(stack)


@pytest.fixture(scope="module")
def lambda_env(synthesized: tuple[RagStack, Template]) -> dict[str, str]:
    _, template = synthesized
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    (endpoint,) = template.find_resources("AWS::SageMaker::Endpoint")
    variables = function["Properties"]["Environment"]["Variables"]
    return {k: str(_resolve(v, {endpoint: ENDPOINT})) for k, v in variables.items()}


@pytest.fixture
def rag(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    lambda_env: dict[str, str],
    synthesized: tuple[RagStack, Template],
    secrets: LocalSecretsManager,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Runtime, TeiModel]:
    stack, _ = synthesized
    tei = TeiModel(dimensions=16)

    def answer(request: ReceivedRequest) -> Scenario:
        if request.inference_component == stack.embedder.inference_component_name:
            return tei.responder(request)
        assert request.inference_component == stack.chat.inference_component_name
        return Scenario(parts=engine_streams.openai(["Paris", "."]))

    fake.responder = answer
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", secrets.url)
    # the secret the stack names, as an operator would create it
    secret = secrets.create(f"{lambda_env['API_KEYS_SECRET_ID']}-{uuid.uuid4().hex[:6]}", KEY)
    settings = Settings.from_env({**lambda_env, "API_KEYS_SECRET_ID": secret})
    runtime = start_runtime(
        routes=settings.routes,
        api_keys_secret_id=settings.api_keys_secret_id,
        upstream_read_timeout=settings.upstream_read_timeout,
    )
    return runtime, tei


def _client(runtime: Runtime, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key=key, timeout=SOCKET_TIMEOUT, max_retries=0
    )


def test_the_invoker_routes_a_chat_and_an_embedding_model(lambda_env: dict[str, str]) -> None:
    assert lambda_env["API_KEYS_SECRET_ID"] == "rag/api-keys"
    routes: list[dict[str, Any]] = json.loads(lambda_env["ROUTES"])
    assert [(r["model"], r["request_format"]) for r in routes] == [
        (CHAT_MODEL, "messages"),
        (EMBEDDING_MODEL, "embed"),
    ]
    assert {r["endpoint"] for r in routes} == {ENDPOINT}  # one endpoint for both
    assert (routes[1]["dimensions"], routes[1]["max_inputs"]) == (1024, 32)


def test_both_components_run_on_one_gpu_each_of_one_endpoint(
    synthesized: tuple[RagStack, Template],
) -> None:
    stack, template = synthesized
    components = template.find_resources("AWS::SageMaker::InferenceComponent")
    specs = {
        c["Properties"]["InferenceComponentName"]: c["Properties"]["Specification"]
        for c in components.values()
    }
    embedder = specs[stack.embedder.inference_component_name]
    assert embedder["ComputeResourceRequirements"]["NumberOfAcceleratorDevicesRequired"] == 1
    assert "/tei:2.0.1-tei1.8.2-gpu-" in json.dumps(
        template.find_resources("AWS::SageMaker::Model")
    )


def test_a_rag_round_trip_with_one_url_and_one_key(
    rag: tuple[Runtime, TeiModel], fake: FakeSageMaker
) -> None:
    runtime, tei = rag
    client = _client(runtime)
    # index: embed the documents
    documents = ["Paris is the capital of France.", "Berlin is the capital of Germany."]
    indexed = client.embeddings.create(model=EMBEDDING_MODEL, input=documents)
    assert [d.embedding for d in indexed.data] == [tei.embed(d) for d in documents]
    # retrieve: embed the question (LangChain, sending text) and pick the nearest document
    from langchain_openai import OpenAIEmbeddings

    embeddings = OpenAIEmbeddings(
        model=EMBEDDING_MODEL,
        base_url=runtime.url + "/v1",
        api_key=KEY,  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    question = embeddings.embed_query("What is the capital of France?")
    assert question == tei.embed("What is the capital of France?")
    # generate: the chat model answers from the same URL with the same key
    reply = client.chat.completions.create(
        model=CHAT_MODEL, messages=[{"role": "user", "content": documents[0] + " Capital?"}]
    )
    assert reply.choices[0].message.content == "Paris."
    assert [r.streamed for r in fake.requests] == [False, False, True]


def test_each_model_refuses_the_other_kind_and_a_wrong_key_gets_nothing(
    rag: tuple[Runtime, TeiModel], fake: FakeSageMaker
) -> None:
    runtime, _ = rag
    with pytest.raises(openai.BadRequestError, match="is an embedding model"):
        _client(runtime).chat.completions.create(
            model=EMBEDDING_MODEL, messages=[{"role": "user", "content": "hi"}]
        )
    with pytest.raises(openai.BadRequestError, match="is a chat model"):
        _client(runtime).embeddings.create(model=CHAT_MODEL, input="hi")
    with pytest.raises(openai.AuthenticationError):
        _client(runtime, "sk-wrong").embeddings.create(model=EMBEDDING_MODEL, input="hi")
    assert [m.id for m in _client(runtime).models.list()] == [CHAT_MODEL, EMBEDDING_MODEL]
    assert fake.requests == []
