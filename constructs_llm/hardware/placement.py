"""Placement: where one copy of a model runs (an instance type and the devices the copy gets)."""

from __future__ import annotations

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import Problem, Problems
from constructs_llm.values import int_type_problem, positive_int_problem


def placement_problems(instance_type: object, accelerators: object = None) -> list[Problem]:
    """What stops ``Placement(instance_type, accelerators)`` from being built (the device
    count's range is checked by :meth:`Placement.problems`, against the hardware)."""
    found = [p.at("instance_type: ") for p in InstanceType.problems_of(instance_type)]
    wrong = int_type_problem("accelerators", accelerators)
    return [wrong, *found] if wrong else found


class Placement:
    """An instance type plus the accelerator devices one model copy gets: the hardware an
    ``LlmModel`` is bound to. Frozen and hashable; two equal placements share one SageMaker
    Model.

    ``Placement("ml.g5.12xlarge")`` is the whole instance (what an ``LlmEndpoint`` gives its
    model); ``Placement("ml.g5.12xlarge", accelerators=1)`` is one GPU of it (an inference
    component copy). Giving every device of the instance explicitly is the whole instance.

    :param instance_type: the instance type.
    :param accelerators: GPUs (or Neuron chips) one copy gets. @default every device of the
        instance
    """

    __slots__ = ("_accelerators", "_instance_type")

    def __init__(self, instance_type: str | InstanceType, accelerators: int | None = None) -> None:
        problems = Problems("Placement")
        problems.extend(placement_problems(instance_type, accelerators))
        problems.raise_if_any()
        instance = InstanceType.of(instance_type)
        # All devices = the whole instance; only a valid count is read so, so that problems()
        # still reports 0, True, 4.0 or a count on hardware with no devices.
        whole = type(accelerators) is int and accelerators == instance.accelerator_count >= 1
        if whole:
            accelerators = None
        self._instance_type = instance
        self._accelerators = accelerators

    @property
    def instance_type(self) -> InstanceType:
        return self._instance_type

    @property
    def accelerators(self) -> int | None:
        """Devices one copy gets; None = the whole instance."""
        return self._accelerators

    @property
    def whole_instance(self) -> bool:
        return self._accelerators is None

    @property
    def devices(self) -> int:
        """Devices one copy gets (0 on CPU or unknown hardware)."""
        return self._accelerators or self._instance_type.accelerator_count

    @property
    def construct_id(self) -> str:
        """An id derived from the placement alone: ``G5-12xlarge``, ``G5-12xlarge-1Device``."""
        inst = self._instance_type
        base = f"{inst.family[:1].upper()}{inst.family[1:]}-{inst.size}"
        if self._accelerators is None:
            return base
        return f"{base}-{self._accelerators}Device{'' if self._accelerators == 1 else 's'}"

    def describe(self) -> str:
        """For messages: ``ml.g5.2xlarge``, or ``the 1 accelerator(s) each copy gets on ...``."""
        if self._accelerators is None:
            return self._instance_type.name
        return (
            f"the {self._accelerators} accelerator(s) each copy gets on {self._instance_type.name}"
        )

    def problems(self) -> list[Problem]:
        """Accelerators the instance cannot give one copy; each names the value and the fix."""
        value, inst = self._accelerators, self._instance_type
        if value is None:
            return []
        if inst.known and inst.accelerator is None:
            return [
                Problem.of(
                    "accelerators",
                    value,
                    f"accelerators={value} but {inst.name} has no accelerators (CPU only);",
                    "drop accelerators, or use a GPU (ml.g5, ml.g6, ...) or Neuron (ml.inf2) "
                    "endpoint",
                )
            ]
        problem = positive_int_problem("accelerators", value)
        if problem:
            return [problem]
        if inst.known and value > inst.accelerator_count:
            have, why = f"{inst.accelerator_count}", "a copy must fit on one instance: "
            return [above_instance("accelerators", value, f"{value}", have, inst, why=why)]
        return []

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Placement):
            return NotImplemented
        return (self._instance_type, self._accelerators) == (
            other.instance_type,
            other.accelerators,
        )

    def __hash__(self) -> int:
        return hash((self._instance_type, self._accelerators))

    def __repr__(self) -> str:
        devices = "" if self._accelerators is None else f", accelerators={self._accelerators}"
        return f"Placement({self._instance_type.name!r}{devices})"


def above_instance(
    prop: str, value: object, wanted: str, have: str, instance: InstanceType, *, why: str = ""
) -> Problem:
    """One copy asking for more of ``prop`` (``wanted``) than one instance of ``instance``
    has (``have``); ``why`` opens the fix."""
    return Problem.of(
        prop,
        value,
        f"{prop}={wanted} per copy but {instance.name} has {have};",
        f"{why}lower {prop} or choose a larger instance type",
    )
