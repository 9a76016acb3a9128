"""Checks of the user's ``env`` against what an engine derives.

The rule: add any key the engine does not derive and override tuning keys; never contradict
the model source, the token limits or the request/stream protocol, never ask for more devices
than the copy has, never put a Hub token or a SageMaker timeout in ``env``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from constructs_llm.engines import messages
from constructs_llm.engines.context import EngineContext, EnvRule, available_cores, decimal_int
from constructs_llm.hardware.instance_type import is_token

__all__ = ["EnvContract", "RuleCheck", "rule_problem", "token_limit_problems", "user_env_problems"]

_TOKEN_KEYS = frozenset(
    {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_API_TOKEN", "HUGGINGFACE_HUB_TOKEN"}
)
_HF_TOKEN_VALUE = re.compile(r"hf_[A-Za-z0-9]{20,}")

#: ``(rule, key, value, derived value, ctx) -> problem``
RuleCheck = Callable[[EnvRule | None, str, str, str | None, EngineContext], str | None]


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
) -> list[str]:
    token_names = _TOKEN_KEYS | set(contract.token_env_names)
    problems = []
    for key, value in user_env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append(messages.env_not_a_string(key, value))
        elif is_token(value):
            continue  # resolved at deploy time; nothing to compare
        elif key in token_names or _HF_TOKEN_VALUE.search(value):
            problems.append(messages.token_in_env(key, value))
        elif _looks_like_timeout(key):
            problems.append(messages.timeout_in_env(key))
        else:
            problems += _derived_key_problems(contract, ctx, derived, key, value)
    return problems


def _derived_key_problems(
    contract: EnvContract, ctx: EngineContext, derived: Mapping[str, str], key: str, value: str
) -> list[str]:
    target = contract.aliases.get(key, key)
    if target != key and target in derived and derived[target] != value:
        return [messages.alias_loses(key, value, target, derived[target])]
    problem = contract.check(contract.rules.get(target), key, value, derived.get(target), ctx)
    return [problem] if problem else []


def rule_problem(
    kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
) -> str | None:
    """The problem with user ``env[key] = value`` for a derived key of ``kind``, if any."""
    if kind is EnvRule.TOOLS:
        return (
            None
            if _same_tool_value(key, value, derived)
            else messages.rule_tools(key, value, derived)
        )
    if kind is None or value == derived:
        return None
    if (kind is EnvRule.MODEL and value == ctx.model_location) or (
        kind is EnvRule.REVISION and value == ctx.revision
    ):
        return None  # restates the source under another name the container reads
    if kind is EnvRule.MODEL:
        return messages.rule_model(key, value, ctx)
    if kind is EnvRule.REVISION:
        return messages.rule_revision(key, value, ctx)
    if kind is EnvRule.LIMIT:
        setting = "max_input_tokens" if "INPUT" in key else "max_total_tokens"
        return messages.rule_limit(key, value, setting, getattr(ctx, setting))
    if kind is EnvRule.PROTOCOL:
        return messages.rule_protocol(key, value, derived)
    return _parallel_env_problem(key, value, ctx)


def _same_tool_value(key: str, value: str, derived: str | None) -> bool:
    """Whether user env restates the derived tool setting: a flag's ``true`` and ``""`` both
    turn it on (the DLC entrypoints' bare flag), and ``false`` equals unset."""
    if key.endswith("ENABLE_AUTO_TOOL_CHOICE"):
        given, on = value.strip().lower(), {"", "true"}
        if given not in {*on, "false"}:
            return False
        return (given in on) == (derived is not None and derived.lower() in on)
    return value == derived


def _parallel_env_problem(key: str, value: str, ctx: EngineContext) -> str | None:
    if key == "OPTION_TENSOR_PARALLEL_DEGREE" and value.strip().lower() == "max":
        return None
    count = decimal_int(value)
    if count is None or count < 1:
        return f"env {key}={value!r} must be a positive integer"
    neuron = key == "HF_NUM_CORES"
    available = available_cores(ctx) if neuron else (ctx.devices or None)
    if available is not None and ctx.instance.known and count > available:
        unit = "NeuronCores" if neuron else "GPUs"
        return messages.parallel_env_above(key, value, available, unit, ctx)
    return None


def token_limit_problems(ctx: EngineContext) -> list[str]:
    low, high = ctx.max_input_tokens, ctx.max_total_tokens
    if low is not None and high is not None and low >= high:
        return [messages.token_limits_order(low, high)]
    return []


def _looks_like_timeout(key: str) -> bool:
    flat = re.sub(r"[^A-Z]", "", key.upper())
    return ("HEALTHCHECK" in flat and "TIMEOUT" in flat) or "DOWNLOADTIMEOUT" in flat
