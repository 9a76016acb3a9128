"""Starting the runtime as the Lambda does: run.sh in a code asset holding only runtime/."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import constructs_llm.streaming.runtime as runtime_package
from tests.streaming.conftest import SOCKET_TIMEOUT
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

RUNTIME_DIR = Path(runtime_package.__file__).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def lambda_env(aws_env: dict[str, str], **extra: str) -> dict[str, str]:
    """A minimal process environment: no PYTHONPATH into the source tree."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {**keep, **aws_env, "PYTHON": sys.executable, **extra}


@pytest.fixture
def task_root(tmp_path: Path) -> Path:
    """A Lambda task root as the asset lays it out: the runtime directory and nothing else."""
    root = tmp_path / "task"
    shutil.copytree(RUNTIME_DIR, root / "runtime", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_run_script_is_executable_with_lf_line_endings() -> None:
    script = RUNTIME_DIR / "run.sh"
    assert os.access(script, os.X_OK)
    assert b"\r" not in script.read_bytes()
    assert script.read_bytes().startswith(b"#!/bin/sh\n")


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
    process = subprocess.Popen(
        ["/bin/sh", str(task_root / "runtime" / "run.sh")],
        env=env,
        cwd="/",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process, port
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=SOCKET_TIMEOUT)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def _wait_healthy(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate(timeout=SOCKET_TIMEOUT)
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail("the runtime did not become healthy within 15 s")


def test_run_sh_serves_from_a_task_root_holding_only_the_runtime(
    lambda_process: tuple[subprocess.Popen[str], int], fake: FakeSageMaker
) -> None:
    # GIVEN run.sh started as the adapter starts it, from an asset with only runtime/
    process, port = lambda_process
    _wait_healthy(port, process)
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
    assert lines[0]["msg"] == "listening"
    assert lines[0]["url"] == f"http://127.0.0.1:{port}"
    assert lines[1]["status"] == 200


def test_a_missing_endpoint_name_exits_2_with_a_clear_message(
    task_root: Path, aws_env: dict[str, str]
) -> None:
    result = subprocess.run(
        ["/bin/sh", str(task_root / "runtime" / "run.sh")],
        env=lambda_env(aws_env, STREAM_FORMAT="nope"),
        capture_output=True,
        text=True,
        timeout=SOCKET_TIMEOUT * 3,
    )
    assert result.returncode == 2
    assert "ENDPOINT_NAME is required" in result.stderr
    assert "STREAM_FORMAT must be one of" in result.stderr


def test_the_runtime_imports_nothing_outside_itself_but_stdlib_and_boto3(
    task_root: Path, aws_env: dict[str, str]
) -> None:
    # The asset ships no dependencies: importing every module must pull in neither
    # constructs_llm nor aws_cdk (boto3/botocore come with the Lambda Python runtime).
    modules = sorted(p.stem for p in (task_root / "runtime").glob("*.py") if p.stem != "__main__")
    code = (
        "import sys, importlib\n"
        f"for name in {modules!r}: importlib.import_module('runtime.' + name)\n"
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
