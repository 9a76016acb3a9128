"""Parses the ``constructs-llm:stacks`` context value.

Run as a script (``python stacks/selection.py NAMES``), it checks the names without importing
the CDK, so ``make synth STACKS=...`` fails at once on a typo, before ``cdk.out`` is touched.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

__all__ = ["EXAMPLE_NAMES", "select_examples"]

EXAMPLE_NAMES = (
    "phi3-lmi",
    "mixtral-trtllm",
    "falcon40b-lmi",
    "llama2-tgi",
    "mistral-inf2",
    "llama3-components",
    "shared-endpoint",
    "front-doors",
    "model-gateway",
    "production",
    "native-openai",
    "capacity",
    "overnight-batch",
    "rag",
    "openai-batch",
    "fleet",
)
"""The example names, in synth order (``stacks.EXAMPLES`` has exactly these keys)."""


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


if __name__ == "__main__":
    try:
        select_examples(sys.argv[1] if len(sys.argv) > 1 else None, dict.fromkeys(EXAMPLE_NAMES))
    except ValueError as error:
        sys.exit(f"make synth STACKS={sys.argv[1]}: {error}")
