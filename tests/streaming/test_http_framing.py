"""HTTP/1.1 framing (RFC 9112) on raw sockets: a bare CR or a NUL in a header, a request
without Host (or with two, or an invalid one), Content-Length with Transfer-Encoding, a header
line without a colon or with whitespace before it, a final transfer coding other than chunked
and Transfer-Encoding on HTTP/1.0 are each one 400 after which the connection closes; more
than 128 tools is a 400 naming ``tools``."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from constructs_llm.contract import RequestFormat
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


HIDDEN = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"  # a second request inside the body


def answers(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Every HTTP answer in ``data``, in order: status, headers (lower-case names) and body
    (each framed by its Content-Length), so a test can count them."""
    found = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        assert status_line.startswith("HTTP/1.1 "), data
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)}
        length = int(headers.get("content-length", "0"))
        found.append((int(status_line.split()[1]), headers, rest[:length]))
        data = rest[length:]
    return found


@pytest.mark.parametrize(
    ("request_bytes", "status", "words"),
    [
        # Python's parser stops at the line without a colon and never sees Content-Length: the
        # server answered 411, then served the GET hidden in the body (request smuggling)
        (
            post(b"Host: x\r\nX-No-Colon\r\nContent-Length: %d\r\n" % len(HIDDEN), HIDDEN),
            400,
            "has no colon",
        ),
        (
            post(b"Host: x\r\n folded\r\nContent-Length: %d\r\n" % len(HIDDEN), HIDDEN),
            400,
            "obsolete line folding",
        ),
        (
            post(b"Host: x\r\nContent-Length : %d\r\n" % len(HIDDEN), HIDDEN),
            400,
            "whitespace between the field name and the colon",
        ),
        (
            post(b"Host: x\r\nTransfer-Encoding: chunked, identity\r\n", HIDDEN),
            400,
            "final transfer coding is not chunked",
        ),
        # over two lines: the first line alone says chunked, which the body reader took
        (
            post(b"Host: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", HIDDEN),
            400,
            "Transfer-Encoding: chunked, gzip",
        ),
        (
            post(b"Host: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"),
            400,
            "more than once",
        ),
        (
            post(b"Host: x\r\nTransfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n" + HIDDEN),
            501,
            "decodes no transfer coding but chunked",
        ),
        (
            b"POST /v1/chat/completions HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\n{}\r\n0\r\n\r\n" + HIDDEN,
            400,
            "HTTP/1.0 request may not use Transfer-Encoding",
        ),
        (post(b"Host: a b\r\nContent-Length: 2\r\n", b"{}"), 400, "Host header 'a b'"),
        (post(b"Host: x/y\r\nContent-Length: 2\r\n", b"{}"), 400, "Host header 'x/y'"),
    ],
    ids=[
        "no-colon",
        "obs-fold",
        "space-before-colon",
        "final-coding-not-chunked",
        "codings-over-two-lines",
        "chunked-twice",
        "unknown-coding",
        "http-1.0-chunked",
        "host-with-space",
        "host-with-slash",
    ],
)
def test_a_malformed_header_block_gets_one_answer_and_the_connection_closes(
    runtime: Runtime, fake: FakeSageMaker, request_bytes: bytes, status: int, words: str
) -> None:
    data, closed = exchange(runtime, request_bytes)
    ((got, headers, body),) = answers(data)  # one answer: nothing hidden in the body is served
    error = json.loads(body)["error"]
    assert got == status, error
    assert words in error["message"] and error["code"] == "invalid_header"
    assert headers["connection"] == "close"
    assert closed
    assert fake.requests == []


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
