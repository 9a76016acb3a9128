"""Bearer tokens for SageMaker's OpenAI route: the documented shape (decoded and checked part by
part), a SigV4 signature that verifies, the 12-hour limit, and no token in any log."""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import logging
import os
import re
from datetime import timedelta
from typing import Any
from unittest import mock
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from constructs_llm.streaming import (
    bearer_token_hook,
    bearer_token_provider,
    sagemaker_bearer_token,
)
from constructs_llm.streaming.bearer_token import (
    DEFAULT_TOKEN_LIFETIME,
    MAX_TOKEN_LIFETIME,
    TOKEN_PREFIX,
)
from tests.support.native_openai import TokenRejected, verify_token

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session/tok=")
KNOWN = {CREDENTIALS.access_key: CREDENTIALS}
SIGNED_AT = datetime.datetime(2026, 11, 25, 9, 30, 0)


def _mint(**kwargs: Any) -> str:
    kwargs.setdefault("region", "eu-west-1")
    kwargs.setdefault("credentials", CREDENTIALS)
    return sagemaker_bearer_token(**kwargs)


def _decoded(token: str) -> str:
    assert token.startswith(TOKEN_PREFIX)
    return base64.b64decode(token.removeprefix(TOKEN_PREFIX), validate=True).decode()


def _hand_signature(query: list[tuple[str, str]], secret: str, region: str) -> str:
    """SigV4 by the spec's own steps (no botocore): canonical request, string to sign, key."""
    params = [(k, v) for k, v in query if k != "X-Amz-Signature"]
    canonical_query = "&".join(
        f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(params)
    )
    empty_body = hashlib.sha256(b"").hexdigest()
    canonical = "\n".join(
        ["POST", "/", canonical_query, "host:sagemaker.amazonaws.com", "", "host", empty_body]
    )
    stamp = dict(query)["X-Amz-Date"]
    scope = f"{stamp[:8]}/{region}/sagemaker/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = ("AWS4" + secret).encode()
    for part in (stamp[:8], region, "sagemaker", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


# -- the shape --------------------------------------------------------------------------------


def test_token_is_the_prefix_then_base64_of_a_presigned_call_with_bearer_token_url() -> None:
    with mock.patch("botocore.auth.get_current_datetime", return_value=SIGNED_AT):
        token = _mint(expires=timedelta(hours=2))
    presigned = _decoded(token)
    # GIVEN the documented form: host and path, the action, SigV4 query parameters, version
    assert presigned.startswith("sagemaker.amazonaws.com/?Action=CallWithBearerToken&")
    assert presigned.endswith("&Version=1")
    url = urlsplit("https://" + presigned.removesuffix("&Version=1"))
    query = parse_qsl(url.query, keep_blank_values=True)
    assert [k for k, _ in query] == [
        "Action",
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Date",
        "X-Amz-Expires",
        "X-Amz-SignedHeaders",
        "X-Amz-Security-Token",
        "X-Amz-Signature",
    ]
    params = dict(query)
    assert params["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256"
    assert params["X-Amz-Credential"] == "AKIDEXAMPLE/20261125/eu-west-1/sagemaker/aws4_request"
    assert params["X-Amz-Date"] == "20261125T093000Z"
    assert params["X-Amz-Expires"] == "7200"
    assert params["X-Amz-SignedHeaders"] == "host"
    assert params["X-Amz-Security-Token"] == "session/tok="
    assert re.fullmatch(r"[0-9a-f]{64}", params["X-Amz-Signature"])
    # THEN the signature is SigV4's, computed here without botocore
    assert params["X-Amz-Signature"] == _hand_signature(query, CREDENTIALS.secret_key, "eu-west-1")


def test_the_default_lifetime_is_fifteen_minutes_and_the_service_check_accepts_it() -> None:
    token = _mint()
    params = dict(parse_qsl(urlsplit("https://" + _decoded(token)).query))
    assert params["X-Amz-Expires"] == "900" == str(int(DEFAULT_TOKEN_LIFETIME.total_seconds()))
    claims = verify_token(token, KNOWN, region="eu-west-1")
    assert (claims.access_key, claims.region, claims.expires_in) == (
        "AKIDEXAMPLE",
        "eu-west-1",
        900,
    )


def test_twelve_hours_is_still_accepted_when_asked_for() -> None:
    token = _mint(expires=MAX_TOKEN_LIFETIME)
    assert verify_token(token, KNOWN, region="eu-west-1").expires_in == 43200


def test_long_term_keys_carry_no_security_token() -> None:
    keys = Credentials("AKIDLONGTERM", "secret")
    params = dict(parse_qsl(urlsplit("https://" + _decoded(_mint(credentials=keys))).query))
    assert "X-Amz-Security-Token" not in params
    verify_token(_mint(credentials=keys), {"AKIDLONGTERM": keys}, region="eu-west-1")


def test_refreshable_credentials_are_signed_from_one_snapshot() -> None:
    class Rotating:
        def get_frozen_credentials(self) -> Any:
            return CREDENTIALS.get_frozen_credentials()

    verify_token(_mint(credentials=Rotating()), KNOWN, region="eu-west-1")


# -- the provider: one token until a third of its life is left ------------------------------


class Clock:
    """The time botocore signs at, moved by the test."""

    def __init__(self, start: datetime.datetime) -> None:
        self.now = start

    def __call__(self) -> datetime.datetime:
        return self.now


def _expires_in(token: str) -> int:
    return int(dict(parse_qsl(urlsplit("https://" + _decoded(token)).query))["X-Amz-Expires"])


def test_the_provider_renews_its_token_when_a_third_of_its_life_is_left() -> None:
    clock = Clock(SIGNED_AT)
    provider = bearer_token_provider(region="eu-west-1", credentials=CREDENTIALS)
    with mock.patch("botocore.auth.get_current_datetime", side_effect=clock):
        first = provider()
        clock.now = SIGNED_AT + timedelta(minutes=9, seconds=59)
        assert provider() == first  # 5 minutes and more left: kept
        clock.now = SIGNED_AT + timedelta(minutes=10)
        second = provider()
    assert second != first and _expires_in(second) == 900
    # each was valid when handed out, and the second outlives the first
    verify_token(first, KNOWN, region="eu-west-1", now=SIGNED_AT + timedelta(minutes=9))
    later = SIGNED_AT + timedelta(minutes=20)
    verify_token(second, KNOWN, region="eu-west-1", now=later)
    with pytest.raises(TokenRejected, match="expired"):
        verify_token(first, KNOWN, region="eu-west-1", now=later)


def test_the_provider_renews_its_token_when_the_credentials_change() -> None:
    keys = [CREDENTIALS, Credentials("AKIDROTATED", "new-secret", "new-session")]

    class Rotating:
        def get_frozen_credentials(self) -> Any:
            return keys[0].get_frozen_credentials()

    provider = bearer_token_provider(region="eu-west-1", credentials=Rotating())
    first = provider()
    assert provider() == first
    keys.pop(0)  # botocore refreshed the role's credentials
    second = provider()
    claims = verify_token(second, {"AKIDROTATED": keys[0]}, region="eu-west-1")
    assert claims.access_key == "AKIDROTATED"


def test_the_provider_checks_its_arguments_when_made() -> None:
    with pytest.raises(ValueError, match="12 hours"):
        bearer_token_provider(region="eu-west-1", expires=timedelta(days=1))
    with pytest.raises(ValueError, match="got 'Europe'"):
        bearer_token_provider(region="Europe")


# -- what the service check refuses (so the checks above can fail) ----------------------------


def test_a_token_signed_with_another_secret_is_refused() -> None:
    forged = _mint(credentials=Credentials("AKIDEXAMPLE", "not-the-secret", "session/tok="))
    with pytest.raises(TokenRejected, match="signature does not match"):
        verify_token(forged, KNOWN, region="eu-west-1")


def test_a_token_for_another_region_is_refused() -> None:
    with pytest.raises(TokenRejected, match="region us-east-1"):
        verify_token(_mint(region="us-east-1"), KNOWN, region="eu-west-1")


def test_an_expired_token_is_refused() -> None:
    with mock.patch("botocore.auth.get_current_datetime", return_value=SIGNED_AT):
        token = _mint(expires=60)
    later = SIGNED_AT + timedelta(seconds=61)
    verify_token(token, KNOWN, region="eu-west-1", now=SIGNED_AT + timedelta(seconds=59))
    with pytest.raises(TokenRejected, match="expired"):
        verify_token(token, KNOWN, region="eu-west-1", now=later)


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expires",
    [0, -5, 43201, timedelta(hours=13), timedelta(seconds=0.5), timedelta(0), 1.5, True, "1h"],
    ids=repr,
)
def test_an_expiry_outside_one_second_to_twelve_hours_is_refused(expires: Any) -> None:
    with pytest.raises(ValueError, match=r"expires must be .*got"):
        _mint(expires=expires)


@pytest.mark.parametrize("expires", [1, 43200, timedelta(hours=12), timedelta(minutes=5)], ids=repr)
def test_expiries_up_to_twelve_hours_are_accepted(expires: Any) -> None:
    verify_token(_mint(expires=expires), KNOWN, region="eu-west-1")


def test_a_malformed_region_is_named() -> None:
    with pytest.raises(ValueError, match=r"'https://runtime.sagemaker.us-east-1'"):
        _mint(region="https://runtime.sagemaker.us-east-1")


def test_no_region_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    with pytest.raises(ValueError, match="pass region="):
        sagemaker_bearer_token(credentials=CREDENTIALS)


def test_the_region_comes_from_aws_region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "ap-northeast-2")
    token = sagemaker_bearer_token(credentials=CREDENTIALS)
    verify_token(token, KNOWN, region="ap-northeast-2")


def test_no_credentials_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import botocore.session

    monkeypatch.setattr(botocore.session.Session, "get_credentials", lambda self: None)
    with pytest.raises(ValueError, match="no AWS credentials"):
        sagemaker_bearer_token(region="us-east-1")


# -- never logged -----------------------------------------------------------------------------


def _secrets_of(token: str) -> list[str]:
    params = dict(parse_qsl(urlsplit("https://" + _decoded(token)).query))
    return [token, token.removeprefix(TOKEN_PREFIX), params["X-Amz-Signature"]]


def test_minting_logs_neither_the_token_nor_its_signature(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    token = _mint()
    logged = "\n".join(r.getMessage() for r in caplog.records) + caplog.text
    for secret in _secrets_of(token):
        assert secret not in logged


def test_botocore_does_log_the_signature_when_unguarded(caplog: pytest.LogCaptureFixture) -> None:
    # The control: botocore's signer prints the signature at DEBUG, so the guard above matters;
    # and the guard is lifted after minting (botocore logs as usual elsewhere).
    caplog.set_level(logging.DEBUG)
    _mint()
    request = AWSRequest(method="POST", url="https://sagemaker.amazonaws.com/", params={"A": "b"})
    SigV4QueryAuth(CREDENTIALS, "sagemaker", "eu-west-1").add_auth(request)
    signature = request.url.rsplit("X-Amz-Signature=", 1)[1]
    assert signature in caplog.text


def test_the_hook_logs_nothing_either(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)

    class Request:
        url = "https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/e/openai/v1/x"
        headers: dict[str, str] = {}

    request = Request()
    bearer_token_hook(credentials=CREDENTIALS)(request)
    token = request.headers["Authorization"].removeprefix("Bearer ")
    for secret in _secrets_of(token):
        assert secret not in caplog.text
    # (the check signs again with botocore, which logs: it comes after the assertion)
    verify_token(token, KNOWN, region="eu-west-1")  # the region came from the host


def test_the_hook_checks_its_expiry_when_made() -> None:
    with pytest.raises(ValueError, match="12 hours"):
        bearer_token_hook(expires=timedelta(days=1))
