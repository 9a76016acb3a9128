"""Exception types raised for bad construct input, and the Problem values they carry.
Importing this module is cheap.

Every class is declared here; none is built at run time. A construct or value gathers all
its problems and raises one error (``constructs_llm.problems.Problems``): of the problems'
own type when they share one, else of the nearest class they all derive from (in practice
``ConfigurationError``). ``error.problems`` holds each problem as a value
(:class:`Problem`: its property, value, what is wrong and the fix, as botocore's exceptions
carry their fields); ``str(problem)`` is its message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace


class ConstructsLlmError(ValueError):
    """Base of every error this library raises for bad input.

    :param message: the whole message (the subject and every problem).
    :param problems: each problem, as a value. @default none (an error raised without
        ``Problems``)
    """

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[Problem, ...] = tuple(problems)


class ConfigurationError(ConstructsLlmError):
    """A construct property is invalid; the message names the value and the fix.

    When one construct has problems of several kinds (say sizing and scaling), it raises one
    ``ConfigurationError`` naming all of them; ``except ConfigurationError`` catches every
    kind."""


class InstanceTypeError(ConfigurationError):
    """An instance type is malformed or unknown within a known family."""


class SizingError(ConfigurationError):
    """The model cannot fit, or token limits contradict the model or the hardware."""


class ImageError(ConfigurationError):
    """A container image cannot be resolved (for example an unmapped region)."""


class RegionError(ConfigurationError):
    """A feature the construct renders is not available in the stack's region."""


class ScalingError(ConfigurationError):
    """Autoscaling settings are inconsistent."""


class ClientConfigurationError(ConstructsLlmError):
    """A client helper of ``constructs_llm.streaming`` (``stream_chat``,
    ``sagemaker_bearer_token``, ...) was given a value it cannot use, or found no region or
    credentials; the message names the value and the fix."""


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One problem of bad input, as a value; ``str(problem)`` is its message.

    For example ``Problem(property="instance_count", value=0, wrong="instance_count must be
    an integer >= 1, got 0", fix="")`` reads ``instance_count must be an integer >= 1, got 0``.

    :param property: the property or value at fault, as the user writes it (``instance_type``,
        ``engine.max_lora_rank``, ``env['HF_TOKEN']``).
    :param value: the value it got (None when the problem is that it is missing).
    :param wrong: what is wrong, naming the value (the message up to the fix, its punctuation
        included).
    :param fix: what to do instead, after ``wrong``. @default "" (the message names no fix
        apart from what ``wrong`` says is expected)
    :param where: what the problem was found on, before ``wrong`` (a pool, a placement,
        a copy), added by the construct that gathers it (:meth:`at`). @default ""
    :param kind: ``ConfigurationError`` or a subclass (``SizingError``, ...).
        @default ConfigurationError
    """

    property: str
    value: object = field(default=None, hash=False)
    wrong: str
    fix: str = ""
    where: str = ""
    kind: type[ConfigurationError] = ConfigurationError

    def __str__(self) -> str:
        return f"{self.where}{self.wrong} {self.fix}" if self.fix else f"{self.where}{self.wrong}"

    @classmethod
    def of(
        cls,
        prop: str,
        value: object,
        wrong: str,
        fix: str = "",
        kind: type[ConfigurationError] = ConfigurationError,
    ) -> Problem:
        """The short form each check returns: ``Problem.of("instance_count", 0, "instance_count
        must be an integer >= 1, got 0")``."""
        return cls(property=prop, value=value, wrong=wrong, fix=fix, kind=kind)

    def at(self, where: str) -> Problem:
        """This problem as found on ``where`` (``"pool 2 (ml.g5.2xlarge): "``), before any
        place it already names."""
        return replace(self, where=f"{where}{self.where}")

    def of_kind(self, kind: type[ConfigurationError]) -> Problem:
        """This problem as an error of ``kind``."""
        return replace(self, kind=kind)
