"""The library installs as a wheel and synthesizes a stack from outside the repository,
with its data files and the Lambda's code asset inside the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

APP = textwrap.dedent(
    """
    import json, os, sys
    import constructs_llm
    from aws_cdk import App, Stack
    from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, StreamingInvoker

    assert "site-packages" in constructs_llm.__file__, constructs_llm.__file__
    app = App(outdir=sys.argv[1])
    stack = Stack(app, "Consumer")
    model = LlmModel(stack, "Model", source=ModelSource.hugging_face("mistralai/Mistral-7B-Instruct-v0.2"),
                     engine=Engine.tgi(), instance_type="ml.g5.2xlarge")
    endpoint = LlmEndpoint(stack, "Endpoint", model=model)
    StreamingInvoker(stack, "Stream", target=endpoint)
    app.synth()
    print(constructs_llm.__file__)
    """
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (path,) = out.glob("constructs_llm-*.whl")
    return path


def test_wheel_carries_data_files_and_an_executable_runtime(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        run_sh = zf.getinfo("constructs_llm/streaming/runtime/run.sh")
    assert {
        "constructs_llm/data/instances.json",
        "constructs_llm/data/dlc_images.json",
        "constructs_llm/data/models.json",
        "constructs_llm/data/tool_parsers.json",
        "constructs_llm/streaming/data/lwa_layers.json",
        "constructs_llm/streaming/runtime/server.py",
        "constructs_llm/py.typed",
    } <= names
    assert (run_sh.external_attr >> 16) & 0o111, "run.sh must stay executable in the wheel"
    assert not any(n.startswith(("tests/", "stacks/")) for n in names)


def test_installed_wheel_synthesizes_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # Dependencies come from the test environment; the library itself only from the wheel.
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
        check=True,
        timeout=300,
    )
    work = tmp_path / "consumer"
    work.mkdir()
    (work / "app.py").write_text(APP)
    env = {**os.environ, "PYTHONPATH": ""}
    result = subprocess.run(
        [str(python), "app.py", str(work / "out")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert str(venv) in result.stdout
    template = json.loads((work / "out" / "Consumer.template.json").read_text())
    types = {r["Type"] for r in template["Resources"].values()}
    assert {"AWS::SageMaker::Model", "AWS::Lambda::Url", "AWS::Lambda::Function"} <= types
    assets = [p for p in (work / "out").glob("asset.*") if p.is_dir()]
    (asset,) = assets
    run_sh = asset / "streaming" / "runtime" / "run.sh"
    assert run_sh.exists() and os.access(run_sh, os.X_OK)
    assert sorted(p.name for p in asset.iterdir()) == ["streaming"]
