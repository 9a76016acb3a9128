"""Malformed and hostile HTTP against the runtime server: every case gets a real answer."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from constructs_llm.streaming.runtime.http.body import DRAIN_LIMIT
from constructs_llm.streaming.runtime.http.exchange import send_all
from constructs_llm.streaming.runtime.http.json_body import MAX_JSON_DEPTH
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

CHAT = "/v1/chat/completions"
USER = [{"role": "user", "content": "Hi"}]


def raw_exchange(runtime: Runtime, data: bytes, *, wait: float = 5.0) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", runtime.port), timeout=wait) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def error_body(response: bytes) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(response.partition(b"\r\n\r\n")[2])["error"]
    return body


def test_a_lone_surrogate_escape_in_a_prompt_gets_400_not_500(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    body = b'{"messages": [{"role": "user", "content": "caf\\udce9"}]}'
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    response = raw_exchange(runtime, f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    assert response.startswith(b"HTTP/1.1 400 ")
    error = error_body(response)
    assert error["param"] == "messages[0].content"
    assert "unpaired UTF-16 surrogate" in error["message"]
    assert fake.requests == []


@pytest.mark.parametrize("path", [CHAT, "/v1/responses", "/v1/embeddings"])
@pytest.mark.parametrize(
    ("value", "words"),
    [
        (b"NaN", "NaN is not a JSON number"),
        (b"Infinity", "Infinity is not a JSON number"),
        (b"-Infinity", "-Infinity is not a JSON number"),
        (b"1e999", "1e999 is out of range"),  # Python reads it as infinity
    ],
)
def test_nan_and_infinity_are_not_json_and_get_openai_s_400(
    runtime: Runtime, fake: FakeSageMaker, path: str, value: bytes, words: str
) -> None:
    # GIVEN a body Python's json module would read (and write on) but RFC 8259 refuses
    body = b'{"model": "%s", "messages": [{"role": "user", "content": "Hi"}], "input": "Hi", '
    body = body % MODEL.encode() + b'"temperature": ' + value + b"}"
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    response = raw_exchange(runtime, head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    # THEN OpenAI's 400 shape, and nothing reaches the engine
    assert response.startswith(b"HTTP/1.1 400 "), response
    error = error_body(response)
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["code"] == "invalid_json"
    assert words in error["message"]
    assert fake.requests == []


def test_the_engine_body_is_never_written_with_nan() -> None:
    from constructs_llm.streaming.runtime.http.json_body import engine_json

    assert (
        engine_json({"temperature": 0.5, "text": "é"}) == '{"temperature":0.5,"text":"é"}'.encode()
    )
    for value in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError, match="JSON compliant"):
            engine_json({"temperature": value})


@pytest.mark.parametrize(
    "length", [b"\xb2", b"1\xb9", b"-1", b"+5", b"1_0", b"0x5", b"5 5", b"", b"zz"]
)
def test_a_content_length_that_is_not_ascii_digits_gets_400_and_the_connection_closes(
    runtime: Runtime, fake: FakeSageMaker, length: bytes
) -> None:
    # GIVEN a Content-Length such as "\xb2", read as latin-1 "²", which str.isdigit() accepts
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\n".encode()
    response = raw_exchange(runtime, head + b"Content-Length: " + length + b"\r\n\r\n{}")
    # THEN a 400 naming the header, not a 500
    assert response.startswith(b"HTTP/1.1 400 "), response
    assert b"Connection: close" in response
    error = error_body(response)
    assert error["code"] == "invalid_content_length"
    assert "invalid Content-Length" in error["message"]
    assert fake.requests == []


@pytest.mark.parametrize("size", [b"-1", b"-5", b"+5", b"0x5", b"1_0", b"zz", b"1" * 17])
def test_a_bad_chunk_size_gets_400_at_once_and_the_connection_closes(
    runtime: Runtime, fake: FakeSageMaker, size: bytes
) -> None:
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    # a server that waited for more input would answer only at its own client timeout; the
    # test's socket gives up well before that (recv raises TimeoutError), so an answer means
    # the server did not wait, however slow the machine
    wait = runtime.settings.client_timeout / 2
    response = raw_exchange(runtime, head + size + b"\r\n{}\r\n0\r\n\r\n", wait=wait)
    assert response.startswith(b"HTTP/1.1 400 ")
    assert b"Connection: close" in response
    error = error_body(response)
    assert error["code"] == "invalid_body"
    assert "bad chunk size" in error["message"]
    assert fake.requests == []


def test_a_chunk_without_its_crlf_gets_400(runtime: Runtime) -> None:
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    response = raw_exchange(runtime, head + b"2\r\n{}XX\r\n0\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 400 ")
    assert "does not end with CRLF" in error_body(response)["message"]


def test_a_5_5_mib_body_is_read_back_as_413_by_a_plain_urllib_client(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    # GIVEN a 5.5 MiB body: over the 5 MiB default, under the function URL's 6 MiB
    body = json.dumps({"messages": [{"role": "user", "content": "x" * (11 * 512 * 1024)}]})
    request = urllib.request.Request(
        runtime.url + CHAT, data=body.encode(), headers={"Content-Type": "application/json"}
    )
    # WHEN urllib sends all of it THEN it reads the 413, not a broken pipe
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=SOCKET_TIMEOUT)
    assert info.value.code == 413
    error = json.loads(info.value.read())["error"]
    assert error["code"] == "request_too_large"
    assert f"{len(body)} bytes" in error["message"] and "5242880" in error["message"]
    assert fake.requests == []


def test_a_drained_oversized_body_leaves_the_connection_usable(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(max_body_bytes=1024)
    fake.enqueue(Scenario(parts=engine_streams.tgi(["ok"])))
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    # a chunked body over the limit, then a good request on the same connection
    connection.request("POST", CHAT, body=iter([b" " * 4000, b" " * 4000]))
    response = connection.getresponse()
    assert response.status == 413
    assert response.headers["Connection"] is None
    response.read()
    connection.request("POST", CHAT, body=json.dumps({"messages": USER}).encode())
    response = connection.getresponse()
    assert response.status == 200
    assert json.loads(response.read())["choices"][0]["message"]["content"] == "ok"
    connection.close()


def test_a_chunked_body_past_the_drain_limit_is_not_read_to_its_end(
    start_runtime: StartRuntime,
) -> None:
    runtime = start_runtime(max_body_bytes=1024)
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    huge = b"%x\r\n" % (DRAIN_LIMIT + 1)  # announces more than a function URL passes
    response = raw_exchange(runtime, head + huge)
    assert response.startswith(b"HTTP/1.1 413 ")
    assert b"Connection: close" in response


@pytest.mark.parametrize(
    ("line", "status"),
    [
        (b"GARBAGE\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1 extra\r\n\r\n", b"400"),
        (b"GET / HTTP/9.9\r\n\r\n", b"505"),
        (b"GET /\r\n\r\n", b"400"),  # HTTP/0.9, whose answers would have no status line
    ],
    ids=["one-word", "four-words", "bad-version", "http-0.9"],
)
def test_a_malformed_request_line_gets_a_status_line_and_a_json_error(
    runtime: Runtime, line: bytes, status: bytes
) -> None:
    response = raw_exchange(runtime, line)
    status_line, _, rest = response.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.") and status_line.split()[1] == status, response
    assert b"Content-Type: application/json" in rest
    assert error_body(response)["type"] == "invalid_request_error"


def test_a_timeout_before_the_stream_gets_504_without_the_endpoint_url(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN SageMaker answering later than the read timeout (both attempts)
    runtime = start_runtime(upstream_read_timeout=0.2)
    fake.enqueue(*[Scenario(parts=engine_streams.tgi(["x"]), header_delay=3.0)] * 2)
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    connection.request("POST", CHAT, body=json.dumps({"messages": USER}).encode())
    response = connection.getresponse()
    error = json.loads(response.read())["error"]
    connection.close()
    assert response.status == 504
    assert error["code"] == "upstream_timeout"
    assert error["message"] == "SageMaker did not answer in time (read timeout)"
    assert "127.0.0.1" not in error["message"] and "endpoints" not in error["message"]


def test_models_retrieve_answers_for_the_served_model_and_404_for_others(
    runtime: Runtime,
) -> None:
    client = openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )
    model = client.models.retrieve(MODEL)
    assert (model.id, model.object, model.owned_by) == (MODEL, "model", "sagemaker")
    with pytest.raises(openai.NotFoundError) as info:
        client.models.retrieve("gpt-4o")
    body: Any = info.value.body
    assert (body["code"], body["param"]) == ("model_not_found", "model")
    assert "'gpt-4o'" in body["message"] and MODEL in body["message"]


# -- JSON nested too deeply ---------------------------------------------------------------------


@pytest.mark.parametrize("depth", [129, 990, 100_000])
def test_json_nested_past_the_depth_limit_gets_400_naming_the_limit(
    runtime: Runtime, fake: FakeSageMaker, depth: int
) -> None:
    # GIVEN a body nesting arrays ``depth`` levels deep (990 used to raise RecursionError: 500)
    nested = "[" * depth + "]" * depth
    body = f'{{"messages": {json.dumps(USER)}, "metadata": {{"x": {nested}}}}}'.encode()
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    response = raw_exchange(runtime, f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    # THEN a 400 that says what is wrong and what the limit is, and SageMaker is not called
    assert response.startswith(b"HTTP/1.1 400 "), response[:200]
    error = error_body(response)
    assert error["code"] == "json_too_deep"
    assert f"more than {MAX_JSON_DEPTH} levels" in error["message"]
    assert fake.requests == []


def test_json_nested_to_the_depth_limit_is_served(runtime: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(["ok"])))
    # the body object, "metadata" and "x" are three levels: the array takes the rest
    levels = MAX_JSON_DEPTH - 3
    nested = "[" * levels + "]" * levels
    body = f'{{"messages": {json.dumps(USER)}, "metadata": {{"x": {nested}}}}}'
    request = urllib.request.Request(runtime.url + CHAT, data=body.encode())
    with urllib.request.urlopen(request, timeout=SOCKET_TIMEOUT) as response:
        assert json.loads(response.read())["choices"][0]["message"]["content"] == "ok"


# -- HTTP/0.9 ------------------------------------------------------------------------------------


def test_an_http_0_9_request_line_is_answered_at_once_without_waiting_for_headers(
    runtime: Runtime,
) -> None:
    # GIVEN "GET /" and nothing else, as an HTTP/0.9 client sends it: no version, no headers,
    # no blank line. The server used to wait for headers until CLIENT_TIMEOUT; the test's
    # socket gives up well before that, so an answer means the server did not wait.
    response = raw_exchange(runtime, b"GET /\r\n", wait=runtime.settings.client_timeout / 4)
    assert response.startswith(b"HTTP/1.1 400 "), response
    assert b"Connection: close" in response
    assert "HTTP/0.9" in error_body(response)["message"]


# -- methods: 501 for one the server does not know, 405 for one the path does not allow --------


def test_an_unknown_method_gets_501_naming_it_and_a_known_one_405_with_allow(
    runtime: Runtime,
) -> None:
    response = raw_exchange(runtime, b"BREW /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 501 "), response
    assert b"Connection: close" in response
    error = error_body(response)
    assert error["code"] == "method_not_implemented"
    assert "'BREW'" in error["message"] and "GET, HEAD, POST" in error["message"]
    # a method the server knows, on a path that does not take it: 405 and Allow (RFC 9110 15.5.6)
    response = raw_exchange(
        runtime, b"PUT /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert response.startswith(b"HTTP/1.1 405 "), response
    assert b"\r\nAllow: GET, HEAD\r\n" in response
    assert error_body(response)["code"] == "method_not_allowed"


# -- Content-Length given twice -----------------------------------------------------------------


@pytest.mark.parametrize(
    "lengths",
    [[b"2", b"3"], [b"2, 3"], [b"2", b"2, 3"]],
    ids=["two-headers", "one-list", "header-and-list"],
)
def test_conflicting_content_lengths_get_400_saying_so_and_the_connection_closes(
    runtime: Runtime, fake: FakeSageMaker, lengths: list[bytes]
) -> None:
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\n".encode()
    fields = b"".join(b"Content-Length: " + length + b"\r\n" for length in lengths)
    response = raw_exchange(runtime, head + fields + b"\r\n{}x")
    assert response.startswith(b"HTTP/1.1 400 "), response
    assert b"Connection: close" in response
    error = error_body(response)
    assert error["code"] == "invalid_content_length"
    assert "conflicting Content-Length values" in error["message"]
    assert "'2'" in error["message"] and "'3'" in error["message"]
    assert fake.requests == []


@pytest.mark.parametrize("lengths", [[b"L", b"L"], [b"L, L"]], ids=["two-headers", "one-list"])
def test_identical_content_lengths_are_read_as_one(
    runtime: Runtime, fake: FakeSageMaker, lengths: list[bytes]
) -> None:
    # RFC 9112 6.3 and RFC 9110 8.6 let a recipient take duplicated identical values as one
    fake.enqueue(Scenario(parts=engine_streams.tgi(["ok"])))
    body = json.dumps({"messages": USER}).encode()
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    size = str(len(body)).encode()
    fields = b"".join(b"Content-Length: " + v.replace(b"L", size) + b"\r\n" for v in lengths)
    response = raw_exchange(runtime, head + fields + b"\r\n" + body)
    assert response.startswith(b"HTTP/1.1 200 "), response
    assert b'"content":"ok"' in response


# -- writes to the client ------------------------------------------------------------------


def test_a_write_larger_than_the_socket_takes_at_once_arrives_whole_and_in_order() -> None:
    import os
    import threading

    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    ours.settimeout(SOCKET_TIMEOUT)
    data = os.urandom(4 * 1024 * 1024)
    received = bytearray()

    def read() -> None:
        while chunk := theirs.recv(65536):
            received.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    send_all(ours, data)
    ours.close()
    reader.join(timeout=SOCKET_TIMEOUT)
    theirs.close()
    assert bytes(received) == data


def test_a_write_the_client_never_reads_times_out_as_sendall_does() -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(0.2)
    with pytest.raises(TimeoutError):
        send_all(ours, b"x" * (16 * 1024 * 1024))
    ours.close()
    theirs.close()
