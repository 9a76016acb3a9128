"""LiteLLM, unchanged, against the runtime with API keys: the keys live in a real Secrets
Manager API on loopback, the fake SageMaker replays vLLM's own streams (text with usage, tool
calls, and the reasoning model's stream a real vLLM answered in ``make test-engines``), and
LiteLLM runs from its own venv (it pins ``openai<3``), as a user runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from constructs_llm.contract import StreamFormat
from tests.streaming.conftest import BASE_SETTINGS, MODEL, SOCKET_TIMEOUT, Runtime, serving
from tests.streaming.stream_fixtures import load_fixtures
from tests.streaming.vllm_cases import FIXTURES as VLLM_RECORDINGS
from tests.support import engine_streams
from tests.support.engine_exchanges import Recording
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.patience import patience
from tests.support.secrets_manager import local_secrets_manager
from tests.support.tiny_model import ANSWER_TEXT, REASONING_TEXT

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: The bound (before patience's factor) on LiteLLM's whole run: it imports LiteLLM (seconds
#: on an idle machine, far more on a busy one) and makes eleven calls to a local fake.
_LITELLM_S = 600.0
CLIENT = ROOT / "tests" / "support" / "litellm_client.py"
KEY = "sk-litellm-3c1e9a7b5d2f4068"
FIXTURES = {f.name: f.raw for f in load_fixtures()}
ASK = [{"role": "user", "content": "Weather in Zürich?"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
        },
    },
}
RECORDED = "recorded vLLM reasoning stream"  # the reasoning_stream case of make test-engines
# (what the fake SageMaker replays, the call LiteLLM makes); "responses" calls
# litellm.responses, the others litellm.completion
CALLS: dict[str, tuple[str | None, dict[str, Any]]] = {
    "stream": ("vllm_chat", {"stream": True, "stream_options": {"include_usage": True}}),
    "whole": ("vllm_chat", {}),
    "tools": ("vllm_tool_calls", {"tools": [WEATHER], "tool_choice": "auto"}),
    "tools_stream": ("vllm_tool_calls", {"tools": [WEATHER], "stream": True}),
    "reasoning": ("vllm_reasoning", {}),
    "reasoning_stream": ("sglang_reasoning", {"stream": True}),
    "recorded_reasoning": (RECORDED, {}),
    "recorded_reasoning_stream": (RECORDED, {"stream": True}),
    "responses_reasoning": (RECORDED, {"api": "responses"}),
    "responses_reasoning_stream": (RECORDED, {"api": "responses", "stream": True}),
    "wrong_key": (None, {}),
}


def _parts(source: str) -> list[bytes]:
    """What the fake SageMaker answers: a fixture rechunked, or the chunks vLLM wrote."""
    if source == RECORDED:
        (exchange,) = Recording.load(VLLM_RECORDINGS / "reasoning_stream.json").exchanges
        return list(exchange.chunks)
    return engine_streams.rechunk([FIXTURES[source]], 5)


@pytest.fixture(scope="module")
def session(fake_server: FakeSageMaker, aws_env: dict[str, str]) -> Iterator[Session]:
    """Each call of CALLS made by LiteLLM in one process (its import takes seconds), in order,
    and the bodies the fake SageMaker received."""
    fake_server.reset()
    with local_secrets_manager() as secrets, pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", secrets.url)
        arn = secrets.create(f"keys/{uuid.uuid4().hex}", KEY)
        settings = replace(BASE_SETTINGS, api_keys_secret_id=arn, stream_format=StreamFormat.OPENAI)
        for source, _ in CALLS.values():
            if source:
                fake_server.enqueue(Scenario(parts=_parts(source)))
        calls = [
            {
                "api_key": KEY if name != "wrong_key" else "sk-wrong",
                "messages": ASK,
                "params": {k: v for k, v in params.items() if k != "api"},
                "api": params.get("api", "chat"),
            }
            for name, (_, params) in CALLS.items()
        ]
        with serving(settings) as runtime:
            results = dict(zip(CALLS, _litellm(runtime, calls), strict=True))
    yield Session(results, [request.json() for request in fake_server.requests])
    fake_server.reset()


@dataclass
class Session:
    results: dict[str, dict[str, Any]]
    engine_received: list[dict[str, Any]]

    def response(self, call: str) -> dict[str, Any]:
        result = self.results[call]
        assert "response" in result, result
        response: dict[str, Any] = result["response"]
        return response


def test_litellm_streams_text_and_usage_with_an_api_key(session: Session) -> None:
    streamed = session.response("stream")
    assert session.results["stream"]["pieces"] == [" héllo", " 世界", " 🚀"]
    assert streamed["choices"][0]["message"]["content"] == " héllo 世界 🚀"
    assert _usage(streamed) == (9, 4)


def test_litellm_gets_the_engine_usage_on_a_whole_reply(session: Session) -> None:
    whole = session.response("whole")
    assert whole["choices"][0]["message"]["content"] == " héllo 世界 🚀"
    assert whole["choices"][0]["finish_reason"] == "length"
    assert _usage(whole) == (9, 4)


@pytest.mark.parametrize("call", ["tools", "tools_stream"])
def test_litellm_gets_the_tool_call(session: Session, call: str) -> None:
    choice = session.response(call)["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    (tool_call,) = choice["message"]["tool_calls"]
    assert tool_call["id"] == "chatcmpl-tool-9a8b7c6d5e4f4a3b"
    assert tool_call["function"]["name"] == "get_weather"
    assert json.loads(tool_call["function"]["arguments"]) == {"city": "Zürich", "unit": "celsius"}


@pytest.mark.parametrize(
    ("call", "thinking", "answer"),
    [
        ("reasoning", "Okay, the user greets me.", "Hello!"),
        ("reasoning_stream", "Let me think.", "Four."),
    ],
)
def test_litellm_reads_the_reasoning(
    session: Session, call: str, thinking: str, answer: str
) -> None:
    # GIVEN the runtime's default: the thinking under ``reasoning`` alone
    # THEN LiteLLM shows it as its own reasoning_content, whole and streamed: it maps
    # ``reasoning`` to that name itself (litellm/llms/openai/chat/gpt_transformation.py,
    # _map_reasoning_to_reasoning_content; litellm/types/utils.py, Message and Delta)
    message = session.response(call)["choices"][0]["message"]
    assert (message["reasoning_content"], message["content"]) == (thinking, answer)


@pytest.mark.parametrize("call", ["recorded_reasoning", "recorded_reasoning_stream"])
def test_litellm_reads_the_reasoning_a_real_vllm_wrote(session: Session, call: str) -> None:
    message = session.response(call)["choices"][0]["message"]
    assert (message["reasoning_content"], message["content"]) == (REASONING_TEXT, ANSWER_TEXT)


@pytest.mark.parametrize("call", ["responses_reasoning", "responses_reasoning_stream"])
def test_litellm_s_responses_api_gets_the_reasoning_item(session: Session, call: str) -> None:
    response = session.response(call)
    reasoning, message = response["output"]
    assert reasoning["type"] == "reasoning" and message["type"] == "message"
    assert "".join(part["text"] for part in reasoning["content"]) == REASONING_TEXT
    assert "".join(part["text"] for part in message["content"]) == ANSWER_TEXT
    assert response["usage"]["output_tokens_details"]["reasoning_tokens"] > 0
    if call.endswith("_stream"):
        # streamed, the reasoning item arrives whole with its output_item.done event:
        # LiteLLM 1.106 relays no response.reasoning_text.* events (its
        # ResponsesAPIStreamEvents lacks them: litellm/types/llms/openai.py)
        result = session.results[call]
        streamed = result["items"][0]
        assert (streamed["type"], streamed["content"]) == ("reasoning", reasoning["content"])
        assert not [t for t in result["types"] if t.startswith("response.reasoning_text")]


def test_litellm_with_a_wrong_key_gets_401_and_sagemaker_is_not_called(session: Session) -> None:
    wrong = session.results["wrong_key"]
    assert (wrong["error"], wrong["status"]) == ("AuthenticationError", 401)
    assert "Incorrect API key provided" in wrong["message"]  # the runtime's invalid_api_key text
    assert len(session.engine_received) == len(CALLS) - 1


def test_the_engine_receives_litellm_s_tools(session: Session) -> None:
    sent = dict(
        zip(
            [name for name, (source, _) in CALLS.items() if source],
            session.engine_received,
            strict=True,
        )
    )
    assert all(body.get("stream") is True for body in sent.values())
    assert {name for name, body in sent.items() if body.get("tools")} == {"tools", "tools_stream"}
    assert sent["tools"]["tools"] == sent["tools_stream"]["tools"] == [WEATHER]
    assert sent["tools"]["tool_choice"] == "auto"
    assert {body["messages"][0]["content"] for body in sent.values()} == {ASK[0]["content"]}


def _usage(response: dict[str, Any]) -> tuple[int, int]:
    usage = response["usage"]
    return usage["prompt_tokens"], usage["completion_tokens"]


def _litellm(runtime: Runtime, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    python = os.environ.get("LITELLM_PYTHON", str(ROOT / ".venv-litellm" / "bin" / "python"))
    assert Path(python).exists(), f"{python}: LiteLLM's venv is missing; run `make install`"
    plan = {
        "base_url": runtime.url + "/v1",
        "model": MODEL,
        "calls": calls,
        "timeout": SOCKET_TIMEOUT,  # each call's, scaled by the same factor as the sockets
    }
    done = subprocess.run(
        [python, str(CLIENT)],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        timeout=patience(_LITELLM_S),  # a hang guard: the run itself takes seconds
        env={**os.environ, "LITELLM_LOG": "ERROR"},
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return results


def test_the_readme_s_litellm_note_matches_the_version_tested_here() -> None:
    """The README installs the LiteLLM this suite runs (requirements-litellm.txt), and the
    `openai` range it quotes is that version's own requirement (its installed metadata)."""
    pinned = re.search(
        r"^litellm\[mcp\]==(\S+)$", (ROOT / "requirements-litellm.txt").read_text(), re.M
    )
    assert pinned
    version = pinned.group(1)
    python = os.environ.get("LITELLM_PYTHON", str(ROOT / ".venv-litellm" / "bin" / "python"))
    code = (
        "import importlib.metadata as m; print(m.version('litellm')); "
        "print(*[r for r in m.requires('litellm') if r.startswith('openai')])"
    )
    installed, requirement = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True, timeout=patience(60)
    ).stdout.splitlines()
    assert installed == version
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f'`pip install "litellm[mcp]=={version}"`' in readme
    bound = requirement.removeprefix("openai").strip()  # e.g. <3.0.0,>=2.20.0
    parts = sorted(bound.split(","), key=lambda p: not p.startswith(">"))
    assert f"That version requires `openai{','.join(parts)}`" in readme
