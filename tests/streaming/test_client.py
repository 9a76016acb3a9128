"""The SigV4 streaming client, on the wire and against the runtime server."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
from botocore.credentials import Credentials  # type: ignore[import-untyped]

from constructs_llm.streaming.client import ChatStreamError, signed_headers, stream_chat
from constructs_llm.streaming.runtime.chat.stream import ChunkStream
from constructs_llm.streaming.runtime.chat.wire import CompletionShape
from constructs_llm.streaming.runtime.parsing.events import DoneEvent, TokenEvent
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

USER = [{"role": "user", "content": "Hi"}]
CREDENTIALS = Credentials("AKIDEXAMPLE", "secret", "session-token")
AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/us-east-1/lambda/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})"
)


class _Recorder(BaseHTTPRequestHandler):
    """Records each request and answers a fixed two-token SSE stream, as the runtime would."""

    protocol_version = "HTTP/1.1"
    seen: list[dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
        encoder = ChunkStream(CompletionShape(completion_id="c", created=1, model="m"))
        events = [
            encoder.start(),
            encoder.token(TokenEvent("Hi")),
            b": keep-alive comment\n\n",
            encoder.token(TokenEvent(" there")),
            encoder.finish(DoneEvent(finish_reason="stop")),
        ]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True  # one request per connection: no reset noise at exit


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.block_on_close = False
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_requests_are_sigv4_signed_for_lambda_with_the_body_hash(
    recorder: tuple[str, list[dict[str, Any]]],
) -> None:
    url, seen = recorder
    # WHEN the client streams a chat through a (recording) function URL
    pieces = list(
        stream_chat(
            url,
            USER,
            region="us-east-1",
            credentials=CREDENTIALS,
            timeout=SOCKET_TIMEOUT,
            max_tokens=5,
        )
    )
    # THEN it yields the text pieces
    assert pieces == ["Hi", " there"]
    # AND it POSTed the OpenAI request to /v1/chat/completions with the body's SHA-256
    [request] = seen
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert request["path"] == "/v1/chat/completions"
    assert json.loads(request["body"]) == {"max_tokens": 5, "messages": USER, "stream": True}
    assert headers["x-amz-content-sha256"] == hashlib.sha256(request["body"]).hexdigest()
    assert headers["x-amz-security-token"] == "session-token"
    assert re.fullmatch(r"\d{8}T\d{6}Z", headers["x-amz-date"])
    # AND signed it (service "lambda"), the body hash among the signed headers
    match = AUTHORIZATION.fullmatch(headers["authorization"])
    assert match is not None, headers["authorization"]
    signed = match["signed"].split(";")
    assert {"host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"} <= set(signed)
    assert match["signature"] == _expected_signature(url, request["body"], headers, signed)


def _expected_signature(url: str, body: bytes, headers: dict[str, str], signed: list[str]) -> str:
    """Recompute the SigV4 signature from what was received, at the request's own timestamp."""
    names = [name for name in signed if name != "host"]
    replay = AWSRequest(
        method="POST",
        url=url + "/v1/chat/completions",
        data=body,
        headers={name: headers[name] for name in names},
    )
    replay.context["timestamp"] = headers["x-amz-date"]
    auth = SigV4Auth(CREDENTIALS, "lambda", "us-east-1")
    string_to_sign = auth.string_to_sign(replay, auth.canonical_request(replay))
    return str(auth.signature(string_to_sign, replay))


def test_unsigned_requests_still_carry_the_body_hash_for_cloudfront_oac(
    recorder: tuple[str, list[dict[str, Any]]],
) -> None:
    url, seen = recorder
    assert list(stream_chat(url + "/", USER, sign=False, timeout=SOCKET_TIMEOUT)) == [
        "Hi",
        " there",
    ]
    headers = {k.lower(): v for k, v in seen[0]["headers"].items()}
    assert "authorization" not in headers
    assert headers["x-amz-content-sha256"] == hashlib.sha256(seen[0]["body"]).hexdigest()


def test_region_comes_from_a_function_url_host_name() -> None:
    url = "https://abcdefg.lambda-url.eu-west-1.on.aws/v1/chat/completions"
    headers = signed_headers(url, b"{}", credentials=CREDENTIALS)
    assert "/eu-west-1/lambda/aws4_request" in headers["Authorization"]


def test_credentials_default_to_botocores_chain(aws_env: dict[str, str]) -> None:
    headers = signed_headers("http://127.0.0.1:1/v1/chat/completions", b"{}")
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=testing/")


def test_the_region_is_botocore_s_aws_default_region_and_the_message_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN no profile and AWS_REGION alone, which botocore (and the AWS CLI v1) do not read
    for name in ("AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    url = "http://127.0.0.1:1/v1/chat/completions"
    # THEN signing for a URL that names no region fails naming the variable that is read
    with pytest.raises(ValueError, match=r"set AWS_DEFAULT_REGION .*does not read AWS_REGION"):
        signed_headers(url, b"{}", credentials=CREDENTIALS)
    # AND with AWS_DEFAULT_REGION it signs for that region
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    headers = signed_headers(url, b"{}", credentials=CREDENTIALS)
    assert "/ap-south-1/lambda/aws4_request" in headers["Authorization"]


def test_a_non_http_url_is_refused() -> None:
    with pytest.raises(ValueError, match="got 'ftp://x'"):
        next(stream_chat("ftp://x", USER, sign=False))


# -- against the runtime server ----------------------------------------------------------------


def test_streams_tokens_through_the_runtime(runtime: Runtime, fake: FakeSageMaker) -> None:
    tokens = ["Hel", "lo", " 🙂"]
    fake.enqueue(Scenario(parts=engine_streams.rechunk(engine_streams.tgi(tokens), 3)))
    assert list(stream_chat(runtime.url, USER, timeout=SOCKET_TIMEOUT)) == tokens
    assert fake.requests[0].json()["messages"] == USER


def test_a_refused_request_raises_with_the_status_and_code(runtime: Runtime) -> None:
    with pytest.raises(ChatStreamError) as info:
        list(stream_chat(runtime.url, USER, timeout=SOCKET_TIMEOUT, n=2))
    assert (info.value.status, info.value.code) == (400, "unsupported_parameter")
    assert "'n'" in info.value.message and "engine is not known" in info.value.message


def test_a_mid_stream_error_raises_after_the_tokens(runtime: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(
        Scenario(parts=engine_streams.tgi(["a", "b", "c"])[:2], exception="ModelStreamError")
    )
    received: list[str] = []
    with pytest.raises(ChatStreamError) as info:
        for piece in stream_chat(runtime.url, USER, timeout=SOCKET_TIMEOUT):
            received.append(piece)
    assert received == ["a", "b"]
    assert info.value.code == "ModelStreamError"
