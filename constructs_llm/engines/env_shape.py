"""What SageMaker accepts as a container environment, whatever the engine.

botocore 1.44.5, ``sagemaker`` ``ContainerDefinition.Environment`` (``EnvironmentMap``): at
most 100 entries; each key matches ``[a-zA-Z_][a-zA-Z0-9_]*`` (``EnvironmentKey``) and each
key and value is at most 1,024 characters (``EnvironmentValue``); "the maximum length of all
keys and values in the map, combined, is 32 KB". CreateModel refuses anything else, so the
deploy would fail after the stack has started; these checks say it at synth instead.

A key such as ``--max-model-len`` or ``max-model-len`` is a command-line flag written as an
env name: no engine reads it (the vLLM DLC reads ``SM_VLLM_MAX_MODEL_LEN``), so the message
names the engine's own spelling when it has one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from constructs_llm.problems import Problem

_KEY = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_FLAG = re.compile(r"-{0,2}[a-zA-Z][a-zA-Z0-9]*(?:[-_][a-zA-Z0-9]+)*")
MAX_ENTRIES = 100
MAX_LENGTH = 1024
MAX_TOTAL = 32 * 1024
_SOURCE = "SageMaker's CreateModel (ContainerDefinition.Environment)"

#: ``flag -> the engine's env name for it``, or None where the engine has no such mapping.
FlagSpelling = Callable[[str], str | None]


def env_shape_problems(
    user_env: Mapping[str, str], effective: Mapping[str, str], spelling: FlagSpelling
) -> list[Problem]:
    """Problems with the env SageMaker would be given: the user's keys and values, then the
    whole map (the engine's derived env plus the user's)."""
    problems = [p for key in user_env if (p := _key_problem(key, spelling))]
    problems += [
        _too_long("value of env", key, len(value))
        for key, value in user_env.items()
        if len(value) > MAX_LENGTH
    ]
    if len(effective) > MAX_ENTRIES:
        problems.append(
            Problem.of(
                "env",
                None,
                f"the container env holds {len(effective)} entries with the engine's own, above "
                f"the {MAX_ENTRIES} that {_SOURCE} accepts;",
                f"drop {len(effective) - MAX_ENTRIES} of your env entries",
            )
        )
    total = sum(len(key) + len(value) for key, value in effective.items())
    if total > MAX_TOTAL:
        problems.append(
            Problem.of(
                "env",
                None,
                f"the container env's keys and values add up to {total:,} characters with the "
                f"engine's own, above the {MAX_TOTAL:,} (32 KB) that {_SOURCE} accepts;",
                "shorten "
                "or drop long values (a chat template or config can go in the model's files)",
            )
        )
    return problems


def _key_problem(key: str, spelling: FlagSpelling) -> Problem | None:
    if len(key) > MAX_LENGTH:
        return _too_long("env key", key[:40] + "…", len(key))
    if _KEY.fullmatch(key):
        return None
    flag = key.lstrip("-")
    if key.startswith("-") or ("-" in key and _FLAG.fullmatch(key)):
        engine_name = spelling(flag) if _FLAG.fullmatch(key) else None
        fix = (
            f"the engine reads it as env {engine_name!r}"
            if engine_name
            else "pass it as the env name the engine reads (see its documentation)"
        )
        return Problem.of(
            f"env[{key!r}]",
            key,
            f"env key {key!r} is a command-line flag, which no container reads from its "
            f"environment, and {_SOURCE} refuses it (keys match [a-zA-Z_][a-zA-Z0-9_]*);",
            fix,
        )
    suggestion = re.sub(r"[^a-zA-Z0-9_]", "_", key)
    if suggestion[:1].isdigit() or not suggestion:
        suggestion = "_" + suggestion
    return Problem.of(
        f"env[{key!r}]",
        key,
        f"env key {key!r} is refused by {_SOURCE}: keys match [a-zA-Z_][a-zA-Z0-9_]* "
        "(letters, digits and underscores, not starting with a digit);",
        f"e.g. {suggestion!r}",
    )


def _too_long(what: str, key: str, length: int) -> Problem:
    return Problem.of(
        f"env[{key!r}]",
        None,
        f"{what} {key!r} is {length:,} characters, above the {MAX_LENGTH:,} that {_SOURCE} "
        "accepts;",
        "shorten it, or put long content in the model's files",
    )


def flag_to_env(prefix: str) -> FlagSpelling:
    """The spelling of engines that read ``<prefix><FLAG>`` for ``--flag``: ``--max-model-len``
    becomes ``SM_VLLM_MAX_MODEL_LEN`` with prefix ``SM_VLLM_``."""

    def spelling(flag: str) -> str:
        return prefix + flag.replace("-", "_").upper()

    return spelling
