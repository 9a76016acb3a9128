"""OpenAI's Batch API, end to end with an unchanged ``openai`` client: the front door (the
runtime's ``/v1/files`` and ``/v1/batches``) against moto's S3 and Step Functions in server
mode, and the per-line worker against the fake SageMaker.

What runs for real here: the runtime's handlers and their S3 and Step Functions calls (moto
stores the files and starts, describes and stops executions), the worker's SageMaker calls,
stream parsing and answers, and finishing's output and error files. moto does not run the
state machine (see ``tests/support/distributed_map.py``): the test runs the synthesized
definition's distributed map itself, reading its ItemReader, ItemSelector, MaxConcurrencyPath,
Retry and ResultWriter. What only a deploy proves: Step Functions running that definition.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import openai
import pytest

from constructs_llm.streaming.formats import EngineName, RequestFormat
from constructs_llm.streaming.runtime.batches import queued, worker
from constructs_llm.streaming.runtime.batches.lines import check_file
from constructs_llm.streaming.runtime.batches.objects import batch_object
from constructs_llm.streaming.runtime.batches.stopped import settle
from constructs_llm.streaming.runtime.batches.store import Store
from constructs_llm.streaming.runtime.routing import Route, RoutingTable
from tests.streaming.conftest import (
    BASE_SETTINGS,
    ENDPOINT,
    MODEL,
    Runtime,
    StartRuntime,
    client_for,
)
from tests.support import engine_streams
from tests.support.distributed_map import resolved_definition, run_batch
from tests.support.fake_async_sagemaker import AsyncEndpoint, Engines, FakeAsyncSageMaker, LocalAws
from tests.support.fake_sagemaker import CallError, FakeSageMaker, Scenario
from tests.support.moto_server import moto_server
from tests.support.runtime_process import make_task_root
from tests.support.templates import fixture

# moto's server starts in its own process (about 2 s of the module's 6 s on an idle machine)
pytestmark = pytest.mark.slow(seconds=6)

BUCKET = "batches-test"
STATE_MACHINE = "batches"


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture(scope="module")
def definition() -> dict[str, Any]:
    """The batch state machine's definition as the example stack synthesizes it."""
    template = json.loads(fixture("OpenaiBatch"))
    (machine,) = (
        r for r in template["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"
    )
    bucket = next(
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::S3::Bucket" and k.startswith("ApiBatchBucket")
    )
    return resolved_definition(machine["Properties"]["DefinitionString"], {bucket: BUCKET})


@pytest.fixture
def aws(moto_url: str, aws_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """moto's S3 bucket and state machine, and the environment that points the front door
    and the worker at them (the invoker's BATCH_* variables and the worker's target)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SFN", moto_url)
    s3 = boto3.client("s3", endpoint_url=moto_url)
    sfn = boto3.client("stepfunctions", endpoint_url=moto_url)
    s3.create_bucket(Bucket=BUCKET)
    machine = sfn.create_state_machine(
        name=STATE_MACHINE,
        definition=json.dumps(
            {"StartAt": "Pass", "States": {"Pass": {"Type": "Pass", "End": True}}}
        ),
        roleArn="arn:aws:iam::123456789012:role/batches",
    )["stateMachineArn"]
    env = {
        "BATCH_BUCKET": BUCKET,
        "BATCH_STATE_MACHINE_ARN": machine,
        "BATCH_WINDOW_SECONDS": "86400",
        "BATCH_CONCURRENCY": json.dumps({MODEL: 3}),
        "ENDPOINT_NAME": ENDPOINT,
        "MODEL_NAME": MODEL,
        "UPSTREAM_READ_TIMEOUT": "5",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for cached in (worker._settings, worker._routes, worker._client):
        cached.cache_clear()
    return {"s3": s3, "sfn": sfn, "machine": machine}


@pytest.fixture
def client(aws: dict[str, Any], start_runtime: StartRuntime) -> openai.OpenAI:
    runtime: Runtime = start_runtime()
    return openai.OpenAI(base_url=runtime.url + "/v1", api_key="unused", max_retries=0)


def _line(custom_id: str, content: str, **body: Any) -> str:
    request = {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": MODEL, "messages": [{"role": "user", "content": content}], **body},
    }
    return json.dumps(request)


def _run_map(aws: dict[str, Any], definition: dict[str, Any], batch_id: str) -> dict[str, Any]:
    """What Step Functions does with the execution the front door started."""
    arn = aws["machine"].replace(":stateMachine:", ":execution:") + ":" + batch_id
    execution_input = json.loads(aws["sfn"].describe_execution(executionArn=arn)["input"])
    return run_batch(definition, execution_input, s3=aws["s3"], worker=worker.handle)


def test_an_openai_client_uploads_creates_polls_and_reads_a_batch(
    client: openai.OpenAI, fake: FakeSageMaker, aws: dict[str, Any], definition: dict[str, Any]
) -> None:
    # GIVEN three requests, one of them a max_tokens the invoker refuses, and a model that
    # answers the other two; the first attempt of one finds the model busy (429)
    requests = "\n".join(
        [_line("a", "Say hi"), _line("b", "Say bye"), _line("c", "Bad", max_tokens=-1)]
    )
    fake.enqueue(
        Scenario(call_error=CallError.model_error("busy", original_status=429)),
        Scenario(parts=engine_streams.openai(["Hel", "lo"])),
        Scenario(parts=engine_streams.openai(["Hel", "lo"])),
    )
    # WHEN the client uploads the file and creates a batch
    uploaded = client.files.create(file=("requests.jsonl", requests.encode()), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id,
        endpoint="/v1/chat/completions",
        completion_window="24h",
        metadata={"job": "nightly"},
    )
    # THEN the batch runs, with the file's three lines
    assert uploaded.purpose == "batch" and uploaded.bytes == len(requests.encode())
    assert client.files.retrieve(uploaded.id).filename == "requests.jsonl"
    assert batch.status == "in_progress" and batch.request_counts is not None
    assert batch.request_counts.total == 3
    assert batch.metadata == {"job": "nightly"} and batch.model == MODEL
    final = _run_map(aws, definition, batch.id)
    # AND once the map ran, the batch is completed with an output and an error file
    done = client.batches.retrieve(batch.id)
    assert done.status == "completed", done
    assert done.request_counts is not None and done.output_file_id and done.error_file_id
    assert (done.request_counts.completed, done.request_counts.failed) == (2, 1)
    output = [json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()]
    assert sorted(x["custom_id"] for x in output) == ["a", "b"]
    for line in output:
        assert line["id"].startswith("batch_req_") and line["error"] is None
        assert line["response"]["status_code"] == 200 and line["response"]["request_id"]
        body = line["response"]["body"]
        assert body["object"] == "chat.completion" and body["model"] == MODEL
        assert body["choices"][0]["message"]["content"] == "Hello"
    (refused,) = [json.loads(x) for x in client.files.content(done.error_file_id).text.splitlines()]
    assert refused["custom_id"] == "c" and refused["response"]["status_code"] == 400
    assert refused["response"]["body"]["error"]["param"] == "max_tokens"
    # AND the model was called for the two good lines (one of them twice: the busy answer
    # was retried by the map), never for the refused one
    assert len(fake.requests) == 3 and all(r.endpoint_name == ENDPOINT for r in fake.requests)
    assert {r.json()["messages"][0]["content"] for r in fake.requests} == {"Say hi", "Say bye"}
    assert final["output_file_id"] == done.output_file_id
    # AND the list shows the batch
    assert batch.id in [b.id for b in client.batches.list(limit=5).data]


def test_lines_are_checked_before_the_execution_starts(
    client: openai.OpenAI, aws: dict[str, Any]
) -> None:
    # GIVEN a file whose lines 2-5 are each wrong in one way
    lines = [
        _line("ok", "hi"),
        "{not json",
        _line("url", "hi").replace("/v1/chat/completions", "/v1/embeddings"),
        _line("model", "hi").replace(f'"{MODEL}"', '"gpt-4o"'),
        _line("ok", "again"),
    ]
    uploaded = client.files.create(file=("bad.jsonl", "\n".join(lines).encode()), purpose="batch")
    # WHEN a batch is created from it
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    # THEN it failed, naming each bad line, and no execution was started
    assert batch.status == "failed" and batch.failed_at
    assert batch.errors is not None and batch.errors.data is not None
    found = [(e.line, e.code, e.param) for e in batch.errors.data]
    assert found == [
        (2, "invalid_json_line", None),
        (3, "invalid_url", "url"),
        (4, "model_not_found", "body.model"),
        (5, "duplicate_custom_id", "custom_id"),
    ]
    assert "gpt-4o" in str(batch.errors.data[2].message)
    assert "line 1" in str(batch.errors.data[3].message)
    started = aws["sfn"].list_executions(stateMachineArn=aws["machine"])["executions"]
    assert batch.id not in [e["name"] for e in started]
    assert client.batches.retrieve(batch.id).status == "failed"


def test_cancel_stops_the_execution(client: openai.OpenAI, aws: dict[str, Any]) -> None:
    uploaded = client.files.create(file=("one.jsonl", _line("x", "hi").encode()), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    # WHEN the client cancels it
    cancelled = client.batches.cancel(batch.id)
    # THEN Step Functions stopped the execution, and the batch reads cancelled from then on
    arn = aws["machine"].replace(":stateMachine:", ":execution:") + ":" + batch.id
    assert aws["sfn"].describe_execution(executionArn=arn)["status"] == "ABORTED"
    assert cancelled.status == "cancelled" and cancelled.cancelling_at and cancelled.cancelled_at
    assert client.batches.retrieve(batch.id).status == "cancelled"
    # AND cancelling it again is refused
    with pytest.raises(openai.ConflictError, match="cancelled"):
        client.batches.cancel(batch.id)


def test_batches_are_listed_newest_first_by_page(client: openai.OpenAI) -> None:
    uploaded = client.files.create(file=("one.jsonl", _line("x", "hi").encode()), purpose="batch")
    made = [
        client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
        ).id
        for _ in range(3)
    ]
    first = client.batches.list(limit=2)
    assert [b.id for b in first.data] == made[::-1][:2] and first.has_more
    second = client.batches.list(limit=2, after=made[1])
    assert second.data[0].id == made[0]


def test_an_upload_above_the_function_url_limit_names_the_limit_and_s3(
    client: openai.OpenAI,
) -> None:
    host, port = client.base_url.host, client.base_url.port
    connection = http.client.HTTPConnection(host, port, timeout=10)
    # WHEN the body announced is over 6 MB (the function URL's request limit)
    connection.putrequest("POST", "/v1/files")
    connection.putheader("Content-Type", "multipart/form-data; boundary=x")
    connection.putheader("Content-Length", str(7 * 1024 * 1024))
    connection.endheaders()
    answer = connection.getresponse()
    # THEN a 413 says why and how to bring the file in through S3
    error = json.loads(answer.read())["error"]
    assert answer.status == 413 and error["code"] == "file_too_large"
    assert "6 MB" in error["message"] and f"s3://{BUCKET}/files/" in error["message"]


def test_an_unknown_batch_or_file_is_a_404_and_a_wrong_endpoint_a_400(
    client: openai.OpenAI,
) -> None:
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_missing")
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve("file-missing")
    with pytest.raises(openai.BadRequestError, match="/v1/chat/completions"):
        client.batches.create(
            input_file_id="file-missing", endpoint="/v1/completions", completion_window="24h"
        )


def test_the_batch_api_is_a_404_until_the_invoker_adds_it(
    aws: dict[str, Any], start_runtime: StartRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BATCH_BUCKET")
    runtime = start_runtime()
    plain = openai.OpenAI(base_url=runtime.url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError, match="add_batch_api"):
        plain.batches.list()


# -- the worker alone ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "refusal",
    [
        CallError.model_error("overloaded", original_status=429),
        CallError.model_error("warming up", original_status=503),
        CallError.validation_error(
            "Inference Component has no capacity to process this request. ApplicationAutoScaling "
            "may be in-progress (if configured) or try to increase the capacity"
        ),
    ],
    ids=["429", "503", "no-capacity"],
)
def test_a_busy_target_is_raised_for_the_map_to_retry(
    aws: dict[str, Any], fake: FakeSageMaker, refusal: CallError
) -> None:
    fake.enqueue(Scenario(call_error=refusal))
    with pytest.raises(worker.TargetBusy):
        worker.handle({"phase": "line", "line": json.loads(_line("x", "hi"))})


def test_a_request_the_model_rejects_is_an_error_line(
    aws: dict[str, Any], fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(call_error=CallError.model_error("too long", original_status=400)))
    line = worker.handle({"phase": "line", "line": json.loads(_line("x", "hi"))})
    assert line["custom_id"] == "x" and line["response"]["status_code"] == 400
    assert "too long" in line["response"]["body"]["error"]["message"]


def test_a_validation_error_other_than_no_capacity_is_an_error_line(
    aws: dict[str, Any], fake: FakeSageMaker
) -> None:
    """Only the no-capacity refusal of SageMaker's ValidationErrors is retried: any other is
    the request's fault, and its line says so at once."""
    fake.enqueue(Scenario(call_error=CallError.validation_error("Input is too long")))
    line = worker.handle({"phase": "line", "line": json.loads(_line("x", "hi"))})
    assert line["custom_id"] == "x" and line["response"]["status_code"] == 400
    error = line["response"]["body"]["error"]
    assert error["code"] == "upstream_validation_error" and "too long" in error["message"]


def test_the_worker_imports_from_the_code_asset_as_lambda_names_it(tmp_path: Any) -> None:
    root = make_task_root(tmp_path)
    probe = "import importlib; m = importlib.import_module('streaming.runtime.batches.worker'); m.handle"
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_background_response_is_refused_with_a_pointer_to_batches(
    client: openai.OpenAI, fake: FakeSageMaker
) -> None:
    with pytest.raises(openai.BadRequestError, match="/v1/batches") as refused:
        client.responses.create(model=MODEL, input="hi", background=True)
    assert refused.value.param == "background" and not fake.requests


# -- the batch object from what Step Functions reports --------------------------------------

_RECORD = {
    "id": "batch_1",
    "endpoint": "/v1/chat/completions",
    "input_file_id": "file-1",
    "completion_window": "24h",
    "created_at": 100,
    "total": 5,
}
_STOPPED = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("record", "execution", "map_run", "status", "counts"),
    [
        ({}, {"status": "RUNNING"}, None, "in_progress", (5, 0, 0)),
        (
            {},
            {"status": "RUNNING"},
            {"status": "RUNNING", "itemCounts": {"succeeded": 3, "failed": 1, "timedOut": 1}},
            "in_progress",
            (5, 3, 2),
        ),
        (
            {},
            {"status": "RUNNING"},
            {"status": "SUCCEEDED", "stopDate": _STOPPED},
            "finalizing",
            (5, 0, 0),
        ),
        ({"cancelling_at": 150}, {"status": "RUNNING"}, None, "cancelling", (5, 0, 0)),
        ({}, {"status": "ABORTED", "stopDate": _STOPPED}, None, "cancelled", (5, 0, 0)),
        ({}, {"status": "TIMED_OUT", "stopDate": _STOPPED}, None, "expired", (5, 0, 0)),
        (
            {},
            {"status": "FAILED", "error": "States.Runtime", "cause": "boom"},
            None,
            "failed",
            (5, 0, 0),
        ),
    ],
    ids=["running", "running-counts", "finalizing", "cancelling", "cancelled", "expired", "failed"],
)
def test_the_status_follows_the_execution_and_its_map_run(
    record: dict[str, Any],
    execution: dict[str, Any],
    map_run: dict[str, Any] | None,
    status: str,
    counts: tuple[int, int, int],
) -> None:
    batch = batch_object({**_RECORD, **record}, final=None, execution=execution, map_run=map_run)
    assert batch["status"] == status
    assert tuple(batch["request_counts"][k] for k in ("total", "completed", "failed")) == counts
    if status in ("cancelled", "expired"):
        assert batch[f"{status}_at"] == int(_STOPPED.timestamp())
    if status == "failed":
        assert batch["errors"]["data"][0] == {
            "code": "States.Runtime",
            "message": "boom",
            "param": None,
            "line": None,
        }


# -- Responses and embeddings lines -------------------------------------------------------


def _request(custom_id: str, url: str, body: dict[str, Any]) -> str:
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body})


def test_a_responses_batch_answers_each_line_as_a_response(
    client: openai.OpenAI, fake: FakeSageMaker, aws: dict[str, Any], definition: dict[str, Any]
) -> None:
    # GIVEN a /v1/responses batch: one line the model answers, one with a field the
    # Responses check refuses (as POST /v1/responses would, with a 400 naming it)
    lines = [
        _request("r1", "/v1/responses", {"model": MODEL, "input": "Say hi"}),
        _request("r2", "/v1/responses", {"model": MODEL, "input": "hi", "background": True}),
    ]
    fake.enqueue(Scenario(parts=engine_streams.openai(["Hel", "lo"])))
    uploaded = client.files.create(file=("r.jsonl", "\n".join(lines).encode()), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/responses", completion_window="24h"
    )
    assert batch.status == "in_progress" and batch.endpoint == "/v1/responses"
    _run_map(aws, definition, batch.id)
    # THEN the answered line's body is a response object, the refused one a 400
    done = client.batches.retrieve(batch.id)
    assert done.status == "completed" and done.output_file_id and done.error_file_id
    (answered,) = [
        json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()
    ]
    body = answered["response"]["body"]
    assert answered["custom_id"] == "r1" and body["object"] == "response"
    assert body["status"] == "completed" and body["output"][0]["content"][0]["text"] == "Hello"
    (refused,) = [json.loads(x) for x in client.files.content(done.error_file_id).text.splitlines()]
    assert refused["custom_id"] == "r2" and refused["response"]["status_code"] == 400
    assert refused["response"]["body"]["error"]["param"] == "background"
    assert len(fake.requests) == 1  # the refused line never reached the model


_EMBEDDER = "BAAI/bge-small-en-v1.5"
_ROUTES = RoutingTable(
    [
        Route(model=MODEL, endpoint_name=ENDPOINT),
        Route(
            model=_EMBEDDER,
            endpoint_name="embedder",
            request_format=RequestFormat.EMBED,
            engine=EngineName.TEI,
            dimensions=3,
            max_inputs=2,
        ),
    ]
)


def test_an_embeddings_line_is_embedded_by_its_engine_s_calls(fake: FakeSageMaker) -> None:
    # GIVEN an embedding model whose engine takes two inputs a call, and a line of four (the
    # two calls run at once, so both answer alike)
    pair = b"[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]"
    fake.enqueue(Scenario(answer=pair), Scenario(answer=pair))
    body = {"model": _EMBEDDER, "input": ["a", "b", "c", "d"]}
    line = json.loads(_request("e1", "/v1/embeddings", body))
    # WHEN the worker serves it
    answer = worker.serve_line(
        line, request_id="r", routes=_ROUTES, settings=BASE_SETTINGS, client=client_for(5.0)
    )
    # THEN its body is OpenAI's embeddings list of every input, from two calls
    assert answer["custom_id"] == "e1" and answer["response"]["status_code"] == 200
    listed = answer["response"]["body"]
    assert listed["object"] == "list" and listed["model"] == _EMBEDDER
    assert [d["index"] for d in listed["data"]] == [0, 1, 2, 3]
    assert [d["embedding"] for d in listed["data"]] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] * 2
    assert sorted(json.loads(r.body)["inputs"] for r in fake.requests) == [["a", "b"], ["c", "d"]]
    assert all(r.endpoint_name == "embedder" and not r.streamed for r in fake.requests)


@pytest.mark.parametrize(
    ("url", "model", "param"),
    [
        ("/v1/embeddings", MODEL, "model"),  # a chat model on the embeddings path
        ("/v1/responses", _EMBEDDER, "model"),  # an embedding model on the Responses path
        ("/v1/embeddings", _EMBEDDER, "dimensions"),  # the embeddings check's own 400
    ],
)
def test_a_line_gets_the_400_its_path_gives(
    fake: FakeSageMaker, url: str, model: str, param: str
) -> None:
    body: dict[str, Any] = {"model": model, "input": "a"}
    if param == "dimensions":
        body["dimensions"] = 99
    line = json.loads(_request("x", url, body))
    answer = worker.serve_line(
        line, request_id="r", routes=_ROUTES, settings=BASE_SETTINGS, client=client_for(5.0)
    )
    assert answer["response"]["status_code"] == 400 and not fake.requests
    assert answer["response"]["body"]["error"]["param"] == param


def test_an_embeddings_batch_refuses_a_chat_model_s_line_before_it_starts() -> None:
    lines = [
        _request("ok", "/v1/embeddings", {"model": _EMBEDDER, "input": "a"}),
        _request("chat", "/v1/embeddings", {"model": MODEL, "input": "a"}),
    ]
    checked = check_file("\n".join(lines).encode(), endpoint="/v1/embeddings", routes=_ROUTES)
    (error,) = checked.errors
    assert (error["line"], error["code"], error["param"]) == (2, "invalid_model", "body.model")
    assert "a chat model" in error["message"] and "an embedding model" in error["message"]


# -- batches that stop before they finish --------------------------------------------------


def test_a_cancelled_batch_has_the_lines_answered_and_the_others_as_cancelled(
    client: openai.OpenAI, fake: FakeSageMaker, aws: dict[str, Any]
) -> None:
    # GIVEN a batch of three lines, one of which the worker answered before the cancel
    requests = "\n".join([_line("a", "hi"), _line("b", "hi"), _line("c", "hi")])
    uploaded = client.files.create(file=("three.jsonl", requests.encode()), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    fake.enqueue(Scenario(parts=engine_streams.openai(["Hi"])))
    worker.handle({"phase": "line", "batch_id": batch.id, "line": json.loads(_line("a", "hi"))})
    # WHEN it is cancelled (Step Functions aborts the execution: no finishing state runs)
    cancelled = client.batches.cancel(batch.id)
    # THEN it has an output file with the answered line and an error file with the others,
    # each batch_cancelled with no response (OpenAI's BatchRequestOutput error codes)
    assert cancelled.status == "cancelled" and cancelled.cancelled_at
    assert cancelled.output_file_id and cancelled.error_file_id
    assert cancelled.request_counts is not None
    counts = cancelled.request_counts
    assert (counts.total, counts.completed, counts.failed) == (3, 1, 2)
    (answered,) = [
        json.loads(x) for x in client.files.content(cancelled.output_file_id).text.splitlines()
    ]
    assert answered["custom_id"] == "a"
    assert answered["response"]["body"]["choices"][0]["message"]["content"] == "Hi"
    others = [
        json.loads(x) for x in client.files.content(cancelled.error_file_id).text.splitlines()
    ]
    assert [(x["custom_id"], x["response"], x["error"]["code"]) for x in others] == [
        ("b", None, "batch_cancelled"),
        ("c", None, "batch_cancelled"),
    ]
    # AND reading it again gives the same files (they are written once)
    again = client.batches.retrieve(batch.id)
    assert (again.output_file_id, again.error_file_id) == (
        cancelled.output_file_id,
        cancelled.error_file_id,
    )


def test_an_expired_batch_has_the_lines_answered_and_the_others_as_expired(
    aws: dict[str, Any], fake: FakeSageMaker
) -> None:
    # GIVEN a batch's input file in the bucket, one line answered by the worker
    s3, store = aws["s3"], Store(aws["s3"], BUCKET)
    requests = "\n".join([_line("a", "hi"), _line("b", "hi")]) + "\n"
    store.put_file("file-expiring", requests.encode(), filename="x.jsonl", purpose="batch")
    fake.enqueue(Scenario(call_error=CallError.model_error("too long", original_status=400)))
    worker.handle({"phase": "line", "batch_id": "batch_x", "line": json.loads(_line("a", "hi"))})
    record = {"id": "batch_x", "input_file_id": "file-expiring"}
    # WHEN its execution timed out (the completion window, the state machine's timeout)
    final = settle(record, store, {"status": "TIMED_OUT", "stopDate": _STOPPED})
    # THEN the batch is expired, the line the model refused keeps its 400 and the line that
    # never ran is batch_expired
    assert final["status"] == "expired" and final["expired_at"] == int(_STOPPED.timestamp())
    assert final["output_file_id"] is None
    errors = store.file_content(final["error_file_id"]).decode().splitlines()
    lines = {x["custom_id"]: x for x in map(json.loads, errors)}
    assert lines["a"]["response"]["status_code"] == 400
    assert lines["b"]["response"] is None and lines["b"]["error"]["code"] == "batch_expired"
    batch = batch_object(
        {**_RECORD, "total": 2}, final=store.final("batch_x"), execution=None, map_run=None
    )
    assert batch["status"] == "expired" and batch["error_file_id"] == final["error_file_id"]
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="batches/batch_x/lines/")["KeyCount"] == 1


# -- asynchronous endpoints ---------------------------------------------------------------

_OVERNIGHT = "qwen-overnight"
_INPUTS = f"s3://{BUCKET}/inputs/"
_ASYNC_ROUTES = RoutingTable(
    [Route(model=MODEL, endpoint_name=ENDPOINT), Route(model=_OVERNIGHT, endpoint_name="overnight")]
)


@pytest.fixture
def queue(moto_url: str, aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An asynchronous endpoint ``overnight`` (the fake's InvokeEndpointAsync, answering from
    moto's S3), and the worker's routes and BATCH_ASYNC naming it."""
    local = LocalAws(url=moto_url, s3=aws["s3"], sns=None, sqs=None)
    engines = Engines()
    with FakeAsyncSageMaker(local) as fake_async:
        fake_async.endpoints = {
            "overnight": AsyncEndpoint(
                model=engines.chat,
                output_path=f"s3://{BUCKET}/outputs/",
                failure_path=f"s3://{BUCKET}/failures/",
            )
        }
        client = boto3.client("sagemaker-runtime", endpoint_url=fake_async.url)
        monkeypatch.setattr(worker, "_client", lambda: client)
        monkeypatch.setattr(worker, "_routes", lambda: _ASYNC_ROUTES)
        monkeypatch.setattr(worker, "_async_inputs", lambda: {_OVERNIGHT: _INPUTS})
        monkeypatch.setenv("BATCH_ASYNC", json.dumps({_OVERNIGHT: _INPUTS}))
        yield fake_async


def test_a_batch_on_an_asynchronous_endpoint_queues_each_line_and_reads_its_answer(
    client: openai.OpenAI, queue: Any, aws: dict[str, Any], definition: dict[str, Any]
) -> None:
    # GIVEN a batch for the asynchronous model: the front door takes its model
    line = _line("n1", "Summarize").replace(f'"{MODEL}"', f'"{_OVERNIGHT}"')
    uploaded = client.files.create(file=("n.jsonl", line.encode()), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert batch.status == "in_progress" and batch.model == _OVERNIGHT
    # WHEN the map runs it: Line queues it, Waiting waits (here: until the endpoint wrote
    # its answer), Poll reads it
    waits: list[int] = []
    queue.processed.clear()

    def wait(seconds: int) -> None:
        waits.append(seconds)
        assert queue.processed.wait(30)

    arn = aws["machine"].replace(":stateMachine:", ":execution:") + ":" + batch.id
    execution_input = json.loads(aws["sfn"].describe_execution(executionArn=arn)["input"])
    run_batch(definition, execution_input, s3=aws["s3"], worker=worker.handle, wait=wait)
    # THEN the request went through InvokeEndpointAsync with its body in the input folder,
    # asking for one answer, and the answer SageMaker wrote is the output line
    (received,) = queue.received
    location = received.headers["x-amzn-sagemaker-inputlocation"]
    assert location.startswith(f"{_INPUTS}{batch.id}/") and not received.body
    bucket, key = location[len("s3://") :].split("/", 1)
    sent = json.loads(aws["s3"].get_object(Bucket=bucket, Key=key)["Body"].read())
    assert sent["stream"] is False and sent["messages"][0]["content"] == "Summarize"
    assert waits and waits[0] == queued.FIRST_WAIT_S
    done = client.batches.retrieve(batch.id)
    assert done.status == "completed" and done.output_file_id
    (answer,) = [json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()]
    assert answer["custom_id"] == "n1" and answer["response"]["status_code"] == 200
    content = answer["response"]["body"]["choices"][0]["message"]["content"]
    assert content == Engines().text


def _pending(aws: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "batch_id": "batch_q",
        "custom_id": "q1",
        "request_id": "r",
        "inference_id": "i",
        "output": f"s3://{BUCKET}/outputs/q1.out",
        "failure": f"s3://{BUCKET}/failures/q1-error.out",
        "model": _OVERNIGHT,
        "stream_format": "auto",
        "logprobs": False,
        "submitted": 1_000,
        "wait": queued.FIRST_WAIT_S,
        **fields,
    }


def test_a_queued_line_waits_longer_each_time_then_gives_up(aws: dict[str, Any]) -> None:
    s3 = aws["s3"]
    pending = _pending(aws)
    # no answer yet: wait twice as long, up to the longest wait
    again = queued.poll(pending, s3, now=1_000 + 60)
    assert again["pending"]["wait"] == 2 * queued.FIRST_WAIT_S
    longest = queued.poll({**pending, "wait": queued.MAX_WAIT_S}, s3, now=1_060)
    assert longest["pending"]["wait"] == queued.MAX_WAIT_S
    # past the request TTL and the invocation timeout: OpenAI's request_timeout
    late = queued.poll(pending, s3, now=1_000 + queued.GIVE_UP_S + 1)
    assert late["response"] is None and late["error"]["code"] == "request_timeout"
    # a failure SageMaker wrote is the line's error
    s3.put_object(Bucket=BUCKET, Key="failures/q1-error.out", Body=b'{"error": "CUDA OOM"}')
    failed = queued.poll(pending, s3, now=1_060)
    assert failed["response"]["status_code"] == 502
    assert "CUDA OOM" in failed["response"]["body"]["error"]["message"]


def test_a_queued_line_s_lines_are_checked_as_the_invoker_s(
    queue: Any, fake: FakeSageMaker
) -> None:
    # a field the chat check refuses: a 400, nothing queued
    bad = json.loads(_line("x", "hi", max_tokens=-1).replace(f'"{MODEL}"', f'"{_OVERNIGHT}"'))
    refused = worker.serve_line(bad, request_id="r", settings=BASE_SETTINGS)
    assert refused["response"]["status_code"] == 400 and not queue.received
    # a Responses line to the asynchronous model: a 400 naming the path it takes
    body = {"model": _OVERNIGHT, "input": "hi"}
    line = json.loads(_request("y", "/v1/responses", body))
    answer = worker.serve_line(line, request_id="r", settings=BASE_SETTINGS)
    assert answer["response"]["status_code"] == 400 and not queue.received
    assert "/v1/chat/completions" in answer["response"]["body"]["error"]["message"]
    checked = check_file(
        (json.dumps(line) + "\n").encode(),
        endpoint="/v1/responses",
        routes=_ROUTES,
        queued=(_OVERNIGHT,),
    )
    assert [(e["line"], e["code"]) for e in checked.errors] == [(1, "invalid_model")]
