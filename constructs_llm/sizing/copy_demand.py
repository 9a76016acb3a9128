"""CopyDemand: what one inference-component copy reserves, or one instance offers."""

from __future__ import annotations

import math
from dataclasses import dataclass

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import Problem

#: SageMaker's floors for one copy's requirements (CreateInferenceComponent).
MIN_MEMORY_MIB = 128
_MIN_CPU_CORES = 0.25


@dataclass(frozen=True)
class CopyDemand:
    """Accelerators, vCPUs and host memory (MiB) of one copy, or of one instance."""

    accelerators: int
    cpu_cores: float
    memory_mib: int

    @classmethod
    def capacity_of(cls, instance: InstanceType) -> CopyDemand | None:
        """What one instance offers components (None when the catalog does not know it)."""
        if not instance.known or instance.vcpus is None or instance.memory_gib is None:
            return None
        return cls(
            accelerators=instance.accelerator_count,
            cpu_cores=float(instance.vcpus),
            memory_mib=int(instance.memory_gib * 1024),
        )

    def copies_on(self, capacity: CopyDemand) -> int:
        """How many such copies fit on an instance offering ``capacity``."""
        fits = [capacity.memory_mib // max(self.memory_mib, 1)]
        if self.accelerators:
            fits.append(capacity.accelerators // self.accelerators)
        if self.cpu_cores:
            fits.append(math.floor(capacity.cpu_cores / self.cpu_cores))
        return max(0, min(fits))

    def times(self, copies: int) -> CopyDemand:
        """The demand of ``copies`` copies."""
        return CopyDemand(
            accelerators=copies * self.accelerators,
            cpu_cores=copies * self.cpu_cores,
            memory_mib=copies * self.memory_mib,
        )

    def plus(self, other: CopyDemand) -> CopyDemand:
        return CopyDemand(
            accelerators=self.accelerators + other.accelerators,
            cpu_cores=self.cpu_cores + other.cpu_cores,
            memory_mib=self.memory_mib + other.memory_mib,
        )

    def describe(self) -> str:
        parts = [f"{self.accelerators} accelerator(s)"] if self.accelerators else []
        if self.cpu_cores:
            parts.append(f"{self.cpu_cores:g} vCPU")
        parts.append(f"{self.memory_mib} MiB")
        return " + ".join(parts)


def cpu_cores_problem(cpu_cores: float | None) -> Problem | None:
    """``NumberOfCpuCoresRequired``: a number, at least SageMaker's minimum."""
    if cpu_cores is None:
        return None
    if isinstance(cpu_cores, bool) or not isinstance(cpu_cores, int | float):
        return Problem.of(
            "cpu_cores",
            cpu_cores,
            f"cpu_cores must be a number, got {cpu_cores!r}",
        )
    if cpu_cores < _MIN_CPU_CORES:
        return Problem.of(
            "cpu_cores",
            cpu_cores,
            f"cpu_cores must be at least {_MIN_CPU_CORES} (SageMaker's minimum), got {cpu_cores!r}",
        )
    return None
