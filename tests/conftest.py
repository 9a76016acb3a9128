"""Shared fixtures. CDK apps get the same feature flags as cdk.json, so tests see what
`make synth` produces."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# The engine cases are checks shared by a live and a replayed test: show their failing values.
pytest.register_assert_rewrite("tests.streaming.vllm_cases")


def _node_major() -> str:
    """jsii silences its Node end-of-life banner only for the Node major named (as make does)."""
    try:
        node = subprocess.run(
            ["node", "-p", "process.versions.node.split('.')[0]"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return ""
    return node.stdout.strip()


os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", _node_major())
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
#: aws-cdk-lib runs its built-in CloudFormation validation unless this variable is "false"
#: (`defaultValidationEnabled` in aws-cdk-lib's core/lib/private/synthesis-validation.js).
VALIDATION_SWITCH = "CDK_VALIDATION"
# aws-cdk-lib checks every synthesized template against its bundled CloudFormation schemas
# (its built-in "CloudFormation Validate" plugin), which loads the schemas once per process
# (about 4 s of Node.js CPU) and reads every resource at each synthesis. The apps the tests
# synthesize in memory skip it: there it only reports warnings, which no test reads. The runs
# that synthesize as users do keep it, since their environments drop this variable: the
# examples' strict CLI synth (tests/test_examples.py), where an unacknowledged warning fails
# the synth, and the README's commands (tests/test_chat_example.py). cfn-lint checks every
# example template against the same registry schemas (tests/test_example_scans.py).
os.environ.setdefault(VALIDATION_SWITCH, "false")

ROOT = Path(__file__).resolve().parent.parent


REPORT_ANNOTATIONS = "@aws-cdk/core:annotationsInValidationReport"


def cdk_context(*, annotations_in_report: bool = False) -> dict[str, Any]:
    """cdk.json's context. In-process apps leave warnings out of the validation report unless
    asked: the report is printed by the jsii process from a background thread, which can land
    after pytest's capture of the test has ended (the CLI tests keep cdk.json as it is)."""
    context: dict[str, Any] = json.loads((ROOT / "cdk.json").read_text())["context"]
    if not annotations_in_report:
        context.pop(REPORT_ANNOTATIONS)
    return context


@pytest.fixture(scope="module")
def new_stack() -> Callable[..., Any]:
    """Returns a factory of fresh, environment-agnostic stacks in fresh apps."""
    from aws_cdk import App, Stack

    def make(region: str | None = None, **context: Any) -> Stack:
        app = App(context={**cdk_context(), **context})
        env = {"region": region, "account": "123456789012"} if region else None
        return Stack(app, "Test", env=env)

    return make


def _stated_seconds(item: pytest.Item) -> float:
    """What a slow test says it costs: `pytest.mark.slow(seconds=...)`, else 0."""
    marker = item.get_closest_marker("slow")
    return float(marker.kwargs.get("seconds", 0)) if marker else 0.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules start longest first, so the two workers finish together instead of one waiting
    on a late slow test: the slow modules by their stated cost (a cold mypy, the README's
    install from PyPI), then the other slow modules, then the rest by test count. `make test`
    passes --no-loadscope-reorder so xdist keeps this order; the sort is stable and its key is
    per module, so each module's tests stay together (one fixture setup)."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)

    def cost(module: list[pytest.Item]) -> tuple[float, bool, int]:
        seconds = max(_stated_seconds(item) for item in module)
        slow = any(item.get_closest_marker("slow") for item in module)
        return (-seconds, not slow, -len(module))

    items[:] = [item for module in sorted(modules.values(), key=cost) for item in module]


def worker_import_order(paths: list[Path], worker: str, workers: int) -> list[Path]:
    """``paths`` rotated to start at this worker's share: ``gw0`` at the first, ``gw1`` of two
    at the middle, and so on."""
    index = int(worker.removeprefix("gw"))
    start = len(paths) * index // workers
    return paths[start:] + paths[:start]


def pytest_sessionstart(session: pytest.Session) -> None:
    """On a fresh clone every xdist worker compiles the bytecode of what it imports (pytest's
    rewritten test modules, the library, aws-cdk-lib's large modules) into .pycache/, and the
    workers collect the same modules in the same order, so each compiles all of it at the same
    time. Each worker first imports the test modules from its own share onwards instead: the
    workers compile different halves and read each other's. A fresh `make test` spends about
    7 s less CPU in collection; with bytecode in place it changes nothing. Only for a run of
    the whole suite (the test paths of pyproject.toml), so a run of one module imports no more.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None or session.config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        return
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    paths = sorted((ROOT / "tests").rglob("test_*.py"))
    for path in worker_import_order(paths, worker, workers):
        # a module that fails to import is imported again by the collection, which reports it
        with contextlib.suppress(Exception):
            importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
