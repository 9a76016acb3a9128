"""Runtime settings from the environment."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest

from constructs_llm.contract import ReasoningField, RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.settings import Settings, SettingsError, sagemaker_client


def test_defaults_need_only_the_endpoint_name() -> None:
    settings = Settings.from_env({"ENDPOINT_NAME": "ep"})
    assert settings == Settings(endpoint_name="ep")
    assert (settings.port, settings.bind_address) == (8080, "127.0.0.1")
    assert (settings.stream_format, settings.request_format) == (
        StreamFormat.AUTO,
        RequestFormat.MESSAGES,
    )
    assert (settings.max_body_bytes, settings.upstream_read_timeout) == (5 * 1024 * 1024, 120.0)
    assert settings.inference_component_name is None
    assert settings.served_model == "ep"
    assert settings.heartbeat_seconds == 0  # off
    assert settings.serves_tools is True  # the messages format's default
    # every request must arrive within 30 s, and at most 128 connections are held
    assert (settings.request_deadline, settings.max_connections) == (30.0, 128)
    assert settings.max_total_tokens is None  # not known: only the engine checks max_tokens
    assert settings.reasoning_field is ReasoningField.REASONING  # one name: vLLM's


def test_every_variable_is_read() -> None:
    settings = Settings.from_env(
        {
            "ENDPOINT_NAME": "ep",
            "INFERENCE_COMPONENT_NAME": "ic",
            "STREAM_FORMAT": "LMI_JSONLINES",
            "REQUEST_FORMAT": "generate",
            "MODEL_NAME": "llama",
            "PORT": "9000",
            "BIND_ADDRESS": "0.0.0.0",
            "MAX_BODY_BYTES": "2048",
            "UPSTREAM_READ_TIMEOUT": "30.5",
            "CLIENT_TIMEOUT": "15",
            "HEARTBEAT_SECONDS": "20",
            "TOOLS": "off",
            "MAX_TOTAL_TOKENS": "4096",
            "REQUEST_DEADLINE": "2.5",
            "MAX_CONNECTIONS": "16",
            "REASONING_FIELD": "reasoning_content",
        }
    )
    assert settings == Settings(
        endpoint_name="ep",
        inference_component_name="ic",
        stream_format=StreamFormat.LMI_JSONLINES,
        request_format=RequestFormat.GENERATE,
        model_name="llama",
        port=9000,
        bind_address="0.0.0.0",
        max_body_bytes=2048,
        upstream_read_timeout=30.5,
        client_timeout=15.0,
        heartbeat_seconds=20.0,
        tools=False,
        max_total_tokens=4096,
        request_deadline=2.5,
        max_connections=16,
        reasoning_field=ReasoningField.REASONING_CONTENT,
    )
    assert settings.served_model == "llama"
    assert settings.routing().routes[0].max_total_tokens == 4096


def test_all_problems_are_reported_at_once_with_the_bad_values() -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env(
            {
                "STREAM_FORMAT": "sse",
                "PORT": "http",
                "MAX_BODY_BYTES": "0",
                "REQUEST_FORMAT": "x",
                "REASONING_FIELD": "thinking",
            }
        )
    message = str(info.value)
    assert "ENDPOINT_NAME is required" in message
    assert "STREAM_FORMAT must be one of tgi, lmi_jsonlines, openai, auto (got 'sse')" in message
    assert "REQUEST_FORMAT must be one of messages, generate, embed (got 'x')" in message
    assert "PORT must be an integer (got 'http')" in message
    assert "MAX_BODY_BYTES must be between 1 and" in message and "(got '0')" in message
    assert (
        "REASONING_FIELD must be one of reasoning, reasoning_content, both (got 'thinking')"
        in message
    )


@pytest.mark.parametrize(
    ("env", "serves"),
    [
        ({}, True),
        ({"TOOLS": "off"}, False),
        ({"TOOLS": "ON"}, True),
        ({"REQUEST_FORMAT": "generate"}, False),
        ({"REQUEST_FORMAT": "generate", "TOOLS": "off"}, False),
    ],
)
def test_tools_default_by_request_format_and_can_be_turned_off(
    env: dict[str, str], serves: bool
) -> None:
    assert Settings.from_env({"ENDPOINT_NAME": "ep", **env}).serves_tools is serves


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"TOOLS": "yes"}, "TOOLS must be on or off (got 'yes')"),
        (
            {"TOOLS": "on", "REQUEST_FORMAT": "generate"},
            "TOOLS=on needs REQUEST_FORMAT=messages: the generate API has no tool calling",
        ),
    ],
)
def test_a_bad_tools_setting_is_a_settings_problem(env: dict[str, str], problem: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(problem)):
        Settings.from_env({"ENDPOINT_NAME": "ep", **env})


@pytest.mark.parametrize(("raw", "seconds"), [("0", 0.0), ("0.1", 0.1), ("2.5", 2.5), ("300", 300)])
def test_heartbeat_seconds_is_off_or_an_interval(raw: str, seconds: float) -> None:
    settings = Settings.from_env({"ENDPOINT_NAME": "ep", "HEARTBEAT_SECONDS": raw})
    assert settings.heartbeat_seconds == seconds


@pytest.mark.parametrize("raw", ["0.05", "301", "-1", "soon", "nan", "inf"])
def test_a_bad_heartbeat_is_a_settings_problem_naming_the_value(raw: str) -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env({"HEARTBEAT_SECONDS": raw, "PORT": "x"})
    message = str(info.value)
    assert (
        f"HEARTBEAT_SECONDS must be 0 (off) or a number of seconds between 0.1 and 300 (got {raw!r})"
        in message
    )
    assert "ENDPOINT_NAME is required" in message and "PORT must be an integer" in message


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"MAX_TOTAL_TOKENS": "0"}, "MAX_TOTAL_TOKENS must be between 1 and 2147483647 (got '0')"),
        ({"MAX_TOTAL_TOKENS": "4k"}, "MAX_TOTAL_TOKENS must be an integer (got '4k')"),
        ({"REQUEST_DEADLINE": "0"}, "REQUEST_DEADLINE must be between 0.1 and 3600 (got '0')"),
        ({"REQUEST_DEADLINE": "soon"}, "REQUEST_DEADLINE must be a number (got 'soon')"),
        ({"MAX_CONNECTIONS": "0"}, "MAX_CONNECTIONS must be between 1 and 65535 (got '0')"),
        ({"MAX_CONNECTIONS": "1.5"}, "MAX_CONNECTIONS must be an integer (got '1.5')"),
    ],
)
def test_bad_limits_are_settings_problems_naming_the_value(
    env: dict[str, str], problem: str
) -> None:
    with pytest.raises(SettingsError, match=re.escape(problem)):
        Settings.from_env({"ENDPOINT_NAME": "ep", **env})


def test_the_sagemaker_client_is_built_once_and_shared_across_threads(
    aws_env: dict[str, str],
) -> None:
    settings = Settings(endpoint_name="ep", upstream_read_timeout=7.25)
    barrier = threading.Barrier(8)
    clients: list[Any] = []

    def get() -> None:
        barrier.wait(timeout=10)
        clients.append(sagemaker_client(settings))

    threads = [threading.Thread(target=get) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(clients) == 8
    assert all(client is clients[0] for client in clients)
    assert clients[0].meta.config.read_timeout == 7.25
    assert sagemaker_client(settings) is clients[0]


def test_cors_is_off_unless_origins_are_set_and_reads_its_three_variables() -> None:
    from constructs_llm.contract import DEFAULT_CORS_HEADERS
    from constructs_llm.streaming.runtime.http.cors import CorsPolicy

    assert Settings.from_env({"ENDPOINT_NAME": "ep"}).cors is None
    settings = Settings.from_env(
        {
            "ENDPOINT_NAME": "ep",
            "CORS_ALLOWED_ORIGINS": " https://App.example.com/ , http://localhost:5173",
            "CORS_MAX_AGE_SECONDS": "60",
            "ORIGIN_SECRET_ID": "origin/secret",
        }
    )
    assert settings.cors == CorsPolicy(
        origins=("https://app.example.com", "http://localhost:5173"),
        headers=DEFAULT_CORS_HEADERS,
        max_age=60,
    )
    assert settings.origin_secret_id == "origin/secret"
    assert settings.cors.allowed("https://app.example.com") == "https://app.example.com"
    assert settings.cors.allowed("https://APP.example.com") == "https://APP.example.com"
    assert settings.cors.allowed("https://app.example.com.evil.net") is None
    assert settings.cors.allowed(None) is None
    anyone = Settings.from_env({"ENDPOINT_NAME": "ep", "CORS_ALLOWED_ORIGINS": "*"}).cors
    assert anyone is not None and anyone.allowed("https://x.example") == "*"


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"CORS_ALLOWED_HEADERS": "authorization"}, "CORS_ALLOWED_HEADERS and CORS_MAX_AGE"),
        ({"CORS_MAX_AGE_SECONDS": "60"}, "need CORS_ALLOWED_ORIGINS"),
        ({"CORS_ALLOWED_ORIGINS": "app.example.com"}, "got 'app.example.com'"),
        ({"CORS_ALLOWED_ORIGINS": "*,https://a.example"}, "must be '*' alone"),
        (
            {"CORS_ALLOWED_ORIGINS": "*", "CORS_MAX_AGE_SECONDS": "90000"},
            "CORS_MAX_AGE_SECONDS must be between 0 and 86400",
        ),
    ],
)
def test_a_bad_cors_setting_is_a_settings_problem(env: dict[str, str], problem: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(problem)):
        Settings.from_env({"ENDPOINT_NAME": "ep", **env})
