"""The CloudWatch Logs Insights queries of docs/operate.md, run over the log lines the
invoker's runtime really writes: each field a query names is a field of those lines, each
string it compares a field with is a value they hold, and each query's filter keeps some of
them (so no query is silently empty).

The lines come from the runtime serving the real ``openai`` SDK against the fake SageMaker:
streamed and whole answers with the engine's usage, a stream broken midway, a container
error, throttling and a request that is not JSON. Logs Insights discovers the fields of a JSON log event by their
names, so each record is read back from the JSON line the runtime writes."""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import re
from dataclasses import replace
from typing import Any

import openai
import pytest

from constructs_llm.contract import StreamFormat
from constructs_llm.streaming.runtime.http.exchange import emit_log_line
from tests.conftest import ROOT
from tests.streaming.conftest import BASE_SETTINGS, MODEL, SOCKET_TIMEOUT, Runtime, serving
from tests.streaming.test_server import USER
from tests.support import engine_streams
from tests.support.aws_cli import commands
from tests.support.fake_sagemaker import CallError, FakeSageMaker, Scenario

OPERATE = ROOT / "docs" / "operate.md"

_COMMANDS = {"fields", "filter", "stats", "sort", "limit", "display", "parse", "dedup"}
_KEYWORDS = {"as", "by", "and", "or", "not", "in", "like", "asc", "desc"}
_TOKEN = re.compile(r'"[^"]*"|\'[^\']*\'|@?[A-Za-z_][\w.]*|\d+(?:\.\d+)?[a-z]*|\S')


def _queries() -> list[str]:
    """The page's Logs Insights queries: its ``logs-insights`` blocks and the query strings
    of its ``aws logs start-query`` commands."""
    page = OPERATE.read_text()
    found = [
        " ".join(block.split())
        for block in re.findall(r"^```logs-insights\n(.*?)^```", page, re.S | re.M)
    ]
    for command in commands(page):
        words = list(command.words)
        if "--query-string" in words:
            found.append(words[words.index("--query-string") + 1])
    return found


def _lines(record: dict[str, Any]) -> dict[str, Any]:
    """A record as Logs Insights reads it: the JSON line the runtime writes, parsed back, its
    nested keys flattened with dots."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        emit_log_line(record)
    (line,) = out.getvalue().splitlines()
    return _flatten(json.loads(line))


def _flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, dict):
            flat.update(_flatten(item, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = item
    return flat


@pytest.fixture(scope="module")
def records(fake_server: FakeSageMaker, aws_env: dict[str, str]) -> list[dict[str, Any]]:
    """The log records of a small day's traffic, through the runtime."""
    fake_server.reset()
    settings = replace(BASE_SETTINGS, stream_format=StreamFormat.OPENAI)
    with serving(settings) as runtime:
        _traffic(runtime, fake_server)
    fake_server.reset()
    return [_lines(r) for r in runtime.logs]


def _traffic(runtime: Runtime, fake: FakeSageMaker) -> None:
    # the Lambda Web Adapter passes each invocation's context, request id included
    context = {"x-amzn-lambda-context": json.dumps({"request_id": "8f5e0b8e-1c2d"})}
    client = openai.OpenAI(
        base_url=runtime.url + "/v1",
        api_key="unused",
        max_retries=0,
        timeout=SOCKET_TIMEOUT,
        default_headers=context,
    )
    for stream in (True, False):
        parts = engine_streams.openai(["The", " sky", " is", " blue"], prompt_tokens=9)
        fake.enqueue(Scenario(parts=parts, interval=0.01))
        answer = client.chat.completions.create(model=MODEL, messages=USER, stream=stream)
        if stream:
            list(answer)  # type: ignore[call-overload]
    broken = engine_streams.openai(["The", " sky"])[:2]
    fake.enqueue(Scenario(parts=broken, exception="ModelStreamError"))
    with pytest.raises(openai.APIError):
        list(client.chat.completions.create(model=MODEL, messages=USER, stream=True))
    fake.enqueue(Scenario(call_error=CallError.model_error("CUDA out of memory")))
    with pytest.raises(openai.APIStatusError):
        client.chat.completions.create(model=MODEL, messages=USER)
    throttled = CallError(status=429, error_type="ThrottlingException", message="slow down")
    fake.enqueue(Scenario(call_error=throttled), Scenario(call_error=throttled))  # and a retry
    with pytest.raises(openai.APIStatusError):
        client.chat.completions.create(model=MODEL, messages=USER)
    connection = http.client.HTTPConnection("127.0.0.1", runtime.port, timeout=SOCKET_TIMEOUT)
    connection.request("POST", "/v1/chat/completions", body=b"{not json", headers=context)
    assert connection.getresponse().status == 400
    connection.close()


# -- reading a query ------------------------------------------------------------------------------


def _fields(query: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The log fields a query names, and the (field, string) pairs it compares."""
    tokens = _TOKEN.findall(query)
    names: set[str] = set()
    compared: set[tuple[str, str]] = set()
    aliases: set[str] = set()
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        previous = tokens[index - 1] if index else ""
        if previous == "as":
            aliases.add(token)
        if not re.fullmatch(r"[A-Za-z_][\w.]*", token) or token.lower() in _KEYWORDS:
            continue
        if token in _COMMANDS or following == "(":
            continue  # a command or a function
        names.add(token)
        if following == "=" and index + 2 < len(tokens) and tokens[index + 2][0] in "\"'":
            compared.add((token, tokens[index + 2][1:-1]))
    return names - aliases, compared


def _keeps(record: dict[str, Any], condition: str) -> bool:
    """Whether ``record`` passes a filter of ``and``-joined comparisons and ``ispresent``."""
    for part in re.split(r"\s+and\s+", condition.strip()):
        present = re.fullmatch(r"ispresent\((\w+)\)", part)
        compare = re.fullmatch(r"(\w+)\s*(=|>|<)\s*(\"[^\"]*\"|\d+)", part)
        if present:
            if present.group(1) not in record:
                return False
        elif compare:
            name, operator, literal = compare.groups()
            if name not in record:
                return False
            value = literal[1:-1] if literal.startswith('"') else float(literal)
            if operator == "=" and record[name] != value:
                return False
            if operator == ">" and not record[name] > value:
                return False
            if operator == "<" and not record[name] < value:
                return False
        else:
            raise AssertionError(f"a filter this test cannot read: {part!r}")
    return True


def _filters(query: str) -> list[str]:
    return [c.strip()[len("filter ") :] for c in query.split("|") if c.strip().startswith("filter")]


# -- the queries ----------------------------------------------------------------------------------


def test_the_page_has_its_queries() -> None:
    queries = _queries()
    assert len(queries) >= 6
    assert any("ErrorKind" in q for q in queries)
    assert any("pct(ttft_ms" in q for q in queries)


def _id(query: str) -> str:
    return re.sub(r"\W+", "-", query[:60]).strip("-")


@pytest.mark.parametrize("query", _queries(), ids=_id)
def test_each_query_names_fields_the_invoker_writes(
    query: str, records: list[dict[str, Any]]
) -> None:
    names, compared = _fields(query)
    written = {key for record in records for key in record}
    assert sorted(n for n in names if not n.startswith("@") and n not in written) == []
    for name, value in compared:
        assert any(r.get(name) == value for r in records), (name, value)


@pytest.mark.parametrize("query", _queries(), ids=_id)
def test_each_query_keeps_some_of_the_lines(query: str, records: list[dict[str, Any]]) -> None:
    kept = [r for r in records if all(_keeps(r, f) for f in _filters(query))]
    assert kept, query


def test_the_lines_hold_the_kinds_the_page_lists(records: list[dict[str, Any]]) -> None:
    # the traffic above: two answers, a stream broken midway, a container error, throttling,
    # a body that is not JSON
    kinds = sorted(r.get("ErrorKind", "-") for r in records)
    assert kinds == ["-", "-", "invalid_request", "stream", "throttled", "upstream"]
    page = " ".join(OPERATE.read_text().split())
    for kind in ("invalid_request", "stream", "throttled", "upstream"):
        assert f"`{kind}`" in page
