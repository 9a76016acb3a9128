"""Shared validators and synth notes. Each validator returns a problem message (or None) so
callers can gather all problems of one construct into a single error (``Problems``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from aws_cdk import Duration, Token
from constructs import Construct

from constructs_llm.notes import add_note
from constructs_llm.problems import Problems

if TYPE_CHECKING:
    from constructs_llm.sizing.memory import MemoryPlan

__all__ = [
    "MAX_TIMEOUT_S",
    "MIN_TIMEOUT_S",
    "SAGEMAKER_NAME",
    "Problems",
    "add_memory_plan_note",
    "add_quota_note",
    "all_ints",
    "describe",
    "duration_problem",
    "duration_type_problem",
    "name_problem",
    "positive_int_problem",
    "served_name_problem",
    "timeout_problem",
    "type_problem",
]

# SageMaker's pattern for Endpoint, EndpointConfig, variant and inference component names
# (max 63 characters).
SAGEMAKER_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")

MIN_TIMEOUT_S = 60
MAX_TIMEOUT_S = 3600


def duration_type_problem(prop: str, value: object) -> str | None:
    if value is None or isinstance(value, Duration):
        return None
    return f"{prop} must be a Duration, got {value!r}; use Duration.minutes(...)"


def duration_problem(
    prop: str, value: object, *, minimum_s: int, maximum_s: int, bounds: str, why: str
) -> str | None:
    """A Duration of whole seconds within [minimum_s, maximum_s] (tokens pass)."""
    problem = duration_type_problem(prop, value)
    if problem or not isinstance(value, Duration):
        return problem
    seconds = value.to_seconds(integral=False)
    if Token.is_unresolved(seconds):
        return None
    if not minimum_s <= seconds <= maximum_s:
        return f"{prop} must be between {bounds}, got {seconds:g} s; {why}"
    if seconds != int(seconds):
        return f"{prop} must be a whole number of seconds, got {seconds:g} s"
    return None


def timeout_problem(prop: str, value: Duration | None) -> str | None:
    """SageMaker accepts 60-3600 s for both startup timeouts."""
    return duration_problem(
        prop,
        value,
        minimum_s=MIN_TIMEOUT_S,
        maximum_s=MAX_TIMEOUT_S,
        bounds=f"{MIN_TIMEOUT_S} and {MAX_TIMEOUT_S} seconds",
        why="SageMaker rejects other values",
    )


def name_problem(prop: str, value: str | None) -> str | None:
    """SageMaker names: the pattern, at most 63 characters, no underscores."""
    if value is None or Token.is_unresolved(value):
        return None
    if isinstance(value, str) and SAGEMAKER_NAME.match(value):
        return None
    if not isinstance(value, str):
        return f"{prop} must be a string, got {value!r}"
    hint = "at most 63 characters" if len(value) > 63 else "letters, digits and hyphens"
    return (
        f"{prop} must match {SAGEMAKER_NAME.pattern} ({hint}, starting and ending with a letter "
        f"or digit), got {value!r} ({len(value)} characters)"
    )


def served_name_problem(prop: str, value: object) -> str | None:
    """A model name clients send as ``model``: known at synth (the invoker routes by it and
    checks it is unique), 1-256 printable characters, no whitespace."""
    if value is None:
        return None
    if not isinstance(value, str) or Token.is_unresolved(value):
        return f"{prop} must be a string known at synth, got {value!r}"
    if not 1 <= len(value) <= 256 or not value.isprintable() or any(c.isspace() for c in value):
        return (
            f"{prop} must be 1-256 printable characters without spaces (clients send it as "
            f"'model'), got {value!r}"
        )
    return None


def positive_int_problem(prop: str, value: object, *, minimum: int = 1) -> str | None:
    if value is None or Token.is_unresolved(value):
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        return f"{prop} must be an integer >= {minimum}, got {value!r}"
    return None


def type_problem(
    prop: str, value: object, expected: type, fix: str, *, optional: bool = False
) -> str | None:
    """A prop of the wrong kind (a model id string where a ModelSource goes, ...)."""
    if isinstance(value, expected) or (optional and value is None):
        return None
    name = expected.__name__
    article = "an" if name[0] in "AEIOU" or name.startswith("Llm") else "a"  # "an LlmModel"
    return f"{prop} must be {article} {name}, got {describe(value)}; {fix}"


def describe(value: object) -> str:
    """A value for messages: constructs by type and path, anything else by type and repr."""
    if isinstance(value, Construct):
        return f"{type(value).__name__} '{value.node.path}'"
    return f"{type(value).__name__} {value!r}"


def all_ints(*values: object) -> bool:
    """True when every value is a plain int (not a bool): safe to compare."""
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def add_quota_note(scope: Construct, instance_type: str, instances: int) -> None:
    """Service Quotas are per account and region; only a deploy sees them, so say what to check."""
    add_note(
        scope,
        f"Service Quotas: '{instance_type} for endpoint usage' must allow at least {instances} "
        "instance(s) in the target region (new accounts often have 0)",
    )


def add_memory_plan_note(scope: Construct, plan: MemoryPlan | None, *, per_copy: bool) -> None:
    """What the planner found for the model copy ``scope`` serves (an endpoint's instance, or
    one inference-component copy)."""
    if plan is None:
        return
    label = "Memory plan per copy" if per_copy else "Memory plan"
    add_note(scope, f"{label}: {plan.summary()}")
