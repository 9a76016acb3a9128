"""mypy --strict over the package, examples, scripts, benchmarks and tests (pyproject.toml).

It runs inside the suite, so on a fresh clone its cold start (a minute or more: the
aws-cdk-lib stubs are large) overlaps the other tests instead of adding to them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def test_mypy_strict_finds_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")
