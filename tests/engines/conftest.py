"""``make test-engines``: the invoker's runtime in front of a real vLLM.

Collected only when ``ENGINES_PYTHON`` names the Python of the engines venv (``make
test-engines`` sets it; ``make test`` does not, and never needs that venv). Once per session:
the deployment is synthesized (``tests/streaming/vllm_deployment.py``), the crafted tiny model
is built in the engines venv (``tests/support/tiny_model.py``), one vLLM server per model
endpoint starts with the flags the template gives, the fake SageMaker forwards to them, and
the runtime starts as Lambda starts it, with the Lambda env the template gives.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.conftest import ROOT
from tests.streaming.conftest import FAKE_AWS_ENV
from tests.streaming.vllm_deployment import Deployment, synthesize
from tests.support.fake_sagemaker import FakeSageMaker
from tests.support.runtime_process import (
    free_port,
    lambda_env,
    make_task_root,
    running,
    wait_healthy,
)
from tests.support.vllm_server import VllmLaunch, VllmServer, serving_vllm

ENGINES_PYTHON = os.environ.get("ENGINES_PYTHON", "")
collect_ignore_glob = [] if ENGINES_PYTHON else ["test_*.py"]

CLIENT_TIMEOUT_S = 300.0  # the first request of a cold CPU server compiles its kernels


@pytest.fixture(scope="session")
def deployment() -> Deployment:
    return synthesize()


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-qwen3")
    subprocess.run(
        [ENGINES_PYTHON, "-m", "tests.support.tiny_model", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(scope="session")
def servers(
    deployment: Deployment, model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, VllmServer]]:
    """A vLLM server per endpoint, by endpoint name."""
    logs = tmp_path_factory.mktemp("vllm-logs")
    names = sorted(deployment.containers)
    launches = [
        VllmLaunch(env=deployment.containers[name], model_dir=model_dir, log=logs / f"{name}.log")
        for name in names
    ]
    with serving_vllm(ENGINES_PYTHON, launches) as started:
        yield dict(zip(names, started, strict=True))


@pytest.fixture(scope="session")
def forwarder(servers: dict[str, VllmServer]) -> Iterator[FakeSageMaker]:
    with FakeSageMaker() as fake:
        yield fake


@pytest.fixture(scope="session")
def client(
    deployment: Deployment, forwarder: FakeSageMaker, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[openai.OpenAI]:
    """The openai SDK, unchanged, against the runtime started as Lambda starts it."""
    port = free_port()
    aws = {**FAKE_AWS_ENV, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": forwarder.url}
    env = lambda_env(aws, **deployment.runtime_env, PORT=str(port))
    with running(make_task_root(tmp_path_factory.mktemp("lambda")), env) as process:
        wait_healthy(port, process)
        yield openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key="unused",  # the function URL's IAM auth is in front of the runtime
            max_retries=0,
            timeout=CLIENT_TIMEOUT_S,
        )
