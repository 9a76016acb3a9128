"""Fixtures: a loopback fake SageMaker Runtime, and runtime servers pointed at it.

No real AWS: fake credentials, no config files, and boto3 sent to the fake through its
standard ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`` variable. Servers run in daemon threads on
ephemeral ports.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pytest

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.server import RuntimeServer
from constructs_llm.streaming.runtime.settings import Settings, new_sagemaker_client
from tests.support.fake_sagemaker import FakeSageMaker
from tests.support.patience import patience

if TYPE_CHECKING:
    from tests.support.secrets_manager import LocalSecretsManager

ENDPOINT = "llm-endpoint"
MODEL = "test-model"
SOCKET_TIMEOUT = patience(10.0)  # every client socket in these tests gives up after this

FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}
_UNSET = ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_DEFAULT_PROFILE", "HTTP_PROXY", "HTTPS_PROXY")


@pytest.fixture(scope="module")
def secrets() -> Iterator[LocalSecretsManager]:
    """A local Secrets Manager API for the module's tests."""
    from tests.support.secrets_manager import local_secrets_manager  # it reads FAKE_AWS_ENV

    with local_secrets_manager() as local:
        yield local


class Clock:
    """A clock the test moves by hand (``clock.now += 61``)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def keys_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The clock of the API keys' TTL and stale window in runtimes started after it: keys
    expire when the test moves it, however long the requests take."""
    from constructs_llm.streaming.runtime.http import server
    from constructs_llm.streaming.runtime.http.auth import ApiKeyAuth

    clock = Clock()
    monkeypatch.setattr(server, "ApiKeyAuth", functools.partial(ApiKeyAuth, clock=clock))
    return clock


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeSageMaker]:
    with FakeSageMaker() as fake:
        yield fake


@pytest.fixture(scope="session")
def aws_env(fake_server: FakeSageMaker) -> Iterator[dict[str, str]]:
    """Fake credentials and the fake's URL in the environment, for the whole session."""
    patch = pytest.MonkeyPatch()
    for name in _UNSET:
        patch.delenv(name, raising=False)
    env = {**FAKE_AWS_ENV, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": fake_server.url}
    for name, value in env.items():
        patch.setenv(name, value)
    yield env
    patch.undo()


@pytest.fixture
def fake(fake_server: FakeSageMaker, aws_env: dict[str, str]) -> Iterator[FakeSageMaker]:
    """The fake endpoint with an empty scenario queue and request log."""
    fake_server.reset()
    yield fake_server
    fake_server.reset()


_clients: dict[float, Any] = {}


def client_for(read_timeout: float) -> Any:
    """One boto3 client per read timeout for the session (building one takes ~50 ms)."""
    if read_timeout not in _clients:
        _clients[read_timeout] = new_sagemaker_client(
            Settings(endpoint_name=ENDPOINT, upstream_read_timeout=read_timeout)
        )
    return _clients[read_timeout]


@dataclass
class Runtime:
    """A running runtime server and the log lines it wrote."""

    server: RuntimeServer
    logs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def settings(self) -> Settings:
        return self.server.settings


StartRuntime = Callable[..., Runtime]

BASE_SETTINGS = Settings(
    endpoint_name=ENDPOINT,
    model_name=MODEL,
    stream_format=StreamFormat.AUTO,
    request_format=RequestFormat.MESSAGES,
    port=0,
    upstream_read_timeout=5.0,
    client_timeout=SOCKET_TIMEOUT,
)


@contextmanager
def serving(settings: Settings, *, client: Any = None) -> Iterator[Runtime]:
    """A runtime server for ``settings`` in a daemon thread (with the session's boto3 client
    unless ``client=`` is given), stopped on exit."""
    logs: list[dict[str, Any]] = []
    server = RuntimeServer(
        settings,
        client=client or client_for(settings.upstream_read_timeout),
        log=logs.append,
        address=("127.0.0.1", 0),
    )
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    try:
        yield Runtime(server=server, logs=logs)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def start_runtime(fake: FakeSageMaker) -> Iterator[StartRuntime]:
    """``start_runtime(**settings)`` starts a runtime server over ``BASE_SETTINGS``; all stop
    after the test."""
    with ExitStack() as servers:

        def start(*, client: Any = None, **overrides: Any) -> Runtime:
            settings = replace(BASE_SETTINGS, **overrides)
            return servers.enter_context(serving(settings, client=client))

        yield start


@pytest.fixture
def runtime(start_runtime: StartRuntime) -> Runtime:
    """A runtime server with the default settings (AUTO stream format, messages requests)."""
    return start_runtime()
