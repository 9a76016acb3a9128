"""A small streaming client for the ``StreamingInvoker`` function URL. Stdlib + botocore only.

``stream_chat(url, messages)`` POSTs an OpenAI chat request with ``stream: true`` to
``<url>/v1/chat/completions`` and yields the generated text as it arrives::

    for piece in stream_chat("https://abc.lambda-url.us-east-1.on.aws/", messages):
        print(piece, end="", flush=True)

The request is SigV4-signed for the ``lambda`` service (function URLs use ``AWS_IAM`` auth)
with credentials from botocore's usual chain, and always carries the body's SHA-256 in
``x-amz-content-sha256``: Lambda accepts no unsigned payloads, and a CloudFront origin access
control in front of the URL needs that header from the client to sign a POST. Pass
``sign=False`` when CloudFront (OAC) does the signing, or ``api_key=`` for an invoker with
``InvokerAuth.api_keys`` (sent as ``Authorization: Bearer``, nothing signed).

For the ``openai`` SDK (or any httpx-style client): ``sigv4_hook()`` signs for a function URL
with ``AWS_IAM`` auth; ``content_sha256_hook()`` only adds the body hash, for a CloudFront
distribution with origin access control in front of it. With API keys no hook is needed.
They need botocore (for SigV4 only) and nothing of the CDK: the ``constructs-llm-client``
distribution (``client/`` in the repository) installs them with boto3 alone.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from constructs_llm.errors import ClientConfigurationError

CHAT_PATH = "/v1/chat/completions"
_FUNCTION_URL_HOST = re.compile(r"\.lambda-url\.([a-z0-9-]+)\.on\.aws$")


class ChatStreamError(Exception):
    """The server refused the request or the stream ended with an error event."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message if status is None else f"HTTP {status}: {message}")
        self.message = message
        self.status = status
        self.code = code


def stream_chat(
    url: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    region: str | None = None,
    credentials: Any = None,
    sign: bool = True,
    api_key: str | None = None,
    timeout: float = 300.0,
    **params: Any,
) -> Iterator[str]:
    """Yield the text of a streamed chat completion, piece by piece.

    ``url`` is the function URL (or a CloudFront URL in front of it); ``/v1/chat/completions``
    is appended unless already there. ``params`` are further request fields
    (``max_tokens``, ``temperature``, ...). ``region`` defaults to the one in a function URL's
    host name, then to botocore's configured region; ``credentials`` (botocore
    ``Credentials``) default to botocore's credential chain. ``api_key`` sends
    ``Authorization: Bearer <api_key>`` instead of a signature (``sign`` is then ignored).
    ``timeout`` bounds each socket operation, including the wait for the next token. Raises
    ``ChatStreamError``.
    """
    target = _chat_url(url)
    body = json.dumps({**params, "messages": list(messages), "stream": True}).encode()
    signing = sign and api_key is None
    headers = signed_headers(target, body, region=region, credentials=credentials, sign=signing)
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    parts = urlsplit(target)
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parts.netloc, timeout=timeout)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        if response.status != 200:
            raise _http_error(response.status, response.read())
        yield from _text_pieces(response)
    finally:
        connection.close()


def signed_headers(
    url: str,
    body: bytes,
    *,
    region: str | None = None,
    credentials: Any = None,
    sign: bool = True,
) -> dict[str, str]:
    """The headers for POSTing ``body`` to ``url``: JSON, SSE, the body hash and, when
    ``sign``, the SigV4 ``Authorization`` (plus ``X-Amz-Date``/``X-Amz-Security-Token``)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "x-amz-content-sha256": hashlib.sha256(body).hexdigest(),
    }
    if not sign:
        return headers
    return _sigv4(url, "POST", body, headers, region, credentials)


def sigv4_hook(*, region: str | None = None, credentials: Any = None) -> Callable[[Any], None]:
    """A request event hook for httpx-style clients (the ``openai`` SDK's ``http_client``)
    that SigV4-signs each request for a function URL with ``AWS_IAM`` auth::

        client = openai.OpenAI(
            base_url=invoker_url + "v1",
            api_key="unused",
            http_client=openai.DefaultHttpx2Client(event_hooks={"request": [sigv4_hook()]}),
        )

    It signs the host, date, content type and body hash, and leaves the client's other
    headers unsigned (SigV4 checks only the headers it lists).
    """

    def sign(request: Any) -> None:
        body = bytes(request.read())
        url = str(request.url)
        headers = {"x-amz-content-sha256": hashlib.sha256(body).hexdigest()}
        if request.headers.get("content-type"):
            headers["Content-Type"] = request.headers["content-type"]
        signed = _sigv4(url, request.method, body, headers, region, credentials)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in signed:
                request.headers[name] = signed[name]
        request.headers["x-amz-content-sha256"] = headers["x-amz-content-sha256"]

    return sign


def content_sha256_hook() -> Callable[[Any], None]:
    """A request event hook for httpx-style clients that adds ``x-amz-content-sha256`` (the
    hex SHA-256 of the body), as CloudFront origin access control requires of every POST to
    a Lambda function URL; CloudFront then signs the request itself::

        client = openai.OpenAI(
            base_url=distribution_url + "v1",
            api_key="unused",
            http_client=openai.DefaultHttpx2Client(
                event_hooks={"request": [content_sha256_hook()]}
            ),
        )

    Stdlib only: no AWS credentials are involved.
    """

    def add_hash(request: Any) -> None:
        request.headers["x-amz-content-sha256"] = hashlib.sha256(bytes(request.read())).hexdigest()

    return add_hash


def _sigv4(
    url: str,
    method: str,
    body: bytes,
    headers: dict[str, str],
    region: str | None,
    credentials: Any,
) -> dict[str, str]:
    from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]

    creds, region_name = _credentials_and_region(url, region, credentials)
    request = AWSRequest(method=method, url=url, data=body, headers=headers)
    SigV4Auth(creds, "lambda", region_name).add_auth(request)
    return dict(request.headers.items())


def _chat_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ClientConfigurationError(f"url must be an http(s) URL, got {url!r}")
    path = parts.path.rstrip("/")
    if not path.endswith(CHAT_PATH):
        path += CHAT_PATH
    return parts._replace(path=path).geturl()


def _credentials_and_region(url: str, region: str | None, credentials: Any) -> tuple[Any, str]:
    import botocore.session  # type: ignore[import-untyped]

    session = botocore.session.get_session()
    if region is None:
        match = _FUNCTION_URL_HOST.search(urlsplit(url).hostname or "")
        region = match.group(1) if match else session.get_config_variable("region")
    if not region:
        raise ClientConfigurationError(
            "no AWS region to sign for: the URL is not a function URL's and botocore found no "
            "region; pass region=..., or set AWS_DEFAULT_REGION (e.g. export "
            "AWS_DEFAULT_REGION=us-east-1; botocore does not read AWS_REGION), or a region in "
            "the AWS CLI profile"
        )
    if credentials is None:
        credentials = session.get_credentials()
        if credentials is None:
            raise ClientConfigurationError(
                "no AWS credentials found to sign the request; configure them as for the AWS "
                "CLI, pass credentials=..., or sign=False when CloudFront signs"
            )
    return credentials, region


def _text_pieces(response: http.client.HTTPResponse) -> Iterator[str]:
    """Parse the SSE body: yield each chunk's delta text until ``data: [DONE]``."""
    while True:
        raw = response.readline()
        if not raw:
            raise ChatStreamError("the stream ended before data: [DONE]", code="incomplete")
        line = raw.strip()
        if not line.startswith(b"data:"):
            continue  # blank separators, comments, other SSE fields
        data = line[5:].strip()
        if data == b"[DONE]":
            return
        event = json.loads(data)
        error = event.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else str(error)
            code = error.get("code") if isinstance(error, dict) else None
            raise ChatStreamError(str(message), code=code)
        for choice in event.get("choices") or ():
            text = (choice.get("delta") or {}).get("content")
            if text:
                yield text


def _http_error(status: int, body: bytes) -> ChatStreamError:
    try:
        error = json.loads(body)["error"]
        return ChatStreamError(str(error["message"]), status=status, code=error.get("code"))
    except (ValueError, KeyError, TypeError):
        return ChatStreamError(body[:500].decode(errors="replace"), status=status)
