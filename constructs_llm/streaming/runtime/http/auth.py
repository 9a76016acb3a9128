"""API-key auth for the runtime: Bearer keys kept in one Secrets Manager secret.

Stdlib + boto3 only: this file ships in the Lambda asset.

The secret's ``SecretString`` is either one key, or JSON ``{"api_keys": ["key-a", "key-b"]}``
(several keys let a rotation overlap: add the new key, move clients, drop the old one). The
runtime reads it with boto3's ``GetSecretValue`` (so ``AWS_ENDPOINT_URL_SECRETS_MANAGER``
redirects it, as boto3 documents for every service) and keeps the keys for ``ttl`` seconds:
a key added or removed takes effect within that time, without a redeploy.

Clients send ``Authorization: Bearer <key>`` (RFC 6750), which is what the ``openai`` SDK,
LangChain and LiteLLM send for ``api_key=``. A missing or wrong key gets 401 with OpenAI's
``invalid_api_key`` error before anything else happens.

A refresh that fails (Secrets Manager unreachable or throttling, the secret deleted or
malformed) keeps the last key set that was read for at most ``stale_for`` seconds past its
``ttl`` (``API_KEYS_STALE_SECONDS``, 300 by default), retrying about once a second, so a blip
of Secrets Manager does not turn every caller away; each failed attempt is reported
(``report``: the ``ApiKeyRefreshFailures`` metric, ``runtime/metrics.py``). Past that window,
or when no key set was ever read, the check fails closed: 503 to every request. The price of
the window: a key revoked in the secret keeps working until a refresh succeeds, at most
``ttl`` + ``stale_for`` seconds after its revocation while Secrets Manager fails; 0 fails
closed at the first failed refresh.

Only SHA-256 digests of the keys are kept, and the comparison runs over every digest with
``hmac.compare_digest``, so its time depends neither on the key nor on which key matched.
Nothing here logs, returns or raises a key or the secret's content.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..aws_clients import new_client

# RFC 6750 section 2.1, with the scheme case-insensitive and any non-space key accepted
# (generated keys may hold punctuation outside the RFC's b64token characters).
_BEARER = re.compile(r"bearer[ \t]+(\S+)[ \t]*", re.IGNORECASE)
# After a failed read, wait this long before asking Secrets Manager again (requests get 503).
_RETRY_SECONDS = 1.0
_CONNECT_TIMEOUT = 2.0
_READ_TIMEOUT = 5.0


class SecretFormatError(ValueError):
    """The secret holds no usable key (the message never quotes the secret)."""


@dataclass(frozen=True)
class Denial:
    """Why a request is refused: an HTTP status, an OpenAI-shaped error, and what to log."""

    status: int
    message: str
    code: str
    reason: str  # logged: missing_key | wrong_key | keys_unavailable:<error code>
    error_type: str = "invalid_request_error"


_MISSING_KEY = Denial(
    401,
    "You didn't provide an API key. Send it in an Authorization header using Bearer auth "
    "(Authorization: Bearer YOUR_KEY), as OpenAI clients do with api_key=...",
    "invalid_api_key",
    "missing_key",
)
_WRONG_KEY = Denial(401, "Incorrect API key provided.", "invalid_api_key", "wrong_key")


def parse_api_keys(secret_string: str) -> tuple[str, ...]:
    """The keys in a ``SecretString``: one key, or JSON ``{"api_keys": [...]}``."""
    text = secret_string.strip()
    if text.startswith("["):
        raise SecretFormatError('a list of keys goes in JSON {"api_keys": [...]}')
    if not text.startswith("{"):
        if not text or _has_space(text):
            raise SecretFormatError("the secret must hold one key (no spaces) or JSON api_keys")
        return (text,)
    try:
        data = json.loads(text)
    except ValueError:
        raise SecretFormatError("the secret starts with '{' but is not valid JSON") from None
    keys = data.get("api_keys") if isinstance(data, dict) else None
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(keys, list) or not keys:
        raise SecretFormatError('the secret\'s JSON needs "api_keys": a non-empty list of keys')
    if not all(isinstance(k, str) and k.strip() and not _has_space(k.strip()) for k in keys):
        raise SecretFormatError('every entry of "api_keys" must be a non-empty key, no spaces')
    return tuple(k.strip() for k in keys)


#: Receives each failed refresh: the error's code, and whether the last good keys are still
#: served (``stale``) or none are (``closed``).
RefreshReport = Callable[[str, str], object]


class ApiKeyAuth:
    """Checks ``Authorization`` headers against the keys in one secret, cached for ``ttl`` s.

    :param secret_id: the secret's name or ARN.
    :param ttl: seconds before the keys are read again.
    :param stale_for: seconds past ``ttl`` the last good keys are served while refreshes fail.
        @default 0 (fail closed at once)
    :param report: called with each failed refresh's error code and outcome. @default none
    :param client: a boto3 ``secretsmanager`` client. @default one built on first use
    :param clock: monotonic seconds. @default ``time.monotonic``
    """

    def __init__(
        self,
        secret_id: str,
        *,
        ttl: float,
        stale_for: float = 0.0,
        report: RefreshReport | None = None,
        client: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.secret_id = secret_id
        self.ttl = ttl
        self.stale_for = stale_for
        self._report = report
        self._client = client
        self._clock = clock
        self._lock = threading.Lock()
        self._digests: tuple[bytes, ...] = ()
        self._expires = float("-inf")
        self._stale_until = float("-inf")
        self._retry_after = float("-inf")
        self.last_error: str | None = None  # an error code or class name, never a key

    def check(self, authorization: str | None) -> Denial | None:
        """None when the ``Authorization`` header holds a current key; else why it is refused."""
        given = _bearer_token(authorization)
        if given is None:
            return _MISSING_KEY
        digests = self.current_digests()
        if not digests:
            return Denial(
                503,
                "The server could not read its API keys; try again shortly.",
                "api_keys_unavailable",
                f"keys_unavailable:{self.last_error}",
                "server_error",
            )
        candidate = hashlib.sha256(given.encode()).digest()
        matched = False
        for digest in digests:  # no early exit: every key is compared
            matched |= hmac.compare_digest(candidate, digest)
        return None if matched else _WRONG_KEY

    def current_digests(self) -> tuple[bytes, ...]:
        """The keys' digests, read again once ``ttl`` has passed; while refreshes fail, the
        last good ones until ``stale_for`` has passed too; then () (fail closed)."""
        if self._clock() < self._expires:
            return self._digests
        with self._lock:  # one reader at a time; the others wait for its answer
            now = self._clock()
            if now < self._expires:
                return self._digests
            if now < self._retry_after:
                return self._stale(now)
            try:
                keys = parse_api_keys(self._read())
            except Exception as exc:
                self.last_error = error_code(exc)
                self._retry_after = now + _RETRY_SECONDS
                stale = self._stale(now)
                if self._report is not None:
                    self._report(self.last_error, "stale" if stale else "closed")
                return stale
            self.last_error = None
            self._digests = tuple(hashlib.sha256(k.encode()).digest() for k in keys)
            self._expires = now + self.ttl
            self._stale_until = self._expires + self.stale_for
            return self._digests

    def _stale(self, now: float) -> tuple[bytes, ...]:
        """The last good keys while their stale window lasts, else none (fail closed)."""
        if now < self._stale_until:
            return self._digests
        self._digests = ()
        return ()

    def _read(self) -> str:
        if self._client is None:
            self._client = new_secrets_client()
        response = self._client.get_secret_value(SecretId=self.secret_id)
        value = response.get("SecretString")
        if not isinstance(value, str):
            raise SecretFormatError("the secret has no SecretString (binary secrets are not read)")
        return value


def new_secrets_client() -> Any:
    """A secretsmanager client with short timeouts: a slow read delays requests."""
    return new_client(
        "secretsmanager",
        connect_timeout=_CONNECT_TIMEOUT,
        read_timeout=_READ_TIMEOUT,
        max_attempts=2,
    )


def _bearer_token(header: str | None) -> str | None:
    if not header:
        return None
    match = _BEARER.fullmatch(header)
    return match.group(1) if match else None


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)


def error_code(exc: Exception) -> str:
    """A botocore error code, or the exception's class name: safe to log."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        if code:
            return str(code)
    return type(exc).__name__
