"""One way to report bad input: gather every problem of a construct or value, raise once.

Each check returns a message (or None) that names the bad value and the fix; the caller
collects them in :class:`Problems` and raises one error listing all of them, as the CDK's own
validators do. Importing this module is cheap (no ``aws_cdk``), so pure modules such as
``sizing`` use it too.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from constructs_llm.errors import ConfigurationError

__all__ = ["Problem", "Problems", "error_type"]


@dataclass(frozen=True)
class Problem:
    """One problem: its message and the error type it belongs to.

    :param message: names the bad value and the fix.
    :param kind: ``ConfigurationError`` or a subclass (``SizingError``, ...).
        @default ConfigurationError
    """

    message: str
    kind: type[ConfigurationError] = ConfigurationError


class Problems:
    """Collects the problems of one subject (``"LlmEndpoint 'Stack/Endpoint'"``) and raises
    them together."""

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self._found: list[Problem] = []

    def add(
        self, problem: str | Problem | None, kind: type[ConfigurationError] | None = None
    ) -> None:
        """Adds ``problem`` unless it is None or empty; ``kind`` overrides a Problem's own."""
        if not problem:
            return
        if isinstance(problem, str):
            problem = Problem(problem, kind or ConfigurationError)
        elif kind is not None:
            problem = Problem(problem.message, kind)
        self._found.append(problem)

    def extend(
        self,
        problems: Iterable[str | Problem | None],
        kind: type[ConfigurationError] | None = None,
    ) -> None:
        for problem in problems:
            self.add(problem, kind)

    def __bool__(self) -> bool:
        return bool(self._found)

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._found)

    def raise_if_any(self, kind: type[ConfigurationError] | None = None) -> None:
        """Raises one error naming every problem; its type is each problem's kind at once
        (or ``kind``, when given)."""
        if not self._found:
            return
        error = kind or error_type(p.kind for p in self._found)
        messages = [p.message for p in self._found]
        if len(messages) == 1:
            raise error(f"{self.subject}: {messages[0]}")
        lines = "\n".join(f"  - {m}" for m in messages)
        raise error(f"{self.subject} has {len(messages)} problems:\n{lines}")


def error_type(kinds: Iterable[type[ConfigurationError]]) -> type[ConfigurationError]:
    """The error to raise for problems of ``kinds``: the kind itself, or, for a mix, one class
    deriving from each, so ``except SizingError`` and ``except ScalingError`` both catch it."""
    found = set(kinds)
    specific = {k for k in found if not any(o is not k and issubclass(o, k) for o in found)}
    return _combined(tuple(sorted(specific, key=lambda k: k.__name__)))


@functools.cache
def _combined(kinds: tuple[type[ConfigurationError], ...]) -> type[ConfigurationError]:
    if len(kinds) == 1:
        return kinds[0]
    name = "And".join(k.__name__.removesuffix("Error") for k in kinds) + "Error"
    combined: type[ConfigurationError] = type(name, kinds, {"__module__": "constructs_llm.errors"})
    return combined
