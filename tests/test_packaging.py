"""The library is a package: `python -m build` makes an sdist and a wheel that `twine check`
passes, with its data files and the Lambda's code asset inside; and the client distribution
installs with boto3 alone. (The README's "Use it in your own stack" commands, which install
the library from a checkout and synthesize the example app with the real CDK CLI, run in
tests/test_chat_example.py, whose tests read their output.)"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from unittest import mock

import pytest

from constructs_llm import streaming
from tests.support.checkout import checkout_copy
from tests.support.import_closure import closure

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow(seconds=6)

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


# -- the client distribution ---------------------------------------------------------------------

#: The modules clients import: what ``constructs_llm.streaming`` exports, but the invoker's
#: constructs (the CDK side), and the errors the clients raise.
CLIENT_ENTRIES = sorted(
    {m for m in streaming._EXPORTS.values() if ".invoker." not in m} | {"constructs_llm.errors"}
)
UV = ROOT / ".venv-tools" / "bin" / "uv"

#: Run in the client's own venv: which distributions it has, every module of the client
#: imported, a request signed with sigv4_hook and a bearer token minted, at a fixed time.
CLIENT_SCRIPT = """
import datetime, importlib, importlib.metadata as md, json
from unittest import mock
from botocore.credentials import Credentials
from constructs_llm.streaming import sagemaker_bearer_token, sigv4_hook

files = [str(f) for f in md.files("constructs-llm-client") if str(f).endswith(".py")]
for name in files:
    importlib.import_module(name[:-3].replace("/", ".").removesuffix(".__init__"))

class Request:
    url = "https://abc123.lambda-url.us-west-2.on.aws/v1/chat/completions"
    method = "POST"
    headers = {"content-type": "application/json"}
    def read(self):
        return b'{"model": "m", "messages": []}'

request = Request()
credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session")
at = datetime.datetime(2026, 11, 26, 12, 0, 0)
with mock.patch("botocore.auth.get_current_datetime", return_value=at):
    sigv4_hook(credentials=credentials)(request)
    token = sagemaker_bearer_token(region="us-west-2", credentials=credentials)
print(json.dumps({
    "distributions": sorted(d.metadata["Name"].lower() for d in md.distributions()),
    "modules": files,
    "headers": request.headers,
    "token": token,
}))
"""


@pytest.fixture(scope="module")
def client_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` of `client/` in a copy of the checkout, as pip builds it there."""
    checkout = checkout_copy(tmp_path_factory.mktemp("checkout"))
    out = tmp_path_factory.mktemp("client-dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=checkout / "client",
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("constructs_llm_client-*.whl")
    return wheel


def test_the_client_wheel_holds_what_the_client_modules_import_only(
    client_wheel: Path,
) -> None:
    assert client_wheel.name == f"constructs_llm_client-{_version()}-py3-none-any.whl"
    with zipfile.ZipFile(client_wheel) as zf:
        names = {n for n in zf.namelist() if not n.startswith("constructs_llm_client-")}
        metadata = zf.read(f"constructs_llm_client-{_version()}.dist-info/METADATA").decode()
    # exactly what the client modules import, and what that imports: not the Lambda's server
    assert names == closure(ROOT, CLIENT_ENTRIES)
    assert "constructs_llm/streaming/runtime/server.py" not in names
    assert not any(n.startswith("constructs_llm/streaming/invoker/") for n in names)
    requires = sorted(line for line in metadata.splitlines() if line.startswith("Requires-Dist:"))
    assert requires == ["Requires-Dist: boto3>=1.44", "Requires-Dist: botocore>=1.44"]


def test_the_client_installs_with_boto3_alone_and_signs_a_request(
    client_wheel: Path, tmp_path: Path
) -> None:
    """The wheel in a fresh venv with the pinned boto3: no aws-cdk-lib, jsii or constructs;
    every client module imports; the SigV4 hook signs as botocore does (region from the
    function URL) and the bearer token verifies as SageMaker checks it."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    from tests.support.native_openai import verify_token

    venv = tmp_path / "client-venv"
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_LINK_MODE": "copy"}
    env.pop("VIRTUAL_ENV", None)
    uv = [str(UV), "--quiet"]
    subprocess.run([*uv, "venv", "--python", sys.executable, str(venv)], env=env, check=True)
    python = venv / "bin" / "python"
    install = ["pip", "install", "--python", str(python), "-c", str(ROOT / "constraints.txt")]
    subprocess.run([*uv, *install, str(client_wheel)], env=env, check=True, timeout=300)
    result = subprocess.run(
        [str(python), "-c", CLIENT_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    # THEN nothing of the CDK is installed, and every module of the client imported
    assert "boto3" in report["distributions"] and "constructs-llm-client" in report["distributions"]
    cdk = {"aws-cdk-lib", "jsii", "constructs", "cdk-nag", "constructs-llm"}
    assert cdk & set(report["distributions"]) == set()
    assert set(report["modules"]) == closure(ROOT, CLIENT_ENTRIES)
    # AND the signature is botocore's for the function URL's region
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session")
    signed_at = datetime.datetime(2026, 11, 26, 12, 0, 0)
    body = b'{"model": "m", "messages": []}'
    expected = AWSRequest(
        method="POST",
        url="https://abc123.lambda-url.us-west-2.on.aws/v1/chat/completions",
        data=body,
        headers={
            "x-amz-content-sha256": hashlib.sha256(body).hexdigest(),
            "Content-Type": "application/json",
        },
    )
    with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at):
        SigV4Auth(credentials, "lambda", "us-west-2").add_auth(expected)
    assert report["headers"]["Authorization"] == expected.headers["Authorization"]
    assert "/us-west-2/lambda/aws4_request" in report["headers"]["Authorization"]
    # AND the bearer token is one SageMaker accepts for that region
    claims = verify_token(
        report["token"], {credentials.access_key: credentials}, region="us-west-2", now=signed_at
    )
    assert claims.expires_in == 900
