"""OpenAI's Batch API: ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches`` and
``POST /v1/batches/{id}/cancel``. Stdlib + boto3 only: this file ships in the Lambda asset.

Creating a batch reads its input file from the bucket, checks every line (``lines.py``), writes
the batch's record and starts one Step Functions execution named after the batch, whose
distributed map reads the file's lines with its ``ItemReader`` (``InputType: JSONL``) and
invokes the per-line worker (``worker.py``) for each, at most ``BATCH_CONCURRENCY`` of the
model's at once. A file that fails the checks makes a batch whose status is ``failed``, with
OpenAI's ``errors`` naming each line; nothing is started. Reading a batch reads its record,
what finishing it wrote, its execution and its map run (``objects.py``). Cancelling stops the
execution (``StopExecution``), which stops its map run's child executions; the first read of a
batch cancelled or expired writes its files from the lines answered (``stopped.py``).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]

from ..http.errors import RequestError
from ..http.exchange import Exchange
from .config import BatchConfig, aws_client, batch_config
from .endpoints import SERVED
from .lines import check_file
from .objects import TERMINAL, batch_object
from .stopped import STOPS, settle
from .store import FILES, Store, new_id

BATCHES_PATH = "/v1/batches"
BATCH_PREFIX = BATCHES_PATH + "/"
_WINDOWS = ("24h",)  # what OpenAI takes (the SDK's Literal["24h"])
_MAX_METADATA_KEYS = 16  # OpenAI's metadata: up to 16 pairs
_LIST_LIMIT = (1, 100, 20)  # OpenAI's list: 1-100, 20 by default


def enabled(exchange: Exchange) -> BatchConfig | None:
    """The Batch API's settings; a 404 answered (and None) when the invoker has none."""
    config = batch_config()
    if config is None:
        exchange.send_error(
            404,
            f"the Batch API is not enabled on this endpoint ({exchange.path[:100]}); its "
            "owner adds it with StreamingInvoker.add_batch_api()",
            error_type="not_found_error",
            code="not_found",
        )
    return config


def serve_batches(exchange: Exchange) -> None:
    """``POST /v1/batches`` (create) and ``GET /v1/batches`` (list)."""
    config = enabled(exchange)
    if config is None:
        return
    store = Store(aws_client("s3"), config.bucket)
    try:
        if exchange.command == "POST":
            exchange.send_json(200, _create(exchange, config, store))
        else:
            exchange.send_json(200, _list(exchange, store))
    except RequestError as err:
        exchange.refuse(err)


def serve_batch(exchange: Exchange) -> None:
    """``GET /v1/batches/{id}`` and ``POST /v1/batches/{id}/cancel``."""
    config = enabled(exchange)
    if config is None:
        return
    store = Store(aws_client("s3"), config.bucket)
    rest = exchange.path[len(BATCH_PREFIX) :]
    cancel = rest.endswith("/cancel")
    batch_id = urllib.parse.unquote(rest[: -len("/cancel")] if cancel else rest)
    try:
        record = store.batch(batch_id)
        if cancel:
            exchange.send_json(200, _cancel(record, store))
        else:
            exchange.send_json(200, current(record, store))
    except RequestError as err:
        exchange.refuse(err)


# -- create -------------------------------------------------------------------------------


def _create(exchange: Exchange, config: BatchConfig, store: Store) -> dict[str, Any]:
    data = exchange.read_json()
    endpoint = _endpoint(data.get("endpoint"))
    window = data.get("completion_window")
    if window not in _WINDOWS:
        raise RequestError(
            f"completion_window must be '24h', got {window!r}", param="completion_window"
        )
    metadata = _metadata(data.get("metadata"))
    file_id = data.get("input_file_id")
    if not isinstance(file_id, str):
        raise RequestError("input_file_id must be a file id string", param="input_file_id")
    stored = store.file(file_id)
    if stored.purpose != "batch":
        raise RequestError(
            f"the file {file_id!r} has purpose {stored.purpose!r}; upload the requests with "
            "purpose='batch'",
            param="input_file_id",
        )
    checked = check_file(
        store.file_content(file_id),
        endpoint=endpoint,
        routes=exchange.server.routes,
        queued=tuple(config.queued),
    )
    created_ns = time.time_ns()
    now = created_ns // 1_000_000_000
    batch_id = new_id("batch_")
    record: dict[str, Any] = {
        "id": batch_id,
        "endpoint": endpoint,
        "input_file_id": file_id,
        "completion_window": window,
        "created_at": now,
        "created_ns": created_ns,  # orders batches created within one second
        "metadata": metadata,
        "model": checked.model,
        "total": checked.total,
        "expires_at": now + config.window_seconds,
    }
    exchange.record["batch_id"] = batch_id
    if checked.errors:
        record.update(status="failed", errors=checked.wire_errors(), failed_at=now)
        store.put_batch(record)
        return current(record, store)
    record["execution_arn"] = execution_arn(config.state_machine_arn, batch_id)
    record["in_progress_at"] = now
    store.put_batch(record)
    model = str(checked.model)
    started = _start(config, record, model, file_id)
    if started is not None:  # Step Functions refused: the batch fails, saying why
        record.update(status="failed", errors=started, failed_at=int(time.time()))
        store.put_batch(record)
    return current(record, store)


def _start(
    config: BatchConfig, record: dict[str, Any], model: str, file_id: str
) -> dict[str, Any] | None:
    """Start the batch's execution; OpenAI's ``errors`` object when Step Functions refuses."""
    execution_input = {
        "batch_id": record["id"],
        "bucket": config.bucket,
        "input_key": FILES + file_id,
        "model": model,
        "max_concurrency": config.concurrency_for(model),
    }
    try:
        aws_client("stepfunctions").start_execution(
            stateMachineArn=config.state_machine_arn,
            name=record["id"],
            input=json.dumps(execution_input),
        )
    except (ClientError, BotoCoreError) as exc:
        message = f"Step Functions did not start the batch: {exc}"
        return {
            "object": "list",
            "data": [
                {
                    "code": "execution_not_started",
                    "message": message[:2000],
                    "param": None,
                    "line": None,
                }
            ],
        }
    return None


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN Step Functions gives the execution ``name`` of a standard state machine:
    ``arn:<partition>:states:<region>:<account>:execution:<state machine name>:<name>``."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + name


def _endpoint(value: object) -> str:
    if value in SERVED:
        return str(value)
    served = ", ".join(SERVED)
    raise RequestError(
        f"endpoint {value!r} is not served by this batch API; it serves {served}",
        param="endpoint",
        code="unsupported_value",
    )


def _metadata(value: object) -> dict[str, str] | None:
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or len(value) > _MAX_METADATA_KEYS
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    ):
        raise RequestError(
            "metadata must be an object of at most 16 string values", param="metadata"
        )
    return dict(value)


# -- read ---------------------------------------------------------------------------------


def current(record: dict[str, Any], store: Store, *, map_run: bool = True) -> dict[str, Any]:
    """The batch in its current state: its record, what finishing wrote, its execution and
    (with ``map_run``) its map run's counts."""
    if record.get("status") == "failed":
        return batch_object(record, final=None, execution=None, map_run=None)
    final = store.final(record["id"])
    if final is not None:
        return batch_object(record, final=final, execution=None, map_run=None)
    sfn = aws_client("stepfunctions")
    execution = sfn.describe_execution(executionArn=record["execution_arn"])
    if execution.get("status") in STOPS:  # cancelled or expired: its files, once
        return batch_object(
            record, final=settle(record, store, execution), execution=None, map_run=None
        )
    run = _map_run(sfn, record["execution_arn"]) if map_run else None
    return batch_object(record, final=None, execution=execution, map_run=run)


def _map_run(sfn: Any, arn: str) -> dict[str, Any] | None:
    """The execution's map run, once its distributed map started one."""
    try:
        runs = sfn.list_map_runs(executionArn=arn).get("mapRuns") or []
        if not runs:
            return None
        described: dict[str, Any] = sfn.describe_map_run(mapRunArn=runs[0]["mapRunArn"])
        return described
    except ClientError:
        return None


def _list(exchange: Exchange, store: Store) -> dict[str, Any]:
    query = urllib.parse.parse_qs(exchange.query)
    after = query["after"][0] if query.get("after") else None
    limit = _limit(query["limit"][0] if query.get("limit") else None)
    records = sorted(
        (store.batch(batch_id) for batch_id in store.batch_ids()),
        key=lambda r: (int(r.get("created_ns") or r["created_at"] * 1_000_000_000), r["id"]),
        reverse=True,
    )
    if after is not None:
        ids = [r["id"] for r in records]
        records = records[ids.index(after) + 1 :] if after in ids else []
    page = records[:limit]
    data = [current(r, store, map_run=False) for r in page]
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": len(records) > limit,
    }


def _limit(value: str | None) -> int:
    low, high, default = _LIST_LIMIT
    if value is None:
        return default
    if not value.isdigit() or not low <= int(value) <= high:
        raise RequestError(f"limit must be {low}-{high}, got {value!r}", param="limit")
    return int(value)


# -- cancel -------------------------------------------------------------------------------


def _cancel(record: dict[str, Any], store: Store) -> dict[str, Any]:
    batch = current(record, store, map_run=False)
    if batch["status"] in TERMINAL:
        raise RequestError(
            f"the batch {record['id']!r} is {batch['status']}; only a batch in progress can be "
            "cancelled",
            code="batch_not_cancellable",
            status=409,
        )
    if not record.get("cancelling_at"):
        record["cancelling_at"] = int(time.time())
        store.put_batch(record)
    aws_client("stepfunctions").stop_execution(
        executionArn=record["execution_arn"],
        error="BatchCancelled",
        cause="POST /v1/batches/{id}/cancel",
    )
    return current(record, store, map_run=False)
