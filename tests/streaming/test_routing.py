"""Routing by model: the ROUTES table, the route a request's ``model`` picks, variant pinning,
and the runtime serving several models to the real ``openai`` SDK against the fake SageMaker."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import openai
import pytest

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.streaming.runtime.http.errors import RequestError
from constructs_llm.streaming.runtime.routing import (
    VARIANT_HEADER,
    Route,
    RoutingTable,
    parse_routes,
    target_variant,
)
from constructs_llm.streaming.runtime.settings import Settings, SettingsError
from tests.streaming.conftest import SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.streaming.test_server import USER, error_of, request
from tests.support import engine_streams
from tests.support.curl import curl
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

CHAT = Route(
    model="chat",
    endpoint_name="shared-ep",
    inference_component_name="chat-ic",
    stream_format=StreamFormat.OPENAI,
)
AB = Route(
    model="ab",
    endpoint_name="ab-ep",
    stream_format=StreamFormat.TGI,
    request_format=RequestFormat.GENERATE,
    variants=("Llama-g5-2xlarge", "Qwen-g5-2xlarge"),
)
IMPORTED = Route(model="legacy", endpoint_name="legacy-ep", max_total_tokens=4096)
ROUTES = (CHAT, AB, IMPORTED)


def _routes_json(*routes: Route) -> str:
    return json.dumps(
        [
            {
                "model": r.model,
                "endpoint": r.endpoint_name,
                **({"component": r.inference_component_name} if r.inference_component_name else {}),
                "stream_format": r.stream_format.value,
                "request_format": r.request_format.value,
                **({"variants": list(r.variants)} if r.variants else {}),
                **({"tools": r.tools} if r.tools is not None else {}),
                **({"max_total_tokens": r.max_total_tokens} if r.max_total_tokens else {}),
            }
            for r in routes
        ]
    )


# -- ROUTES ------------------------------------------------------------------------------------


def test_routes_are_read_from_the_environment_in_order() -> None:
    settings = Settings.from_env({"ROUTES": _routes_json(*ROUTES)})
    assert settings.routes == ROUTES
    assert settings.routing().models == ["chat", "ab", "legacy"]


def test_a_route_defaults_to_auto_framing_and_chat_requests() -> None:
    problems: list[str] = []
    (route,) = parse_routes('[{"model": "m", "endpoint": "ep"}]', problems)
    assert problems == []
    assert route == Route(model="m", endpoint_name="ep")
    assert (route.stream_format, route.request_format) == (
        StreamFormat.AUTO,
        RequestFormat.MESSAGES,
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[oops", r"ROUTES must be a JSON list of routes"),
        ("[]", r"ROUTES must be a non-empty JSON list"),
        ('{"model": "m"}', r"ROUTES must be a non-empty JSON list"),
        ('["m"]', r"ROUTES\[0\] must be an object \(got 'm'\)"),
        ('[{"model": "", "endpoint": "ep"}]', r"ROUTES\[0\]\.model must be a non-empty string"),
        ('[{"model": "m"}]', r"ROUTES\[0\]\.endpoint must be a non-empty string \(got None\)"),
        ('[{"model": "m", "endpoint": "e", "component": 3}]', r"ROUTES\[0\]\.component must"),
        ('[{"model": "m", "endpoint": "e", "variants": "a"}]', r"ROUTES\[0\]\.variants must be"),
        ('[{"model": "m", "endpoint": "e", "stream_format": "sse"}]', r"stream_format must be one"),
        ('[{"model": "m", "endpoint": "e", "request_format": "x"}]', r"request_format must be one"),
        (
            '[{"model": "m", "endpoint": "e", "url": "x"}]',
            r"ROUTES\[0\] has unknown keys \['url'\]",
        ),
        ('[{"model": "m", "endpoint": "e", "tools": "on"}]', r"ROUTES\[0\]\.tools must be true"),
        (
            '[{"model": "m", "endpoint": "e", "request_format": "generate", "tools": true}]',
            r"ROUTES\[0\]\.tools is true, but the generate API has no tool calling",
        ),
        (
            '[{"model": "m", "endpoint": "e", "max_total_tokens": 0}]',
            r"ROUTES\[0\]\.max_total_tokens must be an integer from 1 to 2147483647 \(got 0\)",
        ),
        (
            '[{"model": "m", "endpoint": "e", "max_total_tokens": "4096"}]',
            r"ROUTES\[0\]\.max_total_tokens must be an integer from 1 to 2147483647",
        ),
        (
            '[{"model": "m", "endpoint": "e", "max_total_tokens": true}]',
            r"ROUTES\[0\]\.max_total_tokens must be an integer",
        ),
        (
            '[{"model": "m", "endpoint": "a"}, {"model": "m", "endpoint": "b"}]',
            r"ROUTES serves the model 'm' twice",
        ),
    ],
)
def test_a_bad_route_table_names_the_entry_and_the_value(raw: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        Settings.from_env({"ROUTES": raw})


def test_routes_replace_the_single_target_variables() -> None:
    with pytest.raises(SettingsError, match=r"set ROUTES or ENDPOINT_NAME, MODEL_NAME, not both"):
        Settings.from_env({"ROUTES": _routes_json(CHAT), "ENDPOINT_NAME": "ep", "MODEL_NAME": "m"})
    with pytest.raises(SettingsError, match=r"set ROUTES or MAX_TOTAL_TOKENS, not both"):
        Settings.from_env({"ROUTES": _routes_json(CHAT), "MAX_TOTAL_TOKENS": "4096"})


def test_tools_on_needs_every_route_to_take_messages() -> None:
    with pytest.raises(SettingsError, match=r"TOOLS=on needs every route to take messages"):
        Settings.from_env({"ROUTES": _routes_json(CHAT, AB), "TOOLS": "on"})
    settings = Settings.from_env({"ROUTES": _routes_json(CHAT, AB)})
    assert settings.tools_for(CHAT.request_format) and not settings.tools_for(AB.request_format)


def test_a_route_s_own_tools_win_over_the_tools_setting() -> None:
    with_tools = Route(model="a", endpoint_name="ep", tools=True)
    without = Route(model="b", endpoint_name="ep", tools=False)
    settings = Settings.from_env({"ROUTES": _routes_json(with_tools, without, CHAT)})
    assert settings.routes == (with_tools, without, CHAT)
    assert [settings.tools_for(r) for r in settings.routes] == [True, False, True]
    off = Settings.from_env({"ROUTES": _routes_json(with_tools, CHAT), "TOOLS": "off"})
    assert [off.tools_for(r) for r in off.routes] == [True, False]


def test_without_routes_the_single_target_is_the_one_route() -> None:
    settings = Settings(endpoint_name="ep", inference_component_name="ic", model_name="m")
    (route,) = settings.routing().routes
    assert route == Route(model="m", endpoint_name="ep", inference_component_name="ic")


# -- picking a route ---------------------------------------------------------------------------


def test_one_route_serves_every_model_name_as_before() -> None:
    table = RoutingTable([CHAT])
    assert table.pick("anything") is CHAT and table.pick(None) is CHAT


@pytest.mark.parametrize(
    ("model", "status", "code", "message"),
    [
        (None, 400, "missing_required", r"'model' is required.*'chat', 'ab', 'legacy'"),
        ("gpt-4o", 404, "model_not_found", r"'gpt-4o' does not exist.*'chat', 'ab', 'legacy'"),
        (7, 400, "invalid_value", r"'model' must be a string"),
    ],
)
def test_several_routes_need_a_served_model_name(
    model: object, status: int, code: str, message: str
) -> None:
    with pytest.raises(RequestError, match=message) as info:
        RoutingTable(ROUTES).pick(model)
    assert (info.value.status, info.value.code, info.value.param) == (status, code, "model")


def test_several_routes_pick_by_model() -> None:
    table = RoutingTable(ROUTES)
    assert [table.pick(name) for name in ("chat", "ab", "legacy")] == list(ROUTES)


# -- pinning a variant -------------------------------------------------------------------------


def test_a_known_variant_is_pinned_and_no_header_pins_nothing() -> None:
    assert target_variant(AB, "Qwen-g5-2xlarge") == "Qwen-g5-2xlarge"
    assert target_variant(AB, None) is None
    assert target_variant(IMPORTED, "any-variant") == "any-variant"  # variants not known


@pytest.mark.parametrize(
    ("route", "header", "message"),
    [
        (CHAT, "a", r"'chat' is served by an inference component, which has no variants"),
        (AB, "Mistral-g5", r"'Mistral-g5' is not a production variant.*'Llama-g5-2xlarge'"),
        (IMPORTED, "bad_name", r"'bad_name' is not a SageMaker variant name"),
    ],
)
def test_a_bad_variant_header_is_a_400_naming_it(route: Route, header: str, message: str) -> None:
    with pytest.raises(RequestError, match=f"header {VARIANT_HEADER}: .*{message}") as info:
        target_variant(route, header)
    assert info.value.status == 400


# -- the runtime with several routes, the openai SDK in front -------------------------------------


@pytest.fixture
def gateway(start_runtime: StartRuntime) -> Runtime:
    return start_runtime(routes=ROUTES)


def _sdk(runtime: Runtime, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1",
        api_key="unused",
        timeout=SOCKET_TIMEOUT,
        max_retries=0,
        default_headers=headers or None,
    )


def _answer(model: str) -> Scenario:
    text = [f"from {model}", "!"]
    parts = engine_streams.tgi(text) if model == "ab" else engine_streams.openai(text)
    return Scenario(parts=parts)


def _stream(client: openai.OpenAI, model: str) -> tuple[str, set[str]]:
    chunks = list(client.chat.completions.create(model=model, messages=USER, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, {c.model for c in chunks}


def test_each_model_streams_from_its_own_endpoint_and_component(
    gateway: Runtime, fake: FakeSageMaker
) -> None:
    client = _sdk(gateway)
    for route in ROUTES:
        fake.enqueue(_answer(route.model))
        # WHEN a client asks for the model by name THEN its engine's stream comes back,
        # labelled with that name
        assert _stream(client, route.model) == (f"from {route.model}!", {route.model})
    # AND each request reached its own endpoint and component, in its engine's format
    sent = [(r.endpoint_name, r.inference_component) for r in fake.requests]
    assert sent == [("shared-ep", "chat-ic"), ("ab-ep", None), ("legacy-ep", None)]
    assert "messages" in fake.requests[0].json() and "inputs" in fake.requests[1].json()
    assert [line["model"] for line in gateway.logs] == ["chat", "ab", "legacy"]


def test_a_completion_without_streaming_is_routed_too(
    gateway: Runtime, fake: FakeSageMaker
) -> None:
    fake.enqueue(_answer("ab"))
    reply = _sdk(gateway).chat.completions.create(model="ab", messages=USER)
    assert (reply.model, reply.choices[0].message.content) == ("ab", "from ab!")
    assert fake.requests[0].endpoint_name == "ab-ep"


def test_models_lists_every_served_model_and_retrieves_each(gateway: Runtime) -> None:
    client = _sdk(gateway)
    assert [m.id for m in client.models.list().data] == ["chat", "ab", "legacy"]
    assert client.models.retrieve("legacy").id == "legacy"
    with pytest.raises(openai.NotFoundError) as info:
        client.models.retrieve("gpt-4o")
    assert info.value.code == "model_not_found"


def test_an_unknown_model_gets_openai_s_404_and_nothing_is_called(
    gateway: Runtime, fake: FakeSageMaker
) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        _sdk(gateway).chat.completions.create(model="gpt-4o", messages=USER, stream=True)
    assert info.value.code == "model_not_found"
    assert "'chat', 'ab', 'legacy'" in str(info.value)
    assert fake.requests == []


def test_a_request_without_a_model_gets_400_listing_the_models(gateway: Runtime) -> None:
    status, _, body = request(gateway, "POST", "/v1/chat/completions", {"messages": USER})
    assert status == 400
    assert error_of(body)["param"] == "model"


def test_each_route_keeps_its_own_request_rules(gateway: Runtime, fake: FakeSageMaker) -> None:
    # The generate route has no tools; the chat route forwards them.
    tools: Any = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    with pytest.raises(openai.BadRequestError, match="tools"):
        _sdk(gateway).chat.completions.create(model="ab", messages=USER, tools=tools)
    fake.enqueue(_answer("chat"))
    _sdk(gateway).chat.completions.create(model="chat", messages=USER, tools=tools)
    assert fake.requests[0].json()["tools"] == tools


def test_a_route_with_tools_off_refuses_them_while_another_serves_them(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    # GIVEN two chat routes, one whose engine parses tool calls and one whose engine does not
    plain = Route(model="plain", endpoint_name="plain-ep", stream_format=StreamFormat.OPENAI)
    runtime = start_runtime(
        routes=(Route(model="chat", endpoint_name="shared-ep", tools=True), replace_tools(plain))
    )
    tools: Any = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    # WHEN the openai SDK sends tools to the route without them THEN a 400 names the field
    with pytest.raises(openai.BadRequestError) as info:
        _sdk(runtime).chat.completions.create(model="plain", messages=USER, tools=tools)
    assert info.value.code == "unsupported_parameter"
    assert info.value.param == "tools"
    assert fake.requests == []
    # AND the same route still answers without tools, while the other forwards them
    fake.enqueue(_answer("plain"))
    assert _stream(_sdk(runtime), "plain")[0] == "from plain!"
    fake.enqueue(_answer("chat"))
    _sdk(runtime).chat.completions.create(model="chat", messages=USER, tools=tools)
    assert fake.requests[-1].json()["tools"] == tools


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_above_a_route_s_max_total_tokens_is_a_400_before_sagemaker(
    gateway: Runtime, fake: FakeSageMaker, field: str
) -> None:
    # GIVEN the legacy route, whose model takes 4096 tokens (prompt and completion together)
    client = _sdk(gateway)
    # WHEN the openai SDK asks it for more THEN a 400 names the field and the limit
    for too_many in (4097, 10**30):
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model="legacy", messages=USER, extra_body={field: too_many}
            )
        assert info.value.param == field
        assert "max_total_tokens (4096)" in info.value.message
    assert fake.requests == []
    # AND the limit is per route: a route without one passes 4097 on to its engine
    fake.enqueue(_answer("chat"))
    client.chat.completions.create(model="chat", messages=USER, extra_body={field: 4097})
    assert fake.requests[0].json()["max_tokens"] == 4097


def replace_tools(route: Route) -> Route:
    return dataclasses.replace(route, tools=False)


def test_a_header_pins_a_production_variant(gateway: Runtime, fake: FakeSageMaker) -> None:
    fake.enqueue(_answer("ab"))
    client = _sdk(gateway, **{VARIANT_HEADER: "Qwen-g5-2xlarge"})
    assert _stream(client, "ab")[0] == "from ab!"
    assert fake.requests[0].headers["x-amzn-sagemaker-target-variant"] == "Qwen-g5-2xlarge"
    assert gateway.logs[0]["target_variant"] == "Qwen-g5-2xlarge"


def test_an_unknown_variant_is_a_400_before_sagemaker_is_called(
    gateway: Runtime, fake: FakeSageMaker
) -> None:
    client = _sdk(gateway, **{VARIANT_HEADER: "Mistral-g5"})
    with pytest.raises(openai.BadRequestError, match="not a production variant"):
        _stream(client, "ab")
    assert fake.requests == []


def test_langchain_and_curl_pick_models_by_name(gateway: Runtime, fake: FakeSageMaker) -> None:
    from langchain_openai import ChatOpenAI

    fake.enqueue(_answer("chat"))
    llm = ChatOpenAI(
        base_url=gateway.url + "/v1",
        api_key="unused",  # type: ignore[arg-type]
        model="chat",
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
    )
    assert "".join(str(c.content) for c in llm.stream("Hello")) == "from chat!"
    fake.enqueue(_answer("legacy"))
    body = json.dumps({"model": "legacy", "messages": USER, "stream": True})
    out = curl(
        f"{gateway.url}/v1/chat/completions", "-H", "Content-Type: application/json",
        "-d", body, timeout=SOCKET_TIMEOUT,
    )  # fmt: skip
    assert '"model":"legacy"' in out and "[DONE]" in out
    sent = [(r.endpoint_name, r.inference_component) for r in fake.requests]
    assert sent == [("shared-ep", "chat-ic"), ("legacy-ep", None)]
