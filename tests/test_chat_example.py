"""The README's complete app (examples/chat): the README shows exactly its app, and its six
lines of "Use it in your own stack", run word for word in an empty folder, install the library
and the pinned CDK CLI and synthesize the app, printing the template and the endpoint's note
and nothing else; the tests of the app's template read that run's cloud assembly. (cfn-lint,
cdk-nag and checkov scan the app's stack in tests/test_examples.py, in one run with every
template the suite scans.) Also the README's claims beside it: the Hugging Face token
trade-off and the Node versions jsii supports."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from constructs_llm.hosting.endpoint_logs import CONTEXT_KEY as LOGS_FLAG
from constructs_llm.hosting.fleet_change import CONTEXT_KEY as FLEET_FLAG
from tests.conftest import VALIDATION_SWITCH
from tests.support.chat_app import chat_stack_class, chat_stack_code
from tests.support.checkout import checkout_copy
from tests.support.intrinsics import evaluate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "chat"
pytestmark = pytest.mark.slow(seconds=45)


def _section() -> str:
    section = (ROOT / "README.md").read_text().split("## Use it in your own stack", 1)[1]
    return section.split("\n## ", 1)[0]


def _readme_block(language: str, after: str) -> str:
    tail = _section().split(after, 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", tail, re.DOTALL)
    assert match, f"no {language} block after {after!r}"
    return match.group(1)


def _paragraph(title: str) -> str:
    """The README paragraph that starts with ``**title**`` in the section, on one line."""
    text = _section().split(f"**{title}**", 1)[1].split("\n\n", 1)[0]
    return " ".join(text.split())


def test_the_readme_shows_the_app_verbatim() -> None:
    assert _readme_block("python", "`app.py` is:") == (EXAMPLE / "app.py").read_text()


def _recommended_flags() -> dict[str, Any]:
    """The feature flags `cdk init` writes into a new app's cdk.json (the pinned CLI's file,
    equal to aws-cdk-lib 2.275's `CURRENTLY_RECOMMENDED_FLAGS`; a flag the library recommends
    beyond them would make the quiet-synth test below fail)."""
    path = ROOT / "node_modules" / "aws-cdk" / "lib" / "init-templates"
    flags: dict[str, Any] = json.loads((path / ".recommended-feature-flags.json").read_text())
    return flags


def test_cdk_json_runs_the_app_with_the_flags_cdk_init_writes() -> None:
    example = json.loads((EXAMPLE / "cdk.json").read_text())
    flags = _recommended_flags()
    assert len(flags) > 80
    # cdk init's flags, in its order, then the library's own: a new app's autoscaled endpoint
    # takes an instance-type change as a new endpoint (FleetChange.NEW_ENDPOINT), and a named
    # endpoint gets its log group from the stack (EndpointLogs)
    own = {FLEET_FLAG: True, LOGS_FLAG: True}
    assert example == {"app": "python3 app.py", "context": {**flags, **own}}
    assert list(example["context"]) == [*sorted(flags), FLEET_FLAG, LOGS_FLAG]
    section = " ".join(_section().split())
    assert '`cdk.json` is `"app": "python3 app.py"` plus the feature flags `cdk init` writes' in (
        section
    )
    assert f'and the library\'s own, `"{FLEET_FLAG}": true`' in section
    assert f'and `"{LOGS_FLAG}": true`' in section
    # The repository's own app has them too, beside its stack selection.
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    assert {k: context.get(k) for k in flags} == flags
    assert set(context) - set(flags) == {"constructs-llm:stacks", FLEET_FLAG, LOGS_FLAG}
    assert context[FLEET_FLAG] is True and context[LOGS_FLAG] is True


def _node_major() -> str:
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    return version.stdout.strip().lstrip("v").split(".")[0]


def _own_stack_commands() -> str:
    """The shell block of the README's "Use it in your own stack"."""
    (block,) = re.findall(r"```bash\n(.*?)```", _section(), re.DOTALL)
    return str(block)


def _user_environment() -> dict[str, str]:
    """A shell as a user has it: no venv active, no PYTHONPATH, no AWS credentials, and no
    CDK CLI on the PATH (a folder holding a `cdk` executable is left out). On an end-of-life
    Node the jsii banner is silenced, as the README says."""
    ours = {str(Path(sys.executable).parent), str(ROOT / ".venv" / "bin")}
    path = [
        p
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and p not in ours and not os.access(Path(p) / "cdk", os.X_OK)
    ]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", VALIDATION_SWITCH}
        and not k.startswith("AWS_")
    }
    env["PATH"] = os.pathsep.join(path)
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    env["JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"] = _node_major()
    return env


def _pinned_cli_version() -> str:
    return str(json.loads((ROOT / "package.json").read_text())["devDependencies"]["aws-cdk"])


@dataclass(frozen=True)
class ReadmeRun:
    """The README's six lines, run: the user's folder and what its `npx cdk synth` printed."""

    app: Path
    commands: str
    stdout: str
    stderr: str

    @property
    def out(self) -> Path:
        return self.app / "cdk.out"


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory: pytest.TempPathFactory) -> ReadmeRun:
    """Exactly the README's lines, in an empty folder outside the repository, on a PATH
    without the CDK CLI: a fresh venv, `pip install` of a checkout (with its dependencies from
    PyPI), the pinned CDK CLI from npm's registry, the example's two files, and the real
    `npx cdk synth`, whose standard output and error are kept apart from the installs'."""
    work = tmp_path_factory.mktemp("readme")
    checkout = checkout_copy(work / "constructs-llm")
    commands = _own_stack_commands()
    install, synth = commands.rstrip().rsplit("\n", 1)
    assert synth == "npx cdk synth"
    app = work / "my-app"
    app.mkdir()
    # pip's --no-compile, spelled as pip's documentation says for its negative options (a
    # falsy value turns them on): the commands stay the README's, and pip skips compiling all
    # of aws-cdk-lib (about 20 s of CPU) when `cdk synth` then compiles only what it imports.
    # npm's audit, funding and update notices are network calls the install does not need.
    env = {
        **_user_environment(),
        "PIP_NO_COMPILE": "0",
        "NPM_CONFIG_AUDIT": "false",
        "NPM_CONFIG_FUND": "false",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
    }
    assert subprocess.run(["bash", "-c", "command -v cdk"], env=env).returncode == 1
    # The lines as written, in one shell; before the last, that shell's output goes to two
    # files, so what `npx cdk synth` prints is read alone.
    stdout, stderr = work / "synth.stdout", work / "synth.stderr"
    script = f'{install}\nexec >"{stdout}" 2>"{stderr}"\n{synth}\n'
    result = subprocess.run(
        ["bash", "-e", "-c", script.replace("/path/to/constructs-llm", str(checkout))],
        cwd=app,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    printed = ReadmeRun(app, commands, stdout.read_text(), stderr.read_text())
    assert result.returncode == 0, (result.stderr[-3000:], printed.stdout[-3000:], printed.stderr)
    return printed


@pytest.fixture(scope="module")
def template(readme_run: ReadmeRun) -> dict[str, Any]:
    path = readme_run.out / "ChatStack.template.json"  # the stack id the README deploys
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_the_readme_commands_install_the_library_and_the_pinned_cli(readme_run: ReadmeRun) -> None:
    assert readme_run.commands.count("/path/to/constructs-llm") >= 2
    # the block installs the CLI this repository pins, and runs that copy
    assert f"npm install --save-exact aws-cdk@{_pinned_cli_version()}" in readme_run.commands
    # The app ran on the venv's Python, with the library from the venv's site-packages.
    (installed,) = (readme_run.app / ".venv" / "lib").glob("python3*/site-packages/constructs_llm")
    assert (installed / "data" / "models.json").exists()
    # npx ran the CLI the block installed in the folder, at the pinned version
    assert (readme_run.app / "node_modules" / ".bin" / "cdk").exists()
    pinned = json.loads((readme_run.app / "package.json").read_text())["dependencies"]
    assert pinned == {"aws-cdk": _pinned_cli_version()}


def test_the_synthesized_app_has_one_runtime_asset(readme_run: ReadmeRun) -> None:
    """The invoker's code asset is the runtime folder and the shared vocabulary
    (``contract.py``) alone, its run.sh executable."""
    (asset,) = [p for p in readme_run.out.glob("asset.*") if p.is_dir()]
    run_sh = asset / "streaming" / "runtime" / "run.sh"
    assert run_sh.exists() and os.access(run_sh, os.X_OK)
    assert sorted(p.name for p in asset.iterdir()) == ["contract.py", "streaming"]


def test_cdk_synth_prints_the_template_the_endpoint_note_and_the_token_warning(
    readme_run: ReadmeRun, template: dict[str, Any]
) -> None:
    """Standard output is the template, as YAML; standard error holds no "N feature flags are
    not configured", no banner: one line for the one endpoint, which the library prints (the
    app has no code for it), as the README quotes, then the Hub token's warning, which the app
    leaves for its owner to acknowledge."""
    import yaml

    # the CLI prints the template without its bootstrap-version rule (`obscureTemplate` in the
    # pinned aws-cdk CLI, node_modules/aws-cdk/lib/index.js), which the file keeps
    rules = {k: v for k, v in template["Rules"].items() if k != "CheckBootstrapVersion"}
    assert "CheckBootstrapVersion" in template["Rules"] and rules
    assert yaml.safe_load(readme_run.stdout) == {**template, "Rules": rules}
    types = {r["Type"] for r in template["Resources"].values()}
    assert {"AWS::SageMaker::Model", "AWS::SageMaker::Endpoint", "AWS::Lambda::Url"} <= types
    assert "feature flags are not configured" not in readme_run.stderr
    # the note line, then the one warning the app does not acknowledge: the Hub token
    line, *rest = readme_run.stderr.splitlines()
    warning = " ".join(" ".join(rest).split())
    # the CLI's validation report: the one warning, where it is, and its acknowledgment id
    assert warning.count("WARNING ") == 1, readme_run.stderr
    assert warning.startswith("WARNING the Hugging Face token of meta-llama/"), warning
    assert "sagemaker:DescribeModel" in warning and "ChatStack/Model" in warning
    assert "Acknowledge with 'Annotation::constructs-llm:hf-token-in-model-env'" in warning
    quoted = re.search(r"`(ChatStack/Endpoint: Memory plan: [^`]*?)…`", _section())
    assert quoted, "the README quotes the note line"
    assert line.startswith(quoted.group(1))
    assert line.startswith(
        "ChatStack/Endpoint: Memory plan: meta-llama/Meta-Llama-3-8B-Instruct on 1 x 21.7 GiB "
        "(ml.g5.2xlarge): "
    )
    assert "; Capacity: at minimum 1 x ml.g5.2xlarge" in line
    # one instance in service, and a second while a blue/green update runs the new fleet
    assert "; Service Quotas: 'ml.g5.2xlarge for endpoint usage' must allow at least 2" in line
    assert "print(" not in (EXAMPLE / "app.py").read_text()  # the app prints nothing itself


def test_the_app_acknowledges_nothing_of_its_own(readme_run: ReadmeRun) -> None:
    # The app leaves the token warning to its owner: no acknowledgment of a library warning,
    # and the one warning in the cloud assembly is the token's, on the Model.
    metadata = json.loads((readme_run.out / "ChatStack.metadata.json").read_text())
    acknowledged = [
        rule
        for entries in metadata.values()
        for entry in entries
        if entry["type"] == "aws:cdk:acknowledged-rules"
        for rule in entry["data"]
        if rule.startswith("Annotation::")  # the library's cdk-nag waivers are others
    ]
    assert acknowledged == []
    warnings = [
        (path, str(e["data"]))
        for path, entries in metadata.items()
        for e in entries
        if e["type"] == "aws:cdk:warning"
    ]
    ((where, text),) = warnings
    assert where == "/ChatStack/Model"
    assert "[ack: constructs-llm:hf-token-in-model-env]" in text
    assert "sagemaker:DescribeModel" in text


def test_the_app_warns_about_the_token_in_the_model_environment(tmp_path: Path) -> None:
    from aws_cdk import App

    stack_code = chat_stack_code()
    assert "acknowledge(" not in stack_code
    app = App(outdir=str(tmp_path))
    stack = chat_stack_class(stack_code)(app, "ChatStack")
    warnings = [
        str(entry.data)
        for entry in stack.node.find_child("Model").node.metadata
        if entry.type == "aws:cdk:warning"
    ]
    assert len(warnings) == 1 and "[ack: constructs-llm:hf-token-in-model-env]" in warnings[0]
    assert "sagemaker:DescribeModel" in warnings[0]
    assert "which this app does not acknowledge" in _paragraph("Hugging Face token.")


def test_the_token_reaches_the_model_environment_as_a_dynamic_reference(
    template: dict[str, Any],
) -> None:
    (model,) = _resources(template, "AWS::SageMaker::Model")
    env = model["Properties"]["PrimaryContainer"]["Environment"]
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        assert "{{resolve:secretsmanager:" in json.dumps(env[name]), name
    paragraph = _paragraph("Hugging Face token.")
    assert "`HF_TOKEN` and `HUGGING_FACE_HUB_TOKEN`" in paragraph
    assert "`constructs-llm:hf-token-in-model-env`" in paragraph


def test_a_sagemaker_model_takes_no_secret_by_reference() -> None:
    """The README's reason: the API's container definition has plain environment variables
    and no secret field, and its reference says not to put sensitive data there."""
    from botocore.loaders import Loader

    model = Loader().load_service_model("sagemaker", "service-2")
    container = model["shapes"]["ContainerDefinition"]["members"]
    assert not [m for m in container if re.search("secret|credential", m, re.I)]
    assert "Don't include any sensitive data" in container["Environment"]["documentation"]
    assert "takes no secret by reference" in _paragraph("Hugging Face token.")


_RUNTIME_RELEASE = re.compile(
    r'new NodeRelease\((\d+),\{endOfLife:new Date\("([\d-]+)"\)'
    r'(?:,endOfJsiiSupport:new Date\("([\d-]+)"\))?([^}]*)\}'
)


def _jsii_node_support() -> dict[int, date]:
    """Each Node major in the pinned jsii runtime's table with the day its support ends (the
    table's own date, or end of life + 6 months), untested majors left out: the rule of the
    runtime's `NodeRelease`."""
    import jsii

    runtime = Path(jsii.__file__).parent / "_embedded" / "jsii" / "bin__jsii-runtime.js"
    support = {}
    for major, eol, jsii_end, rest in _RUNTIME_RELEASE.findall(runtime.read_text()):
        if "untested:!0" in rest:
            continue
        end = date.fromisoformat(jsii_end or eol)
        if not jsii_end:
            month = end.month + 6
            end = end.replace(year=end.year + (month - 1) // 12, month=(month - 1) % 12 + 1)
        support[int(major)] = end
    assert {20, 22, 24} <= set(support)
    return support


def test_the_readme_names_the_node_majors_jsii_supports_today() -> None:
    support = _jsii_node_support()
    supported = sorted(m for m, end in support.items() if end > date.today())
    paragraph = _paragraph("Node.js.")
    assert f"supports Node {' and '.join(map(str, supported))}." in paragraph
    assert (
        "Node 20 is end-of-life and not supported anymore by this software since "
        f"{support[20].isoformat()}" in paragraph
    )
    assert "`export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20`" in paragraph


def test_the_node_banner_is_the_one_the_readme_describes() -> None:
    """On an end-of-life Node, a process that starts jsii prints the README's box of `b'!!…'`
    lines and goes on; the README's variable silences it. On a supported Node there is none."""
    major = _node_major()
    env = {
        k: v for k, v in os.environ.items() if k != "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
    }
    command = [sys.executable, "-c", "import constructs; print('went on')"]
    loud = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    quiet = subprocess.run(
        command,
        env={**env, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": major},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loud.stdout == quiet.stdout == "went on\n"
    assert "!!" not in quiet.stderr
    if date.today() < _jsii_node_support().get(int(major), date.max):
        assert "!!" not in loud.stderr
        return
    assert loud.stderr.startswith("b'!!!!")
    sentence = f"Node {major} is end-of-life and not supported anymore by this software since"
    assert sentence in loud.stderr
    assert sentence.replace(f"Node {major}", "Node 20") in _paragraph("Node.js.")


def _resources(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == kind]


def test_outputs_are_the_url_endpoint_name_dashboard_and_log_group(
    template: dict[str, Any],
) -> None:
    outputs = template["Outputs"]
    assert set(outputs) == {"Url", "EndpointName", "DashboardUrl", "InvokerLogGroup"}
    assert outputs["Url"]["Value"]["Fn::GetAtt"][1] == "FunctionUrl"
    assert outputs["EndpointName"]["Value"]["Fn::GetAtt"][1] == "EndpointName"
    (dashboard,) = _logical_ids(template, "AWS::CloudWatch::Dashboard")
    url = evaluate(
        outputs["DashboardUrl"]["Value"],
        template,
        partition="aws",
        region="eu-west-1",
        physical_ids={dashboard: "DashboardA1B2"},
    )
    assert url == (
        "https://console.aws.amazon.com/cloudwatch/home?region=eu-west-1"
        "#dashboards:name=DashboardA1B2"
    )
    (log_group,) = _logical_ids(template, "AWS::Logs::LogGroup")
    assert outputs["InvokerLogGroup"]["Value"] == {"Ref": log_group}


def _logical_ids(template: dict[str, Any], kind: str) -> list[str]:
    return [k for k, r in template["Resources"].items() if r["Type"] == kind]


def test_the_app_uses_api_keys_and_reserves_no_concurrency(template: dict[str, Any]) -> None:
    # a new account may have 10-50 in all and Lambda keeps 100 unreserved: no reservation
    (url,) = _resources(template, "AWS::Lambda::Url")
    assert url["Properties"]["AuthType"] == "NONE"
    (function,) = _resources(template, "AWS::Lambda::Function")
    assert "ReservedConcurrentExecutions" not in function["Properties"]
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


def test_an_alarm_email_from_the_context_mails_the_default_alarms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cdk deploy -c alarm-email=...`: the app's endpoint alarms notify a topic of its own,
    to which the address is subscribed (in-process: the app's class, with that context)."""
    from aws_cdk import App
    from aws_cdk.assertions import Template

    from tests.conftest import cdk_context

    spec = importlib.util.spec_from_file_location("chat_app", EXAMPLE / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "import"))
    spec.loader.exec_module(module)  # its own App synthesizes once, without the context
    app = App(
        outdir=str(tmp_path / "out"), context={**cdk_context(), "alarm-email": "me@example.com"}
    )
    template = Template.from_stack(module.ChatStack(app, "ChatStack"))
    (topic,) = template.find_resources("AWS::SNS::Topic")
    template.has_resource_properties(
        "AWS::SNS::Subscription",
        {"Endpoint": "me@example.com", "Protocol": "email", "TopicArn": {"Ref": topic}},
    )
    alarms = template.find_resources("AWS::CloudWatch::Alarm").values()
    assert all(a["Properties"]["AlarmActions"] == [{"Ref": topic}] for a in alarms)
