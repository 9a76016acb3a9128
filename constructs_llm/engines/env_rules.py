"""Checks of the user's ``env`` against what an engine derives.

The rule: add any key the engine does not derive and override tuning keys; never contradict
the model source, the token limits or the request/stream protocol, never ask for more devices
than the copy has, never put a Hub token or a SageMaker timeout in ``env``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from constructs_llm.engines.context import EngineContext, EnvRule, available_cores, decimal_int
from constructs_llm.hardware.instance_type import is_token
from constructs_llm.problems import Problem

_TOKEN_KEYS = frozenset(
    {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_API_TOKEN", "HUGGINGFACE_HUB_TOKEN"}
)
_HF_TOKEN_VALUE = re.compile(r"hf_[A-Za-z0-9]{20,}")

#: ``(rule, key, value, derived value, ctx) -> problem``
RuleCheck = Callable[[EnvRule | None, str, str, str | None, EngineContext], Problem | None]


@dataclass(frozen=True)
class EnvContract:
    """What one engine says about its env: the derived keys' rules, the names the container
    also reads for them (alias -> derived key), the token env names, and its rule check."""

    rules: Mapping[str, EnvRule]
    aliases: Mapping[str, str]
    token_env_names: tuple[str, ...]
    check: RuleCheck


def user_env_problems(
    contract: EnvContract,
    ctx: EngineContext,
    derived: Mapping[str, str],
    user_env: Mapping[str, str],
) -> list[Problem]:
    token_names = _TOKEN_KEYS | set(contract.token_env_names)
    problems = []
    for key, value in user_env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append(env_not_a_string(key, value))
        elif is_token(value):
            continue  # resolved at deploy time; nothing to compare
        elif key in token_names or _HF_TOKEN_VALUE.search(value):
            problems.append(_token_in_env(key, value))
        elif _looks_like_timeout(key):
            problems.append(_timeout_in_env(key))
        else:
            problems += _derived_key_problems(contract, ctx, derived, key, value)
    return problems


def env_not_a_string(key: object, value: object) -> Problem:
    return Problem.of(
        f"env[{key!r}]",
        value,
        f"env[{key!r}] must map a string to a string, got {type(value).__name__} {value!r};",
        f"write it as {str(value)!r}",
    )


def _token_in_env(key: str, value: str) -> Problem:
    shown = f"'{value[:5]}…'" if value.startswith("hf_") else "a value"
    return Problem.of(
        f"env[{key!r}]",
        None,
        f"env {key} holds {shown} that looks like a Hugging Face token in plain text (it would "
        "be readable in the template and in DescribeModel);",
        "store it in Secrets Manager and pass ModelSource.hugging_face(model_id, token=secret)",
    )


def _timeout_in_env(key: str) -> Problem:
    return Problem.of(
        f"env[{key!r}]",
        None,
        f"env {key} looks like a SageMaker startup timeout, but the container never reads it;",
        "set LlmEndpoint(health_check_timeout=Duration.minutes(...), "
        "download_timeout=Duration.minutes(...)) (or the same on InferenceComponent)",
    )


def _derived_key_problems(
    contract: EnvContract, ctx: EngineContext, derived: Mapping[str, str], key: str, value: str
) -> list[Problem]:
    target = contract.aliases.get(key, key)
    if target != key and target in derived and derived[target] != value:
        return [_alias_loses(key, value, target, derived[target])]
    problem = contract.check(contract.rules.get(target), key, value, derived.get(target), ctx)
    return [problem] if problem else []


def _alias_loses(key: str, value: str, target: str, derived: str) -> Problem:
    return env_entry_problem(
        key,
        value,
        f" is read by the container as {target}, which the engine sets to {derived!r} and which "
        "wins;",
        f"set the engine's own setting instead of {key}",
    )


def env_entry_problem(key: str, value: str, wrong: str, fix: str = "") -> Problem:
    """A problem with the user's ``env[key] = value``: its property is ``env['KEY']``, and its
    message opens with ``env KEY='value'``, followed by ``wrong`` from its own punctuation on
    (``" contradicts ...;"``, ``": the invoker ...;"``)."""
    return Problem.of(f"env[{key!r}]", value, f"env {key}={value!r}{wrong}", fix)


def rule_problem(
    kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
) -> Problem | None:
    """The problem with user ``env[key] = value`` for a derived key of ``kind``, if any."""
    if kind in _FOLLOWED:
        same = _same_switch_value(key, value, derived)
        return None if same else _rule_followed(kind, key, value, derived)
    if kind is None or value == derived:
        return None
    if (kind is EnvRule.MODEL and value == ctx.model_location) or (
        kind is EnvRule.REVISION and value == ctx.revision
    ):
        return None  # restates the source under another name the container reads
    if kind is EnvRule.MODEL:
        return env_entry_problem(
            key,
            value,
            f" contradicts the model source {ctx.model_location!r};",
            f"choose the model with source=ModelSource.hugging_face({value!r}) (or s3(...)) "
            "instead of env",
        )
    if kind is EnvRule.REVISION:
        return env_entry_problem(
            key,
            value,
            f" contradicts the source revision {ctx.revision!r};",
            f"pass ModelSource.hugging_face(..., revision={value!r}) instead",
        )
    if kind is EnvRule.LIMIT:
        setting = "max_input_tokens" if "INPUT" in key else "max_total_tokens"
        current = getattr(ctx, setting)
        clash = f"contradicts {setting}={current}" if current else f"bypasses {setting}"
        return env_entry_problem(
            key,
            value,
            f" {clash} of the model;",
            f"set {setting}={value} on the model instead, so memory sizing and validation use it",
        )
    if kind is EnvRule.PROTOCOL:
        return env_entry_problem(
            key,
            value,
            f" changes the request/stream contract the engine sets ({key}={derived!r}) and the "
            "streaming invoker relies on;",
            "remove it, or describe your container with "
            "Engine.custom(image=..., stream_format=...)",
        )
    return _parallel_env_problem(key, value, ctx)


# What the streaming invoker follows, and the engine settings that set it.
_FOLLOWED = {
    EnvRule.TOOLS: ("tool calling", "tool_calls= and tool_call_parser="),
    EnvRule.REASONING: ("reasoning parsing", "reasoning= and reasoning_parser="),
    EnvRule.KIND: ("model kind (chat or embedding)", "embedding="),
}
# Flags that are switches: the DLC entrypoints pass a bare flag for "true" and for "".
_SWITCHES = ("ENABLE_AUTO_TOOL_CHOICE", "ENABLE_REASONING", "IS_EMBEDDING")


def _rule_followed(kind: EnvRule, key: str, value: str, derived: str | None) -> Problem:
    what, settings = _FOLLOWED[kind]
    sets = f"sets {key}={derived!r}" if derived is not None else f"leaves {key} unset"
    return env_entry_problem(
        key,
        value,
        f" contradicts the engine's {what} (it {sets}), which the streaming invoker follows;",
        f"set {settings} on the engine instead",
    )


def _same_switch_value(key: str, value: str, derived: str | None) -> bool:
    """Whether user env restates the derived setting: a switch's ``true`` and ``""`` both
    turn it on (the DLC entrypoints' bare flag), and ``false`` equals unset."""
    if key.endswith(_SWITCHES):
        given, on = value.strip().lower(), {"", "true"}
        if given not in {*on, "false"}:
            return False
        return (given in on) == (derived is not None and derived.lower() in on)
    return value == derived


def _parallel_env_problem(key: str, value: str, ctx: EngineContext) -> Problem | None:
    if key == "OPTION_TENSOR_PARALLEL_DEGREE" and value.strip().lower() == "max":
        return None
    count = decimal_int(value)
    if count is None or count < 1:
        return env_entry_problem(key, value, " must be a positive integer")
    neuron = key == "HF_NUM_CORES"
    available = available_cores(ctx) if neuron else (ctx.devices or None)
    if available is not None and ctx.instance.known and count > available:
        unit = "NeuronCores" if neuron else "GPUs"
        return _parallel_env_above(key, value, available, unit, ctx)
    return None


def _parallel_env_above(
    key: str, value: str, available: int, unit: str, ctx: EngineContext
) -> Problem:
    return Problem.of(
        f"env[{key!r}]",
        value,
        f"env {key}={value} exceeds the {available} {unit} {ctx.where};",
        f"use at most {available}",
    )


def token_limit_problems(ctx: EngineContext) -> list[Problem]:
    low, high = ctx.max_input_tokens, ctx.max_total_tokens
    if low is not None and high is not None and low >= high:
        return [
            Problem.of(
                "max_input_tokens",
                low,
                f"max_input_tokens ({low}) must be less than max_total_tokens ({high}), which "
                "counts the prompt plus the generated tokens;",
                f"raise max_total_tokens above {low}",
            )
        ]
    return []


def _looks_like_timeout(key: str) -> bool:
    flat = re.sub(r"[^A-Z]", "", key.upper())
    return ("HEALTHCHECK" in flat and "TIMEOUT" in flat) or "DOWNLOADTIMEOUT" in flat
