"""Public names loaded on first use (PEP 562): the ``__getattr__`` and ``__dir__`` that
``constructs_llm`` and ``constructs_llm.streaming`` give themselves, so that importing a
package loads none of the modules behind its names."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which exports each name of
    ``exports`` from the module it maps to; a name, once loaded, is kept in the package."""
    names = sorted(exports)

    def load(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def listed() -> list[str]:
        return names

    return load, listed
