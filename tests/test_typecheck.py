"""mypy --strict over the package, examples, scripts, benchmarks and tests (pyproject.toml).

It runs inside the suite, so on a fresh clone its cold start (about 17 s of CPU, most of it
the aws-cdk-lib and OpenAI SDK modules it reads) overlaps the other tests instead of adding
to them."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow(seconds=40)


def test_mypy_strict_finds_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")


def _aws_cdk_modules_imported() -> dict[str, str]:
    """Each aws_cdk module the checked code imports, with one file that imports it."""
    spec = importlib.util.find_spec("aws_cdk")  # finds the package without importing it
    assert spec is not None and spec.submodule_search_locations
    package = Path(next(iter(spec.submodule_search_locations)))
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    sources = [ROOT / "examples"] + [ROOT / name for name in config["files"]]
    found: dict[str, str] = {}
    for source in sources:
        for path in [source] if source.is_file() else sorted(source.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    parts = node.module.split(".")[1:]
                    names = [node.module] + [
                        f"{node.module}.{alias.name}"
                        for alias in node.names
                        if package.joinpath(*parts, alias.name).is_dir()
                    ]
                for name in names:
                    if name != "aws_cdk" and not name.startswith("aws_cdk."):
                        continue
                    found.setdefault(name, str(path.relative_to(ROOT)))
                    # A service's types name its interfaces module (IRoleRef and the like).
                    service = name.split(".")[1] if name.count(".") == 1 else None
                    if service and (package / "interfaces" / service).is_dir():
                        found.setdefault(f"aws_cdk.interfaces.{service}", found[name])
    return found


def test_mypy_reads_every_aws_cdk_module_the_code_imports() -> None:
    """pyproject.toml skips the aws_cdk modules nobody imports (they read as Any); a module
    the code imports must be read, or mypy would check nothing that touches it."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
    read = {
        module
        for override in overrides
        if override.get("follow_imports") == "normal"
        for module in override["module"]
    }
    missing = {m: f for m, f in _aws_cdk_modules_imported().items() if m not in read}
    assert not missing, f"add to the followed aws_cdk modules in pyproject.toml: {missing}"
