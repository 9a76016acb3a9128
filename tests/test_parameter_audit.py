"""docs/synth-time-checks.md audits every public parameter: each keyword argument of each
public construct and value (the classes ``constructs_llm`` exports, their constructors and
their static and class factories) has a row saying what is checked at synth and the message,
in short. Nothing is generated: the rows are written by hand, and this test fails when a
parameter has no row, when a row names a parameter that does not exist, or when a row's short
message is not the library's own words.

Results users read but do not build (``MemoryPlan``, ``ModelBinding``, ``LlmAlarms``,
``ToolCalling``, ``ParserChoice``, ``EndpointVariant``, ``TargetFacts``), interfaces, enums and errors take no arguments from
users and have no rows; neither do instance methods (grants, metrics), whose arguments the
wrong-type table covers (``tests/test_wrong_types.py``).
"""

from __future__ import annotations

import enum
import functools
import inspect
import re

import pytest

import constructs_llm
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "synth-time-checks.md"
#: Values the library returns, which users read but do not construct.
RESULTS = frozenset(
    {
        "MemoryPlan",
        "ModelBinding",
        "LlmAlarms",
        "ToolCalling",
        "ParserChoice",
        "EndpointVariant",
        "InstanceFit",
        "TargetFacts",
    }
)
_NOT_ARGUMENTS = ("self", "cls", "scope", "id")
_PARAMETER = re.compile(r"`(\w+)(?:\.(\w+))?\((\w+)=\)`")


def public_parameters() -> set[tuple[str, str | None, str]]:
    """(class, factory or None for the constructor, keyword) of every public parameter."""
    found: set[tuple[str, str | None, str]] = set()
    for name in constructs_llm.__all__:
        kind = getattr(constructs_llm, name)
        if (
            not isinstance(kind, type)
            or issubclass(kind, Exception | enum.Enum)
            or name in RESULTS
            or getattr(kind, "_is_protocol", False)
        ):
            continue
        init = kind.__init__ if "__init__" in vars(kind) else kind
        found |= {(name, None, p) for p in _keywords(init)}
        for attribute, member in vars(kind).items():
            factory = getattr(kind, attribute, None)
            # A factory is a static or class method, or a subclass named on its class
            # (``Engine.vllm`` is the vLLM engine's class, its keywords the engine's fields).
            is_class = isinstance(factory, type) and issubclass(factory, kind)
            if attribute.startswith("_") or not (
                isinstance(member, staticmethod | classmethod) or is_class
            ):
                continue
            found |= {(name, attribute, p) for p in _keywords(getattr(kind, attribute))}
    return found


def _keywords(callable_: object) -> list[str]:
    parameters = inspect.signature(callable_).parameters.values()  # type: ignore[arg-type]
    return [
        p.name
        for p in parameters
        if p.name not in _NOT_ARGUMENTS and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]


def _table() -> list[tuple[str, str, str]]:
    """The rows of the section "Every parameter": (parameters, checked, message)."""
    section = PAGE.read_text().split("## Every parameter", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and _PARAMETER.search(cells[0]):
            rows.append((cells[0], cells[1], cells[2]))
    return rows


def _documented() -> set[tuple[str, str | None, str]]:
    return {
        (kind, factory or None, keyword)
        for parameters, _, _ in _table()
        for kind, factory, keyword in _PARAMETER.findall(parameters)
    }


@functools.cache
def _source_text() -> str:
    package = ROOT / "constructs_llm"
    return "\n".join(p.read_text() for p in sorted(package.rglob("*.py")))


def test_every_public_parameter_has_a_row() -> None:
    wanted = public_parameters()
    assert len(wanted) > 250
    missing = sorted(wanted - _documented(), key=str)
    assert missing == [], "parameters without a row in docs/synth-time-checks.md"


def test_every_row_names_parameters_that_exist() -> None:
    stale = sorted(_documented() - public_parameters(), key=str)
    assert stale == [], "rows naming no public parameter"


@pytest.mark.parametrize("row", _table(), ids=lambda r: _PARAMETER.search(r[0]).group(0))  # type: ignore[union-attr]
def test_each_row_says_what_is_checked_in_the_library_s_own_words(
    row: tuple[str, str, str],
) -> None:
    # GIVEN a row: its check and its message in short, each quoted piece of the message
    # (``…`` stands for what varies) in the words of the library's source
    _, checked, message = row
    assert checked, row
    quoted = re.findall(r"`([^`]+)`", message)
    assert quoted, row
    # a problem's message is its ``wrong`` and its ``fix`` joined by a space: the source's
    # ``"…;", "…"`` (two arguments of ``Problem.of``) reads as ``…; …``
    source = re.sub(r';(["\'])\s*,\s*f?(["\'])', "; ", " ".join(_source_text().split()))
    for fragment in quoted:
        for piece in fragment.split("…"):
            piece = piece.strip()
            if len(piece) >= 6:
                assert piece in source, f"{piece!r} of {row[0]} is not in the library's messages"
