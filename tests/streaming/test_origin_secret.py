"""The origin secret: behind CloudFront, an API-key invoker's function URL answers CloudFront
alone. The runtime is started as the Lambda starts it (``run.sh``, a process of its own) with
``ORIGIN_SECRET_ID`` and ``API_KEYS_SECRET_ID`` read from a real Secrets Manager API on loopback
(moto's server, through boto3); requests are sent as CloudFront sends them (with
``x-origin-verify``) and as a caller bypassing it would (without). The secret's cache and its
re-read are tested on ``OriginSecret`` itself, with a clock the test moves."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import uuid
from collections.abc import Iterator
from unittest import mock

import openai
import pytest

from constructs_llm.streaming.runtime.http.origin_secret import (
    HEADER,
    RETRY_SECONDS,
    OriginSecret,
)
from tests.streaming.conftest import SOCKET_TIMEOUT, Clock
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.runtime_process import exchange, serving
from tests.support.secrets_manager import LocalSecretsManager

pytestmark = pytest.mark.slow

KEY = "sk-live-origin-5b0d8c1e6a2f4e7d"
PREVIOUS = "Zq8xY2vW9uT7sR6qPreviousValueOfTheOriginSecret0123456789abcdefgh"
CURRENT = "Hk3mN8pQ2rS5tU7vCurrentValueOfTheOriginSecret0123456789abcdefghi"
ORIGIN = "https://app.example.com"


@pytest.fixture(scope="module")
def behind_cloudfront(
    tmp_path_factory: pytest.TempPathFactory,
    aws_env: dict[str, str],
    secrets: LocalSecretsManager,
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The runtime with API keys, CORS and an origin secret that has been put twice (its
    current and previous values), as the invoker behind a distribution runs it."""
    keys = secrets.create(f"keys/{uuid.uuid4().hex}", KEY)
    origin = secrets.create(f"origin/{uuid.uuid4().hex}", PREVIOUS)
    secrets.client.put_secret_value(SecretId=origin, SecretString=CURRENT)
    settings = {
        "ENDPOINT_NAME": "chat",
        "STREAM_FORMAT": "tgi",
        "API_KEYS_SECRET_ID": keys,
        "ORIGIN_SECRET_ID": origin,
        "CORS_ALLOWED_ORIGINS": ORIGIN,
        "AWS_ENDPOINT_URL_SECRETS_MANAGER": secrets.url,
    }
    with serving(tmp_path_factory.mktemp("origin"), aws_env, **settings) as running:
        yield running


def _request(
    url: str, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    return exchange(url, method, path, headers, body, timeout=SOCKET_TIMEOUT)


def _chat(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"model": "chat", "messages": [{"role": "user", "content": "hi"}]})
    headers = {"Content-Type": "application/json", **headers}
    return _request(url, "POST", "/v1/chat/completions", headers, body.encode())


@pytest.mark.parametrize(
    "sent",
    [None, "", "wrong-value", CURRENT[:-1], CURRENT + "x", f"Bearer {CURRENT}"],
    ids=["missing", "empty", "wrong", "short", "long", "bearer"],
)
def test_a_request_without_the_right_header_gets_403_before_anything_else(
    behind_cloudfront: tuple[subprocess.Popen[str], str], fake: FakeSageMaker, sent: str | None
) -> None:
    # GIVEN a caller that bypasses CloudFront: a valid key, but not the origin header
    _, url = behind_cloudfront
    headers = {"Authorization": f"Bearer {KEY}"}
    if sent is not None:
        headers[HEADER] = sent
    # WHEN it calls the function URL directly
    status, answer_headers, body = _chat(url, headers)
    # THEN it gets 403 with OpenAI's error shape, and SageMaker is never called
    assert status == 403
    error = json.loads(body)["error"]
    assert (error["code"], error["type"]) == ("origin_not_allowed", "permission_error")
    assert "distribution" in error["message"]
    assert CURRENT not in body.decode() and PREVIOUS not in body.decode()
    assert fake.requests == []
    # AND no CORS header: a page cannot read it either
    assert "access-control-allow-origin" not in answer_headers


def test_the_origin_check_comes_before_the_key_check(
    behind_cloudfront: tuple[subprocess.Popen[str], str], fake: FakeSageMaker
) -> None:
    _, url = behind_cloudfront
    # a wrong key with no origin header: 403 (the origin check), not 401
    assert _chat(url, {"Authorization": "Bearer sk-wrong"})[0] == 403
    # the origin header and no key: 401 (the key check runs next)
    status, _, body = _chat(url, {HEADER: CURRENT})
    assert status == 401
    assert json.loads(body)["error"]["code"] == "invalid_api_key"
    assert fake.requests == []


def test_cloudfront_s_requests_stream_with_the_current_or_previous_value(
    behind_cloudfront: tuple[subprocess.Popen[str], str], fake: FakeSageMaker
) -> None:
    # GIVEN the header as CloudFront adds it, with either value the secret holds
    _, url = behind_cloudfront
    for value in (CURRENT, PREVIOUS):
        fake.reset()
        fake.enqueue(Scenario(parts=engine_streams.tgi(["o", "k"])))
        client = openai.OpenAI(
            base_url=f"{url}/v1",
            api_key=KEY,
            default_headers={HEADER: value},
            max_retries=0,
            timeout=SOCKET_TIMEOUT,
        )
        # WHEN the unchanged openai SDK streams through it
        stream = client.chat.completions.create(
            model="chat", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        # THEN the answer streams
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "ok"
        assert len(fake.requests) == 1


def test_the_adapter_s_readiness_check_needs_no_header(
    behind_cloudfront: tuple[subprocess.Popen[str], str],
) -> None:
    _, url = behind_cloudfront
    status, _, body = _request(url, "GET", "/health", {})
    assert (status, json.loads(body)) == (200, {"status": "ok"})


def test_a_preflight_through_cloudfront_needs_no_key_but_one_straight_to_the_url_is_refused(
    behind_cloudfront: tuple[subprocess.Popen[str], str],
) -> None:
    _, url = behind_cloudfront
    preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
    status, headers, _ = _request(url, "OPTIONS", "/v1/chat/completions", preflight)
    assert status == 403
    assert "access-control-allow-origin" not in headers
    status, headers, _ = _request(
        url, "OPTIONS", "/v1/chat/completions", {**preflight, HEADER: CURRENT}
    )
    assert status == 204
    assert headers["access-control-allow-origin"] == ORIGIN


# -- OriginSecret itself: its reads, its cache, its comparison ----------------------------------


def test_a_rotated_value_is_read_again_at_most_once_a_minute(secrets: LocalSecretsManager) -> None:
    arn = secrets.create(f"origin/{uuid.uuid4().hex}", PREVIOUS)
    clock = Clock()
    client = mock.Mock(wraps=secrets.client)
    origin = OriginSecret(arn, client=client, clock=clock)
    origin.load()
    assert origin.check(PREVIOUS) is None
    reads = client.get_secret_value.call_count  # AWSCURRENT, and AWSPREVIOUS (none yet)
    assert reads == 2

    # WHEN a new value is put and CloudFront starts sending it
    secrets.put(arn, CURRENT)
    denial = origin.check(CURRENT)  # within a minute of the last read: not read again
    assert denial is not None and denial.reason == "origin_header_wrong"
    assert client.get_secret_value.call_count == reads
    clock.now += RETRY_SECONDS
    assert origin.check(CURRENT) is None  # read again: the new value and the old one
    assert origin.check(PREVIOUS) is None
    assert client.get_secret_value.call_count == reads + 2
    # AND a flood of wrong values reads nothing more within the minute
    for _ in range(20):
        assert origin.check("wrong") is not None
    assert client.get_secret_value.call_count == reads + 2
    # AND a missing header never reads the secret
    clock.now += RETRY_SECONDS
    assert origin.check(None) is not None
    assert client.get_secret_value.call_count == reads + 2


def test_an_unreadable_secret_fails_closed_with_503(secrets: LocalSecretsManager) -> None:
    name = f"origin/{uuid.uuid4().hex}"
    clock = Clock()
    origin = OriginSecret(name, client=secrets.client, clock=clock)
    origin.load()
    denial = origin.check(CURRENT)
    assert denial is not None
    assert (denial.status, denial.code) == (503, "origin_secret_unavailable")
    assert denial.reason == "origin_secret_unavailable:ResourceNotFoundException"
    # created later: read again within a second
    secrets.create(name, CURRENT)
    clock.now += 1.5
    assert origin.check(CURRENT) is None


def test_every_accepted_value_is_compared_with_compare_digest(
    secrets: LocalSecretsManager,
) -> None:
    arn = secrets.create(f"origin/{uuid.uuid4().hex}", PREVIOUS)
    secrets.put(arn, CURRENT)
    origin = OriginSecret(arn, client=secrets.client, clock=Clock())
    origin.load()
    with mock.patch(
        "constructs_llm.streaming.runtime.http.origin_secret.hmac.compare_digest",
        wraps=hmac.compare_digest,
    ) as compare:
        assert origin.check(CURRENT) is None  # the first value matches...
    assert compare.call_count == 2  # ...and the second is still compared
    # only digests are kept, never the values
    assert not any(v in repr(vars(origin)) for v in (CURRENT, PREVIOUS))
    assert hashlib.sha256(CURRENT.encode()).digest() in vars(origin)["_digests"]
