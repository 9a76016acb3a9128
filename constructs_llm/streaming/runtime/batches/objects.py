"""A batch as OpenAI's Batch object, from its record, what finishing it wrote, its Step
Functions execution and that execution's map run. Stdlib only: this file ships in the Lambda
asset.

The status (OpenAI's reference, "The batch object"), from what Step Functions reports
(``DescribeExecution``'s ``status``, ``DescribeMapRun``'s ``status`` and ``itemCounts``):

=============================================== ============ ==============================
state                                           status       timestamps and files
=============================================== ============ ==============================
a line failed the checks (``lines.py``)         failed       failed_at, errors
finishing wrote its final record                completed    completed_at, output/error file
a stopped batch's files were written             cancelled or cancelled_at or expired_at,
(``stopped.py``)                                expired      output/error file
execution RUNNING, cancel asked                 cancelling   cancelling_at
execution RUNNING, map run done                 finalizing   finalizing_at
execution RUNNING                               in_progress  in_progress_at
execution SUCCEEDED, nothing written yet        finalizing
execution ABORTED (``StopExecution``)           cancelled    cancelled_at
execution TIMED_OUT (the completion window)     expired      expired_at
execution FAILED                                failed       failed_at, errors
=============================================== ============ ==============================

``request_counts``: ``total`` is the file's lines; ``completed`` the lines that got an answer
with status 200 and ``failed`` the others, as finishing counted them, or while the map runs
its ``itemCounts`` (``succeeded``; ``failed`` + ``timedOut`` + ``aborted``): a line whose
model answered 4xx is a succeeded item until finishing counts it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

TERMINAL = frozenset({"failed", "completed", "expired", "cancelled"})


def batch_object(
    record: dict[str, Any],
    *,
    final: dict[str, Any] | None,
    execution: dict[str, Any] | None,
    map_run: dict[str, Any] | None,
) -> dict[str, Any]:
    """OpenAI's Batch object for ``record`` in its current state."""
    total = int(record.get("total") or 0)
    batch: dict[str, Any] = {
        "id": record["id"],
        "object": "batch",
        "endpoint": record["endpoint"],
        "model": record.get("model"),
        "errors": record.get("errors"),
        "input_file_id": record["input_file_id"],
        "completion_window": record["completion_window"],
        "status": "in_progress",
        "output_file_id": None,
        "error_file_id": None,
        "created_at": record["created_at"],
        "in_progress_at": record.get("in_progress_at"),
        "expires_at": record.get("expires_at"),
        "finalizing_at": None,
        "completed_at": None,
        "failed_at": record.get("failed_at"),
        "expired_at": None,
        "cancelling_at": record.get("cancelling_at"),
        "cancelled_at": None,
        "request_counts": {"total": total, "completed": 0, "failed": 0},
        "metadata": record.get("metadata"),
    }
    if record.get("status") == "failed":
        batch["status"] = "failed"
        return batch
    if final is not None:
        status = str(final.get("status") or "completed")
        batch.update(
            status=status,
            output_file_id=final.get("output_file_id"),
            error_file_id=final.get("error_file_id"),
            finalizing_at=final.get("finalizing_at"),
            request_counts=final["request_counts"],
        )
        batch[f"{status}_at"] = final.get(f"{status}_at")
        return batch
    if map_run is not None:
        batch["request_counts"] = _running_counts(total, map_run.get("itemCounts") or {})
    status = (execution or {}).get("status", "RUNNING")
    stopped = _seconds((execution or {}).get("stopDate"))
    if status == "RUNNING" or status == "PENDING_REDRIVE":
        if record.get("cancelling_at"):
            batch["status"] = "cancelling"
        elif map_run is not None and map_run.get("status") in ("SUCCEEDED", "FAILED"):
            batch.update(status="finalizing", finalizing_at=_seconds(map_run.get("stopDate")))
    elif status == "SUCCEEDED":
        batch.update(status="finalizing", finalizing_at=stopped)
    elif status == "ABORTED":
        batch.update(status="cancelled", cancelled_at=stopped)
    elif status == "TIMED_OUT":
        batch.update(status="expired", expired_at=stopped)
    else:
        error = (execution or {}).get("error") or "States.Failed"
        cause = (execution or {}).get("cause") or "the batch's execution failed"
        batch.update(
            status="failed",
            failed_at=stopped,
            errors={
                "object": "list",
                "data": [
                    {"code": str(error), "message": str(cause)[:2000], "param": None, "line": None}
                ],
            },
        )
    return batch


def _running_counts(total: int, counts: dict[str, Any]) -> dict[str, int]:
    failed = sum(int(counts.get(name) or 0) for name in ("failed", "timedOut", "aborted"))
    return {"total": total, "completed": int(counts.get("succeeded") or 0), "failed": failed}


def _seconds(value: object) -> int | None:
    """A boto3 timestamp (a ``datetime``) as Unix seconds."""
    if isinstance(value, datetime):
        return int(value.timestamp())
    return None
