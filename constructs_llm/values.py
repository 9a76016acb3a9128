"""Checks of plain values, shared by every construct: the kind of a prop, positive integers,
durations, and how a value is shown in a message. Each check returns a problem message (or
None) so callers can gather all problems of one construct into a single error
(``Problems``)."""

from __future__ import annotations

from aws_cdk import Duration, Token
from constructs import Construct

__all__ = [
    "all_ints",
    "describe",
    "duration_problem",
    "duration_type_problem",
    "positive_int_problem",
    "type_problem",
]


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
