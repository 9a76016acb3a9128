"""The Batch API's objects in its S3 bucket: files, batch records and what a finished batch
wrote. Stdlib + boto3 only: this file ships in the Lambda asset.

Layout (one bucket, ``BATCH_BUCKET``)::

    files/<file id>                 a file's bytes; its filename and purpose in the object's
                                    metadata (``x-amz-meta-filename``, ``x-amz-meta-purpose``)
    batches/<batch id>/batch.json   the batch as created (and its cancel request)
    batches/<batch id>/final.json   what finishing it wrote: output and error file ids, counts
    batches/<batch id>/lines/…      each answered line's output line, kept by the worker for
                                    a batch that stops before it finishes (``stopped.py``)
    results/<map run id>/...        the distributed map's ResultWriter files: the manifest
                                    and the SUCCEEDED and FAILED result files

A file put straight into ``files/`` (``aws s3 cp big.jsonl s3://BUCKET/files/file-big``) is a
file too: its id is its key's last part, its purpose ``batch`` unless its metadata says
otherwise. That is how a file above the function URL's 6 MB request limit gets in.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..http.errors import RequestError

FILES = "files/"
BATCHES = "batches/"
RESULTS = "results/"
#: A file or batch id: what ``new_id`` makes, or a key a user chose (S3 keys and Step Functions
#: execution names both take these characters; an execution name is at most 80).
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def new_id(prefix: str) -> str:
    """An id in OpenAI's form: ``file-…``, ``batch_…``, ``batch_req_…``."""
    return prefix + os.urandom(12).hex()


def checked_id(value: str, kind: str, param: str | None = None) -> str:
    """``value`` if it can be a ``kind`` id, else a 404 naming it (nothing by that id exists)."""
    if not _ID.match(value):
        raise not_found(kind, value[:100], param)
    return value


def not_found(kind: str, value: str, param: str | None = None) -> RequestError:
    return RequestError(
        f"No such {kind}: {value!r}",
        param=param,
        code="not_found",
        status=404,
        error_type="invalid_request_error",
    )


@dataclass(frozen=True, kw_only=True)
class StoredFile:
    """A file as ``GET /v1/files/{id}`` shows it."""

    file_id: str
    filename: str
    purpose: str
    size: int
    created_at: int

    def wire(self) -> dict[str, Any]:
        """OpenAI's file object."""
        return {
            "id": self.file_id,
            "object": "file",
            "bytes": self.size,
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
            "expires_at": None,
        }


class Store:
    """Files and batches in one bucket, through one S3 client."""

    def __init__(self, s3: Any, bucket: str) -> None:
        self.s3 = s3
        self.bucket = bucket

    # -- files ----------------------------------------------------------------------------

    def put_file(self, file_id: str, data: bytes, *, filename: str, purpose: str) -> None:
        self.s3.put_object(
            Bucket=self.bucket,
            Key=FILES + file_id,
            Body=data,
            ContentType="application/jsonl",
            Metadata={"filename": _ascii(filename), "purpose": purpose},
        )

    def file(self, file_id: str) -> StoredFile:
        """The file's object; a 404 when there is none."""
        checked_id(file_id, "file", "file_id")
        try:
            head = self.s3.head_object(Bucket=self.bucket, Key=FILES + file_id)
        except Exception as exc:
            if _missing(exc):
                raise not_found("file", file_id, "file_id") from None
            raise
        meta = head.get("Metadata") or {}
        return StoredFile(
            file_id=file_id,
            filename=meta.get("filename") or file_id,
            purpose=meta.get("purpose") or "batch",
            size=int(head.get("ContentLength") or 0),
            created_at=int(head["LastModified"].timestamp()),
        )

    def file_content(self, file_id: str) -> bytes:
        checked_id(file_id, "file", "file_id")
        try:
            body = self.s3.get_object(Bucket=self.bucket, Key=FILES + file_id)["Body"]
        except Exception as exc:
            if _missing(exc):
                raise not_found("file", file_id, "file_id") from None
            raise
        data: bytes = body.read()
        return data

    # -- batches --------------------------------------------------------------------------

    def put_batch(self, record: dict[str, Any]) -> None:
        self._put_json(f"{BATCHES}{record['id']}/batch.json", record)

    def batch(self, batch_id: str) -> dict[str, Any]:
        checked_id(batch_id, "batch", "batch_id")
        record = self._get_json(f"{BATCHES}{batch_id}/batch.json")
        if not isinstance(record, dict):
            raise not_found("batch", batch_id, "batch_id")
        return record

    def final(self, batch_id: str) -> dict[str, Any] | None:
        """What finishing the batch wrote, or None before it finished."""
        final = self._get_json(f"{BATCHES}{batch_id}/final.json")
        return final if isinstance(final, dict) else None

    def put_final(self, batch_id: str, final: dict[str, Any]) -> None:
        self._put_json(f"{BATCHES}{batch_id}/final.json", final)

    def batch_ids(self) -> Iterator[str]:
        """Every batch's id, in key order: the folders under ``batches/`` (``Delimiter``), so
        a batch's lines are not listed."""
        pages = self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=BATCHES, Delimiter="/"
        )
        for page in pages:
            for item in page.get("CommonPrefixes", ()):
                yield str(item["Prefix"])[len(BATCHES) :].rstrip("/")

    def keys(self, prefix: str) -> Iterator[str]:
        """Every key under ``prefix``, in key order."""
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        for page in pages:
            for item in page.get("Contents", ()):
                yield str(item["Key"])

    def put_json(self, key: str, value: Any) -> None:
        self._put_json(key, value)

    # -- JSON objects ---------------------------------------------------------------------

    def get_json(self, key: str) -> Any:
        return self._get_json(key)

    def _put_json(self, key: str, value: Any) -> None:
        body = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=body, ContentType="application/json")

    def _get_json(self, key: str) -> Any:
        try:
            body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except Exception as exc:
            if _missing(exc):
                return None
            raise
        return json.loads(body)


def _missing(exc: Exception) -> bool:
    """Whether an S3 error says the key does not exist (404, ``NoSuchKey``)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return False
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in ("NoSuchKey", "404", "NotFound") or status == 404


def _ascii(text: str) -> str:
    """S3 user metadata travels in HTTP headers: ASCII only."""
    return text.encode("ascii", "replace").decode()[:200]
