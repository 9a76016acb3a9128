"""Every example stack, synthesized by the real CDK CLI in strict mode, passes cdk-nag and
equals its committed fixture (which tests/test_example_scans.py runs cfn-lint and checkov over).

cdk-nag runs inside the app as a validation plugin (see app.py): any unacknowledged finding
makes the synth fail, so a successful `cdk synth` is the zero-findings proof. Each
acknowledgment in the library carries its reason in code.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stacks import EXAMPLES, stack_id, stack_ids
from tests.conftest import VALIDATION_SWITCH, cdk_context
from tests.support.intrinsics import evaluate
from tests.support.templates import fixture, normalized

ROOT = Path(__file__).resolve().parent.parent
CDK = ROOT / "node_modules" / ".bin" / "cdk"
#: `make synth`'s command plus the CLI's strict mode: a warning the app leaves unacknowledged
#: (in the validation report or the stacks' metadata) fails the synth, as an error does.
SYNTH = [str(CDK), "synth", "--no-notices", "--quiet", "--strict"]
STRICT_FLAG = "@aws-cdk/core:strictCfnValidateErrors"
pytestmark = pytest.mark.slow(seconds=40)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    env.pop(VALIDATION_SWITCH, None)  # aws-cdk-lib's own template validation, as users have it
    for key in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        env.pop(key, None)
    return env


@pytest.fixture(scope="module")
def cloud_assembly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`cdk synth` of every example as `make synth` runs it, with no credentials, plus strict
    mode (`--strict`): the same templates, and the synth fails on any unacknowledged warning."""
    out = tmp_path_factory.mktemp("cdk.out")
    result = subprocess.run(
        [*SYNTH, "--output", str(out)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (out.parent / "cli-stdout.txt").write_text(result.stdout)
    (out.parent / "cli-stderr.txt").write_text(result.stderr)
    return out


@pytest.fixture(scope="module")
def templates(cloud_assembly: Path) -> dict[str, Path]:
    return {
        p.name.removesuffix(".template.json"): p for p in cloud_assembly.glob("*.template.json")
    }


def test_templates_match_their_fixtures(templates: dict[str, Path]) -> None:
    """Logical IDs and properties of every example stay as committed: a refactor renders the
    same templates, and a feature's change to one is reviewed in its fixture's diff."""
    changed = [
        name
        for name, path in sorted(templates.items())
        if normalized(json.loads(path.read_text())) != fixture(name)
    ]
    assert not changed, (
        f"templates differ from tests/fixtures/templates: {changed}; review the diff, then "
        "refresh with `python -m tests.support.templates cdk.out` after `make synth`"
    )


def test_one_template_per_example_stack(templates: dict[str, Path]) -> None:
    expected = {stack for name in EXAMPLES for stack in stack_ids(name)}
    assert set(templates) == expected
    assert len(expected) == len(EXAMPLES) + 3  # the fleet's four teams


def test_templates_hold_no_physical_names_but_the_endpoint(templates: dict[str, Path]) -> None:
    for path in templates.values():
        resources = json.loads(path.read_text())["Resources"]
        for resource in resources.values():
            props = resource.get("Properties", {})
            if resource["Type"] == "AWS::SageMaker::Model":
                assert "ModelName" not in props
            if resource["Type"] == "AWS::SageMaker::EndpointConfig":
                assert "EndpointConfigName" not in props


def test_no_arn_names_its_partition_literally(templates: dict[str, Path]) -> None:
    """The examples are environment-agnostic: every ARN they build takes its partition from
    ``AWS::Partition`` (the Lambda Web Adapter layer included), so none says ``arn:aws:``."""
    for name, path in templates.items():
        text = path.read_text()
        assert '"arn:aws:' not in text and '"arn:aws-' not in text, name


def test_every_example_outputs_its_dashboard_s_console_url(templates: dict[str, Path]) -> None:
    """Each example has a dashboard, and its `DashboardUrl` output opens it in the console
    of the partition and region the stack is deployed to."""
    for name, path in sorted(templates.items()):
        template = json.loads(path.read_text())
        (board,) = [
            k for k, r in template["Resources"].items() if r["Type"] == "AWS::CloudWatch::Dashboard"
        ]
        url = evaluate(
            template["Outputs"]["DashboardUrl"]["Value"],
            template,
            partition="aws-cn",
            region="cn-northwest-1",
            physical_ids={board: f"{name}-board"},
        )
        assert url == (
            "https://console.amazonaws.cn/cloudwatch/home?region=cn-northwest-1"
            f"#dashboards:name={name}-board"
        ), name


def test_the_capacity_example_graphs_each_gpu_and_alarms_on_the_fullest(
    templates: dict[str, Path],
) -> None:
    """The README's `capacity` row: enhanced metrics on, a graph per GPU, an alarm on the fullest
    GPU (the dimension set the enhanced-metrics guide describes, which pools keep) beside the
    per-pool ones."""
    template = json.loads(templates["Capacity"].read_text())
    resources = template["Resources"].values()
    (config,) = [r for r in resources if r["Type"] == "AWS::SageMaker::EndpointConfig"]
    assert config["Properties"]["MetricsConfig"] == {
        "EnableDetailedObservability": True,
        "EnableEnhancedMetrics": True,
    }
    alarms = [r["Properties"] for r in resources if r["Type"] == "AWS::CloudWatch::Alarm"]
    queries = [json.dumps(a.get("Metrics", "")) for a in alarms]
    assert sum("SELECT MAX(GPUMemoryUtilization)" in q for q in queries) == 1
    assert not any("InstanceId, InstanceType" in q for q in queries)
    (dashboard,) = [r for r in resources if r["Type"] == "AWS::CloudWatch::Dashboard"]
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert "AcceleratorId,EndpointName,InstanceId,VariantName" in body
    assert "AcceleratorId,EndpointName,InstanceId,InstanceType,VariantName" not in body


def test_the_capacity_example_watches_the_engine_of_a_pooled_autoscaled_endpoint(
    templates: dict[str, Path],
) -> None:
    """A pooled, autoscaled endpoint with a dashboard: detailed observability stated in its
    config, PromQL alarms on vLLM's KV cache and queue shown on the dashboard with the engine's
    queries, the dashboard's URL as an output, and a name that follows the pools."""
    template = json.loads(templates["Capacity"].read_text())
    resources = template["Resources"]
    kinds = {k: r["Type"] for k, r in resources.items()}
    (endpoint,) = [resources[k] for k, t in kinds.items() if t == "AWS::SageMaker::Endpoint"]
    assert endpoint["Properties"]["EndpointName"].startswith("Capacity-Endpoint-")
    assert kinds and "AWS::ApplicationAutoScaling::ScalableTarget" in kinds.values()
    (config,) = [resources[k] for k, t in kinds.items() if t == "AWS::SageMaker::EndpointConfig"]
    assert len(config["Properties"]["ProductionVariants"][0]["InstancePools"]) == 4
    promql = {
        k: json.dumps(r["Properties"]["EvaluationCriteria"])
        for k, r in resources.items()
        if r["Type"] == "AWS::CloudWatch::Alarm" and "EvaluationCriteria" in r["Properties"]
    }
    assert sorted(promql) == ["EndpointAlarmsKvCache157D8B7C", "EndpointAlarmsQueueE8C15E68"]
    assert any(
        "vllm:kv_cache_usage_perc" in q and "vllm_kv_cache_usage_perc" in q for q in promql.values()
    )
    (dashboard,) = [r for r in resources.values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert all(k in body for k in promql)  # in the row's alarm widget
    assert "vLLM's own metrics (detailed observability)" in body
    assert "vllm:time_to_first_token_seconds" in body
    assert "DashboardUrl" in template["Outputs"]


def test_every_warning_in_the_examples_is_acknowledged(cloud_assembly: Path) -> None:
    """The examples synthesized in strict mode (the fixture's `--strict`), which fails on a
    warning left unacknowledged (see docs/synth-time-checks.md, "Acknowledging a warning"):
    each example acknowledges the warnings it accepts, with a reason. The validation report
    the CLI read holds no warning, and the acknowledgments it was spared by are in the
    assembly."""
    assert "--strict" in SYNTH
    report = json.loads((cloud_assembly / "validation-report.json").read_text())
    warnings = [
        violation["ruleName"]
        for plugin in report["pluginReports"]
        for violation in plugin["violations"]
        if violation["severity"] == "warning"
    ]
    assert warnings == []
    acknowledged = {
        rule
        for metadata in cloud_assembly.glob("*.metadata.json")
        for entries in json.loads(metadata.read_text()).values()
        for entry in entries
        if entry["type"] == "aws:cdk:acknowledged-rules"
        for rule, reason in entry["data"].items()
        if rule.startswith("Annotation::constructs-llm:") and reason
    }
    assert "Annotation::constructs-llm:hf-token-in-model-env" in acknowledged


#: An app whose model warns (an instance type the catalog does not know), the warning not
#: acknowledged.
WARNED_APP = """\
from aws_cdk import App, Stack

from constructs_llm import InstanceType
from tests.matrix.builders import model

app = App()
model(Stack(app, "Warned"), instance_type=InstanceType("ml.g8.2xlarge", allow_unknown_family=True))
app.synth()
"""


def test_strict_mode_fails_the_cli_synth_on_an_unacknowledged_warning(tmp_path: Path) -> None:
    """`--strict` fails the CLI's synth on a warning left unacknowledged. The context flag
    `@aws-cdk/core:strictCfnValidateErrors` does not: under the CLI, aws-cdk-lib prints the
    report and the synth succeeds (it throws only for an app synthesized in memory, which the
    bad-input matrix shows), as docs/synth-time-checks.md says."""
    # GIVEN the app, with the examples' context plus the flag in its cdk.json
    (tmp_path / "app.py").write_text(WARNED_APP)
    context = {**cdk_context(annotations_in_report=True), STRICT_FLAG: True}
    app = f"{sys.executable} app.py"
    (tmp_path / "cdk.json").write_text(json.dumps({"app": app, "context": context}))
    # WHEN the CLI synthesizes it without strict mode, then the assembly it wrote with strict
    # mode, as the examples' fixture runs
    env = {**_env(), "PYTHONPATH": str(ROOT)}

    def cdk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    flagged = cdk(*[c for c in SYNTH if c != "--strict"], "--output", "flagged")
    strict = cdk(*SYNTH, "--app", str(tmp_path / "flagged"), "--output", "strict")
    # THEN the flag alone lets the synth pass (printing the warning), and strict mode fails it,
    # naming the id that acknowledges the warning
    acknowledge = "Acknowledge with 'Annotation::constructs-llm:unknown-instance-type'"
    assert flagged.returncode == 0, flagged.stdout + flagged.stderr
    assert acknowledge in flagged.stderr
    # aws-cdk-lib's own CloudFormation validation ran too, as in the examples' synth (the suite
    # turns it off only in memory, see tests/conftest.py): ml.g8 is not in its schema
    assert "Acknowledge with 'CloudFormation-Validate::W3030'" in flagged.stderr
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "Synthesis finished with warnings (--strict mode)" in strict.stderr
    assert acknowledge in strict.stderr


def test_synth_prints_one_note_line_per_endpoint_and_nothing_else(cloud_assembly: Path) -> None:
    """No INFO blocks with JavaScript locations, no Node banner: one line per endpoint or
    component (memory plan and Service Quotas), one per TGI model (TGI's upstream status),
    printed once by the library on standard error (app.py prints nothing), then the CLI's own
    two lines."""
    stdout = (cloud_assembly.parent / "cli-stdout.txt").read_text()
    stderr = (cloud_assembly.parent / "cli-stderr.txt").read_text()
    output = stdout + stderr
    assert "[Info at" not in output and "end-of-life" not in output
    kinds = ("Memory plan", "Quotas", ": Engine.tgi(): TGI is archived upstream")
    notes = [line for line in stderr.splitlines() if any(kind in line for kind in kinds)]
    annotated = {  # every construct with notes, from the cloud assembly
        path.lstrip("/")
        for metadata in cloud_assembly.glob("*.metadata.json")
        for path, entries in json.loads(metadata.read_text()).items()
        if any(entry["type"] == "constructs-llm:note" for entry in entries)
    }
    # 24 endpoints or components, 5 TGI models; the fleet's 4 endpoints and 60 components
    assert len(notes) == len(annotated) == 93, output
    assert {line.split(": ", 1)[0] for line in notes} == annotated  # each printed once
    assert not [line for line in stdout.splitlines() if any(kind in line for kind in kinds)]
    tgi = sorted(line.split(": ", 1)[0] for line in notes if kinds[2] in line)
    assert tgi == [
        "FrontDoors/Model",
        "Llama2Tgi/Model",
        "Llama3Components/Model",
        "SharedEndpoint/ChatModel",
        "SharedEndpoint/QwenModel",
    ]
    assert "Phi3Lmi/Endpoint: Memory plan: microsoft/Phi-3-mini-4k-instruct" in output
    assert "SharedEndpoint/Endpoint: Service Quotas: 'ml.g5.12xlarge" in output
    others = set(output.splitlines()) - set(notes) - {""}
    assert len(others) == 2 and any(line.startswith("Successfully synthesized") for line in others)


def test_the_library_prints_the_note_lines_when_the_app_synthesizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No code in the app: `app.synth()` prints `note_lines(app)` on standard error, notes
    written by aspects at synth (a shared endpoint's capacity) included."""
    from aws_cdk import App

    from constructs_llm.notes import note_lines
    from tests.conftest import cdk_context

    app = App(outdir=str(tmp_path), context=cdk_context())
    EXAMPLES["shared-endpoint"](app, "SharedEndpoint")
    capsys.readouterr()
    app.synth()
    printed = capsys.readouterr()
    assert printed.out == ""
    assert printed.err.splitlines() == note_lines(app)
    assert [line.split(": ", 2)[1] for line in note_lines(app)] == [
        "Service Quotas",
        "Engine.tgi()",  # the chat model's TGI status
        "Memory plan per copy",
        "Engine.tgi()",
        "Memory plan per copy",
    ]
    assert "; Capacity: at minimum 1 x ml.g5.12xlarge" in note_lines(app)[0]


def test_notes_stay_in_the_cloud_assembly(cloud_assembly: Path) -> None:
    manifest = json.loads((cloud_assembly / "manifest.json").read_text())
    extra = manifest["artifacts"]["Phi3Lmi"]["additionalMetadataFile"]
    metadata = json.loads((cloud_assembly / extra).read_text())
    notes = [e["data"] for e in metadata.get("/Phi3Lmi/Endpoint", [])]
    assert any(n.startswith("Memory plan: ") for n in notes)
    assert any(n.startswith("Service Quotas: 'ml.g5.4xlarge") for n in notes)
    kinds = {e["type"] for entries in metadata.values() for e in entries}
    assert "constructs-llm:note" in kinds and "aws:cdk:info" not in kinds


def _readme_examples() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("\n## Examples\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_s_table_names_each_example_s_stack_id(cloud_assembly: Path) -> None:
    rows = re.findall(
        r"^\| `([a-z0-9-]+)` \| ((?:`[A-Za-z0-9]+`(?:, )?)+) \|", _readme_examples(), re.M
    )
    assert sorted(name for name, _ in rows) == sorted(EXAMPLES)
    manifest = json.loads((cloud_assembly / "manifest.json").read_text())
    stacks = {
        artifact_id
        for artifact_id, artifact in manifest["artifacts"].items()
        if artifact["type"] == "aws:cloudformation:stack"
    }
    listed = {name: re.findall(r"`([A-Za-z0-9]+)`", ids) for name, ids in rows}
    assert {stack for ids in listed.values() for stack in ids} == stacks
    assert all(ids == stack_ids(name) for name, ids in listed.items())


def test_the_readme_s_deploy_line_names_a_stack_the_cli_finds_in_cdk_out(
    cloud_assembly: Path,
) -> None:
    """`make synth STACKS=<name>` then `npx cdk deploy <stack id> --app cdk.out`: the pinned
    CLI, run as npx runs it from the repository, selects that stack in the cloud assembly
    (`cdk ls` with the same selection; deploying needs an AWS account)."""
    (block,) = re.findall(r"```bash\n(.*?)```", _readme_examples(), re.S)
    synth, deploy = block.strip().splitlines()
    name = synth.removeprefix("make synth STACKS=")
    assert name in EXAMPLES
    stack = stack_id(name)
    assert deploy.startswith(f"npx cdk deploy {stack} --app cdk.out ")
    listed = subprocess.run(
        ["npx", "--no-install", "cdk", "ls", stack, "--app", str(cloud_assembly)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert listed.stdout.split() == [stack]
