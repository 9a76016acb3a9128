"""Parses the ``constructs-llm:stacks`` context value."""

from __future__ import annotations

from collections.abc import Mapping


def select_examples(value: object, examples: Mapping[str, object]) -> list[str]:
    """``"all"`` (or nothing) selects every example; otherwise a comma-separated list."""
    if value in (None, "", "all"):
        return list(examples)
    names = [n.strip() for n in str(value).split(",") if n.strip()]
    unknown = [n for n in names if n not in examples]
    if unknown:
        raise ValueError(
            f"unknown example stack(s) {unknown} in context constructs-llm:stacks; "
            f"choose from {sorted(examples)} or 'all'"
        )
    return names
