"""Exception types raised for bad construct input. Importing this module is cheap."""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "ConstructsLlmError",
    "ImageError",
    "InstanceTypeError",
    "ScalingError",
    "SizingError",
]


class ConstructsLlmError(ValueError):
    """Base of every error this library raises for bad input."""


class ConfigurationError(ConstructsLlmError):
    """A construct property is invalid; the message names the value and the fix.

    When one construct has problems of several kinds (say sizing and scaling), the error it
    raises derives from each of their types, so either ``except`` clause catches it."""


class InstanceTypeError(ConfigurationError):
    """An instance type is malformed or unknown within a known family."""


class SizingError(ConfigurationError):
    """The model cannot fit, or token limits contradict the model or the hardware."""


class ImageError(ConfigurationError):
    """A container image cannot be resolved (for example an unmapped region)."""


class ScalingError(ConfigurationError):
    """Autoscaling settings are inconsistent."""
