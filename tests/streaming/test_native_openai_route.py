"""The unchanged ``openai`` SDK on SageMaker's own OpenAI route: ``OpenAI(base_url=<the
construct's openai_base_url>, api_key=<sagemaker_bearer_token()>)``, chat with and without
streaming, against a stand-in that checks the path and verifies the token
(tests/support/native_openai.py)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any
from unittest import mock

import openai
import pytest
from aws_cdk import Stack
from botocore.credentials import Credentials

from constructs_llm import Engine, LlmEndpoint
from constructs_llm.streaming import (
    bearer_token_hook,
    bearer_token_provider,
    sagemaker_bearer_token,
)
from tests.streaming.conftest import SOCKET_TIMEOUT
from tests.support.native_openai import NativeRoute, native_route

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session")
KNOWN = {CREDENTIALS.access_key: CREDENTIALS}
MESSAGES: list[Any] = [{"role": "user", "content": "What is the capital of France?"}]


def _client(route: NativeRoute, token: str | None = None, **kwargs: Any) -> openai.OpenAI:
    api_key = token or sagemaker_bearer_token(region=route.region, credentials=CREDENTIALS)
    return openai.OpenAI(
        base_url=route.base_url, api_key=api_key, max_retries=0, timeout=SOCKET_TIMEOUT, **kwargs
    )


def test_chat_without_streaming() -> None:
    with native_route(KNOWN) as route:
        reply = _client(route).chat.completions.create(model="", messages=MESSAGES)
    assert reply.choices[0].message.content == "Paris is the capital."
    assert reply.usage is not None and reply.usage.completion_tokens == 4
    (exchange,) = route.exchanges
    assert exchange.path == "/endpoints/chat-qwen/openai/v1/chat/completions"
    assert exchange.status == 200 and exchange.claims is not None
    assert exchange.claims.access_key == "AKIDEXAMPLE"
    assert exchange.body == {"model": "", "messages": MESSAGES}


def test_chat_streaming() -> None:
    with native_route(KNOWN) as route:
        stream = _client(route).chat.completions.create(model="", messages=MESSAGES, stream=True)
        pieces = [chunk.choices[0].delta.content or "" for chunk in stream]
    assert "".join(pieces) == "Paris is the capital."
    assert len([p for p in pieces if p]) == 4  # token by token, as the container sent them
    (exchange,) = route.exchanges
    assert exchange.body["stream"] is True and exchange.claims is not None


def test_an_inference_component_is_reached_by_its_path() -> None:
    with native_route(KNOWN, endpoint="shared-llms", component="chat-qwen") as route:
        stream = _client(route).chat.completions.create(model="", messages=MESSAGES, stream=True)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert text == "Paris is the capital."
    (exchange,) = route.exchanges
    assert exchange.path == (
        "/endpoints/shared-llms/inference-components/chat-qwen/openai/v1/chat/completions"
    )


def test_the_hook_mints_a_token_for_each_request_of_a_long_lived_client() -> None:
    hook = bearer_token_hook(region="us-east-1", credentials=CREDENTIALS)
    with native_route(KNOWN) as route:
        client = _client(
            route,
            token="unused",
            http_client=openai.DefaultHttpx2Client(event_hooks={"request": [hook]}),
        )
        for _ in range(2):
            client.chat.completions.create(model="", messages=MESSAGES)
    assert [e.status for e in route.exchanges] == [200, 200]
    assert all(e.claims and e.claims.expires_in == 900 for e in route.exchanges)


class Clock:
    """The time both sides see: botocore signs at it, the stand-in checks tokens against it."""

    def __init__(self) -> None:
        self.now = datetime.datetime(2026, 11, 25, 9, 30, 0)

    def __call__(self) -> datetime.datetime:
        return self.now


def test_a_client_with_the_provider_outlives_its_tokens() -> None:
    # GIVEN an unchanged OpenAI client whose api_key is the provider, and one given a token
    clock = Clock()
    with (
        mock.patch("botocore.auth.get_current_datetime", side_effect=clock),
        native_route(KNOWN, clock=clock) as route,
    ):
        start = clock.now
        renewing = openai.OpenAI(
            base_url=route.base_url,
            api_key=bearer_token_provider(region="us-east-1", credentials=CREDENTIALS),
            max_retries=0,
            timeout=SOCKET_TIMEOUT,
        )
        fixed = _client(route)  # one token of the default life, minted now
        first = renewing.chat.completions.create(model="", messages=MESSAGES)
        replies = [first.choices[0].message.content or ""]
        fixed.chat.completions.create(model="", messages=MESSAGES)
        # WHEN an hour passes, with calls along the way
        for minutes in (8, 16, 30, 60):
            clock.now = start + datetime.timedelta(minutes=minutes)
            stream = renewing.chat.completions.create(model="", messages=MESSAGES, stream=True)
            replies.append("".join(c.choices[0].delta.content or "" for c in stream))
        # THEN the provider's client kept working; the fixed token expired after 15 minutes
        with pytest.raises(openai.PermissionDeniedError, match="expired"):
            fixed.chat.completions.create(model="", messages=MESSAGES)
    assert replies == ["Paris is the capital."] * 5
    renewed = [e.claims for e in route.exchanges if e.claims and e.status == 200]
    assert len({c.signed_at for c in renewed}) == 4  # minted at 0 (both), 16, 30 and 60 min
    assert all(c.expires_in == 900 for c in renewed)


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("sk-not-a-sagemaker-token", "does not start with"),
        (None, "region us-east-1, this endpoint is in eu-west-1"),
    ],
)
def test_a_bad_token_is_refused_with_403(token: str | None, reason: str) -> None:
    # The stand-in does check: a token for another region (or none of ours) never gets through.
    with native_route(KNOWN, region="eu-west-1") as route:
        api_key = token or sagemaker_bearer_token(region="us-east-1", credentials=CREDENTIALS)
        with pytest.raises(openai.PermissionDeniedError, match=reason):
            _client(route, token=api_key).chat.completions.create(model="", messages=MESSAGES)


def test_the_construct_s_base_url_has_the_path_the_route_serves(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN the base URL the construct synthesizes for an endpoint in us-east-1
    stack = new_stack(region="us-east-1")
    endpoint = LlmEndpoint.from_endpoint_attributes(
        stack, "Chat", endpoint_name="chat-qwen", engine=Engine.vllm()
    )
    parts = stack.resolve(endpoint.openai_base_url)["Fn::Join"][1]
    url = "".join("amazonaws.com" if p == {"Ref": "AWS::URLSuffix"} else p for p in parts)
    assert url == "https://runtime.sagemaker.us-east-1.amazonaws.com/endpoints/chat-qwen/openai/v1"
    # WHEN an unchanged OpenAI client uses it (on the stand-in's origin)
    with native_route(KNOWN) as route:
        local = url.replace("https://runtime.sagemaker.us-east-1.amazonaws.com", route.origin)
        client = openai.OpenAI(
            base_url=local,
            api_key=sagemaker_bearer_token(region="us-east-1", credentials=CREDENTIALS),
            max_retries=0,
            timeout=SOCKET_TIMEOUT,
        )
        reply = client.chat.completions.create(model="", messages=MESSAGES)
    # THEN the request arrives on the route's path with a token the route accepts
    assert reply.choices[0].message.content == "Paris is the capital."
    assert [e.status for e in route.exchanges] == [200]
