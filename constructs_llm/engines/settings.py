"""Engine settings written once: a dataclass field whose metadata carries its check.

Each engine is a frozen dataclass; ``Engine.<factory>(...)`` is its constructor, so a setting's
name, type, default and check live in one line::

    num_shard: int | None = setting(positive=True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any, ClassVar

from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem, Problems
from constructs_llm.values import bool_problem

_CHECK = "constructs_llm.check"

DTYPE_ALIASES: Mapping[str, str] = {
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp32": "fp32",
    "float32": "fp32",
    "float": "fp32",
}
#: Every dtype an engine may take, by its canonical name (``setting(dtype=ALL_DTYPES)``).
ALL_DTYPES: tuple[str, ...] = ("fp16", "bf16", "fp32")


@dataclass(frozen=True)
class SettingCheck:
    """What a setting's value must be (None always passes: the engine's default).

    ``dtype`` is the engine's allowed dtypes by canonical name (fp16, bf16, fp32); any
    spelling in ``DTYPE_ALIASES`` of an allowed one passes. ``image`` asks for a
    ``ContainerImage``.
    """

    positive: bool = False
    choices: tuple[str, ...] | None = None
    fraction: bool = False
    dtype: tuple[str, ...] | None = None
    boolean: bool = False
    image: bool = False

    def problem(self, name: str, value: Any) -> Problem | None:
        if value is None:
            return None
        if self.positive and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            return Problem.of(
                name,
                value,
                f"{name} must be an integer >= 1, got {value!r}",
            )
        if self.choices is not None and value not in self.choices:
            return Problem.of(
                name,
                value,
                f"{name} must be one of {', '.join(self.choices)}, got {value!r}",
            )
        if self.fraction and (
            isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1
        ):
            return Problem.of(
                name,
                value,
                f"{name} must be in (0, 1], got {value!r}",
            )
        if self.boolean and not isinstance(value, bool):
            return bool_problem(name, value)
        if self.dtype is not None:
            return _dtype_problem(name, value, self.dtype)
        if self.image and not isinstance(value, ContainerImage):
            return _image_problem(name, value)
        return None


def _dtype_problem(name: str, value: Any, allowed: tuple[str, ...]) -> Problem | None:
    canonical = DTYPE_ALIASES.get(value.lower()) if isinstance(value, str) else None
    if canonical in allowed:
        return None
    names = ", ".join(allowed[:-1]) + f" or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
    spellings = ", ".join(a for a, c in DTYPE_ALIASES.items() if c in allowed and a != c)
    return Problem.of(
        name,
        value,
        f"{name} must be {names}, got {value!r} (also spelt {spellings})",
    )


def _image_problem(name: str, value: Any) -> Problem:
    wrong = f"{name} must be a ContainerImage, got {type(value).__name__} {value!r};"
    if isinstance(value, str):
        return Problem.of(name, value, wrong, f"use ContainerImage.from_uri({value!r})")
    return Problem.of(
        name,
        value,
        wrong,
        "use ContainerImage.from_uri(...), ContainerImage.dlc(...) or "
        "ContainerImage.from_ecr_repository(...)",
    )


def setting(
    default: Any = None,
    *,
    positive: bool = False,
    choices: tuple[str, ...] | None = None,
    fraction: bool = False,
    dtype: tuple[str, ...] | None = None,
    boolean: bool = False,
    image: bool = False,
) -> Any:
    """A dataclass field checked when the engine is built; ``MISSING`` as the default makes
    it required. @default None (engine's default)"""
    check = SettingCheck(
        positive=positive,
        choices=choices,
        fraction=fraction,
        dtype=dtype,
        boolean=boolean,
        image=image,
    )
    return field(default=default, metadata={_CHECK: check})


class SettingsChecked:
    """Checks every ``setting()`` field after ``__init__`` and raises once, naming the factory
    (``Engine.tgi(): num_shard must be ...``)."""

    factory_name: ClassVar[str]

    def __post_init__(self) -> None:
        problems = Problems(f"Engine.{self.factory_name}()")
        for item in fields(self):  # type: ignore[arg-type]  # every subclass is a dataclass
            problems.add(_check_of(item).problem(item.name, getattr(self, item.name)))
        problems.extend(self._more_problems())
        problems.raise_if_any()

    def _more_problems(self) -> list[Problem]:
        """Checks that span settings or normalise them; override where needed."""
        return []


def _check_of(item: Field[Any]) -> SettingCheck:
    check = item.metadata.get(_CHECK)
    return check if isinstance(check, SettingCheck) else SettingCheck()
