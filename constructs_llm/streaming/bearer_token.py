"""Bearer tokens for SageMaker's own OpenAI route, minted from the caller's AWS credentials
(botocore only: the ``[client]`` extra)::

    from openai import OpenAI
    from constructs_llm.streaming import sagemaker_bearer_token

    client = OpenAI(base_url=openai_base_url, api_key=sagemaker_bearer_token(region="us-east-1"))
    client.chat.completions.create(model="", messages=[...], stream=True)

or, minting a fresh token for every request of a long-running client::

    client = OpenAI(
        base_url=openai_base_url,
        api_key="unused",  # replaced on every request
        http_client=openai.DefaultHttpx2Client(event_hooks={"request": [bearer_token_hook()]}),
    )

The token is the one AWS's SageMaker Python SDK makes (``sagemaker.core.token_generator``,
aws/sagemaker-python-sdk ``sagemaker-core/src/sagemaker/core/token_generator/``, added in
#5868, May 2026), without that SDK: a ``POST https://sagemaker.amazonaws.com/?Action=
CallWithBearerToken`` request presigned with SigV4 query parameters for the ``sagemaker``
service in the region (botocore's ``SigV4QueryAuth``), its URL without the scheme plus
``&Version=1``, base64-encoded behind the prefix ``sagemaker-api-key-``. It is made locally, with
no call to AWS, and SageMaker accepts it for up to 12 hours ("Invoke endpoints with
OpenAI-compatible APIs", https://docs.aws.amazon.com/sagemaker/latest/dg/
realtime-endpoints-openai-compatible.html), and never beyond the credentials it was signed
with: a token from temporary credentials ends when they do.

The token carries a signature of your credentials: whoever holds it can call as you until it
expires. Nothing here logs it, and botocore's signer, which logs the canonical request and the
signature at DEBUG level (``botocore/auth.py``, ``SigV4Auth.add_auth``), is kept quiet while
it signs a token (in that thread only).
"""

from __future__ import annotations

import base64
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from constructs_llm.errors import ClientConfigurationError

__all__ = [
    "MAX_TOKEN_LIFETIME",
    "TOKEN_PREFIX",
    "bearer_token_hook",
    "sagemaker_bearer_token",
]

#: What every token starts with (the SDK's ``AUTH_PREFIX``).
TOKEN_PREFIX = "sagemaker-api-key-"
#: The longest a token may live (the SDK's ``TOKEN_DURATION``, the guide's "up to 12 hours").
MAX_TOKEN_LIFETIME = timedelta(hours=12)

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
    expires: timedelta | int = MAX_TOKEN_LIFETIME,
) -> str:
    """A bearer token for SageMaker's OpenAI route (``api_key=`` of an OpenAI client).

    :param region: the endpoint's region. @default ``AWS_REGION``, else botocore's configured
        region (``AWS_DEFAULT_REGION``, the profile)
    :param credentials: botocore ``Credentials`` (or refreshable ones) to sign with. @default
        botocore's credential chain, as the AWS CLI finds them
    :param expires: how long the token is accepted, 1 second to 12 hours (a ``timedelta`` or
        whole seconds). @default 12 hours
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


def bearer_token_hook(
    *,
    region: str | None = None,
    credentials: Any = None,
    expires: timedelta | int = timedelta(minutes=15),
) -> Callable[[Any], None]:
    """A request event hook for httpx-style clients (the ``openai`` SDK's ``http_client``)
    that puts a freshly minted token in each request's ``Authorization`` header, so a client
    that lives longer than a token keeps working (as AWS's sample does with an
    ``httpx.Auth``). Minting is local and takes microseconds.

    :param region: @default the region in a ``runtime.sagemaker.<region>.`` request host, else
        as :func:`sagemaker_bearer_token`
    :param credentials: @default botocore's credential chain, read on every request (so
        rotated credentials are picked up)
    :param expires: each token's lifetime; it only has to outlast the request's start.
        @default 15 minutes
    """
    _seconds(expires)  # fail now, not on the first request
    if region is not None:
        _region(region)

    def authorize(request: Any) -> None:
        host = urlsplit(str(request.url)).hostname or ""
        match = _RUNTIME_HOST.match(host)
        where = region or (match.group(1) if match else None)
        token = sagemaker_bearer_token(region=where, credentials=credentials, expires=expires)
        request.headers["Authorization"] = f"Bearer {token}"

    return authorize


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
            "set AWS_REGION / AWS_DEFAULT_REGION"
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
        import botocore.session

        credentials = botocore.session.get_session().get_credentials()
    if credentials is None:
        raise ClientConfigurationError(
            "no AWS credentials found to sign the bearer token; configure them as for the AWS "
            "CLI, or pass credentials=botocore.credentials.Credentials(...)"
        )
    freeze = getattr(credentials, "get_frozen_credentials", None)
    return freeze() if callable(freeze) else credentials


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
