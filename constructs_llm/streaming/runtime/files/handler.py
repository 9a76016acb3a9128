"""OpenAI's Files API, as far as batches need it: ``POST /v1/files`` (purpose ``batch``, a JSONL
file), ``GET /v1/files/{id}`` and ``GET /v1/files/{id}/content`` (a batch's input, output and
error files). Stdlib + boto3 only: this file ships in the Lambda asset.

An upload travels in the request body, so it is bounded by the function URL's request payload
limit (6 MB, ``formats.MAX_REQUEST_BYTES``): a larger one gets a 413 naming the limit and the
way around it, putting the file straight into the bucket's ``files/`` folder
(``batches/store.py``), whose key then serves as its id.
"""

from __future__ import annotations

import urllib.parse

from ...formats import MAX_REQUEST_BYTES
from ..batches.config import aws_client
from ..batches.handler import enabled
from ..batches.store import Store, new_id
from ..http.body import BodyTooLarge
from ..http.errors import RequestError
from ..http.exchange import Exchange
from .multipart import parse_form

FILES_PATH = "/v1/files"
FILE_PREFIX = FILES_PATH + "/"
_CONTENT = "/content"


def serve_files(exchange: Exchange) -> None:
    """``POST /v1/files``: store an uploaded batch file, answer its file object."""
    config = enabled(exchange)
    if config is None:
        return
    store = Store(aws_client("s3"), config.bucket)
    try:
        body = _read_upload(exchange, config.bucket)
        form = parse_form(exchange.headers.get("Content-Type"), body)
        purpose = form["purpose"].data.decode(errors="replace") if "purpose" in form else None
        if purpose != "batch":
            raise RequestError(
                f"purpose must be 'batch', got {purpose!r}: this endpoint keeps batch input "
                "files only",
                param="purpose",
            )
        upload = form.get("file")
        if upload is None:
            raise RequestError("the form has no 'file' field", param="file")
        file_id = new_id("file-")
        filename = upload.filename or "batch.jsonl"
        store.put_file(file_id, upload.data, filename=filename, purpose=purpose)
        exchange.record["file_id"] = file_id
        exchange.send_json(200, store.file(file_id).wire())
    except RequestError as err:
        exchange.refuse(err)


def serve_file(exchange: Exchange) -> None:
    """``GET /v1/files/{id}`` (the file object) and ``GET /v1/files/{id}/content`` (its
    bytes, ``application/jsonl``)."""
    config = enabled(exchange)
    if config is None:
        return
    store = Store(aws_client("s3"), config.bucket)
    rest = exchange.path[len(FILE_PREFIX) :]
    content = rest.endswith(_CONTENT)
    file_id = urllib.parse.unquote(rest[: -len(_CONTENT)] if content else rest)
    try:
        if content:
            exchange.send_bytes(200, store.file_content(file_id), "application/jsonl")
        else:
            exchange.send_json(200, store.file(file_id).wire())
    except RequestError as err:
        exchange.refuse(err)


def _read_upload(exchange: Exchange, bucket: str) -> bytes:
    try:
        return exchange.read_body(MAX_REQUEST_BYTES)
    except BodyTooLarge:
        raise RequestError(
            f"the upload is larger than the function URL's request payload limit of 6 MB "
            f"({MAX_REQUEST_BYTES:,} bytes); put the file in S3 instead: aws s3 cp "
            f"requests.jsonl s3://{bucket}/files/file-requests, then create the batch with "
            "input_file_id='file-requests' (or split the requests into files under 6 MB)",
            param="file",
            code="file_too_large",
            status=413,
        ) from None
