"""What the streaming runtime adds to latency, measured against calling SageMaker directly.

One fake SageMaker endpoint (a subprocess) streams TGI tokens whose text is the moment they
were sent (``time.perf_counter_ns``, one monotonic clock for all processes). The same run
then alternates two clients against it:

- direct: boto3 ``invoke_endpoint_with_response_stream`` + ``parse_stream`` in this process
  (reading each body to its end, so connections are reused, as the runtime does);
- via runtime: raw ``http.client`` streaming ``POST /v1/chat/completions`` to the runtime
  server (a subprocess started as in Lambda, ``python -m ...runtime``), which does the same
  boto3 call and parsing, then writes one SSE chunk per token.

Time to first token (request start -> first token read) and per-token latency (send ->
read) are reported as p50/p95 for both, and the difference is what the runtime adds.
Goals: at most 2 ms added to p50 TTFT, at most 50 us added to p50 per-token latency.

For scale, a third client calls the fake directly through a do-nothing TCP relay process:
the cost of one more process hop on this machine, which any proxy (the runtime, or the
Lambda Web Adapter in front of it) pays before doing any work.

The front door's own cost, in CPU: the same fake SageMaker, and pairs run in turns of (a) one
thread of this process making the boto3 call the runtime makes and reading the event stream to
its end (``time.thread_time``; a client with the runtime's timeouts and retries and botocore's
default parameter validation, as any boto3 caller makes the call), and (b) the runtime
answering one streamed chat request (``getrusage`` of the runtime's process, all its threads:
the server is started in a child process of its own, as ``python -m ...runtime`` would, that
reports its CPU between requests). The runtime runs in two such processes, whose figure is the
mean of the two in each turn: one process's CPU per request differs from another's of the same
code, in the same turns, by up to 15 % here. Each pair's ratio is runtime CPU over call CPU,
for the same stream; the median over the pairs is reported (never the best pair). Goal: at most
1.2x, with every byte the client receives unchanged (``tests/streaming`` proves the bytes).
``python -m bench.bench_runtime --front-door --against DIR`` runs this part alone, with the
runtime of the checkout ``DIR`` (a change's base) answering in the same turns, so before and
after are measured in one run.

Then a slowloris run against a second runtime process with a 1 s ``REQUEST_DEADLINE`` and
``MAX_CONNECTIONS=8``: 12 clients each send a request line, then a header line every 0.25 s
(each read well within ``CLIENT_TIMEOUT``, so only a deadline on the whole request ends them).
It prints how many connections the runtime holds before the deadline and after it, and how
many were refused with a 503 past the bound; goals: none held after the deadline, and every
client past the bound refused.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import os
import selectors
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # also runnable as `python bench/bench_runtime.py`
    sys.path.insert(0, str(ROOT))

from constructs_llm.contract import StreamFormat  # noqa: E402
from constructs_llm.streaming.runtime.parsing.events import TokenEvent  # noqa: E402
from constructs_llm.streaming.runtime.parsing.parser import parse_stream  # noqa: E402
from constructs_llm.streaming.runtime.parsing.sagemaker_stream import iter_payload_parts  # noqa: E402
from constructs_llm.streaming.runtime.settings import (  # noqa: E402
    Settings,
    new_sagemaker_client,
)

TOKENS = 50
INTERVAL_MS = 2.0
STREAMS = 40  # per path, after warm-up
WARMUP = 3
GOAL_TTFT_MS = 2.0
GOAL_TOKEN_US = 50.0
CPU_PAIRS = 41  # front door's own cost: pairs of (boto3 call alone, runtime request)
CPU_WARMUP = 5
CPU_BATCH = 5  # requests per sample, so the CPU query between samples is noise
CPU_PROCESSES = 2  # runtime processes per checkout (an even number: see _front_door_cost)
GOAL_CPU_RATIO = 1.2
SLOW_CLIENTS = 12
SLOW_BOUND = 8  # MAX_CONNECTIONS of the slowloris run
SLOW_DEADLINE_S = 1.0  # REQUEST_DEADLINE of the slowloris run
SLOW_TRICKLE_S = 0.25  # between one slow client's header lines
ENDPOINT = "bench-endpoint"
BODY = json.dumps(
    {"messages": [{"role": "user", "content": "bench"}], "stream": True, "max_tokens": TOKENS}
).encode()
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "NO_PROXY": "127.0.0.1",
}


@dataclass
class Samples:
    ttft_ms: list[float] = field(default_factory=list)
    token_us: list[float] = field(default_factory=list)

    def add(self, start_ns: int, tokens: list[tuple[int, int]]) -> None:
        """``tokens``: (sent_ns, read_ns) per token, in order."""
        if len(tokens) != TOKENS:
            raise RuntimeError(f"expected {TOKENS} tokens, got {len(tokens)}")
        self.ttft_ms.append((tokens[0][1] - start_ns) / 1e6)
        self.token_us.extend((read - sent) / 1e3 for sent, read in tokens[1:])


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _fake_endpoint(env: dict[str, str]) -> Iterator[str]:
    args = ["--tokens", str(TOKENS), "--interval-ms", str(INTERVAL_MS)]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_sagemaker", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"fake endpoint did not start: {line!r}")
        yield f"http://127.0.0.1:{line.split()[1]}"
    finally:
        process.kill()
        process.wait(timeout=10)


@contextmanager
def _runtime_server(env: dict[str, str], **settings: str) -> Iterator[int]:
    port = _free_port()
    server_env = {
        **env,
        "PORT": str(port),
        "ENDPOINT_NAME": ENDPOINT,
        "STREAM_FORMAT": "tgi",
        **settings,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "constructs_llm.streaming.runtime"],
        cwd=ROOT,
        env=server_env,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                connection.request("GET", "/health")
                if connection.getresponse().status == 200:
                    connection.close()
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("runtime server did not start") from None
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def _direct(client: Any) -> tuple[int, list[tuple[int, int]]]:
    start = time.perf_counter_ns()
    body = client.invoke_endpoint_with_response_stream(
        EndpointName=ENDPOINT, ContentType="application/json", Body=BODY
    )["Body"]
    tokens: list[tuple[int, int]] = []
    parts = iter_payload_parts(body)
    for event in parse_stream(iter(parts.__next__, None), StreamFormat.TGI):
        if type(event) is TokenEvent:
            tokens.append((int(event.text), time.perf_counter_ns()))
    for _ in parts:  # read to the end of the body, so the connection goes back to the pool
        pass
    return start, tokens


def _via_runtime(connection: http.client.HTTPConnection) -> tuple[int, list[tuple[int, int]]]:
    start = time.perf_counter_ns()
    connection.request("POST", "/v1/chat/completions", body=BODY)
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"runtime answered {response.status}: {response.read()[:300]!r}")
    tokens: list[tuple[int, int]] = []
    pending = b""
    done = False
    while not done and (data := response.read1()):  # whatever has arrived, no line loop
        read = time.perf_counter_ns()
        *events, pending = (pending + data).split(b"\n\n")
        for event in events:
            if event == b"data: [DONE]":
                done = True
            elif event.startswith(b"data: {"):
                content = json.loads(event[6:])["choices"][0]["delta"].get("content")
                if content:
                    tokens.append((int(content), read))
    response.read()  # the chunked terminator, so the connection can be reused
    return start, tokens


# The runtime server in a process of its own, from the checkout at argv[1] (this one, or the
# one ``--against`` names): it answers each ``cpu`` line on stdin with the process's CPU
# seconds (user + system, every thread), until stdin ends.
_RUNTIME_CHILD = """
import os, resource, sys, threading
sys.path.insert(0, sys.argv[1])
sys.stdout, answers = open(os.devnull, "w"), sys.stdout  # the log lines, as Lambda writes them
from constructs_llm.streaming.runtime.server import make_server
from constructs_llm.streaming.runtime.settings import Settings, sagemaker_client
settings = Settings.from_env(os.environ)
sagemaker_client(settings)
server = make_server(settings)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(server.server_address[1], file=answers, flush=True)
for line in sys.stdin:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(usage.ru_utime + usage.ru_stime, file=answers, flush=True)
"""


@dataclass
class _RuntimeProcess:
    """A runtime server process (``_RUNTIME_CHILD``) and a keep-alive connection to it."""

    process: subprocess.Popen[str]
    connection: http.client.HTTPConnection

    def cpu(self) -> float:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("cpu\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())


@contextmanager
def _runtime_process(env: dict[str, str], root: Path) -> Iterator[_RuntimeProcess]:
    child_env = {
        **env,
        "PYTHONPATH": str(root),
        "PORT": str(_free_port()),
        "ENDPOINT_NAME": ENDPOINT,
        "STREAM_FORMAT": "tgi",
    }
    process = subprocess.Popen(
        [sys.executable, "-c", _RUNTIME_CHILD, str(root)],
        cwd=root,
        env=child_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        yield _RuntimeProcess(process, connection)
        connection.close()
    finally:
        if process.stdin is not None:
            process.stdin.close()
        process.kill()
        process.wait(timeout=10)


def _call_alone(client: Any) -> None:
    """The SageMaker call the runtime must make: invoke, then read the event stream to its
    end, as botocore decodes it."""
    body = client.invoke_endpoint_with_response_stream(
        EndpointName=ENDPOINT, ContentType="application/json", Body=BODY
    )["Body"]
    for _ in body:
        pass


def _front_door_cost(env: dict[str, str], client: Any, against: Path | None = None) -> None:
    """Runtime CPU per streamed request against the CPU of the call it makes (module doc);
    with ``against``, the runtime of that checkout too, in the same turns."""
    roots = [ROOT] if against is None else [ROOT, against]
    # Each checkout in CPU_PROCESSES processes, started in mirrored places (A B B A): one
    # process's CPU per request differs from another's of the same code, in the same turns, by
    # up to 15 % here (where it lands among the cores and the other processes), so each figure
    # is the mean of its processes, turn by turn.
    places = [*range(len(roots)), *reversed(range(len(roots)))] * (CPU_PROCESSES // 2)
    with contextlib.ExitStack() as stack:
        runtimes = [stack.enter_context(_runtime_process(env, roots[i])) for i in places]

        def call_cpu() -> float:
            started = time.thread_time()
            for _ in range(CPU_BATCH):
                _call_alone(client)
            return time.thread_time() - started

        def served_cpu(runtime: _RuntimeProcess) -> float:
            started = runtime.cpu()
            for _ in range(CPU_BATCH):
                _via_runtime(runtime.connection)
            return runtime.cpu() - started

        for _ in range(CPU_WARMUP):
            call_cpu()
            for runtime in runtimes:
                served_cpu(runtime)
        calls: list[float] = []
        served: list[list[float]] = [[] for _ in roots]
        for turn in range(CPU_PAIRS):  # in turns, so machine load hits all alike
            calls.append(call_cpu() / CPU_BATCH)
            order = list(zip(places, runtimes, strict=True))
            spent = [0.0 for _ in roots]
            for index, runtime in order if turn % 2 == 0 else order[::-1]:
                spent[index] += served_cpu(runtime) / CPU_BATCH
            for index, total in enumerate(spent):
                served[index].append(total / places.count(index))
    call_ms = statistics.median(calls) * 1e3
    for root, cpu in zip(roots, served, strict=True):
        ratio = statistics.median(mine / call for mine, call in zip(cpu, calls, strict=True))
        verdict = "PASS" if ratio <= GOAL_CPU_RATIO else "MISS"
        name = "" if root == ROOT else f" ({root})"
        print(
            f"front door's own cost{name}: runtime CPU per streamed request "
            f"{statistics.median(cpu) * 1e3:.2f} ms vs the boto3 call read to its end "
            f"{call_ms:.2f} ms: {ratio:.2f}x (median of {CPU_PAIRS} pairs of {CPU_BATCH} requests "
            f"each, the runtime's figure the mean of {CPU_PROCESSES} processes; goal <= "
            f"{GOAL_CPU_RATIO}x)  {verdict}"
        )
    print(f"load average {' '.join(f'{load:.2f}' for load in os.getloadavg())}")


def _row(name: str, direct: list[float], via: list[float], unit: str, goal: float) -> str:
    d50, d95, v50, v95 = _pct(direct, 50), _pct(direct, 95), _pct(via, 50), _pct(via, 95)
    added = v50 - d50
    verdict = "PASS" if added <= goal else "MISS"
    return (
        f"{name:<16}{d50:>9.3f} {d95:>9.3f}   {v50:>9.3f} {v95:>9.3f}   "
        f"{added:>+9.3f} {unit} (goal <= {goal:g})  {verdict}"
    )


def _relay(listener: socket.socket, upstream: tuple[str, int]) -> None:
    """A do-nothing TCP proxy process: what one more hop costs here, with no work at all."""

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)

    while True:
        downstream, _ = listener.accept()
        up = socket.create_connection(upstream)
        for sock in (downstream, up):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(downstream, up), daemon=True).start()
        threading.Thread(target=pump, args=(up, downstream), daemon=True).start()


@contextmanager
def _relay_client(client: Any, fake_url: str) -> Iterator[Any]:
    """A boto3 client like ``client`` whose connections go through ``_relay``."""
    listener = socket.create_server(("127.0.0.1", 0))
    host, port = urlsplit(fake_url).hostname or "", urlsplit(fake_url).port or 80
    process = multiprocessing.get_context("fork").Process(
        target=_relay, args=(listener, (host, port)), daemon=True
    )
    process.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        yield boto3.session.Session().client(
            "sagemaker-runtime", endpoint_url=url, config=client.meta.config
        )
    finally:
        process.kill()
        process.join(timeout=10)
        listener.close()


@dataclass
class _SlowClient:
    sock: socket.socket
    answer: bytes = b""  # the status line's first bytes, once the server answers
    closed: bool = False  # the server closed the connection


def _slowloris(port: int) -> tuple[list[int], dict[bytes, int]]:
    """``SLOW_CLIENTS`` slow clients against the runtime on ``port``: how many connections it
    holds (not closed by the server) at half the deadline and one second past it, and how
    many answers of each status came back."""
    selector = selectors.DefaultSelector()
    clients = []
    for _ in range(SLOW_CLIENTS):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\n")
        sock.setblocking(False)
        client = _SlowClient(sock)
        selector.register(sock, selectors.EVENT_READ, client)
        clients.append(client)
    started = time.monotonic()
    samples = [SLOW_DEADLINE_S / 2, SLOW_DEADLINE_S + 1.0]
    held: list[int] = []
    next_line = started + SLOW_TRICKLE_S
    line = 0
    while samples:
        now = time.monotonic()
        if now - started >= samples[0]:
            held.append(sum(not c.closed for c in clients))
            samples.pop(0)
            continue
        if now >= next_line:  # one more header line from every client still connected
            line += 1
            for client in clients:
                if not client.closed:
                    with contextlib.suppress(OSError):
                        client.sock.send(b"X-Slow-%d: %d\r\n" % (line, line))
            next_line += SLOW_TRICKLE_S
        wait = min(next_line, started + samples[0]) - time.monotonic()
        for key, _ in selector.select(max(wait, 0)):
            client = key.data
            try:
                data = client.sock.recv(65536)
            except OSError:
                data = b""
            if not client.answer and data:
                client.answer = data[:12]
            if not data:
                client.closed = True
                selector.unregister(client.sock)
    for client in clients:
        client.sock.close()
    selector.close()
    answers: dict[bytes, int] = {}
    for client in clients:
        status = client.answer[9:12] or b"none"
        answers[status] = answers.get(status, 0) + 1
    return held, answers


def _slowloris_report(env: dict[str, str]) -> None:
    settings = {"REQUEST_DEADLINE": f"{SLOW_DEADLINE_S:g}", "MAX_CONNECTIONS": str(SLOW_BOUND)}
    with _runtime_server(env, **settings) as port:
        (before, after), answers = _slowloris(port)
    refused, timed_out = answers.get(b"503", 0), answers.get(b"408", 0)
    expected_refused = max(SLOW_CLIENTS - SLOW_BOUND, 0)
    verdict = "PASS" if after == 0 and refused == expected_refused else "MISS"
    print(
        f"slowloris: {SLOW_CLIENTS} clients, a header line every {SLOW_TRICKLE_S:g} s each; "
        f"REQUEST_DEADLINE={SLOW_DEADLINE_S:g} s, MAX_CONNECTIONS={SLOW_BOUND}"
    )
    print(
        f"held connections: {before} at t={SLOW_DEADLINE_S / 2:g} s (before the deadline), "
        f"{after} at t={SLOW_DEADLINE_S + 1:g} s (after it; goal 0)  {verdict}"
    )
    print(
        f"refused with 503 past the bound: {refused} (goal {expected_refused}); "
        f"answered 408 at the deadline: {timed_out}"
    )


def _bench_env() -> dict[str, str]:
    env = {**os.environ, **FAKE_AWS, "PYTHONPATH": str(ROOT)}
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "HTTP_PROXY", "HTTPS_PROXY"):
        env.pop(name, None)
    return env


def _reference_client() -> Any:
    """The boto3 client of the direct calls: the runtime's timeouts and retries, and botocore's
    default parameter validation, as any boto3 caller has it (the runtime's own client turns
    it off for the calls it builds and checks itself: ``settings.new_sagemaker_client``)."""
    return new_sagemaker_client(Settings(endpoint_name=ENDPOINT), validate_parameters=True)


def front_door(against: Path | None = None) -> None:
    """The front door's own cost alone (``python -m bench.bench_runtime --front-door``); with
    ``--against DIR``, also that of the runtime in the checkout ``DIR``, in the same turns, so
    a change is measured against its base in one run."""
    env = _bench_env()
    with _fake_endpoint(env) as fake_url:
        env["AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME"] = fake_url
        os.environ.update({k: env[k] for k in (*FAKE_AWS, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME")})
        client = _reference_client()
        _front_door_cost(env, client, against)


def main() -> None:
    env = _bench_env()
    started = time.monotonic()
    direct, via, relayed = Samples(), Samples(), Samples()
    with _fake_endpoint(env) as fake_url:
        env["AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME"] = fake_url
        os.environ.update({k: env[k] for k in (*FAKE_AWS, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME")})
        client = _reference_client()
        with _runtime_server(env) as port, _relay_client(client, fake_url) as relay_client:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for index in range(WARMUP + STREAMS):  # interleaved, so drift hits all three alike
                d, v, r = _direct(client), _via_runtime(connection), _direct(relay_client)
                if index >= WARMUP:
                    direct.add(*d)
                    via.add(*v)
                    relayed.add(*r)
            connection.close()
        _front_door_cost(env, client)
    print(
        f"bench_runtime: {STREAMS} streams x {TOKENS} tokens per path, one token every "
        f"{INTERVAL_MS:g} ms, fake SageMaker on loopback ({time.monotonic() - started:.1f} s)"
    )
    print(
        f"{'':<16}{'direct p50':>9} {'p95':>9}   {'runtime p50':>9} {'p95':>9}   {'added p50':>9}"
    )
    print(_row("TTFT (ms)", direct.ttft_ms, via.ttft_ms, "ms", GOAL_TTFT_MS))
    print(_row("per token (us)", direct.token_us, via.token_us, "us", GOAL_TOKEN_US))
    floor_ttft = _pct(relayed.ttft_ms, 50) - _pct(direct.ttft_ms, 50)
    floor_token = _pct(relayed.token_us, 50) - _pct(direct.token_us, 50)
    print(
        f"for scale: a do-nothing TCP relay process (one more hop, no work) adds "
        f"{floor_ttft:+.3f} ms TTFT and {floor_token:+.1f} us per token (p50) on this machine"
    )
    _slowloris_report(env)


if __name__ == "__main__":
    if "--front-door" in sys.argv:
        other = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else None
        front_door(None if other is None else Path(other).resolve())
    else:
        main()
