"""The runtime started as the Lambda starts it: ``run.sh`` from a code asset holding only
``streaming/runtime/`` and ``streaming/formats.py``, in a process of its own whose stdout the
tests read."""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import constructs_llm.streaming.runtime as runtime_package

__all__ = [
    "RUNTIME_DIR",
    "RUN_SH",
    "free_port",
    "lambda_env",
    "make_task_root",
    "running",
    "serving",
    "wait_healthy",
]

RUNTIME_DIR = Path(runtime_package.__file__).parent
#: run.sh inside a task root, as the function's handler names it.
RUN_SH = ("streaming", "runtime", "run.sh")
_WAIT_S = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def lambda_env(aws_env: Mapping[str, str], **extra: str) -> dict[str, str]:
    """A minimal process environment: no PYTHONPATH into the source tree."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {**keep, **aws_env, "PYTHON": sys.executable, **extra}


def make_task_root(parent: Path) -> Path:
    """A Lambda task root as the asset lays it out: the runtime directory and the formats module
    it shares with the construct layer, and nothing else."""
    root = parent / "task"
    shared = root / "streaming"
    shutil.copytree(RUNTIME_DIR, shared / "runtime", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(RUNTIME_DIR.parent / "formats.py", shared / "formats.py")
    return root


@contextmanager
def running(task_root: Path, env: Mapping[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``run.sh`` in a process; killed (if still running) and reaped on the way out."""
    process = subprocess.Popen(
        ["/bin/sh", str(task_root.joinpath(*RUN_SH))],
        env=dict(env),
        cwd="/",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=_WAIT_S)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def wait_healthy(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate(timeout=_WAIT_S)
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the runtime did not become healthy within 15 s")


@contextmanager
def serving(
    parent: Path, aws_env: Mapping[str, str], **settings: str
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``run.sh`` from a fresh task root under ``parent``, on a free port, with the runtime's
    ``settings`` (environment variables) over ``aws_env``; yields the process and its URL
    once it answers ``/health``."""
    task_root = make_task_root(parent)
    port = free_port()
    env = lambda_env(aws_env, LAMBDA_TASK_ROOT=str(task_root), PORT=str(port), **settings)
    with running(task_root, env) as process:
        wait_healthy(port, process)
        yield process, f"http://127.0.0.1:{port}"
