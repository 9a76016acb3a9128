"""The README's complete app (examples/chat): the README shows exactly its files, the real
CDK CLI synthesizes it as written, and cfn-lint, cdk-nag and checkov find nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "chat"
CDK = ROOT / "node_modules" / ".bin" / "cdk"
pytestmark = pytest.mark.slow


def _readme_block(language: str, after: str) -> str:
    section = (ROOT / "README.md").read_text().split("## Use it in your own stack", 1)[1]
    section = section.split("\n## ", 1)[0]
    tail = section.split(after, 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", tail, re.DOTALL)
    assert match, f"no {language} block after {after!r}"
    return match.group(1)


def test_the_readme_shows_the_example_files_verbatim() -> None:
    assert _readme_block("python", "`app.py`:") == (EXAMPLE / "app.py").read_text()
    assert _readme_block("json", "`cdk.json`:") == (EXAMPLE / "cdk.json").read_text()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`cdk synth` in the example's folder, as a user runs it (no credentials)."""
    out = tmp_path_factory.mktemp("chat.out")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)  # the library as if installed
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    for key in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        env.pop(key, None)
    result = subprocess.run(
        [str(CDK), "synth", "--no-notices", "--quiet", "--output", str(out)],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (EXAMPLE / "cdk.out").exists()
    path = out / "ChatStack.template.json"  # the stack id the README deploys
    data: dict[str, Any] = json.loads(path.read_text())
    data["__path__"] = str(path)
    return data


def _resources(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == kind]


def test_outputs_are_the_url_endpoint_name_and_dashboard(template: dict[str, Any]) -> None:
    outputs = template["Outputs"]
    assert {"Url", "EndpointName", "Dashboard"} <= set(outputs)
    assert outputs["Url"]["Value"]["Fn::GetAtt"][1] == "FunctionUrl"
    assert outputs["EndpointName"]["Value"]["Fn::GetAtt"][1] == "EndpointName"
    assert "sagemaker/home" in json.dumps(outputs["Dashboard"])


def test_the_app_uses_api_keys_with_reserved_concurrency(template: dict[str, Any]) -> None:
    (url,) = _resources(template, "AWS::Lambda::Url")
    assert url["Properties"]["AuthType"] == "NONE"
    (function,) = _resources(template, "AWS::Lambda::Function")
    assert function["Properties"]["ReservedConcurrentExecutions"] == 10
    assert function["Properties"]["Environment"]["Variables"]["API_KEYS_SECRET_ID"] == (
        "llm/api-keys"
    )


def test_the_model_runs_on_the_vllm_dlc(template: dict[str, Any]) -> None:
    # vLLM, not TGI (archived upstream), with vLLM's own batch limits
    (model,) = _resources(template, "AWS::SageMaker::Model")
    container = model["Properties"]["PrimaryContainer"]
    env = {k: v for k, v in container["Environment"].items() if isinstance(v, str)}
    assert env == {
        "SM_VLLM_MODEL": "meta-llama/Meta-Llama-3-8B-Instruct",
        "SM_VLLM_TENSOR_PARALLEL_SIZE": "1",
        "SM_VLLM_MAX_MODEL_LEN": "4096",
    }
    assert set(container["Environment"]) - set(env) == {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
    assert "/vllm:" in json.dumps(container["Image"])
    (config,) = _resources(template, "AWS::SageMaker::EndpointConfig")
    (variant,) = config["Properties"]["ProductionVariants"]
    assert variant["InferenceAmiVersion"].startswith("al2023-ami-sagemaker-inference-gpu-")


def test_start_up_timeouts_the_readme_quotes(template: dict[str, Any]) -> None:
    (config,) = _resources(template, "AWS::SageMaker::EndpointConfig")
    (variant,) = config["Properties"]["ProductionVariants"]
    assert variant["InstanceType"] == "ml.g5.2xlarge"
    assert variant["ModelDataDownloadTimeoutInSeconds"] == 900
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 900


def test_cdk_destroy_removes_every_resource(template: dict[str, Any]) -> None:
    kept = {
        logical_id: r.get("DeletionPolicy")
        for logical_id, r in template["Resources"].items()
        if r.get("DeletionPolicy", "Delete") != "Delete"
        or r.get("UpdateReplacePolicy", "Delete") != "Delete"
    }
    assert kept == {}
    assert _resources(template, "AWS::SecretsManager::Secret") == []  # secrets live outside


def test_cfn_lint_and_checkov_find_nothing(template: dict[str, Any]) -> None:
    path = template["__path__"]
    lint = subprocess.run(
        [str(Path(sys.executable).parent / "cfn-lint"), "--format", "json", path],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert json.loads(lint.stdout or "[]") == []
    checkov = os.environ.get("CHECKOV") or shutil.which("checkov")
    checkov = checkov or str(ROOT / ".venv-checkov" / "bin" / "checkov")
    options = ["--framework", "cloudformation", "-o", "json", "--quiet", "--skip-download"]
    scan = subprocess.run(  # --skip-download: no calls to the vendor's API (unreachable here)
        [checkov, "-f", path, *options],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(scan.stdout or "{}")
    reports = report if isinstance(report, list) else [report]
    failed = [c["check_id"] for r in reports for c in r.get("results", {}).get("failed_checks", [])]
    assert failed == []


def test_cdk_nag_finds_nothing_unacknowledged(tmp_path: Path) -> None:
    # The app's stack exactly as written, in an app that also runs cdk-nag (as app.py here
    # does): an unacknowledged finding fails the synth.
    from aws_cdk import App, Validations
    from cdk_nag import AwsSolutionsChecks

    source = (EXAMPLE / "app.py").read_text()
    stack_code, app_code = source.split("\napp = App()\n", 1)
    assert app_code.strip() == 'ChatStack(app, "ChatStack")\napp.synth()'
    namespace: dict[str, Any] = {}
    exec(compile(stack_code, str(EXAMPLE / "app.py"), "exec"), namespace)
    app = App(outdir=str(tmp_path))
    namespace["ChatStack"](app, "ChatStack")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()
