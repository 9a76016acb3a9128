"""Slow and numerous clients: a request must arrive within ``REQUEST_DEADLINE`` (408 and close
past it), and the server holds at most ``MAX_CONNECTIONS`` connections (503 and close past it).

Each test runs its server with a half-second deadline or a small bound, so it takes about
half a second. The slow client sends a header line every 0.1 s: each read is quick, so only
a deadline on the request as a whole can end it (``CLIENT_TIMEOUT`` bounds one read at a time).
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

CHAT = "/v1/chat/completions"
BODY = json.dumps({"messages": [{"role": "user", "content": "Hi"}]}).encode()
DEADLINE = 0.5
TRICKLE = 0.1  # seconds between the slow client's header lines: each read is quick enough


@contextmanager
def connected(runtime: Runtime) -> Iterator[socket.socket]:
    with socket.create_connection(("127.0.0.1", runtime.port), timeout=SOCKET_TIMEOUT) as sock:
        yield sock


def read_until_closed(sock: socket.socket) -> bytes:
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:  # the server may close before reading all we sent
        pass
    return received


def trickle_headers(sock: socket.socket, seconds: float) -> float:
    """Sends a request line, then one header line every ``TRICKLE`` s until the server answers
    (or ``seconds`` pass); returns when the answer came, in seconds from the first byte."""
    started = time.monotonic()
    sock.sendall(f"POST {CHAT} HTTP/1.1\r\n".encode())
    sock.settimeout(TRICKLE)
    index = 0
    while time.monotonic() - started < seconds:
        try:
            if sock.recv(1, socket.MSG_PEEK):
                break
        except TimeoutError:
            pass
        try:
            sock.sendall(f"X-Slow-{index}: {index}\r\n".encode())
        except (BrokenPipeError, ConnectionResetError):
            break
        index += 1
    sock.settimeout(SOCKET_TIMEOUT)
    return time.monotonic() - started


def error_of(response: bytes) -> dict[str, str]:
    error: dict[str, str] = json.loads(response.partition(b"\r\n\r\n")[2])["error"]
    return error


# -- the request deadline ---------------------------------------------------------------------


def test_headers_trickled_past_the_deadline_get_408_and_the_connection_closes(
    start_runtime: StartRuntime,
) -> None:
    runtime = start_runtime(request_deadline=DEADLINE)
    with connected(runtime) as sock:
        # WHEN a client sends a header line every TRICKLE s, each well within CLIENT_TIMEOUT
        answered_after = trickle_headers(sock, seconds=SOCKET_TIMEOUT)
        response = read_until_closed(sock)
    # THEN the request as a whole gets a 408 at the deadline, and the connection is closed
    assert response.startswith(b"HTTP/1.1 408 "), response
    assert b"Connection: close" in response
    error = error_of(response)
    assert error["code"] == "request_timeout"
    assert "REQUEST_DEADLINE" in error["message"] and f"{DEADLINE:g} s" in error["message"]
    assert DEADLINE <= answered_after < DEADLINE + 3, answered_after


def test_a_body_trickled_past_the_deadline_gets_408(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(request_deadline=DEADLINE)
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(BODY)}\r\n\r\n".encode()
    with connected(runtime) as sock:
        sock.sendall(head)
        sock.settimeout(TRICKLE)
        for byte in BODY:  # one byte every TRICKLE s until the server answers
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    break
            except TimeoutError:
                pass
            sock.sendall(bytes([byte]))
        sock.settimeout(SOCKET_TIMEOUT)
        response = read_until_closed(sock)
    assert response.startswith(b"HTTP/1.1 408 "), response
    assert b"Connection: close" in response
    assert error_of(response)["code"] == "request_timeout"
    assert fake.requests == []


def test_the_deadline_starts_with_a_request_s_first_byte_not_on_an_idle_connection(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a keep-alive connection (as the Lambda Web Adapter's pool keeps them)
    runtime = start_runtime(request_deadline=DEADLINE)
    fake.enqueue(*[Scenario(parts=engine_streams.tgi(["ok"]))] * 2)
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    connection.request("POST", CHAT, body=BODY)
    assert connection.getresponse().read()
    # WHEN it stays idle past the deadline, then carries a second request
    time.sleep(DEADLINE * 1.5)
    connection.request("POST", CHAT, body=BODY)
    response = connection.getresponse()
    # THEN that request is served: idle time counts against CLIENT_TIMEOUT only
    assert response.status == 200
    assert json.loads(response.read())["choices"][0]["message"]["content"] == "ok"
    connection.close()


def test_a_deadline_cuts_a_stalled_request_short_of_the_client_timeout(
    start_runtime: StartRuntime,
) -> None:
    # a request line and no more: the deadline (not the 10 s CLIENT_TIMEOUT) answers it
    runtime = start_runtime(request_deadline=DEADLINE)
    with connected(runtime) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        response = read_until_closed(sock)
        waited = time.monotonic() - started
    assert response.startswith(b"HTTP/1.1 408 "), response
    assert DEADLINE <= waited < DEADLINE + 3, waited


# -- the connection bound ---------------------------------------------------------------------


def test_connections_past_the_bound_get_503_and_a_freed_slot_serves_again(
    start_runtime: StartRuntime,
) -> None:
    runtime = start_runtime(max_connections=4)
    with ExitStack() as held:
        # GIVEN four connections held open, each mid-request
        for _ in range(4):
            sock = held.enter_context(connected(runtime))
            sock.sendall(b"GET /health HTTP/1.1\r\n")
        # WHEN a fifth client connects and sends a request
        with connected(runtime) as fifth:
            fifth.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            response = read_until_closed(fifth)
        # THEN it is refused with a 503 it can read, and closed
        assert response.startswith(b"HTTP/1.1 503 "), response
        assert b"Connection: close" in response and b"Retry-After: 1" in response
        error = error_of(response)
        assert (error["code"], error["type"]) == ("too_many_connections", "server_error")
        assert "MAX_CONNECTIONS" in error["message"] and "4" in error["message"]
        assert any(line.get("status") == 503 for line in runtime.logs)
    # AND once the held connections close, new ones are served again
    deadline = time.monotonic() + SOCKET_TIMEOUT
    status = 0
    while status != 200 and time.monotonic() < deadline:
        connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
        connection.request("GET", "/health")
        status = connection.getresponse().status
        connection.close()
        time.sleep(0.02)
    assert status == 200


def test_a_refused_client_reads_its_503_even_after_sending_a_body(
    start_runtime: StartRuntime,
) -> None:
    # the refusal drains what the client sends before closing, so it reads the 503 rather than
    # a connection reset
    runtime = start_runtime(max_connections=1)
    with connected(runtime) as holder:
        holder.sendall(b"GET /health HTTP/1.1\r\n")
        time.sleep(0.1)
        big = json.dumps({"messages": [{"role": "user", "content": "x" * 200_000}]}).encode()
        connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
        connection.request("POST", CHAT, body=big)
        response = connection.getresponse()
        assert response.status == 503
        assert json.loads(response.read())["error"]["code"] == "too_many_connections"
        connection.close()


def test_slow_clients_past_the_bound_are_refused_and_the_held_ones_released_at_the_deadline(
    start_runtime: StartRuntime,
) -> None:
    # GIVEN a bound of 4 and a half-second deadline, and 6 slowloris clients
    runtime = start_runtime(max_connections=4, request_deadline=DEADLINE)
    with ExitStack() as stack:
        socks = [stack.enter_context(connected(runtime)) for _ in range(6)]
        for sock in socks:
            sock.sendall(f"POST {CHAT} HTTP/1.1\r\nX-A: 1\r\n".encode())
        # THEN 2 are refused at once and the 4 others get a 408 at the deadline
        answers = [read_until_closed(sock)[:12] for sock in socks]
    assert sorted(answers) == [b"HTTP/1.1 408"] * 4 + [b"HTTP/1.1 503"] * 2
