"""The module map in docs/maintainers.md stays true: it lists every module of the package, one
line each, and nothing else; and the package's docstrings and comments name only repository
files that exist (another project's file is cited as ``owner/repo: path`` and skipped)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "constructs_llm"
MAP = ROOT / "docs" / "maintainers.md"

_ROW = re.compile(r"^\| `([^`]+)` \| .+ \|$")
# A file path: folders, a name and an extension of the kinds the repository holds.
_PATH = re.compile(r"(?<![\w./:-])((?:[\w.-]+/)*[\w-]+\.(?:py|json|md|toml|txt|sh|cfg|ya?ml))\b")
# Another project's file: ``owner/repo: path`` (the colon may be followed by backticks).
_CITATION = re.compile(r"\b[\w-]+/[\w.-]+(?<!\.py)(?<!\.md)(?<!\.json)[:,]?\s*(?:``)?$")
# Files of a model checkpoint, not of this repository.
_CHECKPOINT_FILES = {"config.json", "1_Pooling/config.json", "tokenizer_config.json"}


def _map_rows() -> list[str]:
    text = MAP.read_text()
    section = text[text.index("## Module map") :]
    section = section[: section.index("\n## ", 1)]
    return [m.group(1) for line in section.splitlines() if (m := _ROW.match(line))]


def _modules() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}


def test_the_map_lists_every_module_once() -> None:
    rows = _map_rows()
    assert len(rows) == len(set(rows)), "a module is listed twice"
    missing = sorted(_modules() - set(rows))
    assert not missing, f"add these modules to the module map in docs/maintainers.md: {missing}"


def test_the_map_names_only_modules_that_exist() -> None:
    stale = sorted(set(_map_rows()) - _modules())
    assert not stale, f"the module map names modules that do not exist: {stale}"


def _texts(source: str) -> Iterator[str]:
    """The docstrings and comments of a module (consecutive comment lines as one text)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield docstring
    block: list[str] = []
    last = -2
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        if token.start[0] != last + 1 and block:
            yield " ".join(block)
            block = []
        block.append(token.string.lstrip("#:").strip())
        last = token.start[0]
    if block:
        yield " ".join(block)


def _missing_files(module: Path, source: str) -> list[str]:
    """Repository paths the module's docstrings and comments name that do not exist: relative
    to the repository, to ``constructs_llm/data/``, or to a folder of the package from the
    module's own up."""
    bases = [ROOT, PACKAGE / "data"]
    bases += [d for d in module.parents if d == PACKAGE or PACKAGE in d.parents]
    missing = []
    for text in _texts(source):
        for match in _PATH.finditer(text):
            name, before = match.group(1), text[: match.start()]
            if name in _CHECKPOINT_FILES or re.search(r"https?://\S*$", before):
                continue
            if _CITATION.search(before):
                continue
            if not any((base / name).exists() for base in bases):
                missing.append(name)
    return missing


def test_docstrings_and_comments_name_files_that_exist() -> None:
    found = {
        module.relative_to(ROOT).as_posix(): names
        for module in sorted(PACKAGE.rglob("*.py"))
        if (names := _missing_files(module, module.read_text()))
    }
    assert not found, (
        f"these files are named but do not exist (cite another project's file as "
        f"'owner/repo: path'): {found}"
    )


def test_the_path_check_tells_a_stale_path_from_a_citation() -> None:
    module = PACKAGE / "hosting" / "example.py"
    source = (
        '"""Rendered by ``model/model_resource.py``, planned in ``plan.py``, not in\n'
        '``hosting/gone.py``; vLLM\'s (vllm-project/vllm: ``vllm/engine/arg_utils.py``)."""\n'
        "# the ROUTES schema (streaming/formats.py) and a stale one\n"
        "# (runtime/requests.py)\n"
    )
    assert _missing_files(module, source) == ["hosting/gone.py", "runtime/requests.py"]
