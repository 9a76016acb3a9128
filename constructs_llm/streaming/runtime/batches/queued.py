"""A batch line on an asynchronous endpoint (``async_inference=``): queued with
``InvokeEndpointAsync``, then looked for where SageMaker writes its answer. Stdlib + boto3
only: this file ships in the Lambda asset.

"The presence of an asynchronous inference configuration ... implies that the endpoint can only
receive asynchronous invocations" (SageMaker's asynchronous inference guide), and such an
endpoint may sit at zero instances until its backlog grows: a request is queued, SageMaker
starts an instance, runs it, and writes the answer (or the failure) to S3. So a line of an
asynchronous model takes three states of the batch's distributed map (the Step Functions
"job poller" pattern: a task that submits, a ``Wait`` state, a task that checks, a ``Choice``
that loops), and no Lambda function waits while the model works:

- ``submit`` (the ``Line`` task): the line passes the chat request check, its engine body (one
  answer, not a stream: ``chat/async_answer.py``) is put in the endpoint's input folder
  (``<input>/<batch id>/<sha-256 of custom_id>.json``, the folder ``grant_invoke_async`` lets
  callers write) and queued with ``InvokeEndpointAsync`` (``InputLocation``, an
  ``InferenceId`` made from the batch and the line, botocore's 1-64 characters); its answer
  names the ``OutputLocation`` and ``FailureLocation`` SageMaker will write. The task returns
  ``{"pending": {...}}``, which the map's ``Choice`` sends to the ``Wait`` state;
- ``poll`` (the ``Poll`` task, after ``Wait`` for ``pending.wait`` seconds): the answer's
  object, listed by its key (``ListObjectsV2`` with the key as prefix: SageMaker's "Check
  prediction results" page has callers check for outputs in the bucket, and
  ``grant_invoke_async`` allows the listing on those folders only) becomes the output line
  (status 200, a ``chat.completion``, ``chat/async_answer.py``); a failure object becomes an
  error line with the container's error; neither yet returns the pending line with a longer
  wait (doubling from :data:`FIRST_WAIT_S` to :data:`MAX_WAIT_S`), until
  :data:`GIVE_UP_S` after the submission, when the line gets OpenAI's ``request_timeout``.

A refusal of ``InvokeEndpointAsync`` that capacity cures is ``TargetBusy`` as for a real-time
line (the ``Line`` task's retry); any other is the line's error.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any
from urllib.parse import urlsplit

from ...formats import StreamFormat
from ..chat.async_answer import AnswerError, chat_completion, one_answer_body
from ..chat.request import ChatRequest
from ..http.errors import error_object
from ..routing import Route
from .results import error_line, output_line

#: The first wait before looking for an answer, and the longest between two looks.
FIRST_WAIT_S = 30
MAX_WAIT_S = 300
#: How long after its submission a line is given up: SageMaker keeps a request queued up to
#: ``RequestTTLSeconds`` (21,600 s, 6 hours, by default) and runs it up to
#: ``InvocationTimeoutSeconds`` (at most 3,600 s), botocore ``InvokeEndpointAsyncInput``.
GIVE_UP_S = 21_600 + 3_600


def submit(
    sagemaker: Any,
    s3: Any,
    *,
    route: Route,
    chat: ChatRequest,
    input_location: str,
    batch_id: str,
    custom_id: object,
    request_id: str,
) -> dict[str, Any]:
    """Queue the line; ``{"pending": {...}}``, what ``poll`` reads. Raises what
    ``InvokeEndpointAsync`` raises (``describe_failure`` maps it)."""
    digest = hashlib.sha256(str(custom_id).encode()).hexdigest()
    bucket, prefix = _split(input_location)
    key = f"{prefix}{batch_id}/{digest}.json"
    s3.put_object(
        Bucket=bucket,
        Key=key,
        Body=one_answer_body(chat.engine_body),
        ContentType="application/json",
    )
    queued = sagemaker.invoke_endpoint_async(
        EndpointName=route.endpoint_name,
        ContentType="application/json",
        Accept="application/json",
        InputLocation=f"s3://{bucket}/{key}",
        InferenceId=f"{batch_id}-{digest}"[:64],
    )
    return {
        "pending": {
            "batch_id": batch_id,
            "custom_id": custom_id,
            "request_id": request_id,
            "inference_id": queued.get("InferenceId"),
            "output": queued["OutputLocation"],
            "failure": queued.get("FailureLocation"),
            "model": route.model,
            "stream_format": route.stream_format.value,
            "logprobs": chat.logprobs,
            "submitted": int(time.time()),
            "wait": FIRST_WAIT_S,
        }
    }


def poll(pending: dict[str, Any], s3: Any, *, now: float | None = None) -> dict[str, Any]:
    """The line's output line once SageMaker wrote its answer or failure; else the pending
    line again, with a longer wait; ``request_timeout`` past :data:`GIVE_UP_S`."""
    custom_id = pending.get("custom_id")
    request_id = str(pending.get("request_id") or "")
    if _exists(s3, pending["output"]):
        body = _read(s3, pending["output"])
        try:
            answer = chat_completion(
                body,
                stream_format=StreamFormat(pending.get("stream_format") or "auto"),
                model=str(pending.get("model") or ""),
                logprobs=bool(pending.get("logprobs")),
            )
        except AnswerError as err:
            wrong = error_object(err.message, error_type="upstream_error", code="model_error")
            return output_line(custom_id, 502, request_id, wrong)
        return output_line(custom_id, 200, request_id, answer)
    failure = pending.get("failure")
    if failure and _exists(s3, failure):
        text = _read(s3, failure).decode(errors="replace").strip()
        failed = error_object(
            f"the model failed the request: {text[:2000]}",
            error_type="upstream_error",
            code="model_error",
        )
        return output_line(custom_id, 502, request_id, failed)
    if (now if now is not None else time.time()) - int(pending["submitted"]) > GIVE_UP_S:
        return error_line(
            custom_id,
            "request_timeout",
            f"no answer to inference {pending.get('inference_id')} at {pending['output']} "
            f"{GIVE_UP_S // 3600} hours after it was queued (SageMaker's request TTL and "
            "invocation timeout)",
        )
    return {"pending": {**pending, "wait": min(MAX_WAIT_S, 2 * int(pending["wait"]))}}


def _exists(s3: Any, uri: str) -> bool:
    bucket, key = _split(uri)
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
    return any(item.get("Key") == key for item in listed.get("Contents", ()))


def _read(s3: Any, uri: str) -> bytes:
    bucket, key = _split(uri)
    data: bytes = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


def _split(uri: str) -> tuple[str, str]:
    parts = urlsplit(uri)
    return parts.netloc, parts.path.lstrip("/")
