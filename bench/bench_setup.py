"""Set-up time from a fresh clone, measured side by side in one run.

Each step starts from a fresh ``git clone`` of this repository's HEAD with empty uv, pip
and npm caches, as on a new CI machine (downloads included):

1. baseline: ``python3 -m venv`` plus ``pip install --no-cache-dir -r requirements.txt``;
2. ``make synth`` (installs uv, the runtime pins and the CDK CLI, then synthesizes);
3. ``make test`` in another fresh clone (every install, ruff, mypy, the whole suite).

Goals: ``make synth`` takes no longer than the baseline; ``make test`` under 3 minutes on
2 cores. The load average is printed, since the machine may be shared. Set
``BENCH_SETUP=0`` to skip this benchmark (it takes several minutes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_GOAL_S = 180.0


def _fresh_env(caches: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "JSII_"))}
    env.update(
        UV_CACHE_DIR=str(caches / "uv"),
        PIP_NO_CACHE_DIR="1",
        npm_config_cache=str(caches / "npm"),
        PATH=os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep) if not p.endswith("/.venv/bin")
        ),
    )
    return env


def _clone(into: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(into)], check=True)
    return into


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        tail = (result.stdout + result.stderr)[-3000:]
        raise SystemExit(f"{' '.join(command)} failed in {cwd}:\n{tail}")
    return seconds


def _baseline(work: Path, env: dict[str, str]) -> float:
    clone = _clone(work / "baseline")
    venv = work / "plain-venv"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-cache-dir"]
    _timed([*pip, "-r", "requirements.txt"], clone, env)
    return time.perf_counter() - started


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    if os.environ.get("BENCH_SETUP") == "0":
        print("skipped (BENCH_SETUP=0)")
        return
    print(f"before: {_load()}")
    with tempfile.TemporaryDirectory(prefix="bench-setup-") as tmp:
        work = Path(tmp)
        baseline = _baseline(work, _fresh_env(work / "caches-baseline"))
        print(f"pip install -r requirements.txt (fresh venv)  {baseline:7.1f} s (baseline)")
        synth = _timed(["make", "synth"], _clone(work / "synth"), _fresh_env(work / "caches-synth"))
        ratio = synth / baseline
        verdict = "PASS" if synth <= baseline else "MISS"
        print(
            f"make synth (fresh clone)                      {synth:7.1f} s  {ratio:.2f}x {verdict}"
        )
        test = _timed(["make", "test"], _clone(work / "test"), _fresh_env(work / "caches-test"))
        verdict = "PASS" if test < TEST_GOAL_S else "MISS"
        print(
            f"make test (fresh clone)                       {test:7.1f} s  "
            f"(goal < {TEST_GOAL_S:.0f} s) {verdict}"
        )
    print(f"after: {_load()}")


if __name__ == "__main__":
    main()
