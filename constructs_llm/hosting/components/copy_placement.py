"""Where SageMaker places an inference component's copies: spread over instances or packed
onto few, balanced across Availability Zones (the component's ``SchedulingConfig``).

``PlacementStrategy`` is ``SPREAD`` ("distributes copies evenly across available instances
for better resilience") or ``BINPACK`` ("packs copies onto fewer instances to optimize
resource utilization"); ``AvailabilityZoneBalance`` has one ``EnforcementMode``,
``PERMISSIVE`` (the endpoint balances copies across zones but still places them when it
cannot), and ``MaxImbalance``, the largest difference in copies between two zones, 0-100,
default 0 (botocore ``InferenceComponentSchedulingConfig`` and
``InferenceComponentAvailabilityZoneBalance``). CloudFormation requires both fields of
``SchedulingConfig``, so the zone balance is always rendered.

By default nothing is rendered and SageMaker places copies its own way: it documents no
strategy as the default, and neither choice wins everywhere. ``spread()`` keeps a copy
serving when one instance fails; ``binpack()`` leaves whole instances free, which managed
instance scaling can then release (scale-in) and which bigger components need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.problems import Problem, Problems
from constructs_llm.values import all_ints

Strategy = Literal["SPREAD", "BINPACK"]
_STRATEGIES = ("SPREAD", "BINPACK")
#: Copies two Availability Zones may differ by (botocore ``AvailabilityZoneBalanceMaxImbalance``).
_MAX_IMBALANCE = 100


@dataclass(frozen=True, kw_only=True)
class CopyPlacement:
    """How an ``InferenceComponent``'s copies are placed (``copy_placement=``). Make one with
    :meth:`spread` or :meth:`binpack`.

    :param strategy: ``"SPREAD"`` or ``"BINPACK"``.
    :param max_az_imbalance: the largest difference in copies between two Availability
        Zones (0-100); SageMaker balances within it where capacity allows. @default
        SageMaker's 0
    """

    strategy: Strategy
    max_az_imbalance: int | None = None

    def __post_init__(self) -> None:
        problems = Problems("CopyPlacement")
        if self.strategy not in _STRATEGIES:
            problems.add(
                Problem.of(
                    "strategy",
                    self.strategy,
                    f"strategy must be 'SPREAD' or 'BINPACK', got {self.strategy!r};",
                    "use CopyPlacement.spread() or CopyPlacement.binpack()",
                )
            )
        imbalance = self.max_az_imbalance
        if imbalance is not None and not (all_ints(imbalance) and 0 <= imbalance <= _MAX_IMBALANCE):
            problems.add(
                Problem.of(
                    "max_az_imbalance",
                    self.max_az_imbalance,
                    "max_az_imbalance must be a whole number of copies from 0 to "
                    f"{_MAX_IMBALANCE}, "
                    f"got {imbalance!r}",
                )
            )
        problems.raise_if_any()

    @classmethod
    def spread(cls, *, max_az_imbalance: int | None = None) -> CopyPlacement:
        """Copies spread evenly over the instances: one failing instance takes the fewest.

        :param max_az_imbalance: @default SageMaker's 0
        """
        return cls(strategy="SPREAD", max_az_imbalance=max_az_imbalance)

    @classmethod
    def binpack(cls, *, max_az_imbalance: int | None = None) -> CopyPlacement:
        """Copies packed onto as few instances as fit them, leaving whole instances free.

        :param max_az_imbalance: @default SageMaker's 0
        """
        return cls(strategy="BINPACK", max_az_imbalance=max_az_imbalance)

    def scheduling_config(
        self,
    ) -> sagemaker.CfnInferenceComponent.InferenceComponentSchedulingConfigProperty:
        spec = sagemaker.CfnInferenceComponent
        return spec.InferenceComponentSchedulingConfigProperty(
            placement_strategy=self.strategy,
            availability_zone_balance=spec.InferenceComponentAvailabilityZoneBalanceProperty(
                enforcement_mode="PERMISSIVE", max_imbalance=self.max_az_imbalance
            ),
        )
