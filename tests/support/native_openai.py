"""A stand-in for SageMaker's own OpenAI route, for tests with real OpenAI clients.

It plays both parts AWS documents ("Invoke endpoints with OpenAI-compatible APIs"): the front
door checks the URL path (``/endpoints/<endpoint>[/inference-components/<component>]/openai/v1/
chat/completions``) and the bearer token, and the container answers the Chat Completions body
as vLLM does, a ``chat.completion`` or ``chat.completion.chunk`` server-sent events ending with
``data: [DONE]``, which the route passes back unchanged.

The token is checked as the service would: decoded (``sagemaker-api-key-`` + base64 of a
presigned ``CallWithBearerToken`` URL + ``&Version=1``), its SigV4 query signature recomputed
with botocore from the secret key of the access key it names (the server knows the test
credentials), at the token's own timestamp, and its validity window checked against the clock.
A failed check answers 403 with the reason, so a test sees why.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hmac
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from unittest import mock
from urllib.parse import parse_qsl, urlsplit

from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

__all__ = ["NativeRoute", "TokenRejected", "native_route", "verify_token"]

PREFIX = "sagemaker-api-key-"
HOST = "sagemaker.amazonaws.com"


class TokenRejected(Exception):
    """The bearer token is malformed, forged, for another region, or outside its window."""


@dataclass(frozen=True)
class Claims:
    """What a valid token says: whose keys signed it, for which region, and when it ends."""

    access_key: str
    region: str
    signed_at: datetime.datetime
    expires_in: int


def verify_token(
    token: str,
    known: Mapping[str, Credentials],
    *,
    region: str,
    now: datetime.datetime | None = None,
) -> Claims:
    """Checks ``token`` as SageMaker would and returns its claims, else raises TokenRejected."""
    if not token.startswith(PREFIX):
        raise TokenRejected(f"the token does not start with {PREFIX!r}")
    try:
        presigned = base64.b64decode(token[len(PREFIX) :], validate=True).decode()
    except (binascii.Error, UnicodeDecodeError) as error:
        raise TokenRejected(f"the token is not base64: {error}") from None
    if not presigned.endswith("&Version=1"):
        raise TokenRejected("the token does not end with &Version=1")
    url = urlsplit("https://" + presigned.removesuffix("&Version=1"))
    if url.netloc != HOST or url.path != "/":
        raise TokenRejected(f"the token is for {url.netloc}{url.path}, not {HOST}/")
    params = dict(parse_qsl(url.query, keep_blank_values=True))
    if params.get("Action") != "CallWithBearerToken":
        raise TokenRejected(f"the token's Action is {params.get('Action')!r}")
    access_key, date, scope_region, service, terminal = params["X-Amz-Credential"].split("/")
    if (service, terminal) != ("sagemaker", "aws4_request"):
        raise TokenRejected(f"the token is signed for {service!r}, not 'sagemaker'")
    if scope_region != region:
        raise TokenRejected(f"the token is for region {scope_region}, this endpoint is in {region}")
    credentials = known.get(access_key)
    if credentials is None:
        raise TokenRejected(f"unknown access key {access_key}")
    signed_at = datetime.datetime.strptime(params["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    expires_in = int(params["X-Amz-Expires"])
    if not 1 <= expires_in <= 43200:
        raise TokenRejected(f"X-Amz-Expires={expires_in} is outside 1-43200 seconds")
    if date != signed_at.strftime("%Y%m%d"):
        raise TokenRejected("the credential scope's date is not the signing date")
    # Recompute the presigned URL from the keys the access key names, at the token's time.
    expected = AWSRequest(
        method="POST",
        url=f"https://{HOST}/",
        headers={"host": HOST},
        params={"Action": "CallWithBearerToken"},
    )
    with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at):
        SigV4QueryAuth(credentials, "sagemaker", region, expires=expires_in).add_auth(expected)
    want = dict(parse_qsl(urlsplit(expected.url).query))
    if not hmac.compare_digest(want["X-Amz-Signature"], params.get("X-Amz-Signature", "")):
        raise TokenRejected("the signature does not match")
    if params != want:
        raise TokenRejected(f"the signed parameters differ: {sorted(set(params) ^ set(want))}")
    clock = now or datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    if clock < signed_at - datetime.timedelta(minutes=5):
        raise TokenRejected("the token is signed in the future")
    if clock > signed_at + datetime.timedelta(seconds=expires_in):
        raise TokenRejected("the token has expired")
    return Claims(access_key, scope_region, signed_at, expires_in)


@dataclass
class Exchange:
    """One request the stand-in answered (or refused)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    claims: Claims | None
    status: int


@dataclass
class NativeRoute:
    """The running stand-in: its origin, what it knows, and what it saw."""

    origin: str
    region: str
    endpoint: str
    component: str | None
    words: list[str]
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        """What ``openai_base_url`` resolves to, on this server's origin."""
        path = f"/endpoints/{self.endpoint}"
        if self.component:
            path += f"/inference-components/{self.component}"
        return f"{self.origin}{path}/openai/v1"


def _handler(
    route: NativeRoute,
    known: Mapping[str, Credentials],
    clock: Callable[[], datetime.datetime] | None,
) -> type[BaseHTTPRequestHandler]:
    chat_path = urlsplit(route.base_url).path + "/chat/completions"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
            headers = dict(self.headers.items())
            claims = None
            if self.path != chat_path:
                status, error = 404, f"no route for {self.path}; expected {chat_path}"
            else:
                status, error = 200, ""
                auth = self.headers.get("Authorization", "")
                try:
                    if not auth.startswith("Bearer "):
                        raise TokenRejected("no bearer token")
                    claims = verify_token(
                        auth.removeprefix("Bearer "),
                        known,
                        region=route.region,
                        now=clock() if clock else None,
                    )
                except TokenRejected as rejected:
                    status, error = 403, str(rejected)
            route.exchanges.append(Exchange(self.path, headers, body, claims, status))
            if status != 200:
                self._json(status, {"error": {"message": error, "type": "access_denied"}})
            elif body.get("stream"):
                self._stream()
            else:
                self._json(200, _completion(route.words))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in _chunks(route.words):
                data = f"data: {json.dumps(event)}\n\n".encode()
                self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
                self.wfile.flush()
            done = b"data: [DONE]\n\n"
            self.wfile.write(b"%x\r\n%b\r\n0\r\n\r\n" % (len(done), done))

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def _completion(words: list[str]) -> dict[str, Any]:
    text = "".join(words)
    return {
        "id": "chatcmpl-native",
        "object": "chat.completion",
        "created": 1,
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 5,
            "completion_tokens": len(words),
            "total_tokens": 5 + len(words),
        },
    }


def _chunks(words: list[str]) -> Iterator[dict[str, Any]]:
    base = {"id": "chatcmpl-native", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    yield {
        **base,
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
        ],
    }
    for word in words:
        yield {**base, "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


@contextmanager
def native_route(
    known: Mapping[str, Credentials],
    *,
    region: str = "us-east-1",
    endpoint: str = "chat-qwen",
    component: str | None = None,
    words: list[str] | None = None,
    clock: Callable[[], datetime.datetime] | None = None,
) -> Iterator[NativeRoute]:
    """Serves the stand-in on a free local port while the block runs; ``clock`` is the time
    the service checks a token's window at (naive UTC). @default the real clock"""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    route = NativeRoute(
        origin=f"http://127.0.0.1:{server.server_address[1]}",
        region=region,
        endpoint=endpoint,
        component=component,
        words=words or ["Paris", " is", " the", " capital."],
    )
    server.RequestHandlerClass = _handler(route, known, clock)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield route
    finally:
        server.shutdown()
        server.server_close()
