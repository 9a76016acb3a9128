"""The asynchronous chat client against moto's S3, SNS and SQS and a stand-in for
``InvokeEndpointAsync`` that reads the input, calls a model and writes the answer (or the
failure) where SageMaker does, then notifies the endpoint's topic
(``tests/support/fake_async_sagemaker.py``). boto3 reaches both through its standard
``AWS_ENDPOINT_URL_<SERVICE>`` variables."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.streaming import AsyncChatError, chat_async, submit_chat
from constructs_llm.streaming.async_chat import INLINE_LIMIT, AsyncChatJob
from constructs_llm.streaming.runtime.chat.request import build_chat_request
from constructs_llm.streaming.runtime.chat.target import ChatTarget
from constructs_llm.streaming.runtime.http.errors import RequestError
from tests.streaming.conftest import FAKE_AWS_ENV
from tests.support import engine_streams
from tests.support.fake_async_sagemaker import (
    AsyncEndpoint,
    Engines,
    FakeAsyncSageMaker,
    LocalAws,
    local_aws,
)

BUCKET = "jobs"
ENDPOINT = "batch"
MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module")
def aws() -> Iterator[LocalAws]:
    patch = pytest.MonkeyPatch()
    for name, value in FAKE_AWS_ENV.items():
        patch.setenv(name, value)
    patch.delenv("AWS_ENDPOINT_URL", raising=False)
    patch.delenv("AWS_PROFILE", raising=False)
    with local_aws(FAKE_AWS_ENV) as local:
        local.s3.create_bucket(Bucket=BUCKET)
        for service in ("S3", "SNS", "SQS"):
            patch.setenv(f"AWS_ENDPOINT_URL_{service}", local.url)
        yield local
    patch.undo()


@pytest.fixture(scope="module")
def fake_server(aws: LocalAws) -> Iterator[FakeAsyncSageMaker]:
    patch = pytest.MonkeyPatch()
    with FakeAsyncSageMaker(aws) as fake:
        patch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", fake.url)
        yield fake
    patch.undo()


@pytest.fixture
def engines() -> Engines:
    return Engines()


@pytest.fixture
def fake(fake_server: FakeAsyncSageMaker, engines: Engines) -> Iterator[FakeAsyncSageMaker]:
    """An endpoint serving a chat engine, answers under outputs/, failures under failures/."""
    fake_server.endpoints = {
        ENDPOINT: AsyncEndpoint(
            model=engines.chat,
            output_path=f"s3://{BUCKET}/outputs/",
            failure_path=f"s3://{BUCKET}/failures/",
        )
    }
    fake_server.received.clear()
    yield fake_server
    fake_server.paused.clear()


def _keys(aws: LocalAws, prefix: str) -> list[str]:
    listed = aws.s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return [item["Key"] for item in listed.get("Contents", ())]


def test_a_chat_request_is_queued_inline_and_answered_from_s3(
    fake: FakeAsyncSageMaker, engines: Engines, aws: LocalAws
) -> None:
    # WHEN a small chat request is submitted and awaited (default clients, from the env)
    answer = chat_async(ENDPOINT, MESSAGES, max_tokens=64, temperature=0.2, poll_interval=0.05)
    # THEN the answer is the engine's chat.completion
    assert answer["object"] == "chat.completion"
    assert answer["choices"][0]["message"]["content"] == engines.text
    assert answer["usage"]["total_tokens"] == 20
    # AND the engine got the invoker's body, asked for one answer instead of a stream
    (sent,) = engines.calls
    assert sent == {
        "messages": MESSAGES,
        "stream": False,
        "max_tokens": 64,
        "temperature": 0.2,
    }
    # AND the body went inline, as JSON, with an inference id: nothing was put in S3 for it
    (call,) = fake.received
    assert json.loads(call.body) == sent
    assert call.headers["x-amzn-sagemaker-content-type"] == "application/json"
    assert "x-amzn-sagemaker-inputlocation" not in call.headers
    assert _keys(aws, "inputs/") == []
    assert _keys(aws, "outputs/") == [f"outputs/{call.inference_id}.out"]


def test_a_body_above_the_inline_limit_goes_through_the_input_folder(
    fake: FakeAsyncSageMaker, engines: Engines, aws: LocalAws
) -> None:
    # GIVEN a prompt longer than InvokeEndpointAsync takes inline
    long = [{"role": "user", "content": "x" * (INLINE_LIMIT + 1)}]
    # WHEN it is submitted with the endpoint's input folder
    job = submit_chat(ENDPOINT, long, input_location=f"s3://{BUCKET}/inputs/")
    answer = job.result(poll_interval=0.05, timeout=30)
    # THEN the body was put under the inference id and passed as InputLocation, and read back
    (call,) = fake.received
    key = f"inputs/{job.inference_id}.json"
    assert call.headers["x-amzn-sagemaker-inputlocation"] == f"s3://{BUCKET}/{key}"
    assert call.body == b""
    stored = json.loads(aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())
    assert stored == engines.calls[0] and stored["messages"] == long
    assert answer["choices"][0]["message"]["content"] == engines.text


def test_inline_false_sends_a_small_body_through_s3_too(
    fake: FakeAsyncSageMaker, engines: Engines
) -> None:
    job = submit_chat(
        ENDPOINT, MESSAGES, input_location=f"s3://{BUCKET}/inputs/", inline=False, request_ttl=600
    )
    job.result(poll_interval=0.05, timeout=30)
    (call,) = fake.received
    assert call.headers["x-amzn-sagemaker-inputlocation"].endswith(f"/{job.inference_id}.json")
    assert call.headers["x-amzn-sagemaker-requestttlseconds"] == "600"


def test_a_generate_engine_s_answer_becomes_a_chat_completion_without_the_prompt(
    fake: FakeAsyncSageMaker, engines: Engines
) -> None:
    # GIVEN TGI's generate API, which repeats a text-generation model's prompt on its compat
    # route, answering a list of one generation
    fake.endpoints[ENDPOINT].model = engines.tgi_generate
    prompt = "<|user|>What is the capital of France?<|assistant|>"
    # WHEN a generate-format request is awaited
    answer = chat_async(
        ENDPOINT,
        [{"role": "user", "content": prompt}],
        request_format="generate",
        max_tokens=8,
        poll_interval=0.05,
        model="llama",
    )
    # THEN the engine got the generate body, not streaming, and the answer is the new text only
    assert engines.calls == [
        {
            "inputs": prompt,
            "parameters": {"details": True, "max_new_tokens": 8},
            "stream": False,
        }
    ]
    assert answer["object"] == "chat.completion"
    assert answer["model"] == "llama"
    (choice,) = answer["choices"]
    assert choice["message"]["content"] == engines.text
    assert choice["finish_reason"] == "length"


def test_a_failure_raises_with_the_failure_file(fake: FakeAsyncSageMaker, engines: Engines) -> None:
    fake.endpoints[ENDPOINT].model = engines.failing
    job = submit_chat(ENDPOINT, MESSAGES)
    with pytest.raises(AsyncChatError, match=r"failed: .*Input validation error") as caught:
        job.result(poll_interval=0.05, timeout=30)
    assert caught.value.inference_id == job.inference_id
    assert caught.value.failure is not None
    assert json.loads(caught.value.failure)["error_type"] == "validation"


def test_waiting_on_the_notification_queue(
    fake: FakeAsyncSageMaker, engines: Engines, aws: LocalAws
) -> None:
    # GIVEN the endpoint's topic, with an SQS queue subscribed, and a message of another
    # request already waiting there
    topic = aws.sns.create_topic(Name="done")["TopicArn"]
    queue_url = aws.sqs.create_queue(QueueName="done")["QueueUrl"]
    queue_arn = aws.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    aws.sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    fake.endpoints[ENDPOINT].topic_arn = topic
    aws.sns.publish(
        TopicArn=topic,
        Message=json.dumps({"inferenceId": "someone-else", "invocationStatus": "Completed"}),
    )
    # WHEN a request's answer is awaited on the queue
    job = submit_chat(ENDPOINT, MESSAGES)
    answer = job.result(queue_url=queue_url, timeout=30)
    # THEN it is read where the notification said, and the other message is left for its owner
    assert answer["choices"][0]["message"]["content"] == engines.text
    left = aws.sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
    bodies = [json.loads(json.loads(m["Body"])["Message"]) for m in left.get("Messages", ())]
    assert [b["inferenceId"] for b in bodies] == ["someone-else"]
    # AND a failure notified on the queue raises with the failure file
    fake.endpoints[ENDPOINT].model = engines.failing
    failing = submit_chat(ENDPOINT, MESSAGES)
    with pytest.raises(AsyncChatError, match=r"Input validation error"):
        failing.result(queue_url=queue_url, timeout=30)


def test_a_request_the_invoker_refuses_is_refused_before_it_is_queued(
    fake: FakeAsyncSageMaker,
) -> None:
    # GIVEN a request the invoker answers with a 400
    bad = {"messages": MESSAGES, "n": 2}
    with pytest.raises(RequestError) as invoker:
        build_chat_request(bad, ChatTarget(request_format=RequestFormat.MESSAGES))
    # WHEN it is submitted THEN it fails with the same message, and nothing is queued
    with pytest.raises(AsyncChatError) as caught:
        submit_chat(ENDPOINT, MESSAGES, n=2)
    assert caught.value.message == invoker.value.message
    assert caught.value.code == invoker.value.code
    assert fake.received == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stream": True}, r"stream=True cannot be served: an asynchronous endpoint writes one"),
        ({"invocation_timeout": 3601}, r"invocation_timeout must be 1-3600 seconds"),
        ({"request_ttl": 30}, r"request_ttl must be 60-21600 seconds \(RequestTTLSeconds\)"),
        ({"inference_id": "x" * 65}, r"inference_id must be 1-64 printable characters"),
        ({"inline": False}, r"inline=False: the body goes through S3, but input_location names"),
    ],
)
def test_bad_arguments_fail_before_anything_is_queued(
    fake: FakeAsyncSageMaker, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(AsyncChatError, match=message):
        submit_chat(ENDPOINT, MESSAGES, **kwargs)
    assert fake.received == []


def test_a_large_body_without_an_input_folder_names_the_fix(fake: FakeAsyncSageMaker) -> None:
    long = [{"role": "user", "content": "x" * INLINE_LIMIT}]
    with pytest.raises(AsyncChatError, match=r"the request body is 128,\d{3} bytes: the body"):
        submit_chat(ENDPOINT, long)
    with pytest.raises(AsyncChatError, match=r"above the 128,000 bytes InvokeEndpointAsync takes"):
        submit_chat(ENDPOINT, long, inline=True, input_location=f"s3://{BUCKET}/inputs/")


def test_an_unanswered_request_times_out_naming_where_to_look(fake: FakeAsyncSageMaker) -> None:
    # GIVEN an endpoint that does not get to the request (no instance yet)
    fake.paused.set()
    job = submit_chat(ENDPOINT, MESSAGES)
    with pytest.raises(AsyncChatError, match=r"no answer to inference .* in 0.2 s: it may still"):
        job.result(timeout=0.2, poll_interval=0.05)


class _OneAnswer:
    """An S3 client whose every key holds ``body``."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def list_objects_v2(self, *, Bucket: str, Prefix: str, MaxKeys: int) -> dict[str, Any]:
        return {"Contents": [{"Key": Prefix}]}

    def get_object(self, *, Bucket: str, Key: str) -> dict[str, Any]:
        return {"Body": io.BytesIO(self.body)}


def _job_answered(body: bytes) -> AsyncChatJob:
    return AsyncChatJob(
        endpoint_name=ENDPOINT,
        inference_id="i-1",
        output_location=f"s3://{BUCKET}/outputs/i-1.out",
        failure_location=None,
        request_format=RequestFormat.MESSAGES,
        stream_format=StreamFormat.AUTO,
        model="m",
        logprobs=False,
        s3=_OneAnswer(body),
    )


def test_an_answer_written_as_a_stream_is_aggregated_as_the_invoker_does() -> None:
    # A container that streams whatever it is asked writes SSE chunks into the answer
    body = b"".join(engine_streams.openai(["Par", "is"], prompt_tokens=7))
    answer = _job_answered(body).result(timeout=0)
    assert answer["choices"][0]["message"]["content"] == "Paris"
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["usage"] == {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    # AND a stream that ends with an engine error raises it, naming the inference
    broken = b"".join(engine_streams.openai_error("CUDA out of memory"))
    with pytest.raises(AsyncChatError, match=r"CUDA out of memory") as caught:
        _job_answered(broken).result(timeout=0)
    assert caught.value.inference_id == "i-1"
    assert caught.value.failure is not None and "CUDA out of memory" in caught.value.failure


def test_an_answer_streamed_with_reasoning_and_tool_calls_keeps_both() -> None:
    # GIVEN a reasoning model's stream that thinks, then calls a tool (vLLM's delta.reasoning)
    calls = engine_streams.openai_tool_calls([("call_1", "get_weather", ['{"city":', '"Paris"}'])])
    delta = {"reasoning": "The user wants the weather."}
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
    thinking = b"data: " + json.dumps(chunk).encode() + b"\n\n"
    body = b"".join([calls[0], thinking, *calls[1:]])
    # THEN the answer keeps the reasoning and the call, as the invoker's stream: false does
    (choice,) = _job_answered(body).result(timeout=0)["choices"]
    assert choice["message"]["reasoning"] == "The user wants the weather."
    (call,) = choice["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert choice["finish_reason"] == "tool_calls"
