"""Finishing a batch: OpenAI's output and error files assembled from what the distributed
map's ``ResultWriter`` wrote. Stdlib + boto3 only: this file ships in the Lambda asset.

The map writes ``<prefix>/<map run id>/manifest.json``, naming its result files by status
(``ResultFiles``: ``SUCCEEDED``, ``FAILED``, ``PENDING``), each a JSON array of child
executions with their metadata, ``Input`` and ``Output`` as JSON strings, and ``Error`` and
``Cause`` for a failed one (the Step Functions guide's ResultWriter page: without
``WriterConfig`` the results are exported unchanged, ``Transformation: NONE``). A succeeded
child's output is the worker's output line: status 200 goes to the output file, any other
status to the error file. A failed child (its retries spent) becomes an error line with
``"response": null`` and ``"error": {"code": <Error>, "message": <Cause>}``.

Both files are stored as files (``files/<id>``, purpose ``batch_output``) and the batch's
final record (``batches/<batch id>/final.json``) names them with the counts; a file with no
line is not written (its id is null), as OpenAI leaves ``error_file_id`` null when no request
failed.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .config import aws_client
from .store import Store, new_id


def finalize(event: dict[str, Any], *, s3: Any = None) -> dict[str, Any]:
    """Write the output and error files of ``event["batch_id"]`` from the map's manifest
    (``event["manifest"]``: the map's ``ResultWriterDetails``, ``{"Bucket", "Key"}``)."""
    started = int(time.time())
    details = event["manifest"]
    store = Store(s3 or aws_client("s3"), str(details["Bucket"]))
    manifest = store.get_json(str(details["Key"]))
    if not isinstance(manifest, dict):
        raise ValueError(f"no manifest at s3://{details['Bucket']}/{details['Key']}")
    outputs: list[str] = []
    errors: list[str] = []
    files = manifest.get("ResultFiles") or {}
    for status, listed in files.items():
        for item in listed or ():
            for child in _children(store, str(item["Key"])):
                sort_line(_line_of(child, status), outputs, errors)
    return write_final(
        store,
        str(event["batch_id"]),
        outputs,
        errors,
        finalizing_at=started,
        completed_at=int(time.time()),
    )


def sort_line(line: dict[str, Any], outputs: list[str], errors: list[str]) -> None:
    """A line goes to the output file when its model answered 200, else to the error file."""
    ok = (line.get("response") or {}).get("status_code") == 200
    (outputs if ok else errors).append(json.dumps(line, ensure_ascii=False))


def write_final(
    store: Store, batch_id: str, outputs: list[str], errors: list[str], **fields: Any
) -> dict[str, Any]:
    """Write the batch's output and error files and its final record (the files, the counts
    and ``fields``: its status and times); returns that record."""
    final = {
        **fields,
        "output_file_id": write_file(store, batch_id, "output", outputs),
        "error_file_id": write_file(store, batch_id, "error", errors),
        "request_counts": {
            "total": len(outputs) + len(errors),
            "completed": len(outputs),
            "failed": len(errors),
        },
    }
    store.put_final(batch_id, final)
    return final


def _children(store: Store, key: str) -> list[dict[str, Any]]:
    """A result file's child executions: a JSON array, or JSON Lines."""
    raw = store.s3.get_object(Bucket=store.bucket, Key=key)["Body"].read().decode()
    text = raw.strip()
    if not text:
        return []
    if text.startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _line_of(child: dict[str, Any], status: str) -> dict[str, Any]:
    if status == "SUCCEEDED" and child.get("Output") is not None:
        output = _json(child["Output"])
        if isinstance(output, dict) and "response" in output:
            return output
    item = _json(child.get("Input")) or {}
    line = item.get("line") if isinstance(item, dict) else None
    custom_id = line.get("custom_id") if isinstance(line, dict) else None
    return error_line(
        custom_id,
        str(child.get("Error") or status.lower()),
        str(child.get("Cause") or f"the request's execution ended {status}"),
    )


def output_line(
    custom_id: object, status: int, request_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """OpenAI's output line of a request its model answered, or refused: its ``status`` and
    ``body`` (an answer, or OpenAI's error)."""
    return {
        "id": new_id("batch_req_"),
        "custom_id": custom_id,
        "response": {"status_code": status, "request_id": request_id, "body": body},
        "error": None,
    }


def error_line(custom_id: object, code: str, message: str) -> dict[str, Any]:
    """The output line of a request that got no answer: ``"response": null`` and OpenAI's
    ``error`` (``{"code", "message"}``)."""
    return {
        "id": new_id("batch_req_"),
        "custom_id": custom_id,
        "response": None,
        "error": {"code": code, "message": message[:4000]},
    }


def _json(value: object) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def write_file(store: Store, batch_id: str, kind: str, lines: list[str]) -> str | None:
    """One of the batch's files (``kind``: output or error) as a file of its own; None, and
    nothing written, without lines."""
    if not lines:
        return None
    file_id = new_id("file-")
    data = ("\n".join(lines) + "\n").encode()
    store.put_file(file_id, data, filename=f"{batch_id}_{kind}.jsonl", purpose="batch_output")
    return file_id
