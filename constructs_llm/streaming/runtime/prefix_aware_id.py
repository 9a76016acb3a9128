"""OpenAI's ``prompt_cache_key`` as SageMaker's prefix-aware routing id. Stdlib only: this file
ships in the Lambda asset.

A client sets ``prompt_cache_key`` (chat and Responses) to tell requests that share a long
prefix apart from others that happen to start the same way; OpenAI uses it to route them to
the same cache. SageMaker's prefix-aware routing (``RoutingStrategy: PREFIX_AWARE``) does the
same with ``PrefixAwareId``: "An optional, stable identifier that serves as a routing hint for
prefix-aware routing. The service routes requests with the same prefix and the same
identifier to the same instance" (botocore 1.44.5, ``sagemaker-runtime`` 2017-05-13 service
model: the ``PrefixAwareId`` member of ``InvokeEndpoint`` and
``InvokeEndpointWithResponseStream``, sent as the ``X-Amzn-SageMaker-Prefix-Aware-Id``
header). The routing reads the first ``PrefixLength`` bytes of the request body
(``PrefixAwareRoutingConfig``, SageMaker API reference), which is why the engine body is
written with the conversation first (``chat/request.py``).

The id must be 1 to 64 characters matching ``\\A\\S[\\p{Print}]*\\z`` (printable ASCII, not
starting with a space). A key that fits is sent as it is; any other non-empty key (longer,
non-ASCII, control characters) is sent as the SHA-256 of its UTF-8 bytes in hex (64
characters), which is stable, so requests with one key still share their id: a key is never
refused, as OpenAI refuses none. An empty key asks for nothing and sends no id.
"""

from __future__ import annotations

import hashlib
import re

MAX_ID_LENGTH = 64
"""The longest ``PrefixAwareId`` SageMaker takes (its ``max``)."""
_PRINTABLE = re.compile(r"[\x21-\x7e][\x20-\x7e]*")


def prefix_aware_id(key: str | None) -> str | None:
    """The ``PrefixAwareId`` for a request's ``prompt_cache_key`` (None: send none)."""
    if not key:
        return None
    if len(key) <= MAX_ID_LENGTH and _PRINTABLE.fullmatch(key):
        return key
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
