"""moto's server (``moto_server`` from the dev venv) on a free loopback port, for the S3 and Step
Functions the Batch API's front door calls through ``AWS_ENDPOINT_URL_S3`` and
``AWS_ENDPOINT_URL_SFN``. Started once per test module; ready when its ``/moto-api/`` answers,
polled until a deadline (the process's own start-up time, which load stretches)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.runtime_process import free_port

_READY_WITHIN_S = 60.0


@contextmanager
def moto_server() -> Iterator[str]:
    """The server's URL; the process is stopped on exit."""
    port = free_port()
    executable = Path(sys.executable).parent / "moto_server"
    process = subprocess.Popen(
        [str(executable), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _READY_WITHIN_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"moto_server exited with {process.returncode} before serving")
        try:
            with urllib.request.urlopen(f"{url}/moto-api/", timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"moto_server did not answer within {_READY_WITHIN_S:g} s"
                ) from None
            time.sleep(0.05)  # between two readiness polls of a starting process
