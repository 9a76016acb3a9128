"""One way to report bad input: gather every problem of a construct or value, raise once.

Each check returns a message (or None) that names the bad value and the fix; the caller
collects them in :class:`Problems` and raises one error listing all of them, as the CDK's own
validators do. A value a construct builds from its props (an ``InstanceType``, a
``Placement``) states its problems without raising (``InstanceType.problems_of``,
``placement_problems``), so the construct gathers them with its own and the user gets one
error naming the construct; nothing is raised to be caught. Importing this module is cheap (no
``aws_cdk``), so pure modules such as ``sizing`` use it too.

The error raised is of the problems' own type (``SizingError``, ``ScalingError``, ...) when
they share one, else of the nearest type they all derive from (``ConfigurationError``): every
type is declared in ``constructs_llm.errors``, none is built at run time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NoReturn, TypeVar

from constructs_llm.errors import ConfigurationError

T = TypeVar("T")


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
    them together.

    :param subject: what the problems belong to, first in the message; an empty subject
        leaves the messages as they are (for values whose messages name themselves).
    """

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

    def raise_if_any(self) -> None:
        """Raises one error naming every problem, of their common type; does nothing when
        there is none."""
        if self._found:
            self._raise()

    def fail(
        self, problem: str | Problem, kind: type[ConfigurationError] | None = None
    ) -> NoReturn:
        """Adds ``problem`` and raises one error naming it and every problem gathered before
        (for a check past which nothing else can be checked)."""
        self.add(problem, kind)
        self._raise()

    def require(self, value: T | None) -> T:
        """``value``, or, when the problems gathered made it impossible (None), one error
        naming them."""
        if value is None:
            self._raise()
        return value

    def _raise(self) -> NoReturn:
        error = common_kind(p.kind for p in self._found)
        messages = [p.message for p in self._found]
        if len(messages) == 1:
            text = f"{self.subject}: {messages[0]}" if self.subject else messages[0]
        else:
            lines = "\n".join(f"  - {m}" for m in messages)
            text = f"{self.subject or 'Input'} has {len(messages)} problems:\n{lines}"
        raise error(text, messages)


def fail(
    subject: str, message: str, kind: type[ConfigurationError] = ConfigurationError
) -> NoReturn:
    """Raises the one problem ``message`` of ``subject`` (a Problems of one)."""
    Problems(subject).fail(message, kind)


def fail_all(
    subject: str, messages: Sequence[str], kind: type[ConfigurationError] = ConfigurationError
) -> NoReturn:
    """Raises the problems ``messages`` (one or more) of ``subject`` as one error."""
    problems = Problems(subject)
    problems.extend(messages[:-1], kind)
    problems.fail(messages[-1], kind)


def common_kind(kinds: Iterable[type[ConfigurationError]]) -> type[ConfigurationError]:
    """The nearest declared error type every one of ``kinds`` derives from: the kind itself
    when they agree, ``ConfigurationError`` for a mix such as sizing and scaling."""
    found = list(dict.fromkeys(kinds))
    if not found:
        return ConfigurationError
    for candidate in found[0].__mro__:
        if (
            isinstance(candidate, type)
            and issubclass(candidate, ConfigurationError)
            and all(issubclass(k, candidate) for k in found)
        ):
            return candidate
    return ConfigurationError  # pragma: no cover  # every kind derives from it
