"""The library's modules a set of modules needs at run time: the ``constructs_llm`` modules they
import (at module level or inside functions, not under ``if TYPE_CHECKING``), and what those
import in turn, with the packages that hold them. A package's ``__init__`` is read the same way,
so names it only loads on first use (PEP 562) are not followed."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKAGE = "constructs_llm"


def closure(root: Path, modules: Iterable[str]) -> set[str]:
    """The files (relative to ``root``, as a wheel names them) that ``modules`` need."""
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        module = todo.pop()
        path = _path(root, module)
        if module in seen or path is None:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += _imports(module, path)
    return {str(_path(root, m).relative_to(root)) for m in seen}  # type: ignore[union-attr]


def _path(root: Path, module: str) -> Path | None:
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    base = root / module.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _run_time_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*kept, *([node.module] if node.module else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node but what ``if TYPE_CHECKING:`` guards."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for other in node.orelse for n in [other, *_run_time_nodes(other)])
            continue
        yield node
        yield from _run_time_nodes(node)
