"""The package's layout: no import cycle (runtime, function-level or type-only) and no module
reaching into another object's private members. One concept per file is the rule; there is no
line cap.

One back edge is allowed, and only for the type checker: ``Engine.tgi``, ``Engine.vllm`` and
the other factories are the engine classes themselves, loaded on first use
(``engines/engine.py``, ``_Factory``), and ``engines/engine.py`` names those classes under
``if TYPE_CHECKING:`` so that mypy checks a factory's keywords against the engine's fields. At
run time the engine modules import ``engines/engine.py`` (they subclass :class:`Engine`) and
never the reverse."""

from __future__ import annotations

import ast
import functools
import importlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import constructs_llm

PACKAGE = Path(constructs_llm.__file__).parent
ROOT = PACKAGE.parent
#: namedtuple's public API is spelt with a leading underscore.
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}
ENGINE = "constructs_llm.engines.engine"
#: The engine family modules whose classes are the factories of ``Engine``.
ENGINE_FAMILIES = frozenset(
    f"constructs_llm.engines.{name}" for name in ("tgi", "lmi", "dlc", "tei", "custom")
)


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """The module at ``path``, parsed once for every test here (nothing changes the trees)."""
    return ast.parse(path.read_text())


def _type_only_imports(tree: ast.Module) -> set[ast.AST]:
    """The import statements under ``if TYPE_CHECKING:`` at a module's top level."""
    return {
        child
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for child in node.body
        if isinstance(child, ast.Import | ast.ImportFrom)
    }


def _imports(name: str, path: Path, known: set[str], *, for_types: bool = True) -> set[str]:
    """Every module ``name`` imports, wherever the import statement stands; without
    ``for_types``, the imports under ``if TYPE_CHECKING:`` are left out."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = _parsed(path)
    skipped = set() if for_types else _type_only_imports(tree)
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
    return {m for m in found if m in known and m != name}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle, or none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def _graph() -> dict[str, set[str]]:
    """The import graph, without the one back edge the type checker alone follows: a copy
    each test may change (by giving a module a new set of imports)."""
    return {name: set(targets) for name, targets in _package_graph().items()}


@functools.cache
def _package_graph() -> dict[str, frozenset[str]]:
    modules = dict(_modules())
    graph = {name: _imports(name, path, set(modules)) for name, path in modules.items()}
    graph[ENGINE] -= ENGINE_FAMILIES - _imports(
        ENGINE, modules[ENGINE], set(modules), for_types=False
    )
    return {name: frozenset(targets) for name, targets in graph.items()}


def test_no_module_imports_itself_back() -> None:
    assert _cycle(_graph()) == []


def test_the_engine_contract_names_its_factories_for_the_type_checker_only() -> None:
    # GIVEN the modules engines/engine.py imports, at run time and for the type checker
    modules = dict(_modules())
    at_run_time = _imports(ENGINE, modules[ENGINE], set(modules), for_types=False)
    for_types = _imports(ENGINE, modules[ENGINE], set(modules))
    # THEN it names every engine family for the type checker and imports none at run time,
    # while each factory is a subclass of Engine, defined in one of those families
    assert for_types >= ENGINE_FAMILIES
    assert not at_run_time & ENGINE_FAMILIES
    engine = constructs_llm.Engine
    factories = [engine.tgi, engine.tgi_neuronx, engine.lmi, engine.vllm, engine.sglang]
    for factory in [*factories, engine.tei, engine.custom]:
        assert issubclass(factory, engine), factory
        assert factory.__module__ in ENGINE_FAMILIES, factory


def test_a_back_edge_other_than_the_engine_factories_is_a_cycle() -> None:
    # GIVEN the package's graph with one more back edge: the instance type module importing the
    # hosting plan that imports it
    graph = _graph()
    graph["constructs_llm.hardware.instance_type"] = {
        *graph["constructs_llm.hardware.instance_type"],
        "constructs_llm.hosting.plan",
    }
    # THEN the cycle is found
    assert _cycle(graph) != []


@pytest.mark.parametrize("path", [p for _, p in _modules()], ids=lambda p: p.name)
def test_no_module_reads_another_object_s_private_members(path: Path) -> None:
    offenders = []
    for node in ast.walk(_parsed(path)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") or node.attr in NAMEDTUPLE_API:
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
            continue
        offenders.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert offenders == []


def test_every_checkov_skip_in_the_examples_carries_its_reason() -> None:
    """What the docs claim of waivers, read from the templates rather than the source: each skip
    checkov sees names its check and says why it does not apply."""
    seen = [
        (skip["id"], skip.get("comment", ""))
        for path in sorted((ROOT / "tests" / "fixtures" / "templates").glob("*.json"))
        for resource in json.loads(path.read_text())["Resources"].values()
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", [])
    ]
    assert seen, "the examples carry checkov skips"
    assert [
        (check, why) for check, why in seen if not check.startswith("CKV") or len(why) < 20
    ] == []


def test_the_construct_layer_never_imports_the_runtime() -> None:
    """The invoker's construct layer and its Lambda runtime share only ``contract.py`` (which
    the runtime imports as ``streaming.formats``, its name in the code asset);
    the package facade ``constructs_llm.streaming`` re-exports the parser lazily for users, and
    the asynchronous chat client (a client, never imported by a construct) checks and builds
    requests with the runtime's own code."""
    modules = dict(_modules())
    known = set(modules)
    runtime = "constructs_llm.streaming.runtime"
    facade = {"constructs_llm.streaming", "constructs_llm.streaming.async_chat"}
    offenders = {
        name: sorted(m for m in _imports(name, path, known) if m.startswith(runtime))
        for name, path in modules.items()
        if not name.startswith(runtime) and name not in facade
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_runtime_imports_only_itself_and_the_shared_vocabulary() -> None:
    """The runtime reaches the vocabulary through ``streaming/formats.py``, which imports
    ``contract.py`` alone, which imports nothing of the package: the three are the whole code
    asset."""
    modules = dict(_modules())
    known = set(modules)
    runtime = "constructs_llm.streaming.runtime"
    outside = {
        name: sorted(m for m in _imports(name, path, known) if not m.startswith(runtime))
        for name, path in modules.items()
        if name.startswith(runtime)
    }
    assert {name: found for name, found in outside.items() if found not in ([], [FORMATS])} == {}
    assert _imports(FORMATS, modules[FORMATS], known) == {CONTRACT}
    assert _imports(CONTRACT, modules[CONTRACT], known) == set()


#: The floors of the package, from the bottom up, each named by the module prefixes it holds:
#: a module imports only modules of its own floor or of one below. The package's modules
#: outside the subpackages (errors, problems, values, the contract, ...) are the ground.
#: The two facades, ``constructs_llm`` and ``constructs_llm.streaming``, stand above every
#: floor: they name every public class for type checkers.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("constructs_llm.hardware",),
    ("constructs_llm.sizing",),
    ("constructs_llm.images",),
    ("constructs_llm.engines",),
    ("constructs_llm.model",),
    ("constructs_llm.operations",),
    ("constructs_llm.updates",),
    ("constructs_llm.hosting",),
    ("constructs_llm.streaming.runtime", "constructs_llm.streaming.formats"),
    (
        "constructs_llm.streaming.client",
        "constructs_llm.streaming.bearer_token",
        "constructs_llm.streaming.async_chat",
    ),
    ("constructs_llm.streaming.invoker",),
    ("constructs_llm.dashboards",),
    ("constructs_llm.check_update",),
)
FACADES = frozenset({"constructs_llm", "constructs_llm.streaming"})
CONTRACT = "constructs_llm.contract"
FORMATS = "constructs_llm.streaming.formats"
#: Types of a higher floor named under ``if TYPE_CHECKING:`` only, for annotations (no import
#: at run time): the notes name the plans they print, the metrics a variant's plan.
TYPE_ONLY_UPWARD = frozenset(
    {
        ("constructs_llm.notes", "constructs_llm.sizing.memory"),
        ("constructs_llm.notes", "constructs_llm.operations.deployment"),
        ("constructs_llm.operations.metrics", "constructs_llm.hosting.plan"),
    }
)


def _floor(module: str) -> int:
    """The floor ``module`` stands on: 0 for the ground, else 1 + its index in FLOORS."""
    for index, prefixes in enumerate(FLOORS, start=1):
        if any(module == p or module.startswith(f"{p}.") for p in prefixes):
            return index
    assert module.count(".") == 1, f"{module} is on no floor: add its folder to FLOORS"
    return 0


def _upward(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Every import of a module on a higher floor than the importer's."""
    return {
        (name, target)
        for name, targets in graph.items()
        if name not in FACADES
        for target in targets
        if target not in FACADES and _floor(target) > _floor(name)
    }


def test_the_floors_hold() -> None:
    """Each folder imports only its own floor and those below: the contract on the ground, the
    images beside the engines (below the model), the dashboards above the hosts and the
    invoker they show."""
    assert _upward(_graph()) == TYPE_ONLY_UPWARD
    modules = dict(_modules())
    known = set(modules)
    for name, target in TYPE_ONLY_UPWARD:
        assert target not in _imports(name, modules[name], known, for_types=False)


def test_an_upward_import_breaks_the_floors() -> None:
    # GIVEN the graph with an engine importing the model (which imports the engines), and the
    # operations importing the invoker (as the dashboard did from operations/)
    graph = _graph()
    graph["constructs_llm.engines.tgi"] = {
        *graph["constructs_llm.engines.tgi"],
        "constructs_llm.model.llm_model",
    }
    graph["constructs_llm.operations.alarms"] = {
        *graph["constructs_llm.operations.alarms"],
        "constructs_llm.streaming.invoker.streaming_invoker",
    }
    # THEN both are found
    assert _upward(graph) - TYPE_ONLY_UPWARD == {
        ("constructs_llm.engines.tgi", "constructs_llm.model.llm_model"),
        ("constructs_llm.operations.alarms", "constructs_llm.streaming.invoker.streaming_invoker"),
    }


def test_no_construct_below_the_invoker_imports_the_streaming_package() -> None:
    """The vocabulary is ``constructs_llm.contract``: importing ``constructs_llm.streaming``
    (even its ``formats``) from a construct below the invoker would run the streaming
    package's facade and point an arrow back up the floors."""
    modules = dict(_modules())
    known = set(modules)
    lowest = min(_floor("constructs_llm.streaming.runtime"), _floor(FORMATS))
    below = [n for n in modules if n not in FACADES and _floor(n) < lowest]
    assert len(below) > 100
    streaming = {n for n in modules if n.startswith("constructs_llm.streaming")}
    offenders = {name: sorted(_imports(name, modules[name], known) & streaming) for name in below}
    assert {name: found for name, found in offenders.items() if found} == {}


#: The folders whose modules call or watch targets: they read a target's ``facts``
#: (``TargetFacts``), never which host class it is.
READERS_OF_FACTS = ("streaming/invoker", "operations", "dashboards")


@functools.cache
def _host_classes() -> frozenset[str]:
    """The names of the hosting constructs: every ``Construct`` subclass ``hosting/`` defines."""
    from constructs import Construct

    found = set()
    for name, _ in _modules():
        if not name.startswith("constructs_llm.hosting"):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and issubclass(value, Construct)
            ):
                found.add(value.__name__)
    return frozenset(found)


def _class_tests(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every class named by an ``isinstance`` or ``issubclass`` call, with its line."""
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            continue
        for part in ast.walk(node.args[1]):
            if isinstance(part, ast.Name):
                yield node.lineno, part.id
            elif isinstance(part, ast.Attribute):
                yield node.lineno, part.attr


def _host_class_tests(tree: ast.AST) -> list[str]:
    return [f"{line}: {name}" for line, name in _class_tests(tree) if name in _host_classes()]


def test_the_readers_of_targets_never_test_a_host_class() -> None:
    """The invoker, operations and dashboards read ``target.facts``; a new host needs no edit
    there."""
    assert {"LlmEndpoint", "ImportedEndpoint", "InferenceComponent", "AdapterComponent"} <= (
        _host_classes()
    )
    readers = [
        path
        for _, path in _modules()
        if any(path.is_relative_to(PACKAGE / folder) for folder in READERS_OF_FACTS)
    ]
    assert len(readers) > 20
    offenders = {
        path.relative_to(PACKAGE).as_posix(): found
        for path in readers
        if (found := _host_class_tests(_parsed(path)))
    }
    assert offenders == {}


def test_a_switch_on_a_host_class_is_found() -> None:
    # GIVEN the invoker's old switch on its targets' classes, and a test of a value's type
    switch = ast.parse(
        "if isinstance(target, AdapterComponent): pass\n"
        "elif isinstance(target, (hosting.InferenceComponent, str)): pass\n"
        "elif isinstance(target, LlmEndpoint | None): pass\n"
        "ok = isinstance(value, dict)\n"
    )
    # THEN each host class is found, and nothing else
    assert _host_class_tests(switch) == [
        "1: AdapterComponent",
        "2: InferenceComponent",
        "3: LlmEndpoint",
    ]
