"""StreamingInvoker.add_batch_api(): the state machine, bucket, worker and grants, read from the
example's committed template (``openai-batch``, which cdk-nag, cfn-lint and checkov scan with the
others in ``test_examples.py``), the definition checked by the ASL validator (the npm package
``asl-validator``, pinned in package.json), and the checks of its arguments."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.distributed_map import resolved_definition
from tests.support.templates import fixture

ROOT = Path(__file__).resolve().parent.parent
#: The package pinned in package.json (``make install`` runs ``npm ci``).
ASL_VALIDATOR = ROOT / "node_modules" / "asl-validator"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return dict(json.loads(fixture("OpenaiBatch")))


def _only(template: dict[str, Any], kind: str) -> tuple[str, dict[str, Any]]:
    (found,) = [(k, r) for k, r in template["Resources"].items() if r["Type"] == kind]
    return found


@pytest.fixture(scope="module")
def definition(template: dict[str, Any]) -> dict[str, Any]:
    _, machine = _only(template, "AWS::StepFunctions::StateMachine")
    return resolved_definition(machine["Properties"]["DefinitionString"])


#: One node process validates every definition given (asl-validator's own API), printing
#: each one's verdict: node's start-up is most of the time.
_VALIDATE = """
const validate = require(process.argv[1]);
const fs = require("fs");
const verdicts = process.argv.slice(2).map((path) => {
  const { isValid, errorsText } = validate(JSON.parse(fs.readFileSync(path, "utf8")));
  return { isValid, errors: isValid ? "" : errorsText("; ") };
});
console.log(JSON.stringify(verdicts));
"""


def _validate(definitions: list[dict[str, Any]], tmp_path: Path) -> list[dict[str, Any]]:
    paths = []
    for index, definition in enumerate(definitions):
        path = tmp_path / f"definition-{index}.json"
        path.write_text(json.dumps(definition))
        paths.append(str(path))
    done = subprocess.run(
        ["node", "-e", _VALIDATE, str(ASL_VALIDATOR), *paths],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_the_definition_passes_the_asl_validator(
    definition: dict[str, Any], tmp_path: Path
) -> None:
    # GIVEN a canary: the same definition with its map's ItemProcessor left out
    broken = json.loads(json.dumps(definition))
    del broken["States"]["Lines"]["ItemProcessor"]
    # THEN the validator refuses the canary and accepts the definition
    canary, checked = _validate([broken, definition], tmp_path)
    assert not canary["isValid"] and "ItemProcessor" in canary["errors"], canary
    assert checked["isValid"], checked["errors"]


def test_a_distributed_map_reads_the_jsonl_and_writes_its_results_to_s3(
    template: dict[str, Any], definition: dict[str, Any]
) -> None:
    (bucket,) = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::S3::Bucket" and k.startswith("ApiBatchBucket")
    ]
    lines = definition["States"]["Lines"]
    assert lines["ItemProcessor"]["ProcessorConfig"] == {
        "Mode": "DISTRIBUTED",
        "ExecutionType": "STANDARD",
    }
    reader = lines["ItemReader"]
    assert reader["ReaderConfig"] == {"InputType": "JSONL"}
    assert reader["Resource"] == "arn:aws:states:::s3:getObject"
    assert reader["Parameters"] == {"Bucket": bucket.lower(), "Key.$": "$.input_key"}
    assert lines["ResultWriter"]["Resource"] == "arn:aws:states:::s3:putObject"
    assert lines["ResultWriter"]["Parameters"]["Prefix"] == "results"
    assert lines["MaxConcurrencyPath"] == "$.max_concurrency"
    assert lines["ToleratedFailurePercentage"] == 100
    assert lines["ItemSelector"]["line.$"] == "$$.Map.Item.Value"
    line = lines["ItemProcessor"]["States"]["Line"]
    busy = next(r for r in line["Retry"] if r["ErrorEquals"] == ["TargetBusy"])
    assert busy["MaxAttempts"] >= 10 and busy["MaxDelaySeconds"] == 300
    assert lines["Next"] == "Finalize"
    finalize = definition["States"]["Finalize"]["Parameters"]
    assert finalize["manifest.$"] == "$.map.ResultWriterDetails"
    assert definition["TimeoutSeconds"] == 24 * 3600  # the completion window


def test_the_invoker_starts_reads_and_stops_the_batches_and_nothing_else(
    template: dict[str, Any],
) -> None:
    machine, _ = _only(template, "AWS::StepFunctions::StateMachine")
    invoker = next(
        r
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function"
        and "BATCH_STATE_MACHINE_ARN" in r["Properties"].get("Environment", {}).get("Variables", {})
    )
    env = invoker["Properties"]["Environment"]["Variables"]
    assert env["BATCH_STATE_MACHINE_ARN"] == {"Ref": machine}
    assert json.loads(env["BATCH_CONCURRENCY"]) == {
        "Qwen/Qwen2.5-7B-Instruct": 16,
        "qwen-overnight": 16,
    }
    role = invoker["Properties"]["Role"]["Fn::GetAtt"][0]
    # its default policy, and the library's own policy holding the wildcards (acknowledged there)
    policies = [
        r
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and {"Ref": role} in r["Properties"]["Roles"]
    ]
    assert len(policies) == 2
    granted = {
        action: s["Resource"]
        for policy in policies
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        for action in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert granted["states:StartExecution"] == {"Ref": machine}
    for action in ("states:DescribeExecution", "states:StopExecution", "states:ListMapRuns"):
        assert ":execution:" in json.dumps(granted[action]), action
    assert not any(a.endswith("*") for a in granted), sorted(granted)


def test_the_worker_runs_the_batch_handler_on_the_invoker_s_code(template: dict[str, Any]) -> None:
    functions = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    (worker,) = [
        f
        for f in functions
        if f["Properties"]["Handler"] == "streaming.runtime.batches.worker.handle"
    ]
    codes = {json.dumps(f["Properties"]["Code"], sort_keys=True) for f in functions}
    assert len(codes) == 1  # one code asset for the invoker and the worker
    assert worker["Properties"]["Timeout"] == 900
    routes = json.dumps(worker["Properties"]["Environment"]["Variables"]["ROUTES"])
    assert '\\"component\\":' in routes and "Overnight78902071" in routes


def test_the_example_s_client_role_may_call_the_url(template: dict[str, Any]) -> None:
    (client,) = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::IAM::Role" and k.startswith("Client")
    ]
    statements = [
        s
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and {"Ref": client} in r["Properties"]["Roles"]
        for s in r["Properties"]["PolicyDocument"]["Statement"]
    ]
    actions = {
        a
        for s in statements
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert "lambda:InvokeFunctionUrl" in actions, statements
