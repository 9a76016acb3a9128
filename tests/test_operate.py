"""docs/operate.md: its AWS CLI commands are ones the CLI accepts (checked against botocore's
service models as the CLI maps them, by a checker shown here to refuse what the CLI refuses);
its CDK CLI commands are ones the pinned CLI has (checked against the CLI's own option table);
and what it says `cdk diff` shows is what the real CDK CLI prints for those changes, among them
the instance-type change of an autoscaled endpoint in a new app (cdk.json's
``constructs-llm:newEndpointOnFleetChange``), which replaces the Endpoint.

The apps are synthesized in this process, with cdk.json's context and the context the CLI adds,
each once; the real CDK CLI runs each `cdk diff` offline (``--app <cloud assembly> --template
<base template>``), side by side. That `cdk synth` with a ``cdk.json`` reaches an app is shown by
the examples' and the README's own CLI synths (tests/test_examples.py, tests/test_packaging.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from aws_cdk import App, CfnOutput, Stack
from aws_cdk.assertions import Template

from constructs_llm import (
    Autoscaling,
    Engine,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
)
from constructs_llm.hosting.fleet_change import CONTEXT_KEY
from tests.conftest import ROOT, cdk_context
from tests.support.aws_cli import CliCommand, commands, problems
from tests.support.cdk_cli import CLI_PACKAGE
from tests.support.cdk_cli import problems as cdk_problems
from tests.support.template_graph import CONFIG, ENDPOINT, POLICY, TARGET, Graph

LOG_GROUP = "AWS::Logs::LogGroup"


def _endpoint_log_group(graph: Graph) -> str:
    """The endpoint's log group (the invoker has its own)."""
    (group,) = [
        k
        for k in graph.of(LOG_GROUP)
        if str(graph.props(k).get("LogGroupName", "")).startswith("/aws/sagemaker/Endpoints/")
    ]
    return group


OPERATE = ROOT / "docs" / "operate.md"
README = ROOT / "README.md"
CDK = ROOT / "node_modules" / ".bin" / "cdk"
#: What the tests reading `cdk diff` state they cost (six synths and four `cdk diff` runs, once
#: for the module: 13 s alone on 2 cores), so the module starts among the first.
SECONDS = 14


def _command(text: str) -> CliCommand:
    (found,) = commands(f"```bash\n{text}\n```\n")
    return found


# -- the commands ---------------------------------------------------------------------------------


def test_every_aws_command_of_the_page_and_the_readme_is_one_the_cli_accepts() -> None:
    found = commands(OPERATE.read_text()) + commands(README.read_text())
    operations = {" ".join(c.words[:2]) for c in found}
    # the page's own commands are all read: failure reason, logs, queries, quota, tear-down
    assert {
        "sagemaker describe-endpoint",
        "sagemaker wait",
        "logs filter-log-events",
        "logs start-query",
        "service-quotas list-service-quotas",
        "service-quotas request-service-quota-increase",
        "sns subscribe",
        "logs delete-log-group",
    } <= operations
    refused = [p for c in found for p in problems(c)]
    assert refused == []


def test_every_aws_command_of_every_page_is_one_the_cli_accepts() -> None:
    """The other pages' commands, code spans included (``aws cloudwatch set-alarm-state`` in
    the security page's checklist needs ``--state-reason``)."""
    pages = sorted((ROOT / "docs").glob("*.md"))
    found = {page.name: commands(page.read_text()) for page in pages if page != OPERATE}
    assert sum(map(len, found.values())) >= 4  # the pages do show commands
    refused = [f"{name}: {p}" for name, cs in found.items() for c in cs for p in problems(c)]
    assert refused == []


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        (
            'aws sagemaker describe-endpoint --endpoint-nmae "$ENDPOINT"',
            r"--endpoint-nmae is not an option of DescribeEndpoint .*did you mean "
            r"--endpoint-name\?",
        ),
        (
            "aws sagemaker describe-endpoints --endpoint-name x",
            r"no operation 'describe-endpoints'",
        ),
        ("aws sage-maker describe-endpoint --endpoint-name x", r"no service 'sage-maker'"),
        ("aws sagemaker wait endpoint-ready --endpoint-name x", r"no waiter 'endpoint-ready'"),
        ("aws sagemaker describe-endpoint --query FailureReason", r"requires --endpoint-name"),
        ("aws service-quotas list-service-quotas --servicecode sagemaker", r"--servicecode"),
        (
            "aws sagemaker describe-endpoint --endpoint-name x --query FailureReson",
            r"--query names FailureReson, which DescribeEndpoint's output lacks",
        ),
        (
            "aws sagemaker describe-endpoint --endpoint-name x --query 'Variants[?'",
            r"is not JMESPath",
        ),
        (
            "aws sagemaker create-endpoint-config --endpoint-config-name x "
            '--production-variants \'[{"VariantName": "a"}]\' '
            "--metrics-config '{\"EnableDetailedObservability\": false'",
            r"--metrics-config .* is not valid JSON",
        ),
        (
            "aws sagemaker create-endpoint-config --endpoint-config-name x "
            '--production-variants \'[{"VariantNme": "a"}]\'',
            r"--production-variants: VariantNme is not a member of ProductionVariant",
        ),
        ("aws sns subscribe --topic-arn t --protocol email --endpoint a@b.c", r"--endpoint is not"),
        ("aws s3 cpp a s3://bucket/a", r"the CLI's s3 has no command 'cpp'"),
        ("aws s3 cp a s3://bucket/a --recursiv", r"'--recursiv' is not an option of s3 cp"),
        ("aws s3 cp a", r"s3 cp takes 2-2 paths, got 1"),
    ],
    ids=[
        "misspelled-flag",
        "unknown-operation",
        "unknown-service",
        "unknown-waiter",
        "missing-required",
        "flag-without-hyphens",
        "query-field-the-output-lacks",
        "query-not-jmespath",
        "json-that-does-not-parse",
        "json-key-the-shape-lacks",
        "name-the-cli-renamed",
        "s3-command-the-cli-lacks",
        "s3-option-the-command-lacks",
        "s3-paths-missing",
    ],
)
def test_the_checker_refuses_what_the_cli_would(text: str, refusal: str) -> None:
    assert any(re.search(refusal, p) for p in problems(_command(text))), problems(_command(text))


def test_the_checker_accepts_the_cli_s_own_spellings() -> None:
    # the CLI's rename of sns subscribe's Endpoint, a boolean's --no- form, the pagination
    # options of a paginated operation, an option given as --flag=value, a JSON argument whose
    # keys are the shape's members, and a substitution inside an argument
    for text in (
        "aws sns subscribe --topic-arn t --protocol email --notification-endpoint a@b.c",
        "aws logs filter-log-events --log-group-name g --no-interleaved --max-items 5",
        "aws sagemaker describe-endpoint --endpoint-name=x --output text",
        "aws sagemaker create-endpoint-config --endpoint-config-name x --production-variants "
        '\'[{"VariantName": "a", "InstanceType": "ml.g5.xlarge"}]\' '
        "--metrics-config '{\"EnableDetailedObservability\": false}'",
        "aws logs start-query --log-group-name g --start-time $(date +%s) --end-time 1 "
        "--query-string 'fields @timestamp | limit 5'",
        # the CLI's own s3 commands, read from its source: options, switches and paths
        "aws s3 rm s3://bucket --recursive",
        "aws s3 sync llama3 s3://bucket/llama3/ --exclude '*.bin' --delete --region us-east-1",
        # a redirection is the shell's
        "aws cloudformation get-template --stack-name s --query TemplateBody > t.json",
    ):
        assert problems(_command(text)) == [], text


def test_commands_in_substitutions_and_after_a_pipe_are_read() -> None:
    found = commands(
        '```bash\nX=$(aws sagemaker describe-endpoint --endpoint-name "$(echo x)" '
        "--query EndpointName --output text) && aws logs delete-log-group "
        "--log-group-name g | cat\n```\n"
    )
    assert [c.words[:2] for c in found] == [
        ("sagemaker", "describe-endpoint"),
        ("logs", "delete-log-group"),
    ]


def test_service_quotas_has_no_operation_to_withdraw_a_request_or_lower_a_quota() -> None:
    """The tear-down's last claim: the API can raise a quota and read requests, not undo one
    (the template operations manage requests made for new accounts of an organization)."""
    operations = botocore.session.get_session().get_service_model("service-quotas").operation_names
    undo = [
        op
        for op in operations
        if re.match(r"(Cancel|Withdraw|Decrease|Delete|Reduce)", op) and "Template" not in op
    ]
    assert undo == []
    assert "RequestServiceQuotaIncrease" in operations


# -- reading cdk diff ---------------------------------------------------------------------------

#: What the CLI adds to cdk.json's context when it runs an app (path and asset metadata, and the
#: version reporting that adds the CDKMetadata resource), so each cloud assembly is the one
#: `cdk synth` would write.
CLI_CONTEXT = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:version-reporting": True,
}


@dataclass(frozen=True)
class Synth:
    """A synthesized app: its cloud assembly, and what the CLI would print about its stack (the
    warnings the assembly holds)."""

    assembly: Path
    messages: str


def _synth(
    out: Path, *, env: dict[str, str] | None = None, new_endpoint: bool = True, **endpoint: Any
) -> Synth:
    """A chat endpoint with autoscaling, its invoker and its name as an output, synthesized
    into ``out`` with cdk.json's context (which sets ``constructs-llm:newEndpointOnFleetChange``,
    so ``FleetChange.NEW_ENDPOINT``) and the CLI's, the flag turned off if ``new_endpoint`` is
    False."""
    context = {**cdk_context(), **CLI_CONTEXT}
    if not new_endpoint:
        context[CONTEXT_KEY] = False
    app = App(outdir=str(out), context=context)
    stack = Stack(app, "Chat")
    instance_type = endpoint.pop("instance_type", "ml.g5.2xlarge")
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
        engine=Engine.vllm(),
        instance_type=instance_type,
        max_total_tokens=8192,
        env=env,
    )
    chat = LlmEndpoint(
        stack,
        "Endpoint",
        model=model,
        autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8),
        **endpoint,
    )
    StreamingInvoker(stack, "Api", target=chat)
    CfnOutput(stack, "EndpointName", value=chat.endpoint_name)
    # in-process, warnings stay in the cloud assembly (cdk_context leaves them out of the
    # validation report): there the CLI reads what it prints
    messages = app.synth().get_stack_by_name("Chat").messages
    return Synth(out, "\n".join(f"{m.level}: {m.entry.data}" for m in messages))


def _template(synth: Synth) -> Path:
    return synth.assembly / "Chat.template.json"


def _graph(synth: Synth) -> Graph:
    return Graph(Template.from_json(json.loads(_template(synth).read_text())))


def _replaced(diff: str) -> set[str]:
    """The resource types `cdk diff` marks for replacement."""
    return set(re.findall(r"^\[~\] (AWS::\S+) .* replace$", diff, re.MULTILINE))


#: The deployed apps the changes are made on: a new app (cdk.json's flag on) and one that keeps
#: its endpoints through two deploys (the flag off).
BASES: dict[str, dict[str, Any]] = {"new-app": {}, "two-deploys": {"new_endpoint": False}}

#: Each change: the base it is made on, and the changed app.
CHANGES: dict[str, tuple[str, dict[str, Any]]] = {
    "env": ("new-app", {"env": {"SM_VLLM_MAX_NUM_SEQS": "16"}}),
    "instance-type": ("new-app", {"instance_type": "ml.g6.2xlarge"}),
    "instance-type-two-deploys": (
        "two-deploys",
        {"instance_type": "ml.g6.2xlarge", "new_endpoint": False},
    ),
    "endpoint-name": ("two-deploys", {"endpoint_name": "chat-llm", "new_endpoint": False}),
}


@pytest.fixture(scope="module")
def synths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Synth]:
    """Each base and each changed app, synthesized in this process."""
    root = tmp_path_factory.mktemp("diff")
    apps = {**BASES, **{name: args for name, (_, args) in CHANGES.items()}}
    return {name: _synth(root / name, **dict(args)) for name, args in apps.items()}


def _env() -> dict[str, str]:
    """The CLI's environment: no telemetry, and no credentials (an offline diff needs none)."""
    env = dict(os.environ)
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    for key in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        env.pop(key, None)
    return env


@pytest.fixture(scope="module")
def diffs(synths: dict[str, Synth]) -> dict[str, str]:
    """`cdk diff` of each change against the deployed template, offline, side by side: the real
    CDK CLI reads the changed app's cloud assembly and compares it with the base's template."""

    def diff(name: str) -> str:
        base, _ = CHANGES[name]
        assembly, template = synths[name].assembly, _template(synths[base])
        result = subprocess.run(
            [str(CDK), "diff", "--app", str(assembly), "--template", str(template), "--no-notices"],
            cwd=assembly.parent,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        output = result.stdout + result.stderr
        assert "Number of stacks with differences: 1" in output, output
        return output

    with ThreadPoolExecutor() as pool:
        return dict(zip(CHANGES, pool.map(diff, CHANGES), strict=True))


# An instance-type change on an autoscaled endpoint in a new app (cdk.json's flag, so
# FleetChange.NEW_ENDPOINT): both synths are silent about fleets; every logical id stays; the
# Endpoint, its config, its scalable target and its policy are replaced (the Endpoint's name
# follows the fleet); and the template's dependencies create the new config, then the new
# endpoint, then the target registering its variant, then the policy. What only a real deploy
# shows is listed in docs/endpoints-and-components.md ("A new instance type on an autoscaled
# endpoint").


def test_the_flag_is_what_cdk_json_gives_new_apps() -> None:
    for path in (ROOT / "cdk.json", ROOT / "examples" / "chat" / "cdk.json"):
        assert json.loads(path.read_text())["context"][CONTEXT_KEY] is True


@pytest.mark.slow(seconds=SECONDS)
def test_a_new_endpoint_synthesizes_without_a_fleet_warning(synths: dict[str, Synth]) -> None:
    for name in ("new-app", "instance-type"):
        assert "autoscaled-fleet" not in synths[name].messages
        assert "pools-autoscaling" not in synths[name].messages
    # the same app with the flag off does warn, so the messages are the ones that would
    assert "autoscaled-fleet" in synths["two-deploys"].messages


@pytest.mark.slow(seconds=SECONDS)
def test_the_diff_replaces_the_endpoint_under_the_same_logical_ids(
    synths: dict[str, Synth], diffs: dict[str, str]
) -> None:
    before, after = _graph(synths["new-app"]), _graph(synths["instance-type"])
    assert set(before.resources) == set(after.resources)
    endpoint = after.one(ENDPOINT)
    names = [g.props(endpoint)["EndpointName"] for g in (before, after)]
    assert names == ["Chat-Endpoint-A3409770-g5-2xlarge", "Chat-Endpoint-A3409770-g6-2xlarge"]
    diff = diffs["instance-type"]
    replaced = dict(re.findall(r"^\[~\] (AWS::\S+) \S+ (\w+) replace$", diff, re.MULTILINE))
    assert replaced == {
        CONFIG: after.one(CONFIG),
        ENDPOINT: endpoint,
        TARGET: after.one(TARGET),
        POLICY: after.one(POLICY),
        LOG_GROUP: _endpoint_log_group(after),  # the endpoint's group follows its name
    }, diff
    assert "(requires replacement)" in diff


@pytest.mark.slow(seconds=SECONDS)
def test_the_dependencies_create_the_endpoint_before_its_scalable_target(
    synths: dict[str, Synth],
) -> None:
    graph = _graph(synths["instance-type"])
    config, endpoint, target, policy = (graph.one(k) for k in (CONFIG, ENDPOINT, TARGET, POLICY))
    # creation: config, endpoint, target (its ResourceId names the endpoint), policy; the
    # cleanup deletes the old ones in the reverse order, the target before its endpoint
    assert graph.waits_for(endpoint, config)
    # the new endpoint's log group exists before it (the old one's is deleted after it)
    assert graph.waits_for(endpoint, _endpoint_log_group(graph))
    assert graph.waits_for(target, endpoint)
    assert graph.waits_for(policy, target)
    assert not graph.waits_for(endpoint, target)
    # the invoker's function and its policy name the endpoint, so they follow the new one
    invoker = [k for k in graph.of("AWS::Lambda::Function") if k.startswith("Api")]
    assert invoker and all(graph.waits_for(k, endpoint) for k in invoker)


# -- the other changes ----------------------------------------------------------------------------


@pytest.mark.slow(seconds=SECONDS)
def test_a_new_env_replaces_the_model_and_config_only(diffs: dict[str, str]) -> None:
    assert _replaced(diffs["env"]) == {"AWS::SageMaker::Model", "AWS::SageMaker::EndpointConfig"}
    assert "(requires replacement)" in diffs["env"]


@pytest.mark.slow(seconds=SECONDS)
def test_with_two_deploys_the_change_replaces_the_scalable_target_only(
    diffs: dict[str, str],
) -> None:
    replaced = _replaced(diffs["instance-type-two-deploys"])
    assert "AWS::ApplicationAutoScaling::ScalableTarget" in replaced
    assert "AWS::SageMaker::Endpoint" not in replaced


@pytest.mark.slow(seconds=SECONDS)
def test_a_new_endpoint_name_replaces_the_endpoint(diffs: dict[str, str]) -> None:
    assert "AWS::SageMaker::Endpoint" in _replaced(diffs["endpoint-name"])


def test_the_page_names_the_lines_these_diffs_print() -> None:
    page = OPERATE.read_text()
    for kind in (
        "AWS::SageMaker::Model",
        "AWS::SageMaker::EndpointConfig",
        "AWS::SageMaker::Endpoint",
        "AWS::ApplicationAutoScaling::ScalableTarget",
    ):
        assert f"`[~] {kind} ... replace`" in " ".join(page.split()), kind


# -- the CDK CLI commands -------------------------------------------------------------------------


def _cdk_commands(markdown: str) -> list[list[str]]:
    """The ``cdk`` commands of the page's code spans, as words."""
    return [span.split()[1:] for span in re.findall(r"`(cdk [a-z][^`]*)`", markdown)]


def test_every_cdk_command_of_the_page_is_one_the_pinned_cli_has() -> None:
    found = _cdk_commands(OPERATE.read_text())
    assert {"deploy", "diff", "rollback", "destroy"} <= {words[0] for words in found}
    assert [p for words in found for p in cdk_problems(words)] == []
    # the option table is the pinned CLI's
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["aws-cdk"]
    assert json.loads((CLI_PACKAGE / "package.json").read_text())["version"] == pinned


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("cdk deploy --no-rolback", r"--no-rolback is not an option of cdk deploy"),
        ("cdk diff --no-rollback", r"--no-rollback is not an option of cdk diff"),
        ("cdk diff --no-template t.json", r"--no-template is not an option of cdk diff"),
        ("cdk destroy -R", r"-R is not an option of cdk destroy"),
        ("cdk deploi ChatStack", r"cdk has no command 'deploi'"),
    ],
    ids=[
        "misspelled-flag",
        "another-command-s-flag",
        "no-form-of-a-value-option",
        "another-command-s-short-flag",
        "unknown-command",
    ],
)
def test_the_cdk_checker_refuses_what_the_pinned_cli_has_not(text: str, refusal: str) -> None:
    found = cdk_problems(_cdk_commands(f"`{text}`")[0])
    assert any(re.search(refusal, p) for p in found), found


def test_the_cdk_checker_accepts_the_cli_s_own_spellings() -> None:
    # aliases of commands and options, a boolean's --no- form and its negative alias, global
    # options, and an option given as --flag=value
    for text in (
        "cdk ls",
        "cdk synthesize --quiet",
        "cdk deploy -R --require-approval never -e",
        "cdk deploy --no-rollback --profile p -c key=value",
        "cdk diff --changeset --no-change-set --template=t.json --app cdk.out",
        "cdk destroy --force --no-color",
    ):
        assert cdk_problems(_cdk_commands(f"`{text}`")[0]) == [], text
