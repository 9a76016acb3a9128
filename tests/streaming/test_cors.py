"""CORS, opt-in: the runtime, started as the Lambda starts it (``run.sh``, a process of its own),
answers a browser's preflight before any key check and puts its CORS headers on every answer to
an allowed origin, streamed ones included; an origin not allowed gets none; and a runtime
without ``CORS_ALLOWED_ORIGINS`` answers exactly as before. API keys come from a real Secrets
Manager API on loopback (moto's server)."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from constructs_llm.contract import DEFAULT_CORS_HEADERS
from tests.streaming.conftest import SOCKET_TIMEOUT
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.runtime_process import exchange, serving
from tests.support.secrets_manager import LocalSecretsManager

pytestmark = pytest.mark.slow

KEY = "sk-live-cors-0a9b8c7d6e5f"
APP = "https://app.example.com"
LOCAL = "http://localhost:5173"
OTHER = "https://evil.example.net"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type",
}

Running = tuple[subprocess.Popen[str], str]


def _runtime(
    factory: pytest.TempPathFactory,
    aws_env: dict[str, str],
    secrets: LocalSecretsManager,
    **settings: str,
) -> Iterator[Running]:
    keys = secrets.create(f"keys/{uuid.uuid4().hex}", KEY)
    env = {
        "ENDPOINT_NAME": "chat",
        "STREAM_FORMAT": "tgi",
        "API_KEYS_SECRET_ID": keys,
        "AWS_ENDPOINT_URL_SECRETS_MANAGER": secrets.url,
        **settings,
    }
    with serving(factory.mktemp("cors"), aws_env, **env) as running:
        yield running


@pytest.fixture(scope="module")
def with_cors(
    tmp_path_factory: pytest.TempPathFactory,
    aws_env: dict[str, str],
    secrets: LocalSecretsManager,
) -> Iterator[Running]:
    """Two origins allowed, the invoker's default headers, a 10-minute preflight."""
    yield from _runtime(
        tmp_path_factory,
        aws_env,
        secrets,
        CORS_ALLOWED_ORIGINS=f"{APP},{LOCAL}",
        CORS_ALLOWED_HEADERS=",".join(DEFAULT_CORS_HEADERS),
        CORS_MAX_AGE_SECONDS="600",
    )


@pytest.fixture(scope="module")
def without_cors(
    tmp_path_factory: pytest.TempPathFactory,
    aws_env: dict[str, str],
    secrets: LocalSecretsManager,
) -> Iterator[Running]:
    yield from _runtime(tmp_path_factory, aws_env, secrets)


def _request(
    url: str, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    return exchange(url, method, path, headers, body, timeout=SOCKET_TIMEOUT)


def _chat(url: str, headers: dict[str, str], *, stream: bool) -> tuple[int, dict[str, str], bytes]:
    body = {"model": "chat", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    return _request(
        url,
        "POST",
        "/v1/chat/completions",
        {"Content-Type": "application/json", **headers},
        json.dumps(body).encode(),
    )


def _cors_headers(headers: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in headers.items() if k.startswith("access-control-")}


@pytest.mark.parametrize("origin", [APP, LOCAL])
def test_a_preflight_without_credentials_succeeds(
    with_cors: Running, fake: FakeSageMaker, origin: str
) -> None:
    # GIVEN a browser's preflight: no Authorization header, as browsers send it
    _, url = with_cors
    # WHEN it reaches the runtime
    status, headers, body = _request(
        url, "OPTIONS", "/v1/chat/completions", {"Origin": origin, **PREFLIGHT}
    )
    # THEN it is answered before the key check, with what the browser needs
    assert (status, body) == (204, b"")
    assert _cors_headers(headers) == {
        "access-control-allow-origin": origin,
        "access-control-allow-methods": "GET, HEAD, POST",
        "access-control-allow-headers": "authorization, content-type, x-amz-content-sha256",
        "access-control-max-age": "600",
        "access-control-expose-headers": "x-request-id",
    }
    assert headers["vary"] == "Origin"
    assert fake.requests == []


def test_a_disallowed_origin_gets_no_cors_headers(with_cors: Running, fake: FakeSageMaker) -> None:
    _, url = with_cors
    # its preflight is refused without a CORS header (the browser reports a CORS error)
    status, headers, body = _request(
        url, "OPTIONS", "/v1/chat/completions", {"Origin": OTHER, **PREFLIGHT}
    )
    assert status == 403
    assert json.loads(body)["error"]["code"] == "cors"
    assert _cors_headers(headers) == {}
    # and a request it sends anyway (curl can) is answered without CORS headers
    fake.enqueue(Scenario(parts=engine_streams.tgi(["o", "k"])))
    status, headers, _ = _chat(
        url, {"Origin": OTHER, "Authorization": f"Bearer {KEY}"}, stream=True
    )
    assert status == 200
    assert _cors_headers(headers) == {}
    assert headers["vary"] == "Origin"


def test_a_streamed_answer_carries_the_cors_headers(
    with_cors: Running, fake: FakeSageMaker
) -> None:
    _, url = with_cors
    fake.enqueue(Scenario(parts=engine_streams.tgi(["Hi", " there"])))
    status, headers, body = _chat(
        url, {"Origin": APP, "Authorization": f"Bearer {KEY}"}, stream=True
    )
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["access-control-allow-origin"] == APP
    assert headers["access-control-expose-headers"] == "x-request-id"
    assert body.decode().rstrip().endswith("data: [DONE]")


def test_json_and_error_answers_carry_the_cors_headers(
    with_cors: Running, fake: FakeSageMaker
) -> None:
    _, url = with_cors
    fake.enqueue(Scenario(parts=engine_streams.tgi(["o", "k"])))
    status, headers, _ = _chat(url, {"Origin": APP, "Authorization": f"Bearer {KEY}"}, stream=False)
    assert status == 200
    assert headers["access-control-allow-origin"] == APP
    # a wrong key: the page can read the 401 (and its request id)
    status, headers, body = _chat(url, {"Origin": APP, "Authorization": "Bearer no"}, stream=True)
    assert status == 401
    assert json.loads(body)["error"]["code"] == "invalid_api_key"
    assert headers["access-control-allow-origin"] == APP
    assert headers["x-request-id"]


def test_without_cors_nothing_changes(without_cors: Running, fake: FakeSageMaker) -> None:
    _, url = without_cors
    # a preflight is a request like any other: no key, 401, and no CORS header
    status, headers, _ = _request(
        url, "OPTIONS", "/v1/chat/completions", {"Origin": APP, **PREFLIGHT}
    )
    assert status == 401
    assert _cors_headers(headers) == {}
    assert "vary" not in headers
    # with a key, OPTIONS is a 405 naming the methods the path takes
    status, headers, _ = _request(
        url,
        "OPTIONS",
        "/v1/chat/completions",
        {"Origin": APP, "Authorization": f"Bearer {KEY}", **PREFLIGHT},
    )
    assert (status, headers["allow"]) == (405, "POST")
    assert _cors_headers(headers) == {}
    # and a streamed answer to a page carries no CORS header
    fake.enqueue(Scenario(parts=engine_streams.tgi(["o", "k"])))
    status, headers, _ = _chat(url, {"Origin": APP, "Authorization": f"Bearer {KEY}"}, stream=True)
    assert status == 200
    assert _cors_headers(headers) == {}
    assert "vary" not in headers
