"""A batch that stopped before it finished: cancelled (``StopExecution``) or expired (the
state machine's timeout, the completion window). Stdlib + boto3 only: this file ships in the
Lambda asset.

OpenAI gives such a batch its files too: "the batch will be in status cancelling for up to 10
minutes, before changing to cancelled, where it will have partial results (if any) available
in the output file" (OpenAI's reference, "Cancel batch"), and a request that never ran is an
error line whose ``error.code`` is ``batch_expired`` ("The request could not be executed before
the completion window ended") or ``batch_cancelled`` ("The batch was cancelled before this
request executed"), OpenAI's ``BatchRequestOutput.error.code`` values.

A stopped execution runs no finishing state, and its distributed map writes no results (its
``ResultWriter`` exports once the map run ends; stopping the execution aborts the map run).
So the worker keeps each line's output line as it answers it (``line_key``, one object per
line under ``batches/<batch id>/lines/``), and the first read of the stopped batch (``GET``,
``list`` or the cancel call itself) assembles the files from those and the input file: each
answered line in the output file (status 200) or the error file (any other status), each line
not answered in the error file with ``response: null`` and the code above. What it wrote goes
in the batch's final record, as finishing's does (``results.py``), with the status it ended in.
"""

from __future__ import annotations

import hashlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from .results import error_line, sort_line, write_final
from .store import BATCHES, FILES, Store

#: How each stop is told in OpenAI's terms: the status, and the code and message of a line
#: that did not run.
STOPS = {
    "ABORTED": (
        "cancelled",
        "batch_cancelled",
        "The batch was cancelled before this request executed.",
    ),
    "TIMED_OUT": (
        "expired",
        "batch_expired",
        "The request could not be executed before the completion window ended.",
    ),
}
#: Line objects read at once.
_READERS = 16


def line_key(batch_id: str, custom_id: object) -> str:
    """Where the worker keeps the output line of ``custom_id`` (unique in its batch, checked
    before the batch starts), under a key of fixed length whatever the id holds."""
    digest = hashlib.sha256(str(custom_id).encode()).hexdigest()
    return f"{BATCHES}{batch_id}/lines/{digest}.json"


def settle(record: dict[str, Any], store: Store, execution: dict[str, Any]) -> dict[str, Any]:
    """Write the output and error files of a batch whose ``execution`` stopped (``ABORTED``
    or ``TIMED_OUT``), and its final record; returns that record."""
    status, code, message = STOPS[str(execution["status"])]
    batch_id = str(record["id"])
    started = int(time.time())
    answered = _answered(store, batch_id)
    outputs: list[str] = []
    errors: list[str] = []
    for custom_id in _custom_ids(store, str(record["input_file_id"])):
        line = answered.get(custom_id)
        sort_line(line or error_line(custom_id, code, message), outputs, errors)
    stopped = execution.get("stopDate")
    stopped_at = int(stopped.timestamp()) if isinstance(stopped, datetime) else started
    times = {"finalizing_at": started, f"{status}_at": stopped_at}
    return write_final(store, batch_id, outputs, errors, status=status, **times)


def _answered(store: Store, batch_id: str) -> dict[object, dict[str, Any]]:
    """The lines the worker answered, by ``custom_id``."""
    keys = list(store.keys(f"{BATCHES}{batch_id}/lines/"))
    with ThreadPoolExecutor(max_workers=_READERS, thread_name_prefix="settle") as pool:
        lines = list(pool.map(store.get_json, keys))
    return {line.get("custom_id"): line for line in lines if isinstance(line, dict)}


def _custom_ids(store: Store, file_id: str) -> list[object]:
    """The input file's ``custom_id``s, in order (its lines passed the checks)."""
    text = store.s3.get_object(Bucket=store.bucket, Key=FILES + file_id)["Body"].read()
    ids: list[object] = []
    for raw in text.decode().splitlines():
        if raw.strip():
            ids.append(json.loads(raw).get("custom_id"))
    return ids
