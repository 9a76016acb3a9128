"""The cases of ``vllm_cases.py`` replayed from what a real vLLM answered (recorded by ``make
test-engines`` under ``fixtures/vllm/``): the runtime, started as Lambda starts it with the
Lambda env the template gives, in front of the fake SageMaker answering each request with the
recorded exchange whose body it sends, checked with the unchanged ``openai`` SDK. No vLLM is
needed. A request no recording matches fails its case, naming the body: the runtime changed
what it sends, so the recordings are stale (run ``make test-engines`` again)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from tests.streaming.conftest import FAKE_AWS_ENV
from tests.streaming.vllm_cases import CASES, ENGINE, FIXTURES, Case, case_params
from tests.streaming.vllm_deployment import synthesize
from tests.support.engine_exchanges import Exchange, Recording, replaying
from tests.support.fake_sagemaker import FakeSageMaker
from tests.support.runtime_process import (
    free_port,
    lambda_env,
    make_task_root,
    running,
    wait_healthy,
)
from tests.support.tiny_model import ANSWER_TEXT, REASONING, REASONING_TEXT


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeSageMaker]:
    with FakeSageMaker() as fake:
        yield fake


@pytest.fixture(scope="module")
def client(
    fake: FakeSageMaker, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[openai.OpenAI]:
    port = free_port()
    aws = {**FAKE_AWS_ENV, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": fake.url}
    env = lambda_env(aws, **synthesize().runtime_env, PORT=str(port))
    with running(make_task_root(tmp_path_factory.mktemp("lambda")), env) as process:
        wait_healthy(port, process)
        yield openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=30
        )


@pytest.mark.slow
@pytest.mark.parametrize("case", case_params())
def test_case_replayed(case: Case, client: openai.OpenAI, fake: FakeSageMaker) -> None:
    recording = Recording.load(FIXTURES / f"{case.name}.json")
    fake.reset()
    fake.responder, replay = replaying(recording.exchanges)
    try:
        case.run(client)
    finally:
        assert not replay.unmatched, (
            f"no recorded exchange matches what the runtime sent: {replay.unmatched}; the "
            "recordings are stale: run make test-engines to record them again"
        )


def test_every_case_has_its_recording_of_one_vllm_version() -> None:
    recordings = [Recording.load(path) for path in sorted(FIXTURES.glob("*.json"))]
    assert sorted(r.case for r in recordings) == sorted(c.name for c in CASES)
    assert {(r.engine, r.version) for r in recordings} == {(ENGINE, recordings[0].version)}
    for recording in recordings:  # each recorded the exchanges its case makes or should make
        assert recording.exchanges, recording.case


# -- what the runtime sent vLLM, and what vLLM answered it ---------------------------------------


def _events(exchange: Exchange) -> list[dict[str, Any]]:
    """The JSON events of a recorded SSE answer (``data: [DONE]`` left out)."""
    lines = exchange.body.decode().splitlines()
    return [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: {")]


def _deltas(exchange: Exchange, key: str) -> str:
    return "".join(
        c["choices"][0]["delta"].get(key) or "" for c in _events(exchange) if c["choices"]
    )


def _reasoning_split(exchange: Exchange) -> None:
    assert _deltas(exchange, "reasoning") == REASONING_TEXT
    assert _deltas(exchange, "content") == ANSWER_TEXT


def _reasoning_counted(exchange: Exchange) -> None:
    (usage,) = [c["usage"] for c in _events(exchange) if c.get("usage")]
    assert usage["completion_tokens_details"]["reasoning_tokens"] == len(REASONING)


def _no_reasoning(exchange: Exchange) -> None:
    assert _deltas(exchange, "reasoning") == ""
    assert _deltas(exchange, "content") == ANSWER_TEXT


def _answered(exchange: Exchange) -> None:
    assert _deltas(exchange, "content") == ANSWER_TEXT


def _stop_with_a_call(exchange: Exchange) -> None:
    events = [c for c in _events(exchange) if c["choices"]]
    assert any(c["choices"][0]["delta"].get("tool_calls") for c in events)
    assert [c["choices"][0]["finish_reason"] for c in events][-1] == "stop"


def _embedded(exchange: Exchange) -> None:
    vectors = [item["embedding"] for item in json.loads(exchange.body)["data"]]
    assert len(vectors) == 2
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, abs_tol=1e-3) for v in vectors)


def _sent(*fields: str) -> Callable[[Exchange], bool]:
    """An exchange the runtime made (not the recorder) whose body holds ``fields``."""
    return lambda e: not e.direct and all(key in e.request for key in fields)


# What reached vLLM and what its answer shows, per case: (the exchanges to check, the check).
_ENGINE_DID: dict[str, tuple[Callable[[Exchange], bool], Callable[[Exchange], None]]] = {
    "reasoning_stream": (_sent("messages"), _reasoning_split),
    "reasoning_tokens": (_sent("messages"), _reasoning_counted),
    "responses_reasoning_stream": (_sent("messages"), _reasoning_split),
    "thinking_off": (_sent("chat_template_kwargs"), _no_reasoning),
    "reasoning_effort": (_sent("reasoning_effort"), _reasoning_split),
    "sampling_fields": (_sent("top_k", "min_p", "repetition_penalty", "seed"), _answered),
    "named_tool_call_finish_reason": (_sent("tool_choice"), _stop_with_a_call),
    "embeddings": (_sent("input"), _embedded),
}


@pytest.mark.parametrize("name", sorted(_ENGINE_DID))
def test_the_runtime_sent_vllm_what_each_case_needs(name: str) -> None:
    """The runtime itself sent vLLM the fields (chat_template_kwargs, reasoning_effort, the
    sampling fields, a named tool_choice, OpenAI's embeddings body), and vLLM split and
    counted the reasoning, honoured enable_thinking, said "stop" after a named tool call and
    embedded the inputs: what the client gets in each case comes from the engine."""
    picks, check = _ENGINE_DID[name]
    exchanges = [e for e in Recording.load(FIXTURES / f"{name}.json").exchanges if picks(e)]
    assert exchanges, name
    for exchange in exchanges:
        check(exchange)


def test_the_sampling_fields_reached_vllm_with_the_client_s_values() -> None:
    (exchange,) = Recording.load(FIXTURES / "sampling_fields.json").exchanges
    wanted = {"top_k": 5, "min_p": 0.05, "repetition_penalty": 1.05, "seed": 7}
    assert {key: exchange.request[key] for key in wanted} == wanted


def test_vllm_refuses_teis_embeddings_body() -> None:
    """Why a vLLM route gets OpenAI's body: vLLM 0.32 refuses the one TEI takes."""
    (tei,) = [e for e in Recording.load(FIXTURES / "embeddings.json").exchanges if e.direct]
    assert tei.request.get("normalize") is True and tei.status == 400
    assert "Parameter `normalize` was removed" in tei.body.decode()
