"""HTTP/1.1 framing (RFC 9112) on raw sockets: a bare CR or a NUL in a header, a request
without Host (or with two), and Content-Length with Transfer-Encoding are each a 400 after
which the connection closes; more than 128 tools is a 400 naming ``tools``."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from constructs_llm.streaming.formats import RequestFormat
from constructs_llm.streaming.runtime.chat.request import build_chat_request
from constructs_llm.streaming.runtime.chat.target import ChatTarget
from constructs_llm.streaming.runtime.chat.tools import MAX_TOOLS
from constructs_llm.streaming.runtime.http.errors import RequestError
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

BODY = json.dumps({"messages": [{"role": "user", "content": "Hi"}]}).encode()


def exchange(runtime: Runtime, data: bytes) -> tuple[bytes, bool]:
    """Send ``data`` and read until the server closes: the answer, and whether it closed (a
    connection left open would time out here instead)."""
    with socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except TimeoutError:
            return b"".join(chunks), False
    return b"".join(chunks), True


def error_of(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), answer
    error: dict[str, Any] = json.loads(body)["error"]
    return error


def post(headers: bytes, body: bytes = BODY) -> bytes:
    return b"POST /v1/chat/completions HTTP/1.1\r\n" + headers + b"\r\n" + body


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        # a proxy reading one field would not see the Authorization smuggled behind the CR
        (b"Host: x\r\nX-Note: a\rAuthorization: Bearer k\r\n", "bare CR"),
        (b"Host: x\r\nX-Target-Variant: a\x00b\r\n", "control character"),
        (b"Content-Length: 2\r\n", "needs a Host header"),
        (b"Host: x\r\nHost: y\r\nContent-Length: 2\r\n", "more than one Host"),
        (
            b"Host: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n",
            "both Content-Length and Transfer-Encoding",
        ),
    ],
    ids=["bare-cr", "nul", "no-host", "two-hosts", "length-and-chunked"],
)
def test_a_request_framed_two_ways_gets_400_and_the_connection_closes(
    runtime: Runtime, fake: FakeSageMaker, headers: bytes, words: str
) -> None:
    answer, closed = exchange(runtime, post(headers, b"{}"))
    error = error_of(answer)
    assert words in error["message"] and error["code"] == "invalid_header"
    assert b"\r\nConnection: close\r\n" in answer.partition(b"\r\n\r\n")[0] + b"\r\n"
    assert closed
    assert fake.requests == []  # nothing reached SageMaker


def test_a_well_framed_request_on_the_same_terms_is_served(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.openai(["ok"])))
    headers = b"Host: x\r\nContent-Length: %d\r\nConnection: close\r\n" % len(BODY)
    answer, _ = exchange(runtime, post(headers))
    assert answer.startswith(b"HTTP/1.1 200 ")


def test_http_1_0_needs_no_host(runtime: Runtime) -> None:
    answer, _ = exchange(runtime, b"GET /health HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 ")


def tools(count: int) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": f"tool_{i}", "parameters": {"type": "object"}}}
        for i in range(count)
    ]


def test_more_than_128_tools_is_a_400_naming_tools() -> None:
    data = {"messages": [{"role": "user", "content": "Hi"}]}
    assert MAX_TOOLS == 128
    build_chat_request(
        {**data, "tools": tools(128)}, ChatTarget(request_format=RequestFormat.MESSAGES)
    )
    with pytest.raises(RequestError) as refused:
        build_chat_request(
            {**data, "tools": tools(129)}, ChatTarget(request_format=RequestFormat.MESSAGES)
        )
    assert refused.value.param == "tools" and "at most 128" in refused.value.message


def test_the_responses_api_refuses_129_tools_too(runtime: Runtime, fake: FakeSageMaker) -> None:
    flat = [{"type": "function", "name": f"tool_{i}"} for i in range(129)]
    body = json.dumps({"model": MODEL, "input": "Hi", "tools": flat}).encode()
    headers = b"Host: x\r\nContent-Length: %d\r\nConnection: close\r\n" % len(body)
    answer, _ = exchange(runtime, b"POST /v1/responses HTTP/1.1\r\n" + headers + b"\r\n" + body)
    error = error_of(answer)
    assert error["param"] == "tools" and "at most 128" in error["message"]
    assert fake.requests == []
