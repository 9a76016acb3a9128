"""The library is a package: `python -m build` makes an sdist and a wheel that `twine check`
passes, with its data files and the Lambda's code asset inside; the wheel synthesizes a stack
from outside the repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

#: What the package carries besides its Python modules.
PACKAGE_DATA = {
    "constructs_llm/data/instances.json",
    "constructs_llm/data/dlc_images.json",
    "constructs_llm/data/models.json",
    "constructs_llm/data/tool_parsers.json",
    "constructs_llm/streaming/data/lwa_layers.json",
    "constructs_llm/streaming/runtime/server.py",
    "constructs_llm/streaming/runtime/run.sh",
    "constructs_llm/py.typed",
}

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


def _version() -> str:
    match = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert match, "pyproject.toml names the version"
    return match.group(1)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build`: the sdist, then the wheel built from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (path,) = dist.glob("constructs_llm-*.whl")
    return path


@pytest.fixture(scope="module")
def sdist(dist: Path) -> Path:
    (path,) = dist.glob("constructs_llm-*.tar.gz")
    return path


def test_wheel_carries_data_files_and_an_executable_runtime(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        run_sh = zf.getinfo("constructs_llm/streaming/runtime/run.sh")
    assert names >= PACKAGE_DATA
    assert (run_sh.external_attr >> 16) & 0o111, "run.sh must stay executable in the wheel"
    assert not any(n.startswith(("tests/", "stacks/")) for n in names)


def test_sdist_carries_what_builds_the_wheel_and_nothing_of_the_repository(sdist: Path) -> None:
    top = f"constructs_llm-{_version()}/"
    with tarfile.open(sdist) as tar:
        members = {m.name.removeprefix(top): m for m in tar.getmembers()}
    assert PACKAGE_DATA | {"pyproject.toml", "README.md", "CHANGELOG.md", "PKG-INFO"} <= set(
        members
    )
    assert members["constructs_llm/streaming/runtime/run.sh"].mode & 0o777 == 0o755
    outside = {
        name.split("/")[0]
        for name in members
        if "/" in name and not name.startswith(("constructs_llm/", "constructs_llm.egg-info/"))
    }
    assert outside == set(), f"the sdist carries folders of the repository: {outside}"
    assert not any(name.startswith(("tests", "stacks", "examples", "bench")) for name in members)


def test_twine_check_passes_on_the_sdist_and_the_wheel(sdist: Path, wheel: Path) -> None:
    twine = Path(sys.executable).parent / "twine"
    result = subprocess.run(
        [str(twine), "check", "--strict", str(sdist), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2, result.stdout


def test_the_version_is_semver_and_the_changelog_records_it(wheel: Path) -> None:
    version = _version()
    assert re.fullmatch(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)", version), version
    assert wheel.name == f"constructs_llm-{version}-py3-none-any.whl"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "https://keepachangelog.com/" in changelog and "## [Unreleased]" in changelog
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.M)
    assert releases and releases[0][0] == version, "the newest release is the package's version"
    newest = changelog.split(f"## [{version}]", 1)[1].split("\n## [", 1)[0]
    assert "### Added" in newest
    # The changelog lists what the library offers: every construct of the public API.
    for name in ("LlmModel", "LlmEndpoint", "InferenceComponent", "StreamingInvoker", "Engine"):
        assert f"`{name}" in newest, name


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
    _assert_one_runtime_asset(work / "out")


def _assert_one_runtime_asset(cloud_assembly: Path) -> None:
    """The invoker's code asset is the runtime folder alone, its run.sh executable."""
    (asset,) = [p for p in cloud_assembly.glob("asset.*") if p.is_dir()]
    run_sh = asset / "runtime" / "run.sh"
    assert run_sh.exists() and os.access(run_sh, os.X_OK)
    assert sorted(p.name for p in asset.iterdir()) == ["runtime"]
