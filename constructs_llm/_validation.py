"""Shared validators. Each returns a problem message (or None) so callers can gather all
problems of one construct into a single error, as the CDK's own validators do."""

from __future__ import annotations

import re
from collections.abc import Iterable

from aws_cdk import Duration, Token

from constructs_llm.errors import ConfigurationError

# SageMaker's pattern for Endpoint, EndpointConfig and variant names (max 63 characters).
SAGEMAKER_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")

MIN_TIMEOUT_S = 60
MAX_TIMEOUT_S = 3600


class Problems:
    """Collects problem messages and raises them together."""

    def __init__(self, subject: str) -> None:
        self._subject = subject
        self._messages: list[str] = []

    def add(self, message: str | None) -> None:
        if message:
            self._messages.append(message)

    def extend(self, messages: Iterable[str]) -> None:
        self._messages.extend(m for m in messages if m)

    def raise_if_any(self, error: type[ConfigurationError] = ConfigurationError) -> None:
        if not self._messages:
            return
        if len(self._messages) == 1:
            raise error(f"{self._subject}: {self._messages[0]}")
        lines = "\n".join(f"  - {m}" for m in self._messages)
        raise error(f"{self._subject} has {len(self._messages)} problems:\n{lines}")


def timeout_problem(prop: str, value: Duration | None) -> str | None:
    """SageMaker accepts 60-3600 s for both startup timeouts."""
    if value is None:
        return None
    if not isinstance(value, Duration):
        return f"{prop} must be a Duration, got {value!r}; use Duration.minutes(...)"
    if Token.is_unresolved(value.to_seconds()):
        return None
    seconds = value.to_seconds()
    if not MIN_TIMEOUT_S <= seconds <= MAX_TIMEOUT_S:
        return (
            f"{prop} must be between {MIN_TIMEOUT_S} and {MAX_TIMEOUT_S} seconds, got "
            f"{seconds:g} s; SageMaker rejects other values"
        )
    return None


def name_problem(prop: str, value: str | None) -> str | None:
    """Endpoint names: SageMaker's pattern, at most 63 characters, no underscores."""
    if value is None or Token.is_unresolved(value):
        return None
    if SAGEMAKER_NAME.match(value):
        return None
    hint = "at most 63 characters" if len(value) > 63 else "letters, digits and hyphens"
    return (
        f"{prop} must match {SAGEMAKER_NAME.pattern} ({hint}, starting and ending with a letter "
        f"or digit), got {value!r} ({len(value)} characters)"
    )


def positive_int_problem(prop: str, value: int | None, *, minimum: int = 1) -> str | None:
    if value is None or Token.is_unresolved(value):
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        return f"{prop} must be an integer >= {minimum}, got {value!r}"
    return None
