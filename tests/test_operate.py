"""docs/operate.md: its AWS CLI commands are ones the CLI accepts (checked against botocore's
service models as the CLI maps them, by a checker shown here to refuse what the CLI refuses),
its CDK CLI commands are ones the pinned CLI has (checked against the CLI's own option table),
and what it says `cdk diff` shows is what the real CDK CLI prints for those changes."""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from aws_cdk import App, Stack

from constructs_llm import Autoscaling, Engine, LlmEndpoint, LlmModel, ModelSource
from constructs_llm.hosting.fleet_change import CONTEXT_KEY
from tests.conftest import ROOT, cdk_context
from tests.support.aws_cli import CliCommand, commands, problems
from tests.support.cdk_cli import CLI_PACKAGE
from tests.support.cdk_cli import problems as cdk_problems

OPERATE = ROOT / "docs" / "operate.md"
README = ROOT / "README.md"
CDK = ROOT / "node_modules" / ".bin" / "cdk"


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
        ("aws s3 rm s3://bucket --recursive", r"the CLI's own s3 commands are not checked"),
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
        "high-level-s3",
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


def _synth(
    out: Path, *, env: dict[str, str] | None = None, new_endpoint: bool = True, **endpoint: Any
) -> Path:
    """A chat endpoint with autoscaling, synthesized into ``out`` (a cloud assembly), with
    cdk.json's context (``FleetChange.NEW_ENDPOINT``) unless ``new_endpoint`` is False."""
    context = {**cdk_context(), CONTEXT_KEY: new_endpoint}
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
    LlmEndpoint(
        stack,
        "Endpoint",
        model=model,
        autoscaling=Autoscaling(min_capacity=1, max_capacity=2, target_concurrent_requests=8),
        **endpoint,
    )
    app.synth()
    return out


def _replaced(diff: str) -> set[str]:
    """The resource types `cdk diff` marks for replacement."""
    return set(re.findall(r"^\[~\] (AWS::\S+) .* replace$", diff, re.MULTILINE))


@pytest.fixture(scope="module")
def diffs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`cdk diff` of each change against the deployed template, offline: the real CDK CLI
    reads the changed app's cloud assembly and compares it with the base template. (An
    instance-type change in a new app, which replaces the Endpoint, is diffed after a CLI
    synth in tests/test_fleet_change_cli.py.)"""
    root = tmp_path_factory.mktemp("diff")
    bases = {
        True: _synth(root / "base") / "Chat.template.json",
        False: _synth(root / "base-two", new_endpoint=False) / "Chat.template.json",
    }
    changed = {
        "env": (True, _synth(root / "env", env={"SM_VLLM_MAX_NUM_SEQS": "16"})),
        "instance-type-two-deploys": (
            False,
            _synth(root / "type-two", instance_type="ml.g6.2xlarge", new_endpoint=False),
        ),
        "endpoint-name": (
            False,
            _synth(root / "name", endpoint_name="chat-llm", new_endpoint=False),
        ),
    }

    def diff(change: tuple[bool, Path]) -> str:
        mode, assembly = change
        base = bases[mode]
        result = subprocess.run(
            [str(CDK), "diff", "--app", str(assembly), "--template", str(base), "--no-notices"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        output = result.stdout + result.stderr
        assert "Number of stacks with differences: 1" in output, output
        return output

    with ThreadPoolExecutor() as pool:
        return dict(zip(changed, pool.map(diff, changed.values()), strict=True))


@pytest.mark.slow(seconds=12)
def test_a_new_env_replaces_the_model_and_config_only(diffs: dict[str, str]) -> None:
    assert _replaced(diffs["env"]) == {"AWS::SageMaker::Model", "AWS::SageMaker::EndpointConfig"}
    assert "(requires replacement)" in diffs["env"]


@pytest.mark.slow(seconds=12)
def test_with_two_deploys_the_change_replaces_the_scalable_target_only(
    diffs: dict[str, str],
) -> None:
    replaced = _replaced(diffs["instance-type-two-deploys"])
    assert "AWS::ApplicationAutoScaling::ScalableTarget" in replaced
    assert "AWS::SageMaker::Endpoint" not in replaced


@pytest.mark.slow(seconds=12)
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
