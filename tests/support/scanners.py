"""cfn-lint and checkov on one template file, as `make test` installs them: what each finds.

checkov runs from its own venv (``CHECKOV``, as the Makefile sets it) with ``--skip-download``:
no calls to the vendor's API, which is unreachable here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["cfn_lint_findings", "checkov_failed_checks"]

ROOT = Path(__file__).resolve().parent.parent.parent


def cfn_lint_findings(path: str | Path) -> list[Any]:
    """cfn-lint's findings (errors, warnings and informational) on the template at ``path``."""
    lint = subprocess.run(
        [str(Path(sys.executable).parent / "cfn-lint"), "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    findings: list[Any] = json.loads(lint.stdout or "[]")
    return findings


def checkov_failed_checks(path: str | Path) -> list[str]:
    """The ids of the checks checkov fails on the template at ``path``."""
    checkov = os.environ.get("CHECKOV") or shutil.which("checkov")
    checkov = checkov or str(ROOT / ".venv-checkov" / "bin" / "checkov")
    options = ["--framework", "cloudformation", "-o", "json", "--quiet", "--skip-download"]
    scan = subprocess.run(
        [checkov, "-f", str(path), *options], capture_output=True, text=True, timeout=300
    )
    report = json.loads(scan.stdout or "{}")
    reports = report if isinstance(report, list) else [report]
    return [c["check_id"] for r in reports for c in r.get("results", {}).get("failed_checks", [])]
