"""The README and docs/ as a user reads them: their code runs against the package, their links
lead somewhere, and docs/verification.md names only tests that exist.

The README and the topic pages are for users: they import the public names only, and test
paths and bad-input rows are named in docs/verification.md alone."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
import shlex
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = "constructs_llm"
PUBLIC_MODULES = {PACKAGE, f"{PACKAGE}.streaming", f"{PACKAGE}.check_update"}
DOCS = ROOT / "docs"
README = ROOT / "README.md"
VERIFICATION = DOCS / "verification.md"
MAINTAINERS = DOCS / "maintainers.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
USER_PAGES = [p for p in PAGES if p not in (VERIFICATION, MAINTAINERS)]

_PYTHON_BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_TEST_FILE = re.compile(r"\btest_\w+\.py\b|::test_\w+")
_MATRIX_ROW = re.compile(r"\b(?:bad|ok)\[[a-z0-9*-]+\]")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _ids(pages: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in pages]


def _prose(text: str) -> str:
    """The page without fenced blocks and code spans."""
    text = re.sub(r"^ *```.*?^ *```", "", text, flags=re.DOTALL | re.MULTILINE)
    return _CODE_SPAN.sub("", text)


def _imports(code: str, page: Path) -> list[ast.ImportFrom | ast.Import]:
    tree = ast.parse(textwrap.dedent(code), str(page))
    return [n for n in ast.walk(tree) if isinstance(n, (ast.ImportFrom, ast.Import))]


# -- code ----------------------------------------------------------------------------------------


def test_every_python_block_parses_and_its_imports_resolve() -> None:
    # The complete app is synthesized as written by tests/test_chat_example.py; the other
    # blocks are fragments, so what holds for all of them is their syntax and their imports.
    imported = set()
    for page in PAGES:
        for _, code in _PYTHON_BLOCK.findall(page.read_text()):
            for node in _imports(code, page):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                    module = importlib.import_module(str(node.module))
                    for alias in node.names:
                        assert hasattr(module, alias.name), (
                            f"{page.name}: {node.module}.{alias.name}"
                        )
                        imported.add(f"{node.module}.{alias.name}")
    assert {
        "constructs_llm.StreamingInvoker",
        "constructs_llm.Deployment",
        "constructs_llm.streaming.parse_stream",
        "constructs_llm.streaming.sigv4_hook",
    } <= imported


@pytest.mark.parametrize("page", USER_PAGES, ids=_ids(USER_PAGES))
def test_user_pages_import_only_the_public_modules(page: Path) -> None:
    for _, code in _PYTHON_BLOCK.findall(page.read_text()):
        for node in _imports(code, page):
            modules = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
            )
            for module in modules:
                if module.startswith(PACKAGE):
                    assert module in PUBLIC_MODULES, f"{page.name} imports from {module}"


def test_every_dotted_name_the_pages_give_resolves() -> None:
    names = set()
    for page in PAGES:
        names |= set(re.findall(rf"{PACKAGE}(?:\.[A-Za-z_]\w*)+", page.read_text()))
    assert "constructs_llm.streaming.stream_chat" in names
    for name in sorted(names):
        parts = name.split(".")
        for split in range(len(parts), 0, -1):
            try:
                found: object = importlib.import_module(".".join(parts[:split]))
            except ModuleNotFoundError:
                continue
            for attribute in parts[split:]:
                found = getattr(found, attribute)
            break
        else:
            raise AssertionError(name)


def _python_m_commands() -> list[tuple[str, str, list[str]]]:
    """Every ``python -m constructs_llm...`` command of the pages' bash blocks: the page, the
    module and its arguments (up to ``&&``, ``|`` or ``>``)."""
    found = []
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.DOTALL):
            text = block.replace("\\\n", " ")
            for match in re.finditer(rf"python -m ({PACKAGE}[\w.]*)([^\n&|>]*)", text):
                found.append((page.name, match.group(1), shlex.split(match.group(2))))
    return found


def test_every_python_m_command_runs_a_module_with_arguments_it_takes() -> None:
    commands = _python_m_commands()
    assert ("operate.md", f"{PACKAGE}.check_update") in {(p, m) for p, m, _ in commands}
    for page, module, args in commands:
        spec = importlib.util.find_spec(module)
        assert spec is not None, f"{page}: {module}"
        runnable = spec.submodule_search_locations is None or importlib.util.find_spec(
            f"{module}.__main__"
        )
        assert runnable, f"{page}: {module} has no __main__"
        if module == f"{PACKAGE}.check_update":
            from constructs_llm.check_update.__main__ import arguments

            arguments(args)  # exits 2 on arguments the command does not take


def test_the_python_m_check_refuses_what_the_command_would() -> None:
    from constructs_llm.check_update.__main__ import arguments

    for wrong in (["only-one.json"], ["--stack", "S", "a.json", "b.json"], ["--stak", "S", "a"]):
        with pytest.raises(SystemExit) as exited:
            arguments(wrong)
        assert exited.value.code == 2


# -- links ---------------------------------------------------------------------------------------


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^ *```.*?^ *```", "", page.read_text(), flags=re.DOTALL | re.MULTILINE)
    return {_anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def _prose_keeping_links(text: str) -> str:
    return re.sub(r"^ *```.*?^ *```", "", text, flags=re.DOTALL | re.MULTILINE)


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    for target in _LINK.findall(_prose_keeping_links(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}"
        if anchor:
            assert anchor in _anchors(linked), f"{page.name}: {target}"


# -- what each page may name ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if p != VERIFICATION],
    ids=_ids([p for p in PAGES if p != VERIFICATION]),
)
def test_test_paths_and_matrix_rows_are_named_in_verification_only(page: Path) -> None:
    text = page.read_text()
    assert _TEST_FILE.findall(text) == [], page.name
    assert _MATRIX_ROW.findall(text) == [], page.name


@pytest.mark.parametrize("page", USER_PAGES, ids=_ids(USER_PAGES))
def test_user_pages_speak_of_the_library_not_of_its_history(page: Path) -> None:
    # "seed": the scenarios the project started from; users know the examples by name.
    assert re.findall(r"\bseeds?\b", _prose(page.read_text()), re.IGNORECASE) == [], page.name


# -- docs/verification.md ------------------------------------------------------------------------


def _cited_tests() -> list[tuple[str, str | None]]:
    """(file, test or None) for every test the page names; ``::name`` alone is of the file
    named last in the same table cell or paragraph."""
    cited: list[tuple[str, str | None]] = []
    for chunk in re.split(r"\||\n\n", VERIFICATION.read_text()):
        current = None
        for span in re.findall(r"`([^`]+)`", chunk):
            match = re.fullmatch(r"((?:tests|bench)/[\w/]+\.py)(?:::(\w+))?", span)
            if match:
                current = match.group(1)
                cited.append((current, match.group(2)))
            elif span.startswith("::"):
                assert current, f"{span} follows no file"
                cited.append((current, span[2:]))
    return cited


@functools.cache
def _functions(source: Path) -> frozenset[str]:
    """The names of the functions the module at ``source`` defines (parsed once)."""
    return frozenset(
        node.name
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )


def test_verification_names_only_tests_that_exist() -> None:
    cited = _cited_tests()
    assert len(cited) > 150
    for path, name in cited:
        source = ROOT / path
        assert source.is_file(), path
        if name is not None:
            assert name in _functions(source), f"{path}::{name}"


def test_verification_covers_every_test_module_the_pages_rely_on() -> None:
    # Each test module backs some claim: one the page never names is a claim gone unlisted.
    cited = {path for path, _ in _cited_tests()}
    modules = {
        str(p.relative_to(ROOT))
        for p in [*ROOT.glob("tests/test_*.py"), *ROOT.glob("tests/streaming/test_*.py")]
    }
    internal = {  # tests of the test tooling and of the machine, not of a documented claim
        "tests/test_environment.py",
        "tests/test_suite_order.py",
    }
    assert sorted(modules - internal - cited) == []
