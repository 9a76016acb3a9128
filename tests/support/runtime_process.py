"""The runtime started as the Lambda starts it: ``run.sh`` from a code asset holding only
``streaming/runtime/``, ``streaming/formats.py`` and ``contract.py``, in a process of its own whose stdout the
tests read.

Readiness is an event, not a poll against a clock: the runtime writes its ``listening`` line
to stdout once its socket is bound (``__main__.py``), and ``wait_healthy`` waits for that
line, then for one ``/health`` answer. However busy the machine, a runtime that starts is
waited for; one that exits is reported at once with its stderr. The only clock is
``patience``'s bound, which keeps a runtime that neither starts nor exits from hanging the
suite."""

from __future__ import annotations

import http.client
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import constructs_llm.streaming.runtime as runtime_package
from tests.support.patience import patience

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
#: Bounds (before ``patience``'s factor) on a start-up that takes a second or two when idle,
#: and on a killed process's exit.
_START_S = 120.0
_EXIT_S = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def lambda_env(aws_env: Mapping[str, str], **extra: str) -> dict[str, str]:
    """A minimal process environment: no PYTHONPATH into the source tree."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {**keep, **aws_env, "PYTHON": sys.executable, **extra}


def make_task_root(parent: Path) -> Path:
    """A Lambda task root as the asset lays it out: the runtime directory, the vocabulary it
    shares with the construct layer (``contract.py`` at the root, ``streaming/formats.py`` the
    name the runtime imports it by), and nothing else."""
    root = parent / "task"
    shared = root / "streaming"
    shutil.copytree(RUNTIME_DIR, shared / "runtime", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(RUNTIME_DIR.parent / "formats.py", shared / "formats.py")
    shutil.copy(RUNTIME_DIR.parent.parent / "contract.py", root / "contract.py")
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
        process.wait(timeout=patience(_EXIT_S))
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def wait_healthy(port: int, process: subprocess.Popen[str]) -> dict[str, Any]:
    """Wait for the runtime's ``listening`` line on stdout (the lines before it are read; the
    rest stays for the caller), then for ``/health`` to answer 200; returns the line's record.
    Fails at once, with the process's stderr, if it exits first."""
    assert process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:  # until the listening line, or the end of stdout
        assert process.stdout is not None
        for line in iter(process.stdout.readline, ""):
            lines.put(line)
            if line.startswith('{"msg":"listening"'):
                return
        lines.put("")

    threading.Thread(target=read, name=f"runtime-{port}-stdout", daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=patience(_START_S))
        except queue.Empty:
            raise AssertionError(
                f"the runtime neither listened nor exited within {patience(_START_S):.0f} s "
                "(raise CONSTRUCTS_LLM_TEST_PATIENCE on a slower machine)"
            ) from None
        if not line:  # stdout ended: the process exited before it listened
            process.wait(timeout=patience(_EXIT_S))
            assert process.stderr is not None
            raise AssertionError(
                f"the runtime exited with {process.returncode} before listening: "
                f"{process.stderr.read()}"
            )
        if line.startswith('{"msg":"listening"'):
            break
    record: dict[str, Any] = json.loads(line)
    assert record["url"] == f"http://127.0.0.1:{port}", record
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=patience(_START_S))
    try:
        connection.request("GET", "/health")
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    return record


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


def exchange(
    url: str,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes | None = None,
    *,
    timeout: float,
) -> tuple[int, dict[str, str], bytes]:
    """One request to the runtime at ``url``: the status, the headers (names in lower case) and
    the body."""
    parsed = urlsplit(url)
    connection = http.client.HTTPConnection(
        parsed.hostname or "127.0.0.1", parsed.port, timeout=timeout
    )
    try:
        connection.request(method, path, body=body, headers=dict(headers))
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()
