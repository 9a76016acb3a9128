"""The origin secret: behind CloudFront, the function URL answers CloudFront alone.

Stdlib + boto3 only: this file ships in the Lambda asset.

With API keys the function URL's auth type is ``NONE``, so without this check anyone could call
it directly and bypass the distribution (its WAF rules, its rate limit). ``add_distribution``
generates a secret in Secrets Manager, and the distribution adds it to every origin request as
the custom header ``x-origin-verify`` (CloudFront "overwrites the header value" when a viewer
sends a header of that name: CloudFront Developer Guide, add-origin-custom-headers). The runtime
reads the secret when it starts (``ORIGIN_SECRET_ID``) and refuses a request whose header is
missing or wrong with a 403 before anything else; only ``/health``, the Lambda Web Adapter's
readiness check over loopback, is exempt.

The versions labelled ``AWSCURRENT`` and ``AWSPREVIOUS`` are both accepted, so a value put into
the secret by hand leaves the one CloudFront still sends working (see docs/security.md,
"Origin secret", for rotation). A request with a wrong value reads the secret again, at most
once every ``RETRY_SECONDS``, so a rotated value is picked up without a restart and a flood of
wrong values costs one read a minute. A secret that cannot be read fails closed: 503 to every
request but ``/health``, and another read at most once a second.

Only SHA-256 digests are kept and compared with ``hmac.compare_digest``, over every accepted
value, so the time taken depends neither on the value nor on which one matched. Nothing here
logs, returns or raises the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Callable
from typing import Any

from .auth import Denial, error_code, new_secrets_client

#: The header CloudFront adds to each origin request (``StreamingInvoker.add_distribution``).
HEADER = "x-origin-verify"
#: Version stages accepted: the current value and the one before it.
_STAGES = ("AWSCURRENT", "AWSPREVIOUS")
#: After a wrong value, the secret is read again at most this often (seconds).
RETRY_SECONDS = 60.0
#: After a failed read, requests get 503 and the secret is read again at most this often.
_FAILED_RETRY_SECONDS = 1.0

_NOT_CLOUDFRONT = Denial(
    403,
    "This function URL answers only its CloudFront distribution: call the distribution's URL.",
    "origin_not_allowed",
    "origin_header_missing",
    "permission_error",
)
_WRONG_HEADER = Denial(
    _NOT_CLOUDFRONT.status,
    _NOT_CLOUDFRONT.message,
    _NOT_CLOUDFRONT.code,
    "origin_header_wrong",
    _NOT_CLOUDFRONT.error_type,
)


class OriginSecret:
    """Checks the ``x-origin-verify`` header against one secret's current and previous values.

    :param secret_id: the secret's name or ARN.
    :param client: a boto3 ``secretsmanager`` client. @default one built on first use
    :param clock: monotonic seconds. @default ``time.monotonic``
    """

    def __init__(
        self,
        secret_id: str,
        *,
        client: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.secret_id = secret_id
        self._client = client
        self._clock = clock
        self._lock = threading.Lock()
        self._digests: tuple[bytes, ...] = ()
        self._next_read = float("-inf")
        self.last_error: str | None = None  # an error code or class name, never the value
        self.reads = 0

    def load(self) -> None:
        """Read the secret now (at start); a failure is retried by the next request."""
        with self._lock:
            self._read(self._clock())

    def check(self, header: str | None) -> Denial | None:
        """None when ``header`` holds the secret's current or previous value; else why not."""
        if not header:
            return _NOT_CLOUDFRONT
        candidate = hashlib.sha256(header.strip().encode()).digest()
        if self._matches(candidate):
            return None
        with self._lock:  # a wrong value may mean a rotated secret: read again, rate-limited
            now = self._clock()
            if now >= self._next_read:
                self._read(now)
        if not self._digests:
            return Denial(
                503,
                "The server could not read its origin secret; try again shortly.",
                "origin_secret_unavailable",
                f"origin_secret_unavailable:{self.last_error}",
                "server_error",
            )
        return None if self._matches(candidate) else _WRONG_HEADER

    def _matches(self, candidate: bytes) -> bool:
        matched = False
        for digest in self._digests:  # no early exit: every accepted value is compared
            matched |= hmac.compare_digest(candidate, digest)
        return matched

    def _read(self, now: float) -> None:
        """Both stages' values; on failure keep what was read before (if anything)."""
        self.reads += 1
        try:
            values = self._values()
        except Exception as exc:
            self.last_error = error_code(exc)
            self._next_read = now + (_FAILED_RETRY_SECONDS if not self._digests else RETRY_SECONDS)
            return
        self.last_error = None
        self._digests = tuple(hashlib.sha256(v.encode()).digest() for v in values)
        self._next_read = now + RETRY_SECONDS

    def _values(self) -> list[str]:
        if self._client is None:
            self._client = new_secrets_client()
        values = []
        for stage in _STAGES:
            try:
                response = self._client.get_secret_value(
                    SecretId=self.secret_id, VersionStage=stage
                )
            except Exception as exc:
                if stage != _STAGES[0] and error_code(exc) == "ResourceNotFoundException":
                    continue  # no previous version yet
                raise
            value = response.get("SecretString")
            if isinstance(value, str) and value.strip():
                values.append(value.strip())
        if not values:
            raise ValueError("the origin secret has no SecretString")
        return values
