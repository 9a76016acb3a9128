"""The cases of ``vllm_cases.py`` replayed from what a real vLLM answered (recorded by ``make
test-engines`` under ``fixtures/vllm/``): the runtime, started as Lambda starts it with the
Lambda env the template gives, in front of the fake SageMaker answering each request with the
recorded exchange whose body it sends, checked with the unchanged ``openai`` SDK. No vLLM is
needed. A request no recording matches fails its case, naming the body: the runtime changed
what it sends, so the recordings are stale (run ``make test-engines`` again)."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from tests.streaming.conftest import FAKE_AWS_ENV
from tests.streaming.vllm_cases import CASES, ENGINE, FIXTURES, Case, case_params
from tests.streaming.vllm_deployment import synthesize
from tests.support.engine_exchanges import Recording, replaying
from tests.support.fake_sagemaker import FakeSageMaker
from tests.support.runtime_process import (
    free_port,
    lambda_env,
    make_task_root,
    running,
    wait_healthy,
)


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
