"""Exception types raised for bad construct input. Importing this module is cheap.

Every class is declared here; none is built at run time. A construct or value gathers all
its problems and raises one error (``constructs_llm.problems.Problems``): of the problems'
own type when they share one, else of the nearest class they all derive from (in practice
``ConfigurationError``). ``error.problems`` holds each problem as a value
(``constructs_llm.problems.Problem``: its property, value, what is wrong and the fix);
``str(problem)`` is its message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # problems.py imports this module
    from constructs_llm.problems import Problem


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
