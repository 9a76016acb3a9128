"""What Step Functions does with the batch state machine's definition, done by the test itself,
since moto's Step Functions does not run it.

moto 5.2.5's default Step Functions backend stores state machines and executions (start,
describe, list, stop: ABORTED) but runs nothing; its optional executing backend (the
``execute_state_machine`` config, LocalStack's interpreter) reads ``ItemReader`` input types
CSV and JSON only (``moto/stepfunctions/parser/.../reader_config/input_type.py``), not JSONL,
and calls Lambda through moto's Lambda, which needs Docker. So :func:`run_batch` interprets the
definition the construct synthesized, as the Step Functions guide describes it:

- the ``Map`` state's ``ItemReader`` (``arn:aws:states:::s3:getObject``, ``ReaderConfig``
  ``InputType: JSONL``): each line of the object its ``Parameters`` name is one item;
- ``ItemSelector``: each item's input, with ``$.x`` paths on the execution input and
  ``$$.Map.Item.Value`` the item;
- ``MaxConcurrencyPath``: that many items run at once (threads);
- the item processor's states: ``Task`` states (the worker called with the state's input, or
  its ``Parameters``) and their ``Retry`` rules (each retried error up to its ``MaxAttempts``,
  without waiting its interval), a failure once they are spent being a failed child execution;
  ``Choice`` states on ``IsPresent`` conditions; ``Wait`` states, whose ``SecondsPath`` the
  caller's ``wait`` is given (it waits on the event the test expects, not the seconds);
  ``Succeed``;
- ``ResultWriter`` (``arn:aws:states:::s3:putObject``): ``<Prefix>/<map run id>/manifest.json``
  naming ``SUCCEEDED_0.json`` and ``FAILED_0.json``, each an array of child executions with
  ``Input`` and ``Output`` as JSON strings and ``Error``/``Cause`` when failed (the guide's
  ResultWriter page, ``Transformation: NONE``); the map's output ``{"MapRunArn",
  "ResultWriterDetails": {"Bucket", "Key"}}`` at its ``ResultPath``;
- then the next ``Task`` state with its ``Parameters``.

The worker is called in-process where Lambda would run it. What only a deploy proves: that
Step Functions accepts the definition and the role (the ASL validator and cfn-lint check its
shape), the real map run's counts and timing, and the retries' waits.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

Worker = Callable[[dict[str, Any]], dict[str, Any]]
Wait = Callable[[int], object]


def resolved_definition(definition: Any, values: dict[str, str] | None = None) -> dict[str, Any]:
    """A template's ``DefinitionString`` (an ``Fn::Join``) as the definition JSON, each
    intrinsic replaced by ``values[<logical id>]`` or a placeholder ARN."""
    values = values or {}
    if isinstance(definition, str):
        return dict(json.loads(definition))
    _, parts = definition["Fn::Join"]
    text = "".join(p if isinstance(p, str) else _placeholder(p, values) for p in parts)
    return dict(json.loads(text))


def _placeholder(intrinsic: dict[str, Any], values: dict[str, str]) -> str:
    if "Ref" in intrinsic:
        name = str(intrinsic["Ref"])
        return values.get(name, "aws" if name == "AWS::Partition" else name.lower())
    logical, attribute = intrinsic["Fn::GetAtt"]
    return values.get(
        logical, f"arn:aws:lambda:us-east-1:123456789012:function:{logical}-{attribute}"
    )


def _path(path: str, data: Any, item: Any = None) -> Any:
    """A JSONPath of the forms the definition uses: ``$.a.b`` and ``$$.Map.Item.Value``."""
    if path == "$$.Map.Item.Value":
        return item
    assert path.startswith("$."), path
    for name in path[2:].split("."):
        data = data[name]
    return data


def _parameters(template: dict[str, Any], data: Any, item: Any = None) -> dict[str, Any]:
    """A payload template: ``"key.$": path`` fields resolved, the others as they are."""
    return {
        (k[:-2] if k.endswith(".$") else k): (_path(v, data, item) if k.endswith(".$") else v)
        for k, v in template.items()
    }


def run_batch(
    definition: dict[str, Any],
    execution_input: dict[str, Any],
    *,
    s3: Any,
    worker: Worker,
    wait: Wait = lambda seconds: None,
) -> dict[str, Any]:
    """Run ``definition`` on ``execution_input``; the finishing task's output."""
    states = definition["States"]
    name = definition["StartAt"]
    data = execution_input
    while True:
        state = states[name]
        if state["Type"] == "Map":
            result = _map(state, data, s3=s3, worker=worker, wait=wait)
            data = {**data, state["ResultPath"][2:]: result}
        else:
            assert state["Type"] == "Task", state
            data = worker(_parameters(state.get("Parameters", {}), data))
        if state.get("End"):
            return data
        name = state["Next"]


def _map(
    state: dict[str, Any], data: dict[str, Any], *, s3: Any, worker: Worker, wait: Wait
) -> Any:
    reader = state["ItemReader"]
    assert reader["Resource"].endswith(":states:::s3:getObject"), reader
    assert reader["ReaderConfig"]["InputType"] == "JSONL", reader
    where = _parameters(reader["Parameters"], data)
    text = s3.get_object(Bucket=where["Bucket"], Key=where["Key"])["Body"].read().decode()
    items = [json.loads(line) for line in text.splitlines() if line.strip()]
    processor = state["ItemProcessor"]
    assert processor["ProcessorConfig"]["Mode"] == "DISTRIBUTED", processor
    inputs = [_parameters(state["ItemSelector"], data, item) for item in items]
    concurrency = int(_path(state["MaxConcurrencyPath"], data))
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, 4))) as pool:
        children = list(pool.map(lambda i: _child(processor, i, worker, wait), inputs))
    return _write_results(state["ResultWriter"], data, children, s3=s3)


def _child(
    processor: dict[str, Any], item_input: dict[str, Any], worker: Worker, wait: Wait
) -> dict[str, Any]:
    started = datetime.now(UTC).isoformat()
    record: dict[str, Any] = {
        "ExecutionArn": f"arn:aws:states:us-east-1:123456789012:execution:m/{uuid.uuid4()}",
        "Input": json.dumps(item_input),
        "InputDetails": {"Included": True},
        "Name": str(uuid.uuid4()),
        "RedriveCount": 0,
        "StartDate": started,
    }
    states, name, data = processor["States"], processor["StartAt"], item_input
    while True:
        state = states[name]
        kind = state["Type"]
        if kind == "Task":
            payload = _parameters(state["Parameters"], data) if "Parameters" in state else data
            try:
                data = _task(state, payload, worker)
            except Exception as exc:  # a Lambda function's error: its type is the error name
                return {
                    **record,
                    "Status": "FAILED",
                    "Error": type(exc).__name__,
                    "Cause": str(exc),
                }
        elif kind == "Choice":
            name = _choose(state, data)
            continue
        elif kind == "Wait":
            wait(int(_path(state["SecondsPath"], data)))
        else:
            assert kind == "Succeed", state
        if kind == "Succeed" or state.get("End"):
            return {
                **record,
                "Status": "SUCCEEDED",
                "Output": json.dumps(data),
                "OutputDetails": {"Included": True},
            }
        name = state["Next"]


def _task(task: dict[str, Any], payload: dict[str, Any], worker: Worker) -> dict[str, Any]:
    """The worker's answer to ``payload``, retried as the task's ``Retry`` rules say."""
    attempts: dict[int, int] = {}
    while True:
        try:
            return worker(payload)
        except Exception as exc:
            error = type(exc).__name__
            rule = next(
                (i for i, r in enumerate(task.get("Retry", ())) if error in r["ErrorEquals"]),
                None,
            )
            if rule is None:
                raise
            attempts[rule] = attempts.get(rule, 0) + 1
            if attempts[rule] > int(task["Retry"][rule].get("MaxAttempts", 3)):
                raise


def _choose(state: dict[str, Any], data: dict[str, Any]) -> str:
    """The next state of a ``Choice`` whose rules are ``IsPresent`` conditions."""
    for rule in state["Choices"]:
        present = _present(rule["Variable"], data)
        if present is rule["IsPresent"]:
            return str(rule["Next"])
    return str(state["Default"])


def _present(path: str, data: Any) -> bool:
    try:
        _path(path, data)
    except (KeyError, TypeError):
        return False
    return True


def _write_results(
    writer: dict[str, Any], data: dict[str, Any], children: list[dict[str, Any]], *, s3: Any
) -> dict[str, Any]:
    assert writer["Resource"].endswith(":states:::s3:putObject"), writer
    where = _parameters(writer["Parameters"], data)
    bucket, run_id = where["Bucket"], str(uuid.uuid4())
    folder = f"{where['Prefix']}/{run_id}"
    files: dict[str, list[dict[str, Any]]] = {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
    for status in ("SUCCEEDED", "FAILED"):
        chosen = [c for c in children if c["Status"] == status]
        if chosen:
            key = f"{folder}/{status}_0.json"
            body = json.dumps(chosen).encode()
            s3.put_object(Bucket=bucket, Key=key, Body=body)
            files[status].append({"Key": key, "Size": len(body)})
    map_run = f"arn:aws:states:us-east-1:123456789012:mapRun:batches/Lines:{run_id}"
    manifest = {"DestinationBucket": bucket, "MapRunArn": map_run, "ResultFiles": files}
    s3.put_object(Bucket=bucket, Key=f"{folder}/manifest.json", Body=json.dumps(manifest))
    return {
        "MapRunArn": map_run,
        "ResultWriterDetails": {"Bucket": bucket, "Key": f"{folder}/manifest.json"},
    }
