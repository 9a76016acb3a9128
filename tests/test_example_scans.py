"""cfn-lint and checkov over every template the suite scans, and the contract walks over the
two templates only this module synthesizes.

The examples' templates are their committed fixtures (tests/fixtures/templates/), which
tests/test_examples.py proves equal to the real CDK CLI's strict synth, asset hashes aside: so
the scans need not wait for that synth, and run beside it. The README app's stack and a
distribution with a certificate of its own are synthesized here, in apps that run cdk-nag as a
validation plugin. cfn-lint and checkov each run once, over all of them (each tool's start-up
costs seconds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stacks import EXAMPLES, stack_ids
from tests.conftest import cdk_context
from tests.support.certificate_distribution import synthesize_certificate_distribution
from tests.support.chat_app import chat_context, chat_stack_class
from tests.support.templates import FIXTURES

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow(seconds=35)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every template cfn-lint and checkov scan: the examples' (their committed fixtures), the
    README app's stack (the
    `ChatStack` of examples/chat/app.py as written, with its cdk.json's context) and the stack
    of a distribution with a certificate of its own. The two are synthesized here, in apps that
    run cdk-nag as a validation plugin: an unacknowledged finding fails their synth."""
    from aws_cdk import App, Stack, Validations
    from cdk_nag import AwsSolutionsChecks

    out = tmp_path_factory.mktemp("scanned")
    chat = App(outdir=str(out / "chat"), context=chat_context())
    chat_stack_class()(chat, "ChatStack")
    Validations.of(chat).add_plugins(AwsSolutionsChecks(chat))
    chat.synth()
    certificate_app = App(outdir=str(out / "certificate"), context=cdk_context())
    _, certificate = synthesize_certificate_distribution(
        Stack(certificate_app, "DistributionCertificate")
    )
    templates = {p.name.removesuffix(".template.json"): p for p in FIXTURES.glob("*.json")}
    assert set(templates) == {stack for name in EXAMPLES for stack in stack_ids(name)}
    # The fleet's four stacks differ only in names (a loop over its teams builds them): the
    # scans read the first, whose 187 resources are every kind the others hold.
    others = stack_ids("fleet")[1:]
    every = {
        **{name: path for name, path in templates.items() if name not in others},
        "ChatStack": out / "chat" / "ChatStack.template.json",
        "DistributionCertificate": certificate,
    }
    assert len({path.name for path in every.values()}) == len(every) == len(templates) - 1
    return every


def test_the_readme_app_and_the_certificate_distribution_pass_the_contract_walks(
    scanned: dict[str, Path],
) -> None:
    """The contract walks of ``tests/contract/`` (which walk the examples' committed
    templates) over the two templates only this module synthesizes: the README app's and the
    certificate distribution's."""
    from tests.support.walks import WALKS

    for name in ("ChatStack", "DistributionCertificate"):
        template = json.loads(scanned[name].read_text())
        walked = []
        for walk in WALKS:
            record = walk(name, template)
            assert not record.problems, "\n".join(record.problems)
            walked += record.walked
        assert len(walked) >= 2, (name, walked)  # its model and its invoker at least


def test_cfn_lint_reports_nothing(scanned: dict[str, Path], tmp_path: Path) -> None:
    # GIVEN a canary: a template cfn-lint must fault, so a run that checks nothing fails here
    canary = tmp_path / "Canary.template.json"
    canary.write_text(json.dumps(CANARY))
    # WHEN cfn-lint reads the canary and every template scanned
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "cfn-lint"),
            "--format",
            "json",
            str(canary),
            *map(str, scanned.values()),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    # THEN it ran (exit code 2 = errors found, and nothing else went wrong) and faulted only
    # the canary, for the missing EndpointConfigName
    assert result.returncode == 2, result.stdout[:2000] + result.stderr[:2000]
    findings: list[dict[str, Any]] = json.loads(result.stdout)
    assert {f["Filename"] for f in findings} == {str(canary)}, json.dumps(findings)[:4000]
    assert [f["Rule"]["Id"] for f in findings] == ["E3003"]


#: An Endpoint without its required EndpointConfigName (cfn-lint E3003).
CANARY = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Resources": {"Endpoint": {"Type": "AWS::SageMaker::Endpoint", "Properties": {}}},
}


def test_checkov_reports_no_failed_check(scanned: dict[str, Path]) -> None:
    checkov = os.environ.get("CHECKOV") or shutil.which("checkov")
    if checkov is None:
        checkov = str(ROOT / ".venv-checkov" / "bin" / "checkov")
    assert Path(checkov).exists(), "checkov is installed by `make install` into .venv-checkov"
    files = [arg for path in scanned.values() for arg in ("-f", str(path))]
    # One run for every template (checkov's start-up takes seconds); --skip-download: no
    # calls to the vendor's API, which this machine cannot reach anyway.
    options = ["--framework", "cloudformation", "-o", "json", "--skip-download"]
    # checkov forks a process per core to parse and check the files; in one process (its own
    # CHECKOV_PARALLELIZATION_TYPE, checkov/common/parallelizer/parallel_runner.py) it spends
    # about 1 s less CPU on these templates, beside the suite's workers on the same cores
    env = {**os.environ, "CHECKOV_PARALLELIZATION_TYPE": "none"}
    result = subprocess.run(
        [checkov, *files, *options], capture_output=True, text=True, timeout=300, env=env
    )
    # A crash prints no report: json.loads fails on it, and so does this test.
    assert result.returncode in (0, 1), result.stderr[-2000:]
    report = json.loads(result.stdout)
    (results,) = [r["results"] for r in (report if isinstance(report, list) else [report])]
    failed = [
        f"{Path(check['file_path']).name}: {check['check_id']} {check['resource']} "
        f"{check['check_name']}"
        for check in results.get("failed_checks", [])
    ]
    assert failed == [], "\n".join(failed)
    # Every template has resources checkov checks: a template it checked nothing in fails.
    checked = {Path(check["file_path"]).name for check in results["passed_checks"]}
    assert checked == {path.name for path in scanned.values()}
