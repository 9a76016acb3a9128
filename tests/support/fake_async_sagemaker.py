"""A loopback stand-in for SageMaker Runtime's ``InvokeEndpointAsync`` and the queue behind it.

moto 5.2.5 registers ``/async-invocations`` but answers with a canned object in a bucket of its
own: it reads no input and calls no model (``moto/sagemakerruntime/models.py``,
``invoke_endpoint_async``). This fake does what SageMaker's asynchronous inference guide
describes, against moto's real S3 and SNS (its threaded server):

- ``POST /endpoints/{name}/async-invocations`` takes the request as botocore sends it: the
  body inline (``Body``) or ``X-Amzn-SageMaker-InputLocation``, never both (400
  ``ValidationError`` otherwise), the ``X-Amzn-SageMaker-Inference-Id`` (a UUID when absent);
  it answers 202 with ``X-Amzn-SageMaker-OutputLocation`` and, when the endpoint has a
  failure path, ``X-Amzn-SageMaker-FailureLocation``, and ``{"InferenceId": ...}``;
- then, on a worker thread, it reads the input from S3, hands the body to the endpoint's
  model (a function: request body -> HTTP status and answer), writes the answer under the
  output path, or the model's error under the failure path, and publishes the notification
  SageMaker's "Check prediction results" page shows (``invocationStatus`` ``Completed`` with
  ``responseParameters.outputLocation``, or ``Failed`` with ``failureReason``) to the
  endpoint's topic.

Object names: ``<output path><inference id>.out`` and ``<failure path><inference id>-error.out``
(the fake's choice; SageMaker picks its own names and the client uses the locations the call
returns).
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["AsyncEndpoint", "FakeAsyncSageMaker", "LocalAws", "Received", "local_aws"]

Model = Callable[[bytes], tuple[int, bytes]]
"""The container: the request body in, the HTTP status and the answer out."""


@dataclass(kw_only=True)
class AsyncEndpoint:
    """One asynchronous endpoint: its AsyncInferenceConfig and its model."""

    model: Model
    output_path: str
    failure_path: str | None = None
    topic_arn: str | None = None


@dataclass(frozen=True, kw_only=True)
class Received:
    """A call as the fake received it."""

    endpoint: str
    inference_id: str
    headers: dict[str, str]
    body: bytes


@dataclass
class LocalAws:
    """moto's server (S3, SNS, SQS) and clients for it."""

    url: str
    s3: Any
    sns: Any
    sqs: Any


@contextmanager
def local_aws(env: dict[str, str]) -> Iterator[LocalAws]:
    """moto's threaded server on 127.0.0.1 (an ephemeral port) and boto3 clients for it."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        session = boto3.session.Session(
            region_name=env["AWS_REGION"],
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        )
        yield LocalAws(
            url=url,
            s3=session.client("s3", endpoint_url=url),
            sns=session.client("sns", endpoint_url=url),
            sqs=session.client("sqs", endpoint_url=url),
        )
    finally:
        server.stop()


class FakeAsyncSageMaker:
    """``InvokeEndpointAsync`` on loopback; answers are written through ``aws``'s S3 and SNS."""

    def __init__(self, aws: LocalAws) -> None:
        self.aws = aws
        self.endpoints: dict[str, AsyncEndpoint] = {}
        self.received: list[Received] = []
        self.processed = threading.Event()
        self._jobs: queue.Queue[tuple[str, str, Received] | None] = queue.Queue()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._threads = [
            threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            ),
            threading.Thread(target=self._work, daemon=True),
        ]
        #: Held while set: jobs wait in the queue (an endpoint at zero instances).
        self.paused = threading.Event()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAsyncSageMaker:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._jobs.put(None)
        self._server.shutdown()
        self._server.server_close()

    # -- the call ---------------------------------------------------------------------------

    def accept(
        self, name: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        endpoint = self.endpoints.get(name)
        if endpoint is None:
            return _error(
                400, "ValidationError", f"Endpoint {name} of account 123456789012 not found."
            )
        location = headers.get("x-amzn-sagemaker-inputlocation")
        if (location is None) == (not body):
            return _error(400, "ValidationError", "Provide exactly one of Body or InputLocation.")
        inference_id = headers.get("x-amzn-sagemaker-inference-id") or str(uuid.uuid4())
        received = Received(endpoint=name, inference_id=inference_id, headers=headers, body=body)
        self.received.append(received)
        output = f"{endpoint.output_path}{inference_id}.out"
        answer = {"X-Amzn-SageMaker-OutputLocation": output}
        failure = None
        if endpoint.failure_path is not None:
            failure = f"{endpoint.failure_path}{inference_id}-error.out"
            answer["X-Amzn-SageMaker-FailureLocation"] = failure
        self._jobs.put(
            (output, failure or f"{endpoint.output_path}{inference_id}-error.out", received)
        )
        return 202, answer, json.dumps({"InferenceId": inference_id}).encode()

    # -- the queue --------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            while self.paused.is_set():
                time.sleep(0.01)
            self._process(*job)
            self.processed.set()

    def _process(self, output: str, failure: str, received: Received) -> None:
        endpoint = self.endpoints[received.endpoint]
        location = received.headers.get("x-amzn-sagemaker-inputlocation")
        body = received.body if location is None else self._read(location)
        status, answer = endpoint.model(body)
        notice: dict[str, Any] = {
            "awsRegion": "us-east-1",
            "eventTime": datetime.now(timezone.utc).isoformat(),
            "requestParameters": {
                "endpointName": received.endpoint,
                **({"inputLocation": location} if location else {}),
            },
            "inferenceId": received.inference_id,
            "eventVersion": "1.0",
            "eventSource": "aws:sagemaker",
            "eventName": "InferenceResult",
        }
        if 200 <= status < 300:
            self._write(output, answer)
            notice["invocationStatus"] = "Completed"
            notice["responseParameters"] = {
                "contentType": "application/json",
                "outputLocation": output,
            }
        else:
            self._write(failure, answer)
            notice["invocationStatus"] = "Failed"
            notice["failureReason"] = (
                f"ClientError: Received client error ({status}) from model. See the SageMaker "
                "Endpoint logs in your account for more information."
            )
        if endpoint.topic_arn is not None:
            self.aws.sns.publish(TopicArn=endpoint.topic_arn, Message=json.dumps(notice))

    def _read(self, uri: str) -> bytes:
        bucket, key = _split(uri)
        data: bytes = self.aws.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        return data

    def _write(self, uri: str, data: bytes) -> None:
        bucket, key = _split(uri)
        self.aws.s3.put_object(Bucket=bucket, Key=key, Body=data)


def _split(uri: str) -> tuple[str, str]:
    parts = urlsplit(uri)
    return parts.netloc, parts.path.lstrip("/")


def _error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"x-amzn-ErrorType": kind}, json.dumps({"message": message}).encode()


def _handler(fake: FakeAsyncSageMaker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = path.strip("/").split("/")
            if len(parts) != 3 or parts[0] != "endpoints" or parts[2] != "async-invocations":
                status, headers, data = _error(404, "UnknownOperationException", path)
            else:
                lowered = {k.lower(): v for k, v in self.headers.items()}
                status, headers, data = fake.accept(parts[1], lowered, body)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@dataclass
class Engines:
    """Answers of serving containers to a non-streaming request (their real shapes)."""

    text: str = "Paris is the capital of France."
    calls: list[dict[str, Any]] = field(default_factory=list)

    def chat(self, body: bytes) -> tuple[int, bytes]:
        """An OpenAI chat API (TGI Messages API, vLLM, SGLang, LMI): a ``chat.completion``."""
        request = json.loads(body)
        self.calls.append(request)
        if request.get("stream"):
            return 400, b'{"error":"this fake answers stream:false only"}'
        answer = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "tgi",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.text},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20},
        }
        return 200, json.dumps(answer).encode()

    def tgi_generate(self, body: bytes) -> tuple[int, bytes]:
        """TGI's compat route: a list of one generation, repeating the prompt for a
        text-generation model (``compat_return_full_text``)."""
        request = json.loads(body)
        self.calls.append(request)
        prompt = request["inputs"]
        answer = [
            {
                "generated_text": prompt + self.text,
                "details": {"finish_reason": "length", "generated_tokens": 8, "seed": None},
            }
        ]
        return 200, json.dumps(answer).encode()

    def failing(self, body: bytes) -> tuple[int, bytes]:
        """A container that refuses the request."""
        self.calls.append(json.loads(body))
        return (
            422,
            b'{"error":"Input validation error: max_new_tokens must be <= 4096","error_type":"validation"}',
        )
