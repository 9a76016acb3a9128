"""What the AWS vLLM and SGLang SageMaker DLCs' entrypoints make of the container env: each
``SM_VLLM_<NAME>`` (``SM_SGLANG_<NAME>``) variable becomes the server flag ``--<name>`` (lower
case, ``_`` as ``-``). ``true`` (any case) or an empty value gives the bare flag, ``false``
drops it, a JSON array gives one token per element (an empty one drops the flag), anything
else is the flag's one value.

The rule is the one ``scripts/docker/vllm/sagemaker_args.py`` (``build_args``) and
``scripts/docker/sglang/sagemaker_entrypoint.sh`` of aws/deep-learning-containers apply
(e0ecedea); the engine harness starts vLLM with the flags this gives for the env the library
renders, so it runs what a deployed endpoint runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["VLLM_PREFIX", "flag_args"]

VLLM_PREFIX = "SM_VLLM_"


def flag_args(env: Mapping[str, str], prefix: str = VLLM_PREFIX) -> list[str]:
    """The server's arguments for ``env``, in the entrypoint's order (sorted by name)."""
    args: list[str] = []
    for key in sorted(k for k in env if k.startswith(prefix)):
        flag = "--" + key[len(prefix) :].lower().replace("_", "-")
        value = env[key]
        switch = value.strip().lower()
        tokens = [] if switch == "true" or not value else _tokens(value)
        if switch != "false" and tokens is not None:
            args += [flag, *tokens]
    return args


def _tokens(value: str) -> list[str] | None:
    """The value's tokens; None for an empty JSON array (the flag is left out)."""
    text = value.strip()
    try:
        items = json.loads(text) if text.startswith("[") and text.endswith("]") else None
    except ValueError:
        items = None
    if not isinstance(items, list):
        return [value]
    return [item if isinstance(item, str) else json.dumps(item) for item in items] or None
