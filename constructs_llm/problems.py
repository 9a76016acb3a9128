"""One way to report bad input: gather every problem of a construct or value, raise once.

A problem is a value (:class:`Problem`): the property at fault, the value it got, what is
wrong, the fix and the error type, rendered by its one ``__str__``. Each check returns a
Problem (or None); the caller collects them in :class:`Problems` and raises one error listing
all of them, as the CDK's own validators do, and the error keeps the values
(``error.problems``). A value a construct builds from its props (an ``InstanceType``, a
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
from typing import NoReturn, TypeVar

from constructs_llm.errors import ConfigurationError, Problem

__all__ = ["Problem", "Problems", "common_kind", "fail", "fail_all"]

T = TypeVar("T")


class Problems:
    """Collects the problems of one subject (``"LlmEndpoint 'Stack/Endpoint'"``) and raises
    them together.

    :param subject: what the problems belong to, first in the message; an empty subject
        leaves the messages as they are (for values whose messages name themselves).
    """

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self._found: list[Problem] = []

    def add(self, problem: Problem | None, kind: type[ConfigurationError] | None = None) -> None:
        """Adds ``problem`` unless it is None; ``kind`` overrides its own. A bare message is
        refused: every problem names its property (``Problem.of``)."""
        if problem is None:
            return
        if not isinstance(problem, Problem):
            raise TypeError(
                "Problems.add takes a Problem (Problem.of(property, value, wrong, fix)), got "
                f"{type(problem).__name__} {problem!r}"
            )
        self._found.append(problem if kind is None else problem.of_kind(kind))

    def extend(
        self,
        problems: Iterable[Problem | None],
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

    def fail(self, problem: Problem, kind: type[ConfigurationError] | None = None) -> NoReturn:
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
        messages = [str(p) for p in self._found]
        if len(messages) == 1:
            text = f"{self.subject}: {messages[0]}" if self.subject else messages[0]
        else:
            lines = "\n".join(f"  - {m}" for m in messages)
            text = f"{self.subject or 'Input'} has {len(messages)} problems:\n{lines}"
        raise error(text, self._found)


def fail(subject: str, problem: Problem, kind: type[ConfigurationError] | None = None) -> NoReturn:
    """Raises the one ``problem`` of ``subject`` (a Problems of one), of ``kind`` when given."""
    Problems(subject).fail(problem, kind)


def fail_all(
    subject: str,
    problems: Sequence[Problem],
    kind: type[ConfigurationError] | None = None,
) -> NoReturn:
    """Raises ``problems`` (one or more) of ``subject`` as one error."""
    found = Problems(subject)
    found.extend(problems[:-1], kind)
    found.fail(problems[-1], kind)


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
