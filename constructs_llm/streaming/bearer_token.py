"""Bearer tokens for SageMaker's own OpenAI route, minted from the caller's AWS credentials
(botocore only: the client distribution)::

    from openai import OpenAI
    from constructs_llm.streaming import bearer_token_provider

    client = OpenAI(base_url=openai_base_url, api_key=bearer_token_provider(region="us-east-1"))
    client.chat.completions.create(model="", messages=[...], stream=True)

The ``openai`` SDK (and LangChain's ``ChatOpenAI``) call an ``api_key`` callable before every
request; the provider hands out its token until a third of the token's life is left, then mints
the next one, so a client that lives for days never sends an expired token.
``bearer_token_hook()`` does the same as an httpx event hook, and ``sagemaker_bearer_token()``
mints one token for a short script.

Tokens live 15 minutes unless told otherwise. AWS's guide advises the shortest expiry that
works ("Invoke endpoints with OpenAI-compatible APIs", https://docs.aws.amazon.com/sagemaker/
latest/dg/realtime-endpoints-openai-compatible.html; up to 12 hours is accepted): a quarter of an
hour outlasts the start of any request and the clock skew SigV4 tolerates (5 minutes), and a
token that leaks (a proxy log, a shell history) is useless soon after; the provider and the
hook make the short life invisible to long-running clients.

The token is the one AWS's SageMaker Python SDK makes (``sagemaker.core.token_generator``,
aws/sagemaker-python-sdk ``sagemaker-core/src/sagemaker/core/token_generator/``, added in
#5868, May 2026), without that SDK: a ``POST https://sagemaker.amazonaws.com/?Action=
CallWithBearerToken`` request presigned with SigV4 query parameters for the ``sagemaker``
service in the region (botocore's ``SigV4QueryAuth``), its URL without the scheme plus
``&Version=1``, base64-encoded behind the prefix ``sagemaker-api-key-``. It is made locally, with
no call to AWS, and never outlives the credentials it was signed with: a token from temporary
credentials ends when they do (the provider mints a new one when botocore refreshes them).

The token carries a signature of your credentials: whoever holds it can call as you until it
expires. Nothing here logs it, and botocore's signer, which logs the canonical request and the
signature at DEBUG level (boto/botocore: ``botocore/auth.py``, ``SigV4Auth.add_auth``), is kept
quiet while it signs a token (in that thread only).
"""

from __future__ import annotations

import base64
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from constructs_llm.errors import ClientConfigurationError

#: What every token starts with (the SDK's ``AUTH_PREFIX``).
TOKEN_PREFIX = "sagemaker-api-key-"
#: The longest a token may live (the SDK's ``TOKEN_DURATION``, the guide's "up to 12 hours").
MAX_TOKEN_LIFETIME = timedelta(hours=12)
#: How long a token lives unless told otherwise (see the module's docstring for why).
DEFAULT_TOKEN_LIFETIME = timedelta(minutes=15)

_HOST = "sagemaker.amazonaws.com"
_SERVICE = "sagemaker"
_ACTION = "CallWithBearerToken"
_VERSION = "&Version=1"
_REGION = re.compile(r"^[a-z]{2,4}(-[a-z]+)+-\d+$")
_RUNTIME_HOST = re.compile(r"^runtime\.sagemaker\.([a-z0-9-]+)\.")
_signing = threading.local()


def sagemaker_bearer_token(
    *,
    region: str | None = None,
    credentials: Any = None,
    expires: timedelta | int = DEFAULT_TOKEN_LIFETIME,
) -> str:
    """One bearer token for SageMaker's OpenAI route (``api_key=`` of a short-lived OpenAI
    client; a client that may outlive it takes :func:`bearer_token_provider` instead).

    :param region: the endpoint's region. @default ``AWS_REGION``, else botocore's configured
        region (``AWS_DEFAULT_REGION``, else the profile's ``region``)
    :param credentials: botocore ``Credentials`` (or refreshable ones) to sign with. @default
        botocore's credential chain, as the AWS CLI finds them
    :param expires: how long the token is accepted, 1 second to 12 hours (a ``timedelta`` or
        whole seconds). @default 15 minutes
    :raises ClientConfigurationError: an expiry out of range, a malformed region, no region or no
        credentials; the message names the value and the fix.
    """
    seconds = _seconds(expires)
    region_name = _region(region)
    frozen = _frozen(credentials)
    from botocore.auth import SigV4QueryAuth  # type: ignore[import-untyped]
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]

    request = AWSRequest(
        method="POST",
        url=f"https://{_HOST}/",
        headers={"host": _HOST},
        params={"Action": _ACTION},
    )
    with _quiet_signer():
        SigV4QueryAuth(frozen, _SERVICE, region_name, expires=seconds).add_auth(request)
    presigned = str(request.url).removeprefix("https://") + _VERSION
    return TOKEN_PREFIX + base64.b64encode(presigned.encode()).decode()


def bearer_token_provider(
    *,
    region: str | None = None,
    credentials: Any = None,
    expires: timedelta | int = DEFAULT_TOKEN_LIFETIME,
) -> Callable[[], str]:
    """A callable that returns a valid bearer token each time it is called: ``api_key=`` of
    the ``openai`` SDK's ``OpenAI`` or LangChain's ``ChatOpenAI``, which call it before every
    request. It returns the same token until a third of the token's life is left (or the
    credentials have changed, as botocore refreshes temporary ones), then mints the next.

    :param region: as :func:`sagemaker_bearer_token` (read once, now)
    :param credentials: botocore ``Credentials`` or refreshable ones. @default botocore's
        credential chain, resolved on first use; credentials that expire (roles, SSO) are
        refreshed by botocore
    :param expires: each token's lifetime. @default 15 minutes
    """
    return _TokenSource(_region(region), credentials, _seconds(expires))


def bearer_token_hook(
    *,
    region: str | None = None,
    credentials: Any = None,
    expires: timedelta | int = DEFAULT_TOKEN_LIFETIME,
) -> Callable[[Any], None]:
    """A request event hook for httpx-style clients (the ``openai`` SDK's ``http_client``)
    that puts a valid token in each request's ``Authorization`` header, renewed as
    :func:`bearer_token_provider` renews it (as AWS's sample does with an ``httpx.Auth``).

    :param region: @default the region in a ``runtime.sagemaker.<region>.`` request host, else
        as :func:`sagemaker_bearer_token`
    :param credentials: as :func:`bearer_token_provider`
    :param expires: each token's lifetime. @default 15 minutes
    """
    seconds = _seconds(expires)  # fail now, not on the first request
    fixed = None if region is None else _region(region)
    sources: dict[str, _TokenSource] = {}
    lock = threading.Lock()

    def authorize(request: Any) -> None:
        host = urlsplit(str(request.url)).hostname or ""
        match = _RUNTIME_HOST.match(host)
        where = fixed or (match.group(1) if match else None) or _region(None)
        with lock:
            source = sources.get(where)
            if source is None:
                source = sources[where] = _TokenSource(_region(where), credentials, seconds)
        request.headers["Authorization"] = f"Bearer {source()}"

    return authorize


class _TokenSource:
    """Mints a token and hands it out until a third of its life is left, or until the
    credentials it was signed with change; thread-safe."""

    def __init__(self, region: str, credentials: Any, seconds: int) -> None:
        self._region = region
        self._credentials = credentials
        self._seconds = seconds
        self._lock = threading.Lock()
        self._token = ""
        self._signer: tuple[str, str | None] | None = None
        self._renew_at: datetime | None = None

    def __call__(self) -> str:
        from botocore.auth import get_current_datetime  # type: ignore[import-untyped]

        with self._lock:
            if self._credentials is None:
                self._credentials = _chain_credentials()
            frozen = _frozen(self._credentials)
            signer = (frozen.access_key, getattr(frozen, "token", None))
            now = get_current_datetime()
            if signer != self._signer or self._renew_at is None or now >= self._renew_at:
                self._token = sagemaker_bearer_token(
                    region=self._region, credentials=frozen, expires=self._seconds
                )
                self._signer = signer
                self._renew_at = now + timedelta(seconds=self._seconds * 2 / 3)
            return self._token


def _seconds(expires: timedelta | int) -> int:
    limit = int(MAX_TOKEN_LIFETIME.total_seconds())
    if isinstance(expires, timedelta):
        seconds = expires.total_seconds()
    elif isinstance(expires, int) and not isinstance(expires, bool):
        seconds = float(expires)
    else:
        raise ClientConfigurationError(
            f"expires must be a timedelta or whole seconds, got {expires!r}; pass e.g. "
            "timedelta(hours=1)"
        )
    if not 1 <= seconds <= limit or seconds != int(seconds):
        raise ClientConfigurationError(
            f"expires must be whole seconds from 1 second to 12 hours ({limit} s), SageMaker's "
            f"limit for bearer tokens, got {expires!r}"
        )
    return int(seconds)


def _region(region: str | None) -> str:
    if region is None:
        region = os.environ.get("AWS_REGION") or _configured_region()
    if not region:
        raise ClientConfigurationError(
            "no AWS region for the bearer token: pass region=... (the endpoint's region), or "
            "set AWS_DEFAULT_REGION (or AWS_REGION), e.g. export AWS_DEFAULT_REGION=us-east-1"
        )
    if not isinstance(region, str) or not _REGION.match(region):
        raise ClientConfigurationError(
            f"region must be an AWS region name such as 'us-east-1', got {region!r}"
        )
    return region


def _configured_region() -> str | None:
    import botocore.session  # type: ignore[import-untyped]

    region = botocore.session.get_session().get_config_variable("region")
    return str(region) if region else None


def _frozen(credentials: Any) -> Any:
    """One consistent snapshot of the keys (refreshable credentials may rotate mid-sign)."""
    if credentials is None:
        credentials = _chain_credentials()
    freeze = getattr(credentials, "get_frozen_credentials", None)
    return freeze() if callable(freeze) else credentials


def _chain_credentials() -> Any:
    """botocore's credential chain, as the AWS CLI resolves it."""
    import botocore.session

    credentials = botocore.session.get_session().get_credentials()
    if credentials is None:
        raise ClientConfigurationError(
            "no AWS credentials found to sign the bearer token; configure them as for the AWS "
            "CLI, or pass credentials=botocore.credentials.Credentials(...)"
        )
    return credentials


class _WhileSigning(logging.Filter):
    """Drops botocore's signer records in a thread that is signing a token: they hold the
    signature and the canonical request, from which the token can be rebuilt."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_signing, "active", False)


_FILTER = _WhileSigning()


@contextmanager
def _quiet_signer() -> Iterator[None]:
    signer_log = logging.getLogger("botocore.auth")
    if _FILTER not in signer_log.filters:
        signer_log.addFilter(_FILTER)
    _signing.active = True
    try:
        yield
    finally:
        _signing.active = False
