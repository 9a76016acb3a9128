"""runtime/auth.py: the secret's formats, the Bearer check, the key cache and its TTL,
against a real Secrets Manager API served locally (moto's server) through boto3."""

from __future__ import annotations

import hashlib
import hmac
from unittest import mock

import pytest

from constructs_llm.streaming.runtime.http.auth import (
    ApiKeyAuth,
    SecretFormatError,
    new_secrets_client,
    parse_api_keys,
)
from tests.streaming.conftest import Clock
from tests.support.secrets_manager import LocalSecretsManager

KEY = "sk-test-4f1c9b2e"
OTHER = "sk-other-77aa01"


@pytest.mark.parametrize(
    ("secret_string", "keys"),
    [
        (KEY, (KEY,)),
        (f"  {KEY}\n", (KEY,)),
        (f'{{"api_keys": ["{KEY}", "{OTHER}"]}}', (KEY, OTHER)),
        (f'{{"api_keys": "{KEY}"}}', (KEY,)),
        (f'{{"api_keys": [" {KEY} "], "note": "rotated 2026-11"}}', (KEY,)),
    ],
)
def test_the_secret_holds_one_key_or_a_json_list(secret_string: str, keys: tuple[str, ...]) -> None:
    assert parse_api_keys(secret_string) == keys


@pytest.mark.parametrize(
    "secret_string",
    [
        "",
        "   ",
        "two words",
        '{"api_keys": []}',
        '{"keys": ["a"]}',
        "{not json",
        '{"api_keys": [""]}',
        '{"api_keys": [1]}',
        '["a"]',
    ],
)
def test_a_secret_without_usable_keys_is_refused_without_quoting_it(secret_string: str) -> None:
    with pytest.raises(SecretFormatError) as raised:
        parse_api_keys(secret_string)
    assert secret_string.strip() == "" or secret_string not in str(raised.value)


def test_bearer_keys_are_checked_against_the_secret(secrets: LocalSecretsManager) -> None:
    arn = secrets.create("auth/one-key", KEY)
    auth = ApiKeyAuth(arn, ttl=60, client=secrets.client)
    assert auth.check(f"Bearer {KEY}") is None
    assert auth.check(f"bearer   {KEY} ") is None  # the scheme is case-insensitive
    for header, reason in [
        (None, "missing_key"),
        ("", "missing_key"),
        (KEY, "missing_key"),  # no scheme
        (f"Basic {KEY}", "missing_key"),
        ("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/lambda/aws4_request", "missing_key"),
        (f"Bearer {KEY}x", "wrong_key"),
        (f"Bearer {KEY[:-1]}", "wrong_key"),
        (f"Bearer {OTHER}", "wrong_key"),
    ]:
        denial = auth.check(header)
        assert denial is not None, header
        assert (denial.status, denial.code, denial.reason) == (401, "invalid_api_key", reason)
        assert KEY not in denial.message


def test_every_key_of_the_list_is_accepted(secrets: LocalSecretsManager) -> None:
    name = "auth/two-keys"
    secrets.create(name, [KEY, OTHER])
    auth = ApiKeyAuth(name, ttl=60, client=secrets.client)
    assert auth.check(f"Bearer {KEY}") is None
    assert auth.check(f"Bearer {OTHER}") is None


def test_keys_are_read_once_per_ttl_and_a_rotation_lands_after_it(
    secrets: LocalSecretsManager,
) -> None:
    name = "auth/rotating"
    secrets.create(name, KEY)
    clock = Clock()
    client = mock.Mock(wraps=secrets.client)
    auth = ApiKeyAuth(name, ttl=30, client=client, clock=clock)
    for _ in range(5):
        assert auth.check(f"Bearer {KEY}") is None
    assert client.get_secret_value.call_count == 1

    secrets.put(name, [KEY, OTHER])  # the rotation adds a key
    clock.now += 29
    assert auth.check(f"Bearer {OTHER}") is not None  # still the cached keys
    clock.now += 2
    assert auth.check(f"Bearer {OTHER}") is None
    assert client.get_secret_value.call_count == 2

    secrets.put(name, OTHER)  # and retires the old one
    clock.now += 31
    denial = auth.check(f"Bearer {KEY}")
    assert denial is not None and denial.reason == "wrong_key"


def test_an_unreadable_secret_fails_closed_and_is_retried(secrets: LocalSecretsManager) -> None:
    clock = Clock()
    client = mock.Mock(wraps=secrets.client)
    auth = ApiKeyAuth("auth/not-created-yet", ttl=60, client=client, clock=clock)
    denial = auth.check(f"Bearer {KEY}")
    assert denial is not None
    assert (denial.status, denial.code) == (503, "api_keys_unavailable")
    assert denial.reason == "keys_unavailable:ResourceNotFoundException"
    auth.check(f"Bearer {KEY}")
    assert client.get_secret_value.call_count == 1  # not hammered within the retry pause

    secrets.create("auth/not-created-yet", KEY)
    clock.now += 1.5
    assert auth.check(f"Bearer {KEY}") is None
    assert auth.last_error is None


def test_a_malformed_secret_fails_closed_without_leaking_it(secrets: LocalSecretsManager) -> None:
    secrets.create("auth/malformed", '{"api_keys": "two words"}')
    auth = ApiKeyAuth("auth/malformed", ttl=60, client=secrets.client)
    denial = auth.check("Bearer two")
    assert denial is not None and denial.reason == "keys_unavailable:SecretFormatError"
    assert "two words" not in repr(auth.__dict__)


def test_comparison_runs_over_every_key_with_compare_digest(secrets: LocalSecretsManager) -> None:
    keys = [f"sk-{i}" for i in range(4)]
    secrets.create("auth/many", keys)
    auth = ApiKeyAuth("auth/many", ttl=60, client=secrets.client)
    with mock.patch(
        "constructs_llm.streaming.runtime.http.auth.hmac.compare_digest", wraps=hmac.compare_digest
    ) as compare:
        assert auth.check("Bearer sk-0") is None  # the first key matches...
    assert compare.call_count == 4  # ...and the other three are still compared
    # only digests are kept, never the keys themselves
    assert auth.current_digests() == tuple(hashlib.sha256(k.encode()).digest() for k in keys)
    assert not any(k in repr(vars(auth)) for k in keys)


def test_the_default_client_follows_the_standard_endpoint_variable(
    secrets: LocalSecretsManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.streaming.conftest import FAKE_AWS_ENV

    for name, value in FAKE_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", secrets.url)
    secrets.create("auth/by-env", KEY)
    assert new_secrets_client().meta.endpoint_url == secrets.url
    assert ApiKeyAuth("auth/by-env", ttl=60).check(f"Bearer {KEY}") is None
