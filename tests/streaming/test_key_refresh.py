"""A failed refresh of the API keys: the last good keys are served for a bounded window past
their TTL (``API_KEYS_STALE_SECONDS``), each failure is a metric, and then the check fails
closed; against the Secrets Manager stand-in, whose secret is deleted and restored to make
the reads fail and succeed."""

from __future__ import annotations

import uuid
from typing import Any

import openai
import pytest

from constructs_llm.streaming.runtime.http.auth import ApiKeyAuth
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Clock, Runtime, StartRuntime
from tests.support import emf, engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.secrets_manager import LocalSecretsManager

KEY = "sk-refresh-5d2a"
OTHER = "sk-refresh-9c71"


def test_a_blip_serves_the_last_good_keys_until_the_window_ends_then_fails_closed(
    secrets: LocalSecretsManager,
) -> None:
    # GIVEN keys read once, a 30 s TTL and a 60 s stale window
    name = f"refresh/{uuid.uuid4().hex}"
    secrets.create(name, KEY)
    clock, reports = Clock(), []
    auth = ApiKeyAuth(
        name,
        ttl=30,
        stale_for=60,
        report=lambda error, outcome: reports.append((error, outcome)),
        client=secrets.client,
        clock=clock,
    )
    assert auth.check(f"Bearer {KEY}") is None
    # WHEN Secrets Manager refuses the reads
    secrets.delete(name)
    clock.now += 31
    # THEN the last good keys still pass, and the failure is reported
    assert auth.check(f"Bearer {KEY}") is None
    assert reports == [("InvalidRequestException", "stale")]
    clock.now += 58  # still within TTL + window
    assert auth.check(f"Bearer {KEY}") is None
    assert auth.check(f"Bearer {OTHER}") is not None  # a wrong key is still wrong
    # AND past the window every request gets 503
    clock.now += 2
    denial = auth.check(f"Bearer {KEY}")
    assert denial is not None and (denial.status, denial.code) == (503, "api_keys_unavailable")
    assert reports[-1] == ("InvalidRequestException", "closed")
    # AND once reads succeed again, keys are served again
    secrets.restore(name)
    clock.now += 1.5
    assert auth.check(f"Bearer {KEY}") is None


def test_the_price_of_the_window_a_revoked_key_works_while_reads_fail(
    secrets: LocalSecretsManager,
) -> None:
    name = f"refresh/{uuid.uuid4().hex}"
    secrets.create(name, [KEY, OTHER])
    clock = Clock()
    auth = ApiKeyAuth(name, ttl=30, stale_for=60, client=secrets.client, clock=clock)
    assert auth.check(f"Bearer {KEY}") is None
    # WHEN KEY is revoked, but Secrets Manager fails before the next read
    secrets.put(name, OTHER)
    secrets.delete(name)
    clock.now += 31
    # THEN KEY works until a read succeeds or the window ends
    assert auth.check(f"Bearer {KEY}") is None
    secrets.restore(name)
    clock.now += 2
    assert auth.check(f"Bearer {KEY}") is not None  # read again: revoked


def test_no_window_fails_closed_at_the_first_failed_refresh(secrets: LocalSecretsManager) -> None:
    name = f"refresh/{uuid.uuid4().hex}"
    secrets.create(name, KEY)
    clock = Clock()
    auth = ApiKeyAuth(name, ttl=30, stale_for=0, client=secrets.client, clock=clock)
    assert auth.check(f"Bearer {KEY}") is None
    secrets.delete(name)
    clock.now += 31
    denial = auth.check(f"Bearer {KEY}")
    assert denial is not None and denial.status == 503


def test_keys_never_read_fail_closed_whatever_the_window(secrets: LocalSecretsManager) -> None:
    auth = ApiKeyAuth("refresh/never-created", ttl=30, stale_for=3600, client=secrets.client)
    denial = auth.check(f"Bearer {KEY}")
    assert denial is not None and denial.status == 503


def test_the_runtime_keeps_serving_through_a_blip_and_writes_the_metric(
    start_runtime: StartRuntime,
    fake: FakeSageMaker,
    secrets: LocalSecretsManager,
    keys_clock: Clock,
) -> None:
    # GIVEN a runtime whose keys live 30 s, kept 60 s past that while reads fail, on a clock
    # the test moves
    arn = secrets.create(f"refresh/{uuid.uuid4().hex}", KEY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", secrets.url)
        runtime = start_runtime(api_keys_secret_id=arn, api_keys_ttl=30, api_keys_stale_seconds=60)
        fake.enqueue(*[Scenario(parts=engine_streams.openai(["ok"]))] * 2)
        client = openai.OpenAI(
            base_url=runtime.url + "/v1", api_key=KEY, timeout=SOCKET_TIMEOUT, max_retries=0
        )
        chat: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}
        assert client.chat.completions.create(**chat).choices[0].message.content == "ok"
        # WHEN Secrets Manager fails past the TTL
        secrets.delete(arn)
        keys_clock.now += 31
        # THEN the caller is still served, and the failure is a metric of its own
        assert client.chat.completions.create(**chat).choices[0].message.content == "ok"
        stale = refresh_failures(runtime)
        assert stale and stale[0]["Outcome"] == "stale"
        # AND past the window the runtime fails closed, saying so
        keys_clock.now += 60
        with pytest.raises(openai.InternalServerError) as closed:
            client.chat.completions.create(**chat)
        assert closed.value.status_code == 503
        assert refresh_failures(runtime)[-1]["Outcome"] == "closed"
        secrets.restore(arn)


def refresh_failures(runtime: Runtime) -> list[dict[str, Any]]:
    found = [line for line in runtime.logs if line.get("msg") == "api_key_refresh_failed"]
    for record in found:
        emf.check(record)
        assert emf.emf_metrics(record) == {("Outcome",): {"ApiKeyRefreshFailures": 1}}
        assert record["error"] == "InvalidRequestException"
    return found
