"""End to end with API keys: the runtime reads its keys from a real Secrets Manager API
(moto's server on loopback, through boto3), and unchanged clients call it with nothing but a
base URL and a key: the `openai` SDK (chat and responses), LangChain's ChatOpenAI and curl."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid

import openai
import pytest

from constructs_llm.streaming import ChatStreamError, stream_chat
from tests.streaming.conftest import SOCKET_TIMEOUT, Clock, Runtime, StartRuntime
from tests.support import engine_streams
from tests.support.curl import curl
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.secrets_manager import LocalSecretsManager

pytestmark = pytest.mark.slow

KEY = "sk-live-5b0d8c1e6a2f4e7d9c3b1a0f"
NEXT_KEY = "sk-next-0a9b8c7d6e5f4a3b2c1d0e9f"
TTL = 30.0  # on keys_clock
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def keyed(
    start_runtime: StartRuntime,
    secrets: LocalSecretsManager,
    monkeypatch: pytest.MonkeyPatch,
    keys_clock: Clock,
) -> Runtime:
    """A runtime whose keys live in a fresh secret, found through the standard variable, and
    are read again when the test moves ``keys_clock`` past their TTL."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", secrets.url)
    arn = secrets.create(f"keys/{uuid.uuid4().hex}", KEY)
    return start_runtime(api_keys_secret_id=arn, api_keys_ttl=TTL)


def _answer(fake: FakeSageMaker, *tokens: str) -> None:
    fake.enqueue(Scenario(parts=engine_streams.rechunk(engine_streams.tgi(list(tokens)), 3)))


def _openai(runtime: Runtime, api_key: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key=api_key, max_retries=0, timeout=SOCKET_TIMEOUT
    )


def _stream_text(client: openai.OpenAI) -> str:
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_the_openai_sdk_streams_with_only_base_url_and_api_key(
    keyed: Runtime, fake: FakeSageMaker
) -> None:
    _answer(fake, "Hi", " there")
    assert _stream_text(_openai(keyed, KEY)) == "Hi there"
    _answer(fake, "Also", " whole")
    done = _openai(keyed, KEY).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert done.choices[0].message.content == "Also whole"
    assert [m.id for m in _openai(keyed, KEY).models.list()] == [keyed.settings.served_model]


def test_the_responses_api_takes_the_same_key(keyed: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(
        Scenario(parts=engine_streams.tgi(["Key", "ed"], finish_reason="eos_token", input_length=2))
    )
    events = list(_openai(keyed, KEY).responses.create(model="m", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "Keyed"
    with pytest.raises(openai.AuthenticationError) as raised:
        _openai(keyed, "sk-wrong-key-0000").responses.create(model="m", input="hi")
    assert raised.value.code == "invalid_api_key"
    assert len(fake.requests) == 1  # the refused request never reached SageMaker
    assert [r.get("auth") for r in keyed.logs] == [None, "wrong_key"]


def test_langchain_chat_openai_streams_with_an_api_key(keyed: Runtime, fake: FakeSageMaker) -> None:
    from langchain_openai import ChatOpenAI

    _answer(fake, "Lang", "Chain")
    llm = ChatOpenAI(
        base_url=keyed.url + "/v1",
        api_key=KEY,  # type: ignore[arg-type]
        model="m",
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
    )
    assert "".join(str(chunk.content) for chunk in llm.stream("hi")) == "LangChain"


def test_curl_with_a_bearer_header_streams(keyed: Runtime, fake: FakeSageMaker) -> None:
    _answer(fake, "cu", "rl")
    body = json.dumps({"model": "m", "messages": MESSAGES, "stream": True})
    result = _curl(keyed, body, "-H", f"Authorization: Bearer {KEY}")
    events = [line[6:] for line in result.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    text = "".join(
        c["delta"].get("content") or "" for e in events[:-1] for c in json.loads(e)["choices"]
    )
    assert text == "curl"


def test_curl_without_a_key_gets_401_invalid_api_key(keyed: Runtime, fake: FakeSageMaker) -> None:
    output = _curl(keyed, json.dumps({"messages": MESSAGES}), "-w", "\n%{http_code}")
    body, status = output.rsplit("\n", 1)
    assert status == "401"
    assert json.loads(body)["error"]["code"] == "invalid_api_key"
    assert fake.requests == []


@pytest.mark.parametrize(
    ("api_key", "reason"),
    [("sk-wrong-key-0000", "wrong_key"), (KEY + "0", "wrong_key"), (KEY[:-1], "wrong_key")],
)
def test_a_wrong_or_missing_key_gets_401_before_any_upstream_call(
    keyed: Runtime, fake: FakeSageMaker, api_key: str, reason: str
) -> None:
    client = _openai(keyed, api_key)
    with pytest.raises(openai.AuthenticationError) as raised:
        _stream_text(client)
    assert raised.value.status_code == 401
    assert raised.value.code == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        client.models.list()
    assert fake.requests == []  # SageMaker was never called
    assert [r["auth"] for r in keyed.logs] == [reason, reason]


def test_stream_chat_sends_the_key_as_bearer(keyed: Runtime, fake: FakeSageMaker) -> None:
    _answer(fake, "st", "dlib")
    assert "".join(stream_chat(keyed.url, MESSAGES, api_key=KEY)) == "stdlib"
    with pytest.raises(ChatStreamError) as raised:
        list(stream_chat(keyed.url, MESSAGES, api_key="sk-nope"))
    assert (raised.value.status, raised.value.code) == (401, "invalid_api_key")


def test_a_rotated_key_works_within_the_ttl_and_a_revoked_one_stops(
    keyed: Runtime, fake: FakeSageMaker, secrets: LocalSecretsManager, keys_clock: Clock
) -> None:
    secret = keyed.settings.api_keys_secret_id
    assert secret is not None
    _answer(fake, "old")
    assert _stream_text(_openai(keyed, KEY)) == "old"

    secrets.put(secret, [KEY, NEXT_KEY])  # rotation, step 1: both keys are valid
    with pytest.raises(openai.AuthenticationError):  # the keys read are kept for the TTL
        _stream_text(_openai(keyed, NEXT_KEY))
    keys_clock.now += TTL
    _answer(fake, "new")
    assert _stream_text(_openai(keyed, NEXT_KEY)) == "new"
    _answer(fake, "still")
    assert _stream_text(_openai(keyed, KEY)) == "still"

    secrets.put(secret, [NEXT_KEY])  # step 2: the old key is revoked
    keys_clock.now += TTL
    with pytest.raises(openai.AuthenticationError):
        _stream_text(_openai(keyed, KEY))
    _answer(fake, "on")
    assert _stream_text(_openai(keyed, NEXT_KEY)) == "on"


def test_no_key_appears_in_any_log_line(
    keyed: Runtime, fake: FakeSageMaker, capfd: pytest.CaptureFixture[str]
) -> None:
    _answer(fake, "ok")
    _stream_text(_openai(keyed, KEY))
    for wrong in ("sk-guess-1234", KEY[:-1]):
        with pytest.raises(openai.AuthenticationError):
            _stream_text(_openai(keyed, wrong))
    captured = capfd.readouterr()
    written = json.dumps(keyed.logs) + captured.out + captured.err
    assert len(keyed.logs) == 3
    for secret in (KEY, KEY[:-1], "sk-guess-1234", KEY[3:12]):
        assert secret not in written


def test_a_request_without_authorization_gets_401_and_health_needs_no_key(
    keyed: Runtime, fake: FakeSageMaker
) -> None:
    request = urllib.request.Request(
        keyed.url + "/v1/chat/completions",
        data=json.dumps({"messages": MESSAGES}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=SOCKET_TIMEOUT)
    assert raised.value.code == 401
    assert json.loads(raised.value.read())["error"]["code"] == "invalid_api_key"
    assert fake.requests == []
    assert keyed.logs[-1]["auth"] == "missing_key"
    with urllib.request.urlopen(keyed.url + "/health", timeout=SOCKET_TIMEOUT) as response:
        assert response.status == 200


def _curl(runtime: Runtime, body: str, *args: str) -> str:
    return curl(
        "-H", "Content-Type: application/json", "-d", body, *args,
        runtime.url + "/v1/chat/completions", timeout=SOCKET_TIMEOUT,
    )  # fmt: skip
