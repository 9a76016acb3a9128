"""Import hygiene: the package loads nothing a user does not ask for, and the Lambda's code
asset needs nothing beyond the standard library and boto3."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import constructs_llm

RUNTIME = Path(constructs_llm.__file__).parent / "streaming" / "runtime"
# urllib3 is botocore's own transport, so it ships wherever boto3 does.
ALLOWED_THIRD_PARTY = {"boto3", "botocore", "urllib3"}


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {m.split(".")[0] for m in out.stdout.split()}


@pytest.mark.parametrize(
    "statement",
    [
        "import constructs_llm",
        "from constructs_llm.streaming import parse_stream, TokenEvent",
        "from constructs_llm import StreamFormat",
        "import constructs_llm.streaming.runtime.server",
    ],
)
def test_statement_does_not_load_the_cdk(statement: str) -> None:
    assert not _loaded_after(statement) & {"aws_cdk", "jsii", "constructs", "cdk_nag"}


def _cdk_services_after(statement: str) -> set[str]:
    code = (
        f"import sys; {statement}; "
        "print(' '.join(m for m in sys.modules if m.startswith('aws_cdk.aws_')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {m.split(".")[1] for m in out.stdout.split()}


@pytest.mark.parametrize(
    "statement",
    [
        "from constructs_llm import LlmModel, LlmEndpoint",
        "from constructs_llm import InferenceComponentEndpoint, InferenceComponent, "
        "AdapterComponent, ImportedEndpoint, Engine, ModelSource, InstanceType",
    ],
)
def test_core_constructs_load_only_sagemaker_and_iam(statement: str) -> None:
    # Alarms, their topic, dashboards and autoscaling load their services when used.
    assert _cdk_services_after(statement) == {"aws_iam", "aws_sagemaker"}


def test_lambda_runtime_imports_only_stdlib_and_boto3() -> None:
    for path in RUNTIME.glob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots = {node.module.split(".")[0]}
            else:
                continue
            foreign = {
                r for r in roots if r not in sys.stdlib_module_names and r != "__future__"
            } - ALLOWED_THIRD_PARTY
            assert not foreign, f"{path.name} imports {foreign}; the asset ships no dependencies"


def test_runtime_uses_relative_imports_for_its_own_modules() -> None:
    # In Lambda the package is deployed as a top-level `runtime/`, not under constructs_llm.
    for path in RUNTIME.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert not (node.module or "").startswith("constructs_llm"), path.name
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("constructs_llm") for a in node.names), path.name


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        constructs_llm.NoSuchThing  # noqa: B018


def test_core_constructs_make_no_jsii_call_at_import() -> None:
    # A jsii call at import (a module-level Duration, an Aws pseudo parameter) loads
    # aws-cdk-lib's JavaScript in Node.js and jsii's type checks before any construct exists:
    # more than the package's own modules cost. Loading the assemblies is all an import sends.
    code = (
        "from jsii._kernel.providers import process\n"
        "sent = []\n"
        "send = process._NodeProcess.send\n"
        "def counting(self, request, response_type):\n"
        "    sent.append(type(request).__name__)\n"
        "    return send(self, request, response_type)\n"
        "process._NodeProcess.send = counting\n"
        "from constructs_llm import LlmModel, LlmEndpoint\n"
        "print(' '.join(sorted(set(sent))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["LoadRequest"]
