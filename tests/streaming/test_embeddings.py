"""POST /v1/embeddings: OpenAI's embeddings API in front of an embedding model on TEI.

Unchanged clients (the `openai` SDK, LangChain's OpenAIEmbeddings, curl) call the runtime,
which calls the fake SageMaker's InvokeEndpoint; a stand-in for TEI (tests/support/tei_model.py)
answers each body as TEI's embed route does, so every embedding is known exactly."""

from __future__ import annotations

import base64
import dataclasses
import json
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from constructs_llm.contract import EngineName, ModelKind, RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.embeddings.fields import MAX_INPUTS
from constructs_llm.streaming.runtime.embeddings.handler import MAX_PARALLEL_CALLS
from constructs_llm.streaming.runtime.embeddings.request import build_embeddings_request
from constructs_llm.streaming.runtime.http.errors import RequestError
from constructs_llm.streaming.runtime.routing import Route
from constructs_llm.streaming.runtime.settings import Settings, SettingsError
from tests.streaming.conftest import ENDPOINT, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.support import engine_streams
from tests.support.curl import curl
from tests.support.emf import check, emf_metrics
from tests.support.fake_sagemaker import (
    CallError,
    FakeSageMaker,
    ReceivedRequest,
    Scenario,
    tei_answer,
    tei_error,
)
from tests.support.runtime_process import (
    free_port,
    lambda_env,
    make_task_root,
    running,
    wait_healthy,
)
from tests.support.tei_model import TeiModel

EMBEDDER = "bge"
MATRYOSHKA = "qwen-embed"
CHAT = "chat"
COMPONENTS = {EMBEDDER: "bge-ic", MATRYOSHKA: "qwen-embed-ic", CHAT: "chat-ic"}


def _routes(max_inputs: int = 32) -> tuple[Route, ...]:
    return (
        Route(
            model=EMBEDDER,
            endpoint_name=ENDPOINT,
            inference_component_name=COMPONENTS[EMBEDDER],
            request_format=RequestFormat.EMBED,
            dimensions=8,
            max_inputs=max_inputs,
        ),
        Route(
            model=MATRYOSHKA,
            endpoint_name=ENDPOINT,
            inference_component_name=COMPONENTS[MATRYOSHKA],
            request_format=RequestFormat.EMBED,
            dimensions=8,
            min_dimensions=2,
            max_inputs=max_inputs,
        ),
        Route(
            model=CHAT,
            endpoint_name=ENDPOINT,
            inference_component_name=COMPONENTS[CHAT],
            stream_format=StreamFormat.TGI,
        ),
    )


@pytest.fixture
def tei(fake: FakeSageMaker) -> Iterator[TeiModel]:
    model = TeiModel(dimensions=8, max_client_batch_size=32)
    fake.responder = model.responder
    yield model


@pytest.fixture
def served(start_runtime: StartRuntime, tei: TeiModel) -> Runtime:
    """A runtime serving two embedding models and a chat model, routed by ``model``."""
    return start_runtime(routes=_routes(tei.max_client_batch_size))


def _openai(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", max_retries=0, timeout=SOCKET_TIMEOUT
    )


def _post(runtime: Runtime, body: dict[str, Any] | str) -> tuple[int, dict[str, Any]]:
    text = body if isinstance(body, str) else json.dumps(body)
    output = curl(
        "-X", "POST", runtime.url + "/v1/embeddings", "-H", "Content-Type: application/json",
        "-d", text, "-w", "\n%{http_code}", timeout=SOCKET_TIMEOUT,
    )  # fmt: skip
    answer, status = output.rsplit("\n", 1)
    return int(status), json.loads(answer)


def _floats(encoded: str) -> list[float]:
    raw = base64.b64decode(encoded)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


# -- the openai SDK ------------------------------------------------------------------------


def test_the_openai_sdk_embeds_a_string(
    served: Runtime, fake: FakeSageMaker, tei: TeiModel
) -> None:
    # WHEN the SDK embeds one string (it asks for base64 by default and decodes it)
    answer = _openai(served).embeddings.create(model=EMBEDDER, input="hello world")
    # THEN it gets TEI's embedding of that text, exactly, for the model it named
    assert [d.embedding for d in answer.data] == [tei.embed("hello world")]
    assert (answer.object, answer.model, answer.data[0].index) == ("list", EMBEDDER, 0)
    assert (answer.usage.prompt_tokens, answer.usage.total_tokens) == (0, 0)
    # AND the runtime called InvokeEndpoint (not the stream) on the model's component once
    (call,) = fake.requests
    assert not call.streamed and call.inference_component == COMPONENTS[EMBEDDER]
    assert call.json() == {"inputs": ["hello world"], "normalize": True}
    assert call.headers["content-type"] == "application/json"


def test_a_list_keeps_its_order_across_calls_split_at_the_engines_batch_size(
    start_runtime: StartRuntime, fake: FakeSageMaker, tei: TeiModel
) -> None:
    # GIVEN TEI takes at most 4 inputs per request
    tei.max_client_batch_size = 4
    runtime = start_runtime(routes=_routes(max_inputs=4))
    texts = [f"document {i}" for i in range(10)]
    # WHEN a client sends 10
    answer = _openai(runtime).embeddings.create(model=EMBEDDER, input=texts)
    # THEN three calls of 4, 4 and 2 carry them, and the answer keeps the input order
    assert sorted(len(b["inputs"]) for b in tei.bodies) == [2, 4, 4]
    assert [d.index for d in answer.data] == list(range(10))
    assert [d.embedding for d in answer.data] == [tei.embed(t) for t in texts]
    log = runtime.logs[-1]
    assert (log["inputs"], log["calls"], log["status"]) == (10, 3, 200)


def test_the_calls_of_one_request_run_four_at_a_time(
    start_runtime: StartRuntime, fake: FakeSageMaker, tei: TeiModel
) -> None:
    # GIVEN TEI takes one input per call, and the first calls are held unanswered
    tei.max_client_batch_size = 1
    runtime = start_runtime(routes=_routes(max_inputs=1))
    lock, arrived = threading.Lock(), [0]
    four_in_flight, release = threading.Event(), threading.Event()

    def held(request: ReceivedRequest) -> Scenario:
        with lock:
            arrived[0] += 1
            mine = arrived[0]
        if mine == MAX_PARALLEL_CALLS:
            four_in_flight.set()
        if mine <= MAX_PARALLEL_CALLS:
            release.wait(SOCKET_TIMEOUT)
        return tei.responder(request)

    fake.responder = held
    texts = [f"t{i}" for i in range(8)]
    answers: list[Any] = []
    client = threading.Thread(
        target=lambda: answers.append(
            _openai(runtime).embeddings.create(model=EMBEDDER, input=texts)
        ),
        daemon=True,
    )
    # WHEN a client sends 8 inputs
    client.start()
    # THEN four calls are in flight at once, and no fifth starts while they are
    assert four_in_flight.wait(SOCKET_TIMEOUT)
    time.sleep(0.2)  # a fifth call, were it allowed, would start at once
    assert arrived[0] == MAX_PARALLEL_CALLS == 4
    # AND once they are answered, 8 calls in all carried the inputs, in order
    release.set()
    client.join(SOCKET_TIMEOUT)
    assert len(fake.requests) == 8
    assert [d.embedding for d in answers[0].data] == [tei.embed(t) for t in texts]


def test_float_and_base64_encodings(served: Runtime, tei: TeiModel) -> None:
    client = _openai(served)
    floats = client.embeddings.create(model=EMBEDDER, input=["a", "b"], encoding_format="float")
    assert [d.embedding for d in floats.data] == [tei.embed("a"), tei.embed("b")]
    encoded = client.embeddings.create(model=EMBEDDER, input="a", encoding_format="base64")
    text = encoded.data[0].embedding
    assert isinstance(text, str)  # asked for explicitly: the SDK leaves it encoded
    assert _floats(text) == tei.embed("a")  # little-endian float32, as OpenAI's


def test_dimensions_truncates_a_matryoshka_model(
    served: Runtime, fake: FakeSageMaker, tei: TeiModel
) -> None:
    answer = _openai(served).embeddings.create(model=MATRYOSHKA, input="short", dimensions=4)
    assert answer.data[0].embedding == tei.embed("short", dimensions=4)
    assert len(answer.data[0].embedding) == 4
    assert fake.requests[0].json()["dimensions"] == 4  # TEI >= 1.8 truncates itself


def test_dimensions_is_served_even_by_a_tei_that_ignores_it(served: Runtime, tei: TeiModel) -> None:
    # GIVEN a TEI older than 1.8, which answers the full length whatever dimensions says
    tei.honours_dimensions = False
    answer = _openai(served).embeddings.create(
        model=MATRYOSHKA, input="short", dimensions=4, encoding_format="float"
    )
    # THEN the runtime cuts and normalizes it again, as TEI 1.8 would have
    assert answer.data[0].embedding == pytest.approx(tei.embed("short", dimensions=4), abs=1e-6)


@pytest.mark.parametrize(
    ("model", "dimensions", "needle"),
    [
        (EMBEDDER, 4, "not known to be trained for shorter (Matryoshka) embeddings"),
        (MATRYOSHKA, 1, "'dimensions' must be from 2 to 8"),
        (MATRYOSHKA, 9, "'dimensions' must be from 2 to 8"),
    ],
)
def test_dimensions_outside_what_the_model_supports_is_a_400(
    served: Runtime, fake: FakeSageMaker, model: str, dimensions: int, needle: str
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        _openai(served).embeddings.create(model=model, input="x", dimensions=dimensions)
    assert raised.value.status_code == 400
    assert needle in str(raised.value.message)
    assert raised.value.param == "dimensions"  # type: ignore[attr-defined]
    assert fake.requests == []


def test_token_arrays_are_refused_naming_input_and_the_langchain_setting(
    served: Runtime, fake: FakeSageMaker
) -> None:
    for tokens in ([15339, 1917], [[15339, 1917], [9906]]):
        with pytest.raises(openai.BadRequestError) as raised:
            _openai(served).embeddings.create(model=EMBEDDER, input=tokens)
        assert raised.value.param == "input"  # type: ignore[attr-defined]
        assert raised.value.code == "unsupported_parameter"
        assert "check_embedding_ctx_length=False" in raised.value.message
    assert fake.requests == []


# -- LangChain -----------------------------------------------------------------------------


def _langchain(runtime: Runtime, **options: Any) -> Any:
    from langchain_openai import OpenAIEmbeddings

    return OpenAIEmbeddings(
        model=EMBEDDER,
        base_url=runtime.url + "/v1",
        api_key="unused",  # type: ignore[arg-type]
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
        **options,
    )


def test_langchain_embeds_documents_and_queries_sending_text(
    start_runtime: StartRuntime, tei: TeiModel
) -> None:
    # GIVEN TEI's default client batch of 32, and LangChain's default chunk of 1000 texts
    runtime = start_runtime(routes=_routes(max_inputs=32))
    embeddings = _langchain(runtime, check_embedding_ctx_length=False)
    documents = [f"passage {i}" for i in range(40)]
    # WHEN it embeds 40 documents (one request of 40 inputs) and a query
    assert embeddings.embed_documents(documents) == [tei.embed(d) for d in documents]
    assert embeddings.embed_query("what is a passage?") == tei.embed("what is a passage?")
    # THEN the runtime split the 40 into TEI batches it takes
    assert sorted(len(b["inputs"]) for b in tei.bodies) == [1, 8, 32]


# tiktoken downloads its BPE files on first use; LiteLLM ships cl100k_base's in the cache
# layout tiktoken reads (file named by the SHA-1 of its URL), so the real tokenizer runs here.
TIKTOKEN_CACHE = (
    Path(__file__).resolve().parents[2]
    / ".venv-litellm/lib/python3.11/site-packages/litellm/litellm_core_utils/tokenizers"
)


def test_langchain_with_its_default_token_arrays_gets_a_400_naming_the_setting(
    served: Runtime, fake: FakeSageMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (TIKTOKEN_CACHE / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").is_file(), (
        "cl100k_base is missing: run make install (the LiteLLM venv ships it)"
    )
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(TIKTOKEN_CACHE))
    # By default OpenAIEmbeddings sends tiktoken ids (cl100k_base for a model tiktoken does
    # not know), which this model's vocabulary would read as other text.
    with pytest.raises(openai.BadRequestError, match="check_embedding_ctx_length=False"):
        _langchain(served).embed_documents(["some text"])
    assert fake.requests == []
    assert served.logs[-1]["error_code"] == "unsupported_parameter"


# -- curl ----------------------------------------------------------------------------------


def test_curl_embeds_a_list(served: Runtime, tei: TeiModel) -> None:
    status, answer = _post(served, {"model": EMBEDDER, "input": ["one", "two"], "user": "u-1"})
    assert status == 200
    assert [d["embedding"] for d in answer["data"]] == [tei.embed("one"), tei.embed("two")]
    assert answer["usage"] == {"prompt_tokens": 0, "total_tokens": 0}


@pytest.mark.parametrize(
    ("body", "param", "needle"),
    [
        ({"model": EMBEDDER}, "input", "'input' is required"),
        ({"model": EMBEDDER, "input": []}, "input", "at least one string"),
        ({"model": EMBEDDER, "input": ["a", ""]}, "input[1]", "empty string"),
        ({"model": EMBEDDER, "input": ["a", 3.5]}, "input[1]", "must be a string"),
        ({"model": EMBEDDER, "input": {"text": "a"}}, "input", "a string or a list of strings"),
        ({"model": EMBEDDER, "input": ["a"] * (MAX_INPUTS + 1)}, "input", "more than the 2048"),
        ({"model": EMBEDDER, "input": "a", "encoding_format": "int8"}, "encoding_format", "int8"),
        ({"model": EMBEDDER, "input": "a", "dimensions": "4"}, "dimensions", "positive integer"),
        ({"model": EMBEDDER, "input": "a", "user": 7}, "user", "'user' must be a string"),
        ({"model": EMBEDDER, "input": "a", "normalize": False}, "normalize", "unrecognized"),
    ],
)
def test_bad_requests_get_a_400_naming_the_field(
    served: Runtime, fake: FakeSageMaker, body: dict[str, Any], param: str, needle: str
) -> None:
    status, answer = _post(served, body)
    assert status == 400
    assert answer["error"]["param"] == param
    assert needle in answer["error"]["message"]
    assert fake.requests == []


def test_a_lone_surrogate_in_an_input_gets_the_400_chat_gives_not_a_500(
    served: Runtime, fake: FakeSageMaker
) -> None:
    # GIVEN an input holding "\udce9": valid JSON text, but no character (no UTF-8 form)
    body = json.dumps({"model": EMBEDDER, "input": ["ok", "caf"]})[:-3] + '\\udce9"]}'
    status, answer = _post(served, body)
    # THEN a 400 naming the input, in chat's words, and nothing reaches the engine
    assert status == 400, answer
    assert answer["error"]["param"] == "input[1]"
    assert "unpaired UTF-16 surrogate" in answer["error"]["message"]
    assert fake.requests == []


def test_a_model_that_is_not_a_string_is_a_400_where_one_route_serves_every_request() -> None:
    # GIVEN the one route, which serves a request whatever its model
    route = _routes()[0]
    # WHEN the model is a number THEN the field table refuses it, naming the field
    with pytest.raises(RequestError, match="'model' must be a string") as raised:
        build_embeddings_request({"model": 7, "input": "a"}, route)
    assert raised.value.param == "model"


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        (None, {"inputs": ["a", "b"], "normalize": True, "dimensions": 4}),
        (EngineName.TEI, {"inputs": ["a", "b"], "normalize": True, "dimensions": 4}),
        (EngineName.VLLM, {"input": ["a", "b"], "encoding_format": "float", "dimensions": 4}),
    ],
)
def test_each_engine_receives_the_fields_under_its_own_names(
    engine: EngineName | None, expected: dict[str, Any]
) -> None:
    route = dataclasses.replace(_routes()[1], engine=engine)
    body = {"model": MATRYOSHKA, "input": ["a", "b"], "dimensions": 4, "user": "u"}
    request = build_embeddings_request(body | {"encoding_format": "base64"}, route)
    assert [json.loads(b) for b in request.bodies] == [expected]
    assert (request.encoding_format, request.dimensions) == ("base64", 4)


# -- kinds, routing, models ----------------------------------------------------------------


def test_a_chat_request_to_an_embedding_model_is_a_400_naming_its_kind(
    served: Runtime, fake: FakeSageMaker
) -> None:
    client = _openai(served)
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=EMBEDDER, messages=[{"role": "user", "content": "hi"}])
    assert raised.value.code == "model_kind_mismatch"
    assert "'bge' is an embedding model" in raised.value.message
    assert "POST /v1/embeddings" in raised.value.message
    with pytest.raises(openai.BadRequestError, match="an embedding model"):
        client.responses.create(model=EMBEDDER, input="hi")
    assert fake.requests == []


def test_an_embeddings_request_to_a_chat_model_is_a_400_naming_its_kind(
    served: Runtime, fake: FakeSageMaker
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        _openai(served).embeddings.create(model=CHAT, input="hi")
    assert raised.value.code == "model_kind_mismatch"
    assert "'chat' is a chat model" in raised.value.message
    assert "POST /v1/chat/completions" in raised.value.message
    assert fake.requests == []


def test_the_chat_model_beside_them_still_streams(served: Runtime, fake: FakeSageMaker) -> None:
    fake.responder = None
    fake.enqueue(Scenario(parts=engine_streams.tgi(["Hi", "!"])))
    done = _openai(served).chat.completions.create(
        model=CHAT, messages=[{"role": "user", "content": "hi"}]
    )
    assert done.choices[0].message.content == "Hi!"
    assert fake.requests[0].streamed and fake.requests[0].inference_component == COMPONENTS[CHAT]


def test_models_lists_both_kinds(served: Runtime) -> None:
    assert [m.id for m in _openai(served).models.list()] == [EMBEDDER, MATRYOSHKA, CHAT]
    status, answer = _post(served, {"model": "nope", "input": "x"})
    assert (status, answer["error"]["code"]) == (404, "model_not_found")


def test_one_embedding_route_serves_every_model_name(
    start_runtime: StartRuntime, tei: TeiModel
) -> None:
    runtime = start_runtime(routes=_routes()[:1])
    answer = _openai(runtime).embeddings.create(model="whatever", input="x")
    assert answer.model == EMBEDDER
    assert answer.data[0].embedding == tei.embed("x")


# -- upstream failures ---------------------------------------------------------------------


def test_teis_refusal_is_a_400_with_its_words(served: Runtime, fake: FakeSageMaker) -> None:
    fake.responder = None
    too_long = "Input validation error: `inputs` must have less than 512 tokens. Given: 600"
    fake.enqueue(tei_error(too_long, "validation", 413))
    status, answer = _post(served, {"model": EMBEDDER, "input": "x " * 600})
    assert status == 400
    assert answer["error"]["code"] == "model_rejected_request"
    assert "must have less than 512 tokens" in answer["error"]["message"]


def test_an_overloaded_tei_is_a_429(served: Runtime, fake: FakeSageMaker) -> None:
    fake.responder = None
    fake.enqueue(tei_error("Model is overloaded", "overloaded", 429))
    status, answer = _post(served, {"model": EMBEDDER, "input": "x"})
    assert (status, answer["error"]["code"]) == (429, "model_overloaded")
    # AND it says when to retry
    fake.enqueue(tei_error("Model is overloaded", "overloaded", 429))
    with pytest.raises(openai.RateLimitError) as refused:
        _openai(served).embeddings.create(model=EMBEDDER, input="x")
    assert refused.value.response.headers["retry-after"] == "1"


def test_a_failed_call_among_several_fails_the_request(
    start_runtime: StartRuntime, fake: FakeSageMaker, tei: TeiModel
) -> None:
    runtime = start_runtime(routes=_routes(max_inputs=2))

    def responder(request: Any) -> Scenario:
        if "boom" in request.json()["inputs"]:
            return Scenario(call_error=CallError(status=503, error_type="ServiceUnavailable",
                                                 message="try later"))  # fmt: skip
        return tei.responder(request)

    fake.responder = responder
    status, answer = _post(runtime, {"model": EMBEDDER, "input": ["a", "b", "boom", "c"]})
    assert (status, answer["error"]["code"]) == (503, "upstream_unavailable")


def test_an_answer_that_is_not_one_embedding_per_input_is_a_502(
    served: Runtime, fake: FakeSageMaker
) -> None:
    fake.responder = None
    fake.enqueue(tei_answer([[0.1, 0.2]]))  # one embedding for two inputs
    status, answer = _post(served, {"model": EMBEDDER, "input": ["a", "b"]})
    assert (status, answer["error"]["code"]) == (502, "model_answer_invalid")
    fake.enqueue(Scenario(answer=b'{"generated_text": "hi"}'))
    status, answer = _post(served, {"model": EMBEDDER, "input": "a"})
    assert (status, answer["error"]["code"]) == (502, "model_answer_invalid")


# -- metrics -------------------------------------------------------------------------------


def _metrics(record: dict[str, Any]) -> dict[str, float]:
    check(record)  # a valid Embedded Metric Format record
    return emf_metrics(record)[("Target", "Model")]


def test_each_request_writes_its_metrics(served: Runtime, tei: TeiModel) -> None:
    _openai(served).embeddings.create(model=EMBEDDER, input=["a", "b", "c"])
    _post(served, {"model": EMBEDDER, "input": ""})
    ok, refused = served.logs
    values = _metrics(ok)
    assert (values["Requests"], values["Errors"], values["EmbeddedInputs"]) == (1, 0, 3)
    assert values["Duration"] > 0 and "OverheadLatency" in values
    assert (ok["Target"], ok["Model"]) == (COMPONENTS[EMBEDDER], EMBEDDER)
    assert (_metrics(refused)["Errors"], refused["ErrorKind"]) == (1, "invalid_request")


# -- the runtime as Lambda starts it -------------------------------------------------------


@pytest.fixture
def lambda_process(
    tmp_path: Path, aws_env: dict[str, str], fake: FakeSageMaker
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port, root = free_port(), make_task_root(tmp_path)
    routes = [
        {"model": EMBEDDER, "endpoint": ENDPOINT, "component": "bge-ic",
         "request_format": "embed", "dimensions": 8, "max_inputs": 32},
    ]  # fmt: skip
    env = lambda_env(
        aws_env,
        LAMBDA_TASK_ROOT=str(root),
        PORT=str(port),
        ROUTES=json.dumps(routes),
    )
    with running(root, env) as process:
        yield process, port


def test_run_sh_serves_embeddings_from_the_asset(
    lambda_process: tuple[subprocess.Popen[str], int], tei: TeiModel
) -> None:
    process, port = lambda_process
    wait_healthy(port, process)
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0, timeout=SOCKET_TIMEOUT
    )
    answer = client.embeddings.create(model=EMBEDDER, input=["asset", "check"])
    assert [d.embedding for d in answer.data] == [tei.embed("asset"), tei.embed("check")]


# -- the routing table and settings ----------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"request_format": "messages", "dimensions": 8}, "only an embedding model's route takes"),
        ({"request_format": "embed", "max_inputs": 0}, "max_inputs must be an integer from 1"),
        ({"request_format": "embed", "dimensions": True}, "dimensions must be an integer"),
        (
            {"request_format": "embed", "dimensions": 8, "min_dimensions": 16},
            "min_dimensions (16) cannot exceed ROUTES[0].dimensions (8)",
        ),
        ({"request_format": "embed", "tools": True}, "an embedding model has no tool calling"),
    ],
)
def test_a_bad_embedding_route_names_the_entry_and_the_value(
    entry: dict[str, Any], needle: str
) -> None:
    routes = [{"model": "m", "endpoint": "e", **entry}]
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({"ROUTES": json.dumps(routes)})
    assert needle in str(raised.value)


def test_a_single_embedding_target_from_the_single_target_variables() -> None:
    settings = Settings.from_env({"ENDPOINT_NAME": "e", "REQUEST_FORMAT": "embed"})
    (route,) = settings.routing().routes
    assert route.kind is ModelKind.EMBEDDING and route.min_dimensions is None
    with pytest.raises(SettingsError, match="an embedding model has no tool calling"):
        Settings.from_env({"ENDPOINT_NAME": "e", "REQUEST_FORMAT": "embed", "TOOLS": "on"})
