"""The README's recipe: the `openai` SDK calling a StreamingInvoker function URL with AWS_IAM
auth, signed by `sigv4_hook`. The signature is checked by recomputing it with botocore."""

from __future__ import annotations

import datetime
import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from unittest import mock

import openai
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from constructs_llm.streaming.client import content_sha256_hook, sigv4_hook
from tests.streaming.conftest import SOCKET_TIMEOUT, StartRuntime
from tests.support import engine_streams
from tests.support.curl import curl
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session")
CHUNKS = [
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n',
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}\n\n',
    b"data: [DONE]\n\n",
]


class _Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.command, self.path, dict(self.headers.items()), body))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(sum(map(len, CHUNKS))))
        self.end_headers()
        for chunk in CHUNKS:
            self.wfile.write(chunk)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    _Recorder.seen.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _client(base_url: str) -> openai.OpenAI:
    hook = sigv4_hook(region="us-east-1", credentials=CREDENTIALS)
    return openai.OpenAI(
        base_url=base_url + "/v1",
        api_key="unused",
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
        http_client=openai.DefaultHttpx2Client(event_hooks={"request": [hook]}),
    )


def test_openai_sdk_requests_carry_a_valid_sigv4_signature(recorder: str) -> None:
    stream = _client(recorder).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hi there"

    ((method, path, headers, body),) = _Recorder.seen
    assert headers["x-amz-content-sha256"] == hashlib.sha256(body).hexdigest()
    assert headers["X-Amz-Security-Token"] == "session"
    assert "/lambda/aws4_request" in headers["Authorization"]
    # Recompute the signature as the service would, at the request's own timestamp.
    signed_at = datetime.datetime.strptime(headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    expected = AWSRequest(
        method=method,
        url=f"http://{headers['Host']}{path}",
        data=body,
        headers={
            "x-amz-content-sha256": headers["x-amz-content-sha256"],
            "Content-Type": headers["content-type"],
        },
    )
    with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at):
        SigV4Auth(CREDENTIALS, "lambda", "us-east-1").add_auth(expected)
    assert headers["Authorization"] == expected.headers["Authorization"]


def test_openai_sdk_with_signing_streams_through_the_runtime(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime()
    fake.enqueue(Scenario(parts=engine_streams.rechunk(engine_streams.tgi(["Hi", " there"]), 3)))
    stream = _client(runtime.url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hi there"


def test_openai_sdk_responses_are_signed_and_served_through_the_runtime(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN the SDK signing with sigv4_hook, and a hook after it that sees the signed request
    runtime = start_runtime()
    seen: list[Any] = []
    hooks = [sigv4_hook(region="us-east-1", credentials=CREDENTIALS), seen.append]
    client = openai.OpenAI(
        base_url=runtime.url + "/v1",
        api_key="unused",
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
        http_client=openai.DefaultHttpx2Client(event_hooks={"request": hooks}),
    )
    fake.enqueue(Scenario(parts=engine_streams.tgi(["Sig", "ned"], finish_reason="eos_token")))
    # WHEN it streams a response
    events = list(client.responses.create(model="m", input="héllo", stream=True))
    # THEN the runtime served it, and the POST /v1/responses carried a valid signature
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "Signed"
    (request,) = seen
    body = request.read()
    assert (request.method, request.url.path) == ("POST", "/v1/responses")
    headers = request.headers
    assert headers["x-amz-content-sha256"] == hashlib.sha256(body).hexdigest()
    signed_at = datetime.datetime.strptime(headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    expected = AWSRequest(
        method="POST",
        url=str(request.url),
        data=body,
        headers={
            "x-amz-content-sha256": headers["x-amz-content-sha256"],
            "Content-Type": headers["content-type"],
        },
    )
    with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at):
        SigV4Auth(CREDENTIALS, "lambda", "us-east-1").add_auth(expected)
    assert headers["Authorization"] == expected.headers["Authorization"]


def test_content_sha256_hook_adds_only_the_body_hash_cloudfront_oac_needs(recorder: str) -> None:
    # Behind CloudFront with origin access control the viewer sends no signature, only the
    # body's SHA-256; CloudFront signs the origin request itself.
    client = openai.OpenAI(
        base_url=recorder + "/v1",
        api_key="unused",
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
        http_client=openai.DefaultHttpx2Client(event_hooks={"request": [content_sha256_hook()]}),
    )
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "héllo"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hi there"
    ((_, _, headers, body),) = _Recorder.seen
    assert headers["x-amz-content-sha256"] == hashlib.sha256(body).hexdigest()
    assert "X-Amz-Date" not in headers
    assert headers["authorization"] == "Bearer unused"  # the SDK's own, unsigned


def test_langchain_with_the_signing_hook_streams_through_the_runtime(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    from langchain_openai import ChatOpenAI

    runtime = start_runtime()
    fake.enqueue(Scenario(parts=engine_streams.rechunk(engine_streams.tgi(["Sig", "ned"]), 3)))
    sign = sigv4_hook(region="us-east-1", credentials=CREDENTIALS)
    signatures: list[str] = []

    def hook(request: Any) -> None:
        sign(request)
        signatures.append(request.headers["Authorization"])

    llm = ChatOpenAI(
        base_url=runtime.url + "/v1",
        api_key="unused",  # type: ignore[arg-type]
        model="m",
        max_retries=0,
        http_client=openai.DefaultHttpx2Client(event_hooks={"request": [hook]}),
    )
    assert "".join(str(chunk.content) for chunk in llm.stream("hi")) == "Signed"
    assert len(signatures) == 1 and "/lambda/aws4_request" in signatures[0]


def test_curl_aws_sigv4_signs_as_botocore_does(recorder: str) -> None:
    # The README's IAM-mode curl line; the service checks the same signature botocore computes.
    body = '{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}'
    key, secret, token = CREDENTIALS.access_key, CREDENTIALS.secret_key, CREDENTIALS.token
    curl(
        f"{recorder}/v1/chat/completions", "--aws-sigv4", "aws:amz:us-east-1:lambda",
        "--user", f"{key}:{secret}", "-H", f"x-amz-security-token: {token}",
        "-H", "Content-Type: application/json", "-d", body, timeout=SOCKET_TIMEOUT,
    )  # fmt: skip
    ((method, path, headers, sent),) = _Recorder.seen
    assert sent == body.encode()
    signed = headers["Authorization"].split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    assert signed == ["content-type", "host", "x-amz-date", "x-amz-security-token"]
    signed_at = datetime.datetime.strptime(headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    expected = AWSRequest(
        method=method,
        url=f"http://{headers['Host']}{path}",
        data=sent,
        headers={"Content-Type": headers["Content-Type"]},
    )
    with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at):
        SigV4Auth(CREDENTIALS, "lambda", "us-east-1").add_auth(expected)
    assert headers["Authorization"] == expected.headers["Authorization"]
