"""Chat with an asynchronous ``LlmEndpoint`` (``async_inference=``): queue an OpenAI chat
request, then wait for its answer in S3 (boto3; the ``constructs-llm-client`` distribution)::

    from constructs_llm.streaming import chat_async

    answer = chat_async("batch-endpoint", [{"role": "user", "content": "Summarize ..."}],
                        input_location="s3://my-jobs/inputs/", max_tokens=4000)
    print(answer["choices"][0]["message"]["content"])

or in two steps, to queue many requests before waiting for any::

    jobs = [submit_chat("batch-endpoint", messages, input_location=...) for messages in batch]
    answers = [job.result(timeout=3600) for job in jobs]

The request is the one a ``StreamingInvoker`` takes (an OpenAI chat body: ``messages`` and
``max_tokens``, ``temperature``, ``tools``, ...), checked and turned into the engine's request
body by the invoker's own code (``runtime/chat/request.py``), so a request either gets the same 400
message here (``AsyncChatError``, before anything is queued) or the same engine body, with one
difference: an asynchronous endpoint writes one answer, so the engine is asked not to stream.

Submitting: a body of up to 128,000 bytes goes inline (``InvokeEndpointAsync``'s ``Body``:
"The inline payload can be up to 128,000 bytes", botocore ``InvokeEndpointAsyncInput``); a
larger one, or any with ``inline=False``, is put at ``<input_location><inference id>.json``
first and passed as ``InputLocation``. ``InvokeEndpointAsync`` answers at once with the
``OutputLocation`` (and ``FailureLocation``) SageMaker will write.

Waiting: by default the client polls those two keys, listing each (``ListObjectsV2`` with the
key as prefix: what ``endpoint.grant_invoke_async`` allows, and an exact answer where a
``GetObject`` of a missing key without ``s3:ListBucket`` is a 403). With ``queue_url`` it long
polls an SQS queue subscribed to the endpoint's notification topic
(``AsyncInference(notify=topic)``) for the message naming its inference id, whose
``invocationStatus`` is ``Completed`` or ``Failed`` (SageMaker's "Check prediction results"
page shows the notification), and leaves the other messages for other waiters.

The answer: a chat engine's answer is already an OpenAI ``chat.completion``; a generate
engine's (``{"generated_text": ..., "details": {...}}``, or TGI's list of one, "wrap
generation inside a Vec to match api-inference", text-generation-inference
``router/src/server.rs`` ``compat_generate``) becomes one, without the prompt TGI repeats for
text-generation models there (its ``compat_return_full_text``); an answer written as a stream
(a container that streams whatever it is asked) is parsed as the invoker parses streams. A
failure raises ``AsyncChatError`` carrying the failure file SageMaker wrote.
"""

from __future__ import annotations

import functools
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.chat.async_answer import (
    INLINE_LIMIT as INLINE_LIMIT,
)
from constructs_llm.streaming.runtime.chat.async_answer import (
    AnswerError,
    chat_completion,
    generate_prompt,
    one_answer_body,
)
from constructs_llm.streaming.runtime.chat.request import build_chat_request
from constructs_llm.streaming.runtime.chat.target import ChatTarget
from constructs_llm.streaming.runtime.http.errors import RequestError

#: botocore ``InvocationTimeoutSecondsHeader``: 1-3600 (SageMaker's default is 900).
_MAX_INVOCATION_TIMEOUT_S = 3600
#: botocore ``RequestTTLSecondsHeader``: 60-21600 (SageMaker's default is 21600, 6 hours).
_REQUEST_TTL_S = (60, 21600)
_SQS_LONG_POLL_S = 20  # SQS's longest WaitTimeSeconds


class AsyncChatError(Exception):
    """The request was refused, failed, or its answer did not come in time.

    :param message: what happened, and what to do.
    :param inference_id: the request's id, when it was queued.
    :param failure: the failure file SageMaker wrote (or its notification's reason).
    :param code: the OpenAI error code of a refused request (``invalid_value``, ...).
    """

    def __init__(
        self,
        message: str,
        *,
        inference_id: str | None = None,
        failure: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.inference_id = inference_id
        self.failure = failure
        self.code = code


@dataclass(frozen=True, kw_only=True)
class AsyncChatJob:
    """A queued chat request: where its answer (or failure) will be, and how to read it."""

    endpoint_name: str
    inference_id: str
    output_location: str
    failure_location: str | None
    request_format: RequestFormat
    stream_format: StreamFormat
    model: str
    logprobs: bool
    prompt: str | None = None  # a generate request's prompt, which TGI may repeat
    s3: Any = None

    def result(
        self,
        *,
        timeout: float = 3600.0,
        poll_interval: float = 5.0,
        queue_url: str | None = None,
        sqs: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> dict[str, Any]:
        """The answer as an OpenAI ``chat.completion``; raises ``AsyncChatError`` when
        SageMaker wrote a failure, or when ``timeout`` seconds pass first.

        :param timeout: how long to wait, in seconds. @default 3600 (the longest a request may
            run, and requests also wait in the queue: pass more for a long backlog)
        :param poll_interval: seconds between two looks at S3. @default 5
        :param queue_url: an SQS queue subscribed to the endpoint's notification topic: wait
            on it instead of polling S3. @default poll S3
        :param sqs: a boto3 SQS client. @default a new one
        """
        deadline = clock() + timeout
        if queue_url is not None:
            status, reason = self._notified(queue_url, sqs or _client("sqs"), deadline, clock)
            if status == "Completed":
                return self._answer(self._read(self.output_location))
            failure = self._failure_text() or reason
            raise self._failed(failure)
        while True:
            if self._exists(self.output_location):
                return self._answer(self._read(self.output_location))
            if self.failure_location is not None and self._exists(self.failure_location):
                raise self._failed(self._read(self.failure_location).decode(errors="replace"))
            if clock() >= deadline:
                raise self._timed_out(timeout)
            sleep(min(poll_interval, max(0.0, deadline - clock())))

    # -- reading --------------------------------------------------------------------------------

    def _answer(self, body: bytes) -> dict[str, Any]:
        """The answer SageMaker wrote, read as the batch worker reads it
        (``runtime/chat/async_answer.py``)."""
        try:
            return chat_completion(
                body,
                stream_format=self.stream_format,
                model=self.model,
                logprobs=self.logprobs,
                prompt=self.prompt,
            )
        except AnswerError as error:
            raise AsyncChatError(
                error.message, inference_id=self.inference_id, failure=error.failure
            ) from None

    def _client(self) -> Any:
        return self.s3 or _client("s3")

    def _exists(self, uri: str) -> bool:
        bucket, key = _split(uri)
        listed = self._client().list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
        return any(item.get("Key") == key for item in listed.get("Contents", ()))

    def _read(self, uri: str) -> bytes:
        bucket, key = _split(uri)
        body: bytes = self._client().get_object(Bucket=bucket, Key=key)["Body"].read()
        return body

    def _failure_text(self) -> str | None:
        if self.failure_location is None or not self._exists(self.failure_location):
            return None
        return self._read(self.failure_location).decode(errors="replace")

    # -- notifications --------------------------------------------------------------------------

    def _notified(
        self, queue_url: str, sqs: Any, deadline: float, clock: Callable[[], float]
    ) -> tuple[str, str | None]:
        """The request's ``invocationStatus`` and ``failureReason``, from its notification."""
        while True:
            left = deadline - clock()
            if left <= 0:
                raise self._timed_out(None)
            received = sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=max(1, min(_SQS_LONG_POLL_S, int(left))),
            )
            for message in received.get("Messages", ()):
                notice = _notification(message.get("Body", ""))
                if notice is None or notice.get("inferenceId") != self.inference_id:
                    # someone else's (or a TestNotification): back to the queue at once
                    sqs.change_message_visibility(
                        QueueUrl=queue_url,
                        ReceiptHandle=message["ReceiptHandle"],
                        VisibilityTimeout=0,
                    )
                    continue
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
                status = str(notice.get("invocationStatus"))
                reason = notice.get("failureReason")
                return status, str(reason) if reason is not None else None

    # -- errors ---------------------------------------------------------------------------------

    def _failed(self, failure: str | None) -> AsyncChatError:
        shown = (failure or "no failure file or reason").strip()
        return AsyncChatError(
            f"inference {self.inference_id} on endpoint {self.endpoint_name} failed: "
            f"{shown[:2000]}",
            inference_id=self.inference_id,
            failure=failure,
        )

    def _timed_out(self, timeout: float | None) -> AsyncChatError:
        waited = f" in {timeout:g} s" if timeout is not None else " before the deadline"
        return AsyncChatError(
            f"no answer to inference {self.inference_id} on endpoint {self.endpoint_name}"
            f"{waited}: it may still be queued (a scaled-to-zero endpoint starts an instance "
            f"first) or running; wait longer with result(timeout=...), or read "
            f"{self.output_location} later",
            inference_id=self.inference_id,
        )


def submit_chat(
    endpoint_name: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    input_location: str | None = None,
    inline: bool | None = None,
    request_format: RequestFormat | str = RequestFormat.MESSAGES,
    stream_format: StreamFormat | str = StreamFormat.AUTO,
    tools: bool | None = None,
    max_total_tokens: int | None = None,
    model: str | None = None,
    inference_id: str | None = None,
    invocation_timeout: int | None = None,
    request_ttl: int | None = None,
    sagemaker_runtime: Any = None,
    s3: Any = None,
    **params: Any,
) -> AsyncChatJob:
    """Queue a chat request on an asynchronous endpoint; returns the job to wait on.

    :param endpoint_name: the endpoint's name.
    :param messages: the OpenAI chat messages; ``params`` are the request's other fields
        (``max_tokens``, ``temperature``, ``tools``, ...), except ``stream``.
    :param input_location: ``s3://bucket/prefix/`` for request bodies (the endpoint's input
        folder, ``inputs/`` next to its output folder by default). @default inline only
    :param inline: send the body in the call (up to 128,000 bytes) rather than through S3.
        @default inline when it fits, else through ``input_location``
    :param request_format: the engine's request body (``RequestFormat``). @default messages
    :param stream_format: how to read an answer written as a stream. @default detected
    :param tools: whether the engine serves tool calls. @default as the invoker: on for the
        messages format, off for generate
    :param max_total_tokens: the model's limit on prompt plus completion. @default unknown
    :param model: the name the answer's ``model`` field carries when the engine gives none.
        @default the endpoint name
    :param inference_id: the request's id (1-64 printable characters). @default a new UUID
    :param invocation_timeout: seconds the model may take (1-3600). @default SageMaker's, 900
    :param request_ttl: seconds the request may wait in the queue (60-21600). @default
        SageMaker's, 21600 (6 hours)
    :param sagemaker_runtime: a boto3 ``sagemaker-runtime`` client. @default a new one
    :param s3: a boto3 S3 client. @default a new one
    """
    fmt = RequestFormat(request_format)
    if params.get("stream"):
        raise AsyncChatError(
            "stream=True cannot be served: an asynchronous endpoint writes one answer to S3; "
            "drop stream, or stream from a real-time endpoint through a StreamingInvoker",
            code="unsupported_parameter",
        )
    params.pop("stream", None)
    _check_limits(invocation_timeout, request_ttl, inference_id)
    data = {**params, "messages": list(messages)}
    try:
        target = ChatTarget(request_format=fmt, tools=tools, max_total_tokens=max_total_tokens)
        request = build_chat_request(data, target)
    except RequestError as error:
        raise AsyncChatError(error.message, code=error.code) from None
    body = one_answer_body(request.engine_body)
    job_id = inference_id or str(uuid.uuid4())
    call: dict[str, Any] = {
        "EndpointName": endpoint_name,
        "ContentType": "application/json",
        "Accept": "application/json",
        "InferenceId": job_id,
    }
    if invocation_timeout is not None:
        call["InvocationTimeoutSeconds"] = invocation_timeout
    if request_ttl is not None:
        call["RequestTTLSeconds"] = request_ttl
    folder = _upload_folder(inline, len(body), input_location)
    if folder is None:
        call["Body"] = body
    else:
        call["InputLocation"] = _upload(s3 or _client("s3"), folder, job_id, body)
    answer = (sagemaker_runtime or _client("sagemaker-runtime")).invoke_endpoint_async(**call)
    return AsyncChatJob(
        endpoint_name=endpoint_name,
        inference_id=str(answer.get("InferenceId") or job_id),
        output_location=answer["OutputLocation"],
        failure_location=answer.get("FailureLocation"),
        request_format=fmt,
        stream_format=StreamFormat(stream_format),
        model=model or endpoint_name,
        logprobs=request.logprobs,
        prompt=generate_prompt(data) if fmt is RequestFormat.GENERATE else None,
        s3=s3,
    )


def chat_async(
    endpoint_name: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    timeout: float = 3600.0,
    poll_interval: float = 5.0,
    queue_url: str | None = None,
    sqs: Any = None,
    **submit: Any,
) -> dict[str, Any]:
    """``submit_chat(...)`` then ``result(...)``: the answer as an OpenAI ``chat.completion``.
    ``submit`` takes ``submit_chat``'s arguments; the others are ``result``'s."""
    job = submit_chat(endpoint_name, messages, **submit)
    return job.result(timeout=timeout, poll_interval=poll_interval, queue_url=queue_url, sqs=sqs)


# -- helpers ----------------------------------------------------------------------------------


def _upload_folder(inline: bool | None, size: int, input_location: str | None) -> str | None:
    """Where the body goes through S3, or None when it goes inline in the call."""
    fits = size <= INLINE_LIMIT
    if inline is True and not fits:
        raise AsyncChatError(
            f"the request body is {size:,} bytes, above the {INLINE_LIMIT:,} bytes "
            "InvokeEndpointAsync takes inline; pass input_location='s3://bucket/inputs/' and "
            "inline=False (or leave inline out)"
        )
    if inline is False or not fits:
        if input_location is None:
            why = "inline=False" if fits else f"the request body is {size:,} bytes"
            raise AsyncChatError(
                f"{why}: the body goes through S3, but input_location names no folder; pass "
                "input_location='s3://bucket/inputs/' (the endpoint's input folder)"
            )
        return input_location
    return None


def _upload(s3: Any, input_location: str, job_id: str, body: bytes) -> str:
    bucket, prefix = _split(input_location)
    if prefix and not prefix.endswith("/"):
        raise AsyncChatError(
            f"input_location must name a folder ending with '/', got {input_location!r}"
        )
    key = f"{prefix}{job_id}.json"
    s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")
    return f"s3://{bucket}/{key}"


def _split(uri: str) -> tuple[str, str]:
    parts = urlsplit(uri)
    if parts.scheme != "s3" or not parts.netloc:
        raise AsyncChatError(f"expected an s3://bucket/key URI, got {uri!r}")
    return parts.netloc, parts.path.lstrip("/")


def _notification(body: str) -> dict[str, Any] | None:
    """SageMaker's notification in an SQS message: raw, or in SNS's envelope."""
    try:
        data = json.loads(body)
        if isinstance(data, dict) and data.get("Type") == "Notification":
            data = json.loads(data.get("Message", ""))
    except (TypeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _check_limits(
    invocation_timeout: int | None, request_ttl: int | None, inference_id: str | None
) -> None:
    if invocation_timeout is not None and not (
        isinstance(invocation_timeout, int)
        and not isinstance(invocation_timeout, bool)
        and 1 <= invocation_timeout <= _MAX_INVOCATION_TIMEOUT_S
    ):
        raise AsyncChatError(
            f"invocation_timeout must be 1-{_MAX_INVOCATION_TIMEOUT_S} seconds "
            f"(InvocationTimeoutSeconds), got {invocation_timeout!r}"
        )
    low, high = _REQUEST_TTL_S
    if request_ttl is not None and not (
        isinstance(request_ttl, int)
        and not isinstance(request_ttl, bool)
        and low <= request_ttl <= high
    ):
        raise AsyncChatError(
            f"request_ttl must be {low}-{high} seconds (RequestTTLSeconds), got {request_ttl!r}"
        )
    if inference_id is not None and not (
        isinstance(inference_id, str)
        and 1 <= len(inference_id) <= 64
        and inference_id.isprintable()
        and not inference_id[0].isspace()
    ):
        raise AsyncChatError(
            f"inference_id must be 1-64 printable characters (InferenceId), got {inference_id!r}"
        )


_CLIENT_LOCK = threading.Lock()


@functools.cache
def _session() -> Any:
    """The process's boto3 session, made on first use."""
    import boto3  # type: ignore[import-untyped]  # a dependency of the client distribution

    return boto3.session.Session()


def _client(service: str) -> Any:
    """A new client from one boto3 session per process, as ``boto3.client`` makes them: a new
    session would load botocore's service model and endpoint rules again (about 0.1 s of CPU
    for each client, and ``result`` makes one at each look at S3). The client still reads the
    region and ``AWS_ENDPOINT_URL_<SERVICE>`` from the environment when it is made; the
    session resolves credentials once, refreshing those that expire. A boto3 session is not
    thread-safe: clients are made under a lock, and are safe to share once made."""
    with _CLIENT_LOCK:
        return _session().client(service)
