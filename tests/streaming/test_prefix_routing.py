"""OpenAI's ``prompt_cache_key`` as SageMaker's prefix-aware routing id (``PrefixAwareId``):
sent on both invoke operations as botocore's service model names it, hashed to a valid id
when it is not one, and an engine body written conversation first, since the routing reads
the body's first ``PrefixLength`` bytes."""

from __future__ import annotations

import json
import re
from typing import Any

import botocore.session
import openai
import pytest

from constructs_llm.streaming.runtime.prefix_aware_id import MAX_ID_LENGTH, prefix_aware_id
from constructs_llm.streaming.runtime.routing import Route
from constructs_llm.streaming.runtime.upstream import invoke_once
from tests.streaming.conftest import ENDPOINT, MODEL, SOCKET_TIMEOUT, Runtime
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

USER: list[Any] = [
    {"role": "system", "content": "You are the support bot of Example Corp. " * 30},
    {"role": "user", "content": "Where is my order?"},
]
WEATHER: Any = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object"}},
}


def _member(operation: str) -> Any:
    model = botocore.session.get_session().get_service_model("sagemaker-runtime")
    return model.operation_model(operation).input_shape.members["PrefixAwareId"]


def _valid(value: str) -> bool:
    """The service model's constraints on PrefixAwareId, with Java's \\p{Print} (printable
    ASCII) and \\S spelled out for Python's re."""
    shape = _member("InvokeEndpointWithResponseStream")
    assert shape.metadata["pattern"] == "\\A\\S[\\p{Print}]*\\z"
    pattern = r"[^\s][\x20-\x7e]*"
    return (
        shape.metadata["min"] <= len(value) <= shape.metadata["max"]
        and re.fullmatch(pattern, value) is not None
        and value.isascii()
    )


@pytest.mark.parametrize("operation", ["InvokeEndpoint", "InvokeEndpointWithResponseStream"])
def test_both_operations_take_the_id_in_the_header_the_runtime_s_fake_reads(operation: str) -> None:
    shape = _member(operation)
    assert shape.serialization == {"location": "header", "name": "X-Amzn-SageMaker-Prefix-Aware-Id"}
    assert shape.metadata["max"] == MAX_ID_LENGTH


@pytest.mark.parametrize(
    "key",
    ["tenant-42", "a" * 64, "key with spaces", "~!@#$%^&*()"],
    ids=["short", "64-chars", "spaces", "punctuation"],
)
def test_a_key_that_is_a_valid_id_is_sent_as_it_is(key: str) -> None:
    assert prefix_aware_id(key) == key and _valid(key)


@pytest.mark.parametrize(
    "key",
    ["a" * 65, "cliënt-ü", "tab\there", " leading-space", "line\nbreak", "\udce9", "x" * 5000],
    ids=["65-chars", "non-ascii", "tab", "leading-space", "newline", "lone-surrogate", "long"],
)
def test_any_other_key_is_hashed_to_a_valid_stable_id_never_refused(key: str) -> None:
    hashed = prefix_aware_id(key)
    assert hashed is not None and _valid(hashed)
    assert hashed == prefix_aware_id(key)  # stable: one key, one instance
    assert hashed != prefix_aware_id(key + "!")


def test_an_empty_or_absent_key_sends_no_id() -> None:
    assert prefix_aware_id("") is None and prefix_aware_id(None) is None


def _sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


@pytest.mark.parametrize("stream", [True, False])
def test_a_chat_request_s_prompt_cache_key_arrives_as_the_prefix_aware_id(
    runtime: Runtime, fake: FakeSageMaker, stream: bool
) -> None:
    long_key = "conversation/" + "x" * 80
    for _ in range(3):
        fake.enqueue(Scenario(parts=engine_streams.openai(["ok"])))
    client = _sdk(runtime)
    for key in ("tenant-42", long_key, None):
        extra = {} if key is None else {"prompt_cache_key": key}
        answer = client.chat.completions.create(
            model=MODEL, messages=USER, stream=stream, extra_body=extra
        )
        if stream:
            list(answer)  # type: ignore[call-overload]
    ids = [request.prefix_aware_id for request in fake.requests]
    assert ids == ["tenant-42", prefix_aware_id(long_key), None]
    assert all("prompt_cache_key" not in request.json() for request in fake.requests)


def test_a_responses_request_s_prompt_cache_key_arrives_and_is_echoed(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(Scenario(parts=engine_streams.openai(["ok"])))
    response = _sdk(runtime).responses.create(model=MODEL, input="Hi", prompt_cache_key="t-7")
    assert fake.requests[0].prefix_aware_id == "t-7"
    assert response.prompt_cache_key == "t-7"


def test_a_prompt_cache_key_that_is_not_a_string_is_a_400(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        _sdk(runtime).chat.completions.create(
            model=MODEL, messages=USER, extra_body={"prompt_cache_key": 7}
        )
    assert refused.value.body["param"] == "prompt_cache_key"  # type: ignore[index]
    assert fake.requests == []


def test_invoke_endpoint_carries_the_id_too(fake: FakeSageMaker) -> None:
    # the embeddings' operation: botocore's own parameter name, checked by its validation
    from tests.streaming.conftest import client_for

    fake.enqueue(Scenario(answer=b"[[0.5]]"))
    route = Route(model=MODEL, endpoint_name=ENDPOINT)
    assert invoke_once(client_for(5.0), route, b"{}", prefix_aware_id="t-9") == b"[[0.5]]"
    (request,) = fake.requests
    assert (request.streamed, request.prefix_aware_id) == (False, "t-9")


def test_requests_of_one_conversation_with_other_settings_share_their_first_bytes(
    runtime: Runtime, fake: FakeSageMaker
) -> None:
    # GIVEN two requests with the same messages and tools but different per-request settings
    for _ in range(2):
        fake.enqueue(Scenario(parts=engine_streams.openai(["ok"])))
    client = _sdk(runtime)
    client.chat.completions.create(
        model=MODEL,
        messages=USER,
        tools=[WEATHER],
        temperature=0.1,
        max_tokens=10,
    )
    client.chat.completions.create(
        model=MODEL,
        messages=USER,
        tools=[WEATHER],
        top_p=0.5,
        max_tokens=900,
        seed=3,
    )
    first, second = (request.body for request in fake.requests)
    # THEN the engine bodies start with the conversation (messages, then tools), so the bytes
    # prefix-aware routing reads are the same for both
    pairs = enumerate(zip(first, second, strict=False))
    shared = next((i for i, (a, b) in pairs if a != b), min(len(first), len(second)))
    conversation = json.dumps(
        {"messages": USER, "tools": [WEATHER]}, ensure_ascii=False, separators=(",", ":")
    )[:-1]
    assert first.decode().startswith(conversation) and second.decode().startswith(conversation)
    assert shared >= len(conversation.encode()) > 1024  # PrefixLength's minimum
    assert json.loads(first)["temperature"] == 0.1 and json.loads(second)["seed"] == 3
