"""Starting the runtime as the Lambda does: run.sh in a code asset holding only the runtime and
the vocabulary it shares (streaming/runtime/, streaming/formats.py, contract.py)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from constructs_llm.streaming.invoker.batch_api import WORKER_HANDLER
from tests.streaming.conftest import SOCKET_TIMEOUT
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.patience import patience
from tests.support.runtime_process import (
    RUN_SH,
    RUNTIME_DIR,
    free_port,
    lambda_env,
    make_task_root,
    running,
    wait_healthy,
)


@pytest.fixture
def task_root(tmp_path: Path) -> Path:
    return make_task_root(tmp_path)


def test_run_script_is_executable_with_lf_line_endings() -> None:
    script = RUNTIME_DIR / "run.sh"
    assert os.access(script, os.X_OK)
    assert b"\r" not in script.read_bytes()
    assert script.read_bytes().startswith(b"#!/bin/sh\n")


def test_the_batch_worker_s_handler_loads_from_a_task_root_alone(task_root: Path) -> None:
    """The managed Python runtime imports the worker's handler
    (``streaming.runtime.batches.worker.handle``) with the task root on ``sys.path``: the
    vocabulary comes from ``contract.py`` there, through ``streaming/formats.py``."""
    module, _, handler = WORKER_HANDLER.rpartition(".")
    probe = (
        f"import importlib, sys; sys.path[:0] = [{str(task_root)!r}]; "
        f"m = importlib.import_module({module!r}); f = sys.modules['streaming.formats']; "
        f"print(callable(getattr(m, {handler!r})), f.Env.__module__, "
        "any(n.startswith('constructs_llm') for n in sys.modules))"
    )
    shown = subprocess.run(
        [sys.executable, "-I", "-c", probe],
        cwd=task_root,
        capture_output=True,
        text=True,
        check=True,
        timeout=patience(60),
    )
    assert shown.stdout.split() == ["True", "contract", "False"]


@pytest.fixture
def lambda_process(
    task_root: Path, aws_env: dict[str, str], fake: FakeSageMaker
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    env = lambda_env(
        aws_env,
        LAMBDA_TASK_ROOT=str(task_root),
        PORT=str(port),
        ENDPOINT_NAME="llm-endpoint",
        MODEL_NAME="served",
        STREAM_FORMAT="tgi",
    )
    with running(task_root, env) as process:
        yield process, port


def test_run_sh_serves_from_a_task_root_holding_only_the_runtime(
    lambda_process: tuple[subprocess.Popen[str], int], fake: FakeSageMaker
) -> None:
    # GIVEN run.sh started as the adapter starts it, from an asset with only runtime/
    process, port = lambda_process
    listening = wait_healthy(port, process)  # its first line says it listens, and where
    assert listening["url"] == f"http://127.0.0.1:{port}"
    assert listening["routes"][0]["model"] == "served"
    # WHEN a streaming chat request arrives
    fake.enqueue(Scenario(parts=engine_streams.tgi(["Hi", "!"])))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=SOCKET_TIMEOUT)
    body = {"messages": [{"role": "user", "content": "x"}], "stream": True}
    connection.request("POST", "/v1/chat/completions", body=json.dumps(body))
    response = connection.getresponse()
    # THEN it streams the tokens, and logs JSON lines to stdout
    assert response.status == 200
    raw = response.read().decode()
    assert '"content":"Hi"' in raw and '"content":"!"' in raw and "[DONE]" in raw
    assert '"model":"served"' in raw
    connection.close()
    process.terminate()  # SIGTERM, as Lambda sends at shutdown
    assert process.wait(timeout=SOCKET_TIMEOUT) == 0
    assert process.stdout is not None
    lines = [json.loads(line) for line in process.stdout.read().splitlines()]
    assert lines[0]["status"] == 200  # the request's line, after the listening one


def test_a_missing_endpoint_name_exits_2_with_a_clear_message(
    task_root: Path, aws_env: dict[str, str]
) -> None:
    result = subprocess.run(
        ["/bin/sh", str(task_root.joinpath(*RUN_SH))],
        env=lambda_env(aws_env, STREAM_FORMAT="nope"),
        capture_output=True,
        text=True,
        timeout=SOCKET_TIMEOUT * 3,
    )
    assert result.returncode == 2
    assert "ENDPOINT_NAME is required" in result.stderr
    assert "STREAM_FORMAT must be one of" in result.stderr


def test_a_missing_region_exits_2_naming_aws_default_region(
    task_root: Path, aws_env: dict[str, str]
) -> None:
    # GIVEN the runtime started outside Lambda with AWS_REGION but no AWS_DEFAULT_REGION (and
    # no profile: the config file is empty), which is no region to boto3
    env = lambda_env(aws_env, ENDPOINT_NAME="llm-endpoint")
    del env["AWS_DEFAULT_REGION"]
    assert env["AWS_REGION"]
    result = subprocess.run(
        ["/bin/sh", str(task_root.joinpath(*RUN_SH))],
        env=env,
        capture_output=True,
        text=True,
        timeout=SOCKET_TIMEOUT * 3,
    )
    # THEN it exits 2 saying which variable to set, without a traceback
    assert result.returncode == 2, result.stderr
    assert "no AWS region for the sagemaker-runtime client: set AWS_DEFAULT_REGION" in result.stderr
    assert "does not read AWS_REGION" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_runtime_imports_nothing_outside_itself_but_stdlib_and_boto3(
    task_root: Path, aws_env: dict[str, str]
) -> None:
    # The asset ships no dependencies: importing every module must pull in neither
    # constructs_llm nor aws_cdk (boto3/botocore come with the Lambda Python runtime).
    runtime = task_root / "streaming" / "runtime"
    modules = sorted(
        ".".join(p.relative_to(runtime).with_suffix("").parts)
        for p in runtime.rglob("*.py")
        if p.stem not in ("__main__", "__init__")
    )
    assert "parsing.parser" in modules and "chat.fields" in modules
    code = (
        "import sys, importlib\n"
        f"for name in {modules!r}: importlib.import_module('streaming.runtime.' + name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('constructs_llm', 'aws_cdk', "
        "'constructs', 'jsii'))\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=lambda_env(aws_env, PYTHONPATH=str(task_root)),
        cwd=task_root,
        capture_output=True,
        text=True,
        timeout=SOCKET_TIMEOUT * 3,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
