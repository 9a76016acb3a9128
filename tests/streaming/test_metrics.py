"""LLM metrics from the invoker: one CloudWatch Embedded Metric Format record per chat request.

The end-to-end tests run the runtime as the Lambda runs it (``run.sh`` in a process of its
own), call it with the real ``openai`` SDK, and read the records from its stdout; each is
checked against the EMF specification's rules (``tests/support/emf.py``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import openai
import pytest

from constructs_llm.contract import ERROR_KINDS, NAMESPACE, StreamFormat
from constructs_llm.streaming.runtime.metrics import (
    UNROUTED,
    error_kind,
    with_metrics,
)
from constructs_llm.streaming.runtime.parsing.events import TokenEvent, ToolCallEvent
from constructs_llm.streaming.runtime.parsing.parser import parse_stream
from constructs_llm.streaming.runtime.settings import Settings, SettingsError
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, StartRuntime
from tests.streaming.stream_fixtures import load_fixtures
from tests.streaming.test_routing import ROUTES
from tests.streaming.test_server import USER
from tests.streaming.test_tool_calls import ASK, WEATHER
from tests.support import engine_streams
from tests.support.emf import check, emf_metrics, parse_emf_line
from tests.support.fake_sagemaker import CallError, FakeSageMaker, Scenario
from tests.support.runtime_process import serving

ENDPOINT = "llm-endpoint"
SERVED = "llama-3-8b"
TARGET_MODEL = ("Target", "Model")
TOKENS = ["The", " sky", " is", " blue", "."]

# -- the record, from a log line ------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "kind"),
    [
        ({"status": 200}, None),
        ({"status": 200, "client_disconnected": True}, None),
        ({}, None),  # the client left before any status
        ({"status": 401, "auth": "missing_key"}, "auth"),
        ({"status": 403, "auth": "origin_header_missing"}, "auth"),
        ({"status": 400, "error_code": "invalid_request_error"}, "invalid_request"),
        ({"status": 413}, "invalid_request"),
        ({"status": 429, "upstream_error": "ThrottlingException"}, "throttled"),
        ({"status": 504, "upstream_error": "ReadTimeoutError"}, "timeout"),
        ({"status": 502, "upstream_error": "ModelError"}, "upstream"),
        ({"status": 503, "stream_error": "model_unavailable"}, "upstream"),
        ({"status": 200, "stream_error": "model_error"}, "stream"),
        ({"status": 500, "exception": "KeyError"}, "internal"),
    ],
)
def test_each_outcome_has_one_bounded_error_kind(record: dict[str, Any], kind: str | None) -> None:
    assert error_kind(record) == kind
    assert kind is None or kind in ERROR_KINDS


def test_a_request_s_log_line_carries_its_metrics_by_target_and_model_only() -> None:
    # GIVEN a streamed request's log record (with request-specific fields)
    record = {
        "msg": "request",
        "path": "/v1/chat/completions",
        "request_id": "8f5e0b8e",
        "status": 200,
        "stream": True,
        "overhead_ms": 1.5,
        "ttft_ms": 120.0,
        "tokens": 41,
        "duration_ms": 2120.0,
    }
    # WHEN the metrics are added
    emf = with_metrics(record, target=ENDPOINT, model=SERVED, timestamp_ms=1_700_000_000_000)
    # THEN it is a valid EMF document that keeps the log fields, in the invoker's namespace,
    # with the two bounded dimensions only (never the request id)
    check(emf)
    assert {k: emf[k] for k in record} == record
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert (directive["Namespace"], directive["Dimensions"]) == (NAMESPACE, [list(TARGET_MODEL)])
    assert emf_metrics(emf) == {
        TARGET_MODEL: {
            "Requests": 1,
            "Duration": 2120.0,
            "TimeToFirstToken": 120.0,
            "OutputTokens": 41,
            "TokensPerSecond": 20.0,  # 40 tokens after the first, in 2 s
            "OverheadLatency": 1.5,
            "Errors": 0,
            "ClientDisconnects": 0,
        }
    }
    assert {d["Name"]: d["Unit"] for d in directive["Metrics"]}["TokensPerSecond"] == (
        "Count/Second"
    )


def test_a_failed_request_counts_once_in_total_and_once_by_kind() -> None:
    emf = with_metrics(
        {"status": 502, "upstream_error": "ModelError", "duration_ms": 30.0},
        target=ENDPOINT,
        model=SERVED,
    )
    check(emf)
    metrics = emf_metrics(emf)
    assert metrics[TARGET_MODEL]["Errors"] == 1
    assert metrics[("Target", "Model", "ErrorKind")] == {"Errors": 1}
    assert emf["ErrorKind"] == "upstream"
    # no token went out: no time to first token, no pace
    assert not {"TimeToFirstToken", "TokensPerSecond"} & set(metrics[TARGET_MODEL])


def test_one_token_has_no_pace() -> None:
    emf = with_metrics(
        {"status": 200, "ttft_ms": 50.0, "tokens": 1, "duration_ms": 51.0},
        target=ENDPOINT,
        model=SERVED,
    )
    assert "TokensPerSecond" not in emf_metrics(emf)[TARGET_MODEL]


def test_the_namespace_is_a_setting_checked_against_cloudwatch_s_rules() -> None:
    settings = Settings.from_env({"ENDPOINT_NAME": ENDPOINT, "METRICS_NAMESPACE": "Team/LLM"})
    assert settings.metrics_namespace == "Team/LLM"
    assert Settings.from_env({"ENDPOINT_NAME": ENDPOINT}).metrics_namespace == NAMESPACE
    with pytest.raises(SettingsError, match="METRICS_NAMESPACE must be 1-255 characters"):
        Settings.from_env({"ENDPOINT_NAME": ENDPOINT, "METRICS_NAMESPACE": "AWS/SageMaker"})


# -- end to end: the openai SDK against the runtime's process ------------------------------


@dataclass
class RuntimeProcess:
    url: str
    lines: list[str] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def records(self, count: int, path: str = "/v1/chat/completions") -> list[dict[str, Any]]:
        """The first ``count`` records of ``path`` written since ``mark()``, waiting for them."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self._of(path)) >= count, timeout=SOCKET_TIMEOUT)
            return self._of(path)[:count]

    def mark(self) -> None:
        with self.arrived:
            self.lines.clear()

    def _of(self, path: str) -> list[dict[str, Any]]:
        found = [json.loads(line) for line in self.lines]
        return [r for r in found if r.get("path") == path]


@pytest.fixture(scope="module")
def process(
    tmp_path_factory: pytest.TempPathFactory,
    fake_server: FakeSageMaker,
    aws_env: dict[str, str],
) -> Iterator[RuntimeProcess]:
    settings = {
        "ENDPOINT_NAME": ENDPOINT,
        "MODEL_NAME": SERVED,
        "STREAM_FORMAT": "tgi",
        "REQUEST_FORMAT": "generate",
    }
    with serving(tmp_path_factory.mktemp("lambda"), aws_env, **settings) as (proc, url):
        runtime = RuntimeProcess(url=url)

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                with runtime.arrived:
                    runtime.lines.append(line)
                    runtime.arrived.notify_all()

        threading.Thread(target=read, daemon=True).start()
        yield runtime


@pytest.fixture
def sdk(process: RuntimeProcess, fake: FakeSageMaker) -> openai.OpenAI:
    process.mark()
    return openai.OpenAI(
        base_url=process.url + "/v1", api_key="unused", max_retries=0, timeout=SOCKET_TIMEOUT
    )


def _ask(sdk: openai.OpenAI, *, stream: bool) -> Any:
    return sdk.chat.completions.create(
        model=SERVED, messages=[{"role": "user", "content": "Colour of the sky?"}], stream=stream
    )


def _emf(process: RuntimeProcess) -> dict[str, Any]:
    (record,) = process.records(1)
    return parse_emf_line(json.dumps(record))


@pytest.mark.slow
def test_a_streamed_answer_records_ttft_duration_and_the_tokens_streamed(
    sdk: openai.OpenAI, process: RuntimeProcess, fake: FakeSageMaker
) -> None:
    # GIVEN an engine streaming five tokens, 20 ms apart
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS), first_delay=0.05, interval=0.02))
    # WHEN the openai SDK streams the answer
    pieces = [c.choices[0].delta.content for c in _ask(sdk, stream=True) if c.choices]
    streamed = [p for p in pieces if p]
    assert "".join(streamed) == "".join(TOKENS)
    # THEN the runtime's stdout holds one EMF record for it, by target and model
    record = _emf(process)
    metrics = emf_metrics(record)[TARGET_MODEL]
    assert (record["Target"], record["Model"]) == (ENDPOINT, SERVED)
    assert metrics["OutputTokens"] == len(streamed)
    assert 50 <= metrics["TimeToFirstToken"] <= metrics["Duration"]
    assert metrics["TokensPerSecond"] > 0
    assert metrics["OverheadLatency"] < metrics["TimeToFirstToken"]
    assert (metrics["Requests"], metrics["Errors"], metrics["ClientDisconnects"]) == (1, 0, 0)


@pytest.mark.slow
def test_a_complete_answer_records_the_same_metrics(
    sdk: openai.OpenAI, process: RuntimeProcess, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)))
    answer = _ask(sdk, stream=False)
    assert answer.choices[0].message.content == "".join(TOKENS)
    metrics = emf_metrics(_emf(process))[TARGET_MODEL]
    assert metrics["OutputTokens"] == len(TOKENS)
    assert metrics["TimeToFirstToken"] <= metrics["Duration"]


@pytest.mark.slow
def test_an_upstream_failure_records_an_error_by_kind(
    sdk: openai.OpenAI, process: RuntimeProcess, fake: FakeSageMaker
) -> None:
    # GIVEN a model container that fails the call
    fake.enqueue(Scenario(call_error=CallError.model_error("CUDA out of memory")))
    # WHEN the SDK asks THEN it gets the 502, and the record counts one upstream error
    with pytest.raises(openai.InternalServerError):
        _ask(sdk, stream=True)
    record = _emf(process)
    assert emf_metrics(record) == {
        TARGET_MODEL: {
            "Requests": 1,
            "Duration": record["duration_ms"],
            "OverheadLatency": record["overhead_ms"],
            "Errors": 1,
            "ClientDisconnects": 0,
        },
        (*TARGET_MODEL, "ErrorKind"): {"Errors": 1},
    }
    assert record["ErrorKind"] == "upstream"


@pytest.mark.slow
def test_a_failure_mid_stream_records_the_tokens_sent_and_a_stream_error(
    sdk: openai.OpenAI, process: RuntimeProcess, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.tgi(TOKENS)[:2], exception="ModelStreamError"))
    streamed = []
    with pytest.raises(openai.APIError):
        for chunk in _ask(sdk, stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                streamed.append(chunk.choices[0].delta.content)
    record = _emf(process)
    metrics = emf_metrics(record)
    assert metrics[TARGET_MODEL]["OutputTokens"] == len(streamed) == 2
    assert metrics[TARGET_MODEL]["Errors"] == 1
    assert record["ErrorKind"] == "stream"


@pytest.mark.slow
def test_throttling_is_its_own_kind(
    sdk: openai.OpenAI, process: RuntimeProcess, fake: FakeSageMaker
) -> None:
    throttled = CallError(status=429, error_type="ThrottlingException", message="slow down")
    fake.enqueue(Scenario(call_error=throttled), Scenario(call_error=throttled))  # and a retry
    with pytest.raises(openai.RateLimitError):
        _ask(sdk, stream=False)
    assert _emf(process)["ErrorKind"] == "throttled"


@pytest.mark.slow
def test_other_routes_log_without_metrics(sdk: openai.OpenAI, process: RuntimeProcess) -> None:
    assert [m.id for m in sdk.models.list()] == [SERVED]
    (record,) = process.records(1, path="/v1/models")
    assert record["status"] == 200 and "_aws" not in record


def test_a_tool_call_answer_counts_the_same_output_tokens_streamed_or_not(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN an engine answering with text and two tool calls, the same bytes for both requests
    (fixture,) = [f for f in load_fixtures() if f.name == "vllm_parallel_tool_calls"]
    pieces = [
        e for e in parse_stream([fixture.raw], "openai") if type(e) in (TokenEvent, ToolCallEvent)
    ]
    assert {type(e) for e in pieces} == {TokenEvent, ToolCallEvent}
    runtime = start_runtime(stream_format=StreamFormat.OPENAI)
    client = openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", max_retries=0, timeout=SOCKET_TIMEOUT
    )
    # WHEN one client streams the answer and another asks for it whole
    for stream in (True, False):
        fake.enqueue(Scenario(parts=engine_streams.rechunk([fixture.raw], 9)))
        answer = client.chat.completions.create(
            model=MODEL, messages=ASK, tools=[WEATHER], stream=stream
        )
        if stream:
            list(answer)  # type: ignore[call-overload]
    # THEN both records count every token and tool-call piece, and both have a first token
    records = [parse_emf_line(json.dumps(r)) for r in runtime.logs]
    assert [r["stream"] for r in records] == [True, False]
    assert [r["tool_calls"] for r in records] == [2, 2]
    metrics = [emf_metrics(r)[TARGET_MODEL] for r in records]
    assert [m["OutputTokens"] for m in metrics] == [len(pieces), len(pieces)]
    for m in metrics:
        assert m["TimeToFirstToken"] <= m["Duration"]


# -- several models behind one runtime -------------------------------------------------------


def test_a_gateway_counts_each_request_under_its_route(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN a runtime serving several models (ROUTES)
    runtime = start_runtime(routes=ROUTES)
    client = openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", max_retries=0, timeout=SOCKET_TIMEOUT
    )
    # WHEN clients ask for two of them, and for one it does not serve
    for model, stream in (("chat", engine_streams.openai), ("ab", engine_streams.tgi)):
        fake.enqueue(Scenario(parts=stream(["Hi", "!"])))
        list(client.chat.completions.create(model=model, messages=USER, stream=True))
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4o", messages=USER)
    # THEN each record counts under its route's target (the component, else the endpoint)
    # and served model; the request refused before a route was known counts under "-"
    records = [parse_emf_line(json.dumps(r)) for r in runtime.logs]
    assert [(r["Target"], r["Model"], emf_metrics(r)[TARGET_MODEL]["Errors"]) for r in records] == [
        ("chat-ic", "chat", 0),
        ("ab-ep", "ab", 0),
        (UNROUTED, UNROUTED, 1),
    ]
    assert records[2]["ErrorKind"] == "invalid_request"
