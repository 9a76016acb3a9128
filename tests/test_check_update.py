"""``python -m constructs_llm.check_update OLD NEW``: what CloudFormation and SageMaker do with
a change, on pairs of synthesized templates, each edit one change a user makes: the verdict of
each endpoint and component, and the exit code (0 deploys, 1 refused, 2 bad input).

Every template comes from one app synthesized once for the module: each version of a stack is a
stack of its own named ``Test``, so the names derived from its path (an endpoint named after its
fleet) are the ones the same stack would take in two deploys. What only a real deploy
shows is in docs/operate.md ("Before a change")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from botocore.stub import Stubber

from constructs_llm import (
    AsyncInference,
    Autoscaling,
    ContainerImage,
    Deployment,
    Engine,
    FleetChange,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    ModelSource,
)
from constructs_llm.check_update import Template, Verdict, check_update, read_template
from constructs_llm.check_update.__main__ import main
from constructs_llm.updates.template_diff import CfnChange, compare
from tests.conftest import ROOT, cdk_context
from tests.matrix import builders
from tests.matrix.builders import EBS_ONLY, IMAGE, MISTRAL, model, vpc

SCALING = Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8)
NEW, TWO = FleetChange.NEW_ENDPOINT, FleetChange.TWO_DEPLOYS
G6 = "ml.g6.2xlarge"
KEY = "arn:aws:kms:us-east-1:123456789012:key/{}"
#: The CPU seconds the module's app may take to build and synthesize (this process and the jsii
#: runtime's): about 4 s here (2.4 s building the 25 stacks, 1.5 s the synth), plus about 7 s
#: when it is the first synth of its process (the runtime's warm-up, which a worker of the
#: suite pays once). CPU, not the wall clock, which a busy machine stretches many times over
#: (each jsii call waits for both processes to be scheduled).
SYNTH_CPU_BUDGET_S = 16


def endpoint(stack: Stack, **props: Any) -> LlmEndpoint:
    """The builders' endpoint, without the default alarms (a smaller stack), unless a guarded
    rollout needs them."""
    props.setdefault("alarms", "deployment" in props)
    return builders.endpoint(stack, **props)


def _answers(stack: Stack) -> AsyncInference:
    return AsyncInference(output=s3.Bucket.from_bucket_name(stack, "Answers", "my-answers"))


def _copies(
    *, id: str = "Chat", most: int = 4, instance_type: str = "ml.g5.12xlarge"
) -> Callable[[Stack], object]:
    """A component on a shared endpoint of up to 2 instances, scaling up to ``most`` copies."""

    def build(stack: Stack) -> object:
        shared = InferenceComponentEndpoint(
            stack, "Shared", instance_type=instance_type, max_instances=2
        )
        return InferenceComponent(
            stack,
            id,
            endpoint=shared,
            model=model(stack, instance_type=instance_type, bound=False),
            accelerators=1,
            min_memory_mib=16 * 1024,
            autoscaling=Autoscaling(
                min_capacity=1, max_capacity=most, target_concurrent_requests=4
            ),
        )

    return build


def _pools(*types: str, autoscaling: Autoscaling | None = None) -> Callable[[Stack], object]:
    def build(stack: Stack) -> object:
        return LlmEndpoint(
            stack,
            "Endpoint",
            model=model(stack, instance_type=None, bound=False),
            instance_type=list(types),
            autoscaling=autoscaling,
            fleet_change=TWO,
            alarms=False,
        )

    return build


def _captured(stack: Stack) -> object:
    built = endpoint(stack)
    built.config.data_capture_config = sagemaker.CfnEndpointConfig.DataCaptureConfigProperty(
        capture_options=[
            sagemaker.CfnEndpointConfig.CaptureOptionProperty(capture_mode="Input"),
            sagemaker.CfnEndpointConfig.CaptureOptionProperty(capture_mode="Output"),
        ],
        destination_s3_uri="s3://my-captures/chat/",
        initial_sampling_percentage=100,
    )
    return built


def _in_vpc(stack: Stack) -> object:
    subnets = (ec2.SubnetType.PUBLIC, ec2.SubnetType.PRIVATE_WITH_EGRESS)
    return endpoint(stack, model_props={"vpc": vpc(stack, *subnets)})


def _keyed(key: str) -> Callable[[Stack], object]:
    return lambda stack: endpoint(
        stack,
        instance_type=EBS_ONLY,
        kms_key=kms.Key.from_key_arn(stack, "VolumeKey", KEY.format(key)),
    )


def _rolling(source: str) -> Callable[[Stack], object]:
    return lambda stack: endpoint(
        stack,
        instance_count=4,
        deployment=Deployment.rolling(batch_percent=25, bake=Duration.minutes(5)),
        model_props={"source": ModelSource.hugging_face(source, needs_token=False)},
    )


#: Each version of the stack, by name.
VERSIONS: dict[str, Callable[[Stack], object]] = {
    "plain": lambda stack: endpoint(stack),
    "plain-mistral": lambda stack: endpoint(
        stack, model_props={"source": ModelSource.hugging_face(MISTRAL, needs_token=False)}
    ),
    "plain-image": lambda stack: endpoint(
        stack, engine=Engine.tgi(image=ContainerImage.from_uri(IMAGE))
    ),
    "plain-vpc": _in_vpc,
    "plain-capture": _captured,
    "key-a": _keyed("1111aaaa-1111-aaaa-1111-aaaa1111aaaa"),
    "key-b": _keyed("2222bbbb-2222-bbbb-2222-bbbb2222bbbb"),
    "scaled": lambda stack: endpoint(stack, autoscaling=SCALING, fleet_change=NEW),
    "scaled-g6": lambda stack: endpoint(
        stack, instance_type=G6, autoscaling=SCALING, fleet_change=NEW
    ),
    "scaled-async": lambda stack: endpoint(
        stack,
        autoscaling=Autoscaling(min_capacity=0, max_capacity=2),
        async_inference=_answers(stack),
        fleet_change=NEW,
    ),
    "plain-async": lambda stack: endpoint(stack, async_inference=_answers(stack), fleet_change=NEW),
    "two-async": lambda stack: endpoint(stack, async_inference=_answers(stack), fleet_change=TWO),
    "two-scaled": lambda stack: endpoint(stack, autoscaling=SCALING, fleet_change=TWO),
    "two-scaled-g6": lambda stack: endpoint(
        stack, instance_type=G6, autoscaling=SCALING, fleet_change=TWO
    ),
    "two-unscaled": lambda stack: endpoint(stack, fleet_change=TWO),
    "pools-2": _pools("ml.g6e.2xlarge", "ml.g5.4xlarge"),
    "pools-3": _pools("ml.g6e.2xlarge", "ml.g5.4xlarge", "ml.g6.4xlarge"),
    "pools-2-scaled": _pools("ml.g6e.2xlarge", "ml.g5.4xlarge", autoscaling=SCALING),
    "pools-3-scaled": _pools(
        "ml.g6e.2xlarge", "ml.g5.4xlarge", "ml.g6.4xlarge", autoscaling=SCALING
    ),
    "copies-4": _copies(),
    "copies-6": _copies(most=6),
    "copies-renamed": _copies(id="Assistant"),
    "copies-g6": _copies(instance_type="ml.g6.12xlarge"),
    "rolling": _rolling("meta-llama/Meta-Llama-3-8B-Instruct"),
    "rolling-mistral": _rolling(MISTRAL),
}

E, C, T = "endpoint", "component", "scalable target"

#: (old, new, {(kind, logical id prefix): verdict}, exit code): each edit a user makes.
EDITS: dict[str, tuple[str, str, dict[tuple[str, str], Verdict], int]] = {
    "no-change": ("plain", "plain", {(E, "Endpoint"): Verdict.UNCHANGED}, 0),
    "model-id": ("plain", "plain-mistral", {(E, "Endpoint"): Verdict.BLUE_GREEN}, 0),
    "image": ("plain", "plain-image", {(E, "Endpoint"): Verdict.BLUE_GREEN}, 0),
    "vpc": ("plain", "plain-vpc", {(E, "Endpoint"): Verdict.BLUE_GREEN}, 0),
    "data-capture-on": ("plain", "plain-capture", {(E, "Endpoint"): Verdict.BLUE_GREEN}, 0),
    "kms-key": ("key-a", "key-b", {(E, "Endpoint"): Verdict.BLUE_GREEN}, 0),
    "rolling": ("rolling", "rolling-mistral", {(E, "Endpoint"): Verdict.ROLLING}, 0),
    # async inference turned on and off: a new endpoint where the name follows the mode...
    "async-on-new-endpoint": (
        "scaled",
        "scaled-async",
        {(E, "Endpoint"): Verdict.NEW_ENDPOINT, (T, "EndpointScalableTarget"): Verdict.CREATED},
        0,
    ),
    "async-off-new-endpoint": (
        "scaled-async",
        "scaled",
        {(E, "Endpoint"): Verdict.NEW_ENDPOINT},
        0,
    ),
    "async-on-unscaled": ("plain", "plain-async", {(E, "Endpoint"): Verdict.NEW_ENDPOINT}, 0),
    # ...and refused where it does not (TWO_DEPLOYS, or a name of the user's)
    "async-on-two-deploys": ("plain", "two-async", {(E, "Endpoint"): Verdict.REFUSED}, 1),
    "async-off-two-deploys": ("two-async", "plain", {(E, "Endpoint"): Verdict.REFUSED}, 1),
    # an autoscaled instance-type change, in both fleet modes
    "instance-type-new-endpoint": (
        "scaled",
        "scaled-g6",
        {(E, "Endpoint"): Verdict.NEW_ENDPOINT, (T, "EndpointScalableTarget"): Verdict.CREATED},
        0,
    ),
    "instance-type-two-deploys": (
        "two-scaled",
        "two-scaled-g6",
        {(E, "Endpoint"): Verdict.REFUSED},
        1,
    ),
    "two-deploys-first": (
        "two-scaled",
        "two-unscaled",
        {(E, "Endpoint"): Verdict.IN_PLACE, (T, "EndpointScalableTarget"): Verdict.DELETED},
        0,
    ),
    "two-deploys-second": (
        "two-unscaled",
        "two-scaled-g6",
        {(E, "Endpoint"): Verdict.BLUE_GREEN, (T, "EndpointScalableTarget"): Verdict.CREATED},
        0,
    ),
    # instance pools
    "pool-added": ("pools-2", "pools-3", {(E, "Endpoint"): Verdict.BLUE_GREEN}, 0),
    "pool-removed": ("pools-3", "pools-2", {(E, "Endpoint"): Verdict.BLUE_GREEN}, 0),
    "pool-added-autoscaled": (
        "pools-2-scaled",
        "pools-3-scaled",
        {(E, "Endpoint"): Verdict.REFUSED},
        1,
    ),
    # components
    "max-copies": (
        "copies-4",
        "copies-6",
        {(C, "Chat"): Verdict.UNCHANGED, (T, "ChatScalableTarget"): Verdict.IN_PLACE},
        0,
    ),
    "component-renamed": (
        "copies-4",
        "copies-renamed",
        {(C, "Chat"): Verdict.DELETED, (C, "Assistant"): Verdict.CREATED},
        0,
    ),
    "component-endpoint-instance-type": (
        "copies-4",
        "copies-g6",
        {(C, "Chat"): Verdict.REFUSED},
        1,
    ),
}


def _cpu_seconds() -> float:
    """The CPU time of this process and of its descendants still running (the jsii runtime,
    and the node process it starts, which runs the construct code)."""
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    pending = [str(os.getpid())]
    while pending:
        for children in Path(f"/proc/{pending.pop()}/task").glob("*/children"):
            for pid in children.read_text().split():
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
                pending.append(pid)
    return total


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every version's template file and warnings, from one synth of one app."""
    started = _cpu_seconds()
    app = App(context=cdk_context())
    # One stack per version, each deployed as the stack "Test": the names derived from a
    # construct's path start from the stack's name, so they are the ones two deploys of the
    # same stack would take.
    stacks = {
        name: Stack(app, name.title().replace("-", ""), stack_name="Test") for name in VERSIONS
    }
    for name, build in VERSIONS.items():
        build(stacks[name])
    assembly = app.synth()
    folder = tmp_path_factory.mktemp("templates")
    found: dict[str, Any] = {"cpu": _cpu_seconds() - started}
    for name, stack in stacks.items():
        artifact = assembly.get_stack_artifact(stack.artifact_id)
        path = folder / f"{name}.template.json"
        path.write_text(json.dumps(artifact.template))
        warnings = [str(m.entry.data) for m in artifact.messages if m.level.value == "WARNING"]
        found[name] = (path, warnings)
    return found


def _path(synthesized: dict[str, Any], name: str) -> Path:
    found: Path = synthesized[name][0]
    return found


def _endpoint_name(synthesized: dict[str, Any], name: str) -> str | None:
    resources = json.loads(_path(synthesized, name).read_text())["Resources"]
    (props,) = (
        r.get("Properties", {})
        for r in resources.values()
        if r["Type"] == "AWS::SageMaker::Endpoint"
    )
    value = props.get("EndpointName")
    return value if isinstance(value, str) else None


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_each_edit_gets_its_verdict_and_exit_code(
    synthesized: dict[str, Any], edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new, expected, code = EDITS[edit]
    # WHEN the CLI compares the two versions
    assert main([str(_path(synthesized, old)), str(_path(synthesized, new))]) == code
    printed = capsys.readouterr().out
    # THEN each endpoint and component named gets its verdict, in the value and in print
    found = check_update(
        read_template(_path(synthesized, old)), read_template(_path(synthesized, new))
    )
    verdicts = {(f.kind, f.resource): f.verdict for f in found}
    for (kind, prefix), verdict in expected.items():
        matched = {
            k: v
            for k, v in verdicts.items()
            if k[0] == kind and re.match(rf"{prefix}[0-9A-F]{{8}}$", k[1])
        }
        assert list(matched.values()) == [verdict], (edit, kind, prefix, verdicts)
        (resource,) = (k[1] for k in matched)
        assert f"{kind} {resource}: {verdict.value.upper()}" in printed
    # AND every refusal cites its rule, and the exit code follows the refusals
    assert any(f.refused for f in found) == (code == 1)
    for finding in found:
        if finding.refused:
            assert finding.rule is not None and finding.rule.citation in printed


def test_async_inference_is_part_of_the_name_that_follows_the_fleet(
    synthesized: dict[str, Any],
) -> None:
    # GIVEN the same autoscaled endpoint, real-time and asynchronous, named after its fleet
    real_time = _endpoint_name(synthesized, "scaled")
    queued = _endpoint_name(synthesized, "scaled-async")
    # THEN the names differ by the mode alone: CloudFormation replaces the endpoint instead of
    # calling UpdateEndpoint, which SageMaker refuses for this change
    assert real_time == "Test-Endpoint-0FBD4E12-g5-2xlarge"
    assert queued == "Test-Endpoint-0FBD4E12-g5-2xlarge-async"
    # AND an unscaled asynchronous endpoint is named too (a real-time one is not), so that the
    # toggle replaces it, while an instance-type change keeps its name (blue/green)
    assert _endpoint_name(synthesized, "plain-async") == "Test-Endpoint-0FBD4E12-async"
    assert _endpoint_name(synthesized, "plain") is None
    # AND with TWO_DEPLOYS the name does not follow, and the synth says what to do
    assert _endpoint_name(synthesized, "two-async") is None
    (warning,) = [w for w in synthesized["two-async"][1] if "async-toggle" in w]
    assert re.search(
        r"Turning async inference off, or on for an endpoint deployed real-time, updates the "
        r"endpoint in place, which SageMaker refuses \(aws/sagemaker-python-sdk PR #3124.*"
        r"give it a new construct id.*fleet_change=FleetChange\.NEW_ENDPOINT.*"
        r"python -m constructs_llm\.check_update.*\[ack: constructs-llm:async-toggle\]$",
        warning,
    ), warning
    assert not [w for w in synthesized["scaled-async"][1] if "async-toggle" in w]


def test_a_user_name_on_an_asynchronous_endpoint_warns_naming_the_name() -> None:
    app = App(context=cdk_context())
    stack = Stack(app, "Test")
    endpoint(stack, async_inference=_answers(stack), endpoint_name="batch")
    (artifact,) = app.synth().stacks
    texts = [str(m.entry.data) for m in artifact.messages if "async-toggle" in str(m.entry.data)]
    assert len(texts) == 1 and "endpoint_name='batch'" in texts[0]
    assert "give it a new endpoint_name" in texts[0]


def test_what_a_blue_green_update_runs_beside_the_fleet(synthesized: dict[str, Any]) -> None:
    found = check_update(
        read_template(_path(synthesized, "two-unscaled")),
        read_template(_path(synthesized, "two-scaled-g6")),
    )
    (update,) = [f for f in found if f.kind == "endpoint"]
    # the new fleet may scale to the new target's maximum before the old one is gone
    assert update.meanwhile is not None
    assert "up to 4 x ml.g6.2xlarge (variant g6-2xlarge)" in update.meanwhile
    assert "variant g5-2xlarge: removed (ml.g5.2xlarge)" in update.changes
    assert "variant g6-2xlarge: added (ml.g6.2xlarge)" in update.changes
    # AND an endpoint hosting components may run up to its managed scaling's maximum
    moved = check_update(
        read_template(_path(synthesized, "copies-4")),
        read_template(_path(synthesized, "copies-g6")),
    )
    (shared,) = [f for f in moved if f.kind == "endpoint"]
    assert shared.verdict is Verdict.BLUE_GREEN and shared.meanwhile is not None
    assert "up to 2 x ml.g6.12xlarge (variant g6-12xlarge)" in shared.meanwhile
    rolled = check_update(
        read_template(_path(synthesized, "rolling")),
        read_template(_path(synthesized, "rolling-mistral")),
    )
    (rolling,) = [f for f in rolled if f.kind == "endpoint"]
    assert rolling.meanwhile is not None and "1 x ml.g5.2xlarge" in rolling.meanwhile  # 25 % of 4


def test_the_refusal_names_the_registered_variant(synthesized: dict[str, Any]) -> None:
    found = check_update(
        read_template(_path(synthesized, "two-scaled")),
        read_template(_path(synthesized, "two-scaled-g6")),
    )
    (refused,) = [f for f in found if f.refused]
    assert refused.rule is not None and refused.rule.id == "autoscaled-variant"
    assert "variant g5-2xlarge is registered for autoscaling on ml.g5.2xlarge and is removed" in (
        refused.why
    )


def test_the_module_synthesizes_once_within_its_budget(synthesized: dict[str, Any]) -> None:
    assert 0 < synthesized["cpu"] < SYNTH_CPU_BUDGET_S, synthesized["cpu"]


# -- bad input: exit 2, the file named, no traceback ---------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"old\.json: no such file"),
        ("{not json", r"old\.json: not JSON \(Expecting property name"),
        ("[1, 2]", r"old\.json: not a CloudFormation template \(a JSON list\)"),
        ('{"Outputs": {}}', r"old\.json: not a CloudFormation template: it has no Resources"),
        ('{"Resources": {"A": {"Properties": {}}}}', r"old\.json: resource 'A' has no Type"),
    ],
    ids=["missing", "not-json", "not-an-object", "no-resources", "no-type"],
)
def test_bad_input_exits_2_naming_the_file(
    synthesized: dict[str, Any],
    tmp_path: Path,
    content: str | None,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    old = tmp_path / "old.json"
    if content is not None:
        old.write_text(content)
    assert main([str(old), str(_path(synthesized, "plain"))]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and "Traceback" not in err, err


def test_the_module_runs_as_the_docs_give_it(synthesized: dict[str, Any], tmp_path: Path) -> None:
    """``python -m constructs_llm.check_update``: its exit codes from a process of its own."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "constructs_llm.check_update", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )

    refused = run(str(_path(synthesized, "plain")), str(_path(synthesized, "two-async")))
    assert refused.returncode == 1, refused.stderr
    assert "would be refused" in refused.stdout
    missing = run(str(tmp_path / "none.json"), str(_path(synthesized, "plain")))
    assert missing.returncode == 2 and "none.json: no such file" in missing.stderr
    assert "Traceback" not in missing.stderr
    usage = run(str(_path(synthesized, "plain")))
    assert usage.returncode == 2 and "OLD.template.json NEW.template.json" in usage.stderr


# -- --stack: the deployed template, read with boto3 ----------------------------------------------
#
# Through botocore's Stubber: moto's server mode (CloudFormation) cannot hold these stacks, as
# it creates the SageMaker resources and refuses instance types its own enum lacks
# ("Value 'ml.g5.2xlarge' at 'instanceType' failed to satisfy constraint").


@pytest.fixture
def cloudformation(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    """boto3's CloudFormation client, stubbed, as ``--stack`` gets it from ``boto3.client``."""
    client = boto3.session.Session().client(
        "cloudformation",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    made = []

    def make(service: str, **kwargs: Any) -> Any:
        made.append(service)
        return client

    monkeypatch.setattr(boto3, "client", make)
    with Stubber(client) as stubber:
        yield stubber
    stubber.assert_no_pending_responses()
    assert made == ["cloudformation"]


def test_stack_reads_the_deployed_template(
    synthesized: dict[str, Any], cloudformation: Stubber, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the stack deployed with autoscaling on ml.g5.2xlarge (TWO_DEPLOYS)
    deployed = _path(synthesized, "two-scaled").read_text()
    cloudformation.add_response(
        "get_template",
        {"TemplateBody": deployed},
        expected_params={"StackName": "Chat", "TemplateStage": "Original"},
    )
    # WHEN the new template moves it to ml.g6.2xlarge
    code = main(["--stack", "Chat", str(_path(synthesized, "two-scaled-g6"))])
    # THEN the update is refused, as between the two files
    assert code == 1
    assert re.search(r"endpoint Endpoint[0-9A-F]{8}: REFUSED", capsys.readouterr().out)


def test_stack_that_cannot_be_read_exits_2_naming_it(
    synthesized: dict[str, Any], cloudformation: Stubber, capsys: pytest.CaptureFixture[str]
) -> None:
    cloudformation.add_client_error(
        "get_template",
        service_error_code="ValidationError",
        service_message="Stack with id Missing does not exist",
        expected_params={"StackName": "Missing", "TemplateStage": "Original"},
    )
    assert main(["--stack", "Missing", str(_path(synthesized, "plain"))]) == 2
    err = capsys.readouterr().err
    assert "stack Missing: cannot read its deployed template" in err
    assert "Stack with id Missing does not exist" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "reference",
    [
        {"Fn::GetAtt": ["Model", "ModelName"]},
        {"Fn::GetAtt": "Model.ModelName"},
        {"Ref": "Model"},
        {"Fn::Sub": "${Model.ModelName}"},
        {"Fn::Sub": ["${Name}", {"Name": {"Ref": "Model"}}]},
    ],
    ids=["getatt", "getatt-dotted", "ref", "sub", "sub-variables"],
)
def test_a_reference_to_a_replaced_resource_replaces_what_holds_it(reference: object) -> None:
    """CloudFormation's part: a new Model (a create-only property changed) gives a new name to
    whatever references it, so the config holding it is replaced too, and the endpoint is
    updated onto it, however the template spells the reference."""

    def template(image: str) -> Template:
        variant = {"VariantName": "a", "InstanceType": "ml.g5.2xlarge", "ModelName": reference}
        return Template.of(
            {
                "Resources": {
                    "Model": {
                        "Type": "AWS::SageMaker::Model",
                        "Properties": {"PrimaryContainer": {"Image": image}},
                    },
                    "Config": {
                        "Type": "AWS::SageMaker::EndpointConfig",
                        "Properties": {"ProductionVariants": [variant]},
                    },
                    "Endpoint": {
                        "Type": "AWS::SageMaker::Endpoint",
                        "Properties": {"EndpointConfigName": {"Fn::GetAtt": ["Config", "X"]}},
                    },
                }
            },
            image,
        )

    changes = compare(template("a:1"), template("a:2"))
    assert [changes[k].change for k in ("Model", "Config", "Endpoint")] == [
        CfnChange.REPLACED,
        CfnChange.REPLACED,
        CfnChange.UPDATED,
    ]
    (endpoint,) = check_update(template("a:1"), template("a:2"))
    assert endpoint.verdict is Verdict.BLUE_GREEN
    # AND the same templates are no change at all
    (same,) = check_update(template("a:1"), template("a:1"))
    assert same.verdict is Verdict.UNCHANGED
