"""The public API is what ``constructs_llm`` and ``constructs_llm.streaming`` export: every name
of the design's contract is exported there, and every exported name is documented on a user
page (the README or docs/), so the exports cannot drift from what users are told."""

from __future__ import annotations

import importlib
import re

import pytest

import constructs_llm
import constructs_llm.check_update
import constructs_llm.streaming
from tests.conftest import ROOT

# The names of the design's contract and of its additions, by the module users import them from.
CONTRACT: dict[str, set[str]] = {
    "constructs_llm": {
        "InstanceType",
        "ContainerImage",
        "Engine",
        "StreamFormat",
        "ModelSource",
        "LlmModel",
        "LlmEndpoint",
        "Autoscaling",
        "InferenceComponentEndpoint",
        "InferenceComponent",
        "StreamingInvoker",
        "Deployment",
        "ScheduledCapacity",
        "InvokerAuth",
        "LlmDashboard",
        "Variant",
        "AsyncInference",
        "Placement",
        "ModelBinding",
    },
    "constructs_llm.streaming": {"parse_stream", "TokenEvent", "DoneEvent", "ErrorEvent"},
    "constructs_llm.check_update": {"check_update", "read_template", "Finding", "Verdict"},
}
_USER_PAGES = [
    ROOT / "README.md",
    *(
        p
        for p in sorted((ROOT / "docs").glob("*.md"))
        if p.name not in {"maintainers.md", "verification.md"}
    ),
]


@pytest.mark.parametrize("module", sorted(CONTRACT))
def test_the_contract_is_exported(module: str) -> None:
    exported = set(importlib.import_module(module).__all__)
    assert CONTRACT[module] <= exported, f"{module} lacks {sorted(CONTRACT[module] - exported)}"


@pytest.mark.parametrize(
    "module", [constructs_llm, constructs_llm.streaming, constructs_llm.check_update]
)
def test_every_export_is_documented_for_users(module: object) -> None:
    text = "\n".join(page.read_text() for page in _USER_PAGES)
    names: list[str] = module.__all__  # type: ignore[attr-defined]
    undocumented = [n for n in names if not re.search(rf"\b{re.escape(n)}\b", text)]
    assert not undocumented, f"document these exports on a user page: {undocumented}"


@pytest.mark.parametrize(
    "module", [constructs_llm, constructs_llm.streaming, constructs_llm.check_update]
)
def test_every_export_resolves(module: object) -> None:
    for name in module.__all__:  # type: ignore[attr-defined]
        assert getattr(module, name) is not None
