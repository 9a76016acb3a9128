"""Instance pools: the instance types of one variant, in order of preference.

``instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"]`` (a list) asks SageMaker for the first
type and lets it fall back to the next when a type has no capacity. Each entry is a
whole-instance :class:`Placement`, which the model is bound to on its own (tensor-parallel
degree, token limits, memory plan, host AMI). One type given as a string is a variant with a
plain ``InstanceType`` and no pools.

SageMaker's rules, from the guide "Deploy to multiple instance types with instance pools"
(https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html) and
botocore's sagemaker model (``InstancePool``, ``InstancePoolList``,
``VariantInstanceProvisionTimeoutInSeconds``):

- ``InstancePools`` replaces the variant's ``InstanceType``; up to five entries, each an
  instance type and a priority 1-5 (1 first), optionally a ``ModelNameOverride`` "to deploy a
  different model optimized for the instance type in this pool" (``InstancePoolList`` holds
  1-5 entries, so a list of one type is one pool);
- SageMaker provisions from priority 1 and falls back in priority order on insufficient
  capacity, at creation and scale-out, "until the required number of instances is
  provisioned, all pools are exhausted, or the total provisioning timeout
  (``VariantInstanceProvisionTimeoutInSeconds``) is reached"; that timeout is 300-3600 s and
  "applies only to capacity provisioning", not to the model download or health check;
- scale-in releases the lowest-priority pool's instances first;
- pools serve real-time and asynchronous endpoints, single-model and inference components.

What the guide does not cover is refused here, each with the reason: two accelerator kinds in
one variant (one host AMI per variant, and an engine's image is built for one accelerator),
and local-NVMe types next to EBS-only ones (``VolumeSizeInGB`` is set once per variant and
SageMaker rejects it on NVMe types).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from constructs_llm.errors import InstanceTypeError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement
from constructs_llm.problems import Problem
from constructs_llm.values import duration_problem, duration_type_problem

#: What ``instance_type=`` takes: one type, or a list of them in order of preference.
InstanceTypes = str | InstanceType | Sequence[str | InstanceType]

GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html"
#: The prop the pools come from, as messages name it.
_PROP = "instance_type"
_MAX_POOLS = 5
_MIN_PROVISION_TIMEOUT_S = 300
_MAX_PROVISION_TIMEOUT_S = 3600

#: The name of a variant given a list of instance types. It depends on neither the types nor
#: their order, so adding, dropping or reordering pools updates the variant in place: a new
#: name would be a new variant, replacing the fleet and, with autoscaling, deregistering the
#: scalable target of the variant it removes.
VARIANT_NAME = "pools"


class InstancePools:
    """The instance types of one variant in order of preference, each a whole-instance
    :class:`Placement` (``pools[0]`` is priority 1).

    Build one with :meth:`parse`. ``listed`` tells a list (rendered as ``InstancePools``,
    even of one type) from one type given as such (rendered as ``InstanceType``).
    """

    __slots__ = ("_listed", "_placements")

    def __init__(self, first: Placement, *fallbacks: Placement, listed: bool) -> None:
        self._placements = (first, *fallbacks)
        self._listed = listed

    @classmethod
    def single(cls, placement: Placement) -> InstancePools:
        """One instance type, given as such (no pools)."""
        return cls(placement, listed=False)

    @classmethod
    def parse(cls, value: object) -> tuple[InstancePools | None, list[Problem]]:
        """The pools ``value`` names, or None, with every problem found (each naming the bad
        value and the fix)."""
        if isinstance(value, str | InstanceType):
            placement, problems = _placement(value, "")
            return (None if placement is None else cls.single(placement)), problems
        if not isinstance(value, list | tuple):
            return None, [_not_a_list(value)]
        if not value:
            return None, [_empty()]
        placements: list[Placement] = []
        problems = []
        for index, item in enumerate(value):
            placement, found = _placement(item, f"{_PROP}[{index}]: ")
            problems += found
            if placement is not None:
                placements.append(placement)
        if len(value) > _MAX_POOLS:
            problems.append(_too_many(value))
        problems += _duplicates(placements)
        if problems or not placements:
            return None, problems
        pools = cls(*placements, listed=True)
        return pools, pools.problems()

    # -- what it holds ----------------------------------------------------------------------

    @property
    def listed(self) -> bool:
        """True when given as a list: the variant then has ``InstancePools``."""
        return self._listed

    @property
    def placements(self) -> tuple[Placement, ...]:
        return self._placements

    @property
    def first(self) -> Placement:
        """The priority-1 pool: the variant's ``ModelName`` is its model."""
        return self._placements[0]

    @property
    def instance_types(self) -> tuple[InstanceType, ...]:
        return tuple(p.instance_type for p in self._placements)

    def __iter__(self) -> Iterator[Placement]:
        return iter(self._placements)

    def __len__(self) -> int:
        return len(self._placements)

    def label(self, index: int) -> str:
        """``instance_type[1] (ml.g5.4xlarge, priority 2)``, or the type alone when not a list."""
        name = self._placements[index].instance_type.name
        if not self._listed:
            return name
        return f"{_PROP}[{index}] ({name}, priority {index + 1})"

    def describe(self) -> str:
        """``ml.g6e.2xlarge``, or ``pools ml.g6e.2xlarge > ml.g5.4xlarge`` (for messages and
        dashboards)."""
        names = " > ".join(t.name for t in self.instance_types)
        return f"pools {names}" if self._listed else names

    # -- checks -----------------------------------------------------------------------------

    def problems(self) -> list[Problem]:
        """What one variant cannot hold: two accelerator kinds, or NVMe and EBS-only types."""
        return [p for p in (self._accelerator_problem(), self._storage_problem()) if p]

    def _accelerator_problem(self) -> Problem | None:
        kinds: dict[str, list[str]] = {}
        for inst in self.instance_types:
            kinds.setdefault(inst.accelerator or "CPU", []).append(inst.name)
        if len(kinds) < 2:
            return None
        mix = " and ".join(f"{', '.join(names)} ({kind})" for kind, names in kinds.items())
        return Problem.of(
            _PROP,
            self.instance_types,
            f"{_PROP} mixes accelerators: {mix}. The instance-pools guide ({GUIDE}) documents no "
            "such mix, the variant has one host AMI (InferenceAmiVersion), and one engine image "
            "cannot serve both (a CUDA build does not run on Inferentia, nor a Neuron build on "
            "a GPU):",
            "keep the pools to one accelerator kind and serve the other on a variant or "
            "endpoint of its own",
        )

    def _storage_problem(self) -> Problem | None:
        known = [t for t in self.instance_types if t.known]
        nvme = [t.name for t in known if t.local_nvme]
        ebs = [t.name for t in known if not t.local_nvme]
        if not nvme or not ebs:
            return None
        return Problem.of(
            _PROP,
            self.instance_types,
            f"{_PROP} mixes instance types with local NVMe storage ({', '.join(nvme)}) and "
            f"EBS-only ones ({', '.join(ebs)}): VolumeSizeInGB is set once per variant, "
            "SageMaker rejects it on NVMe types, and the EBS-only types need it sized for the "
            f"weights; the instance-pools guide ({GUIDE}) does not say how one variant serves "
            "both:",
            "keep the pools to types with local NVMe, or to EBS-only types",
        )


def instance_types_type_problems(value: object) -> list[Problem]:
    """Only a value of the wrong type: not a type name, an ``InstanceType`` or a list of them
    (the names themselves are checked by :meth:`InstancePools.parse`)."""
    if value is None or isinstance(value, str | InstanceType):
        return []
    if not isinstance(value, list | tuple):
        return [_not_a_list(value)]
    return [
        Problem.of(
            f"{_PROP}[{index}]",
            item,
            f"{_PROP}[{index}] must be an instance type such as 'ml.g5.2xlarge' or an "
            f"InstanceType, got {type(item).__name__} {item!r}",
            kind=InstanceTypeError,
        )
        for index, item in enumerate(value)
        if not isinstance(item, str | InstanceType)
    ]


def provision_timeout_problem(value: object, pools: InstancePools | None) -> Problem | None:
    """``VariantInstanceProvisionTimeoutInSeconds``: 300-3600 s, and only with pools.

    The guide sets it "to control the total time SageMaker AI spends attempting to provision
    instances across all pools" and documents it only with ``InstancePools``; the API
    reference leaves open what it does for one ``InstanceType``. So it takes a list (a list
    of one type is one pool), and a setting that might do nothing is refused.
    """
    wrong = duration_type_problem("provision_timeout", value)
    if value is None or wrong:
        return wrong
    if pools is not None and not pools.listed:
        return Problem.of(
            "provision_timeout",
            value,
            f"provision_timeout bounds the fallback across instance pools "
            f"(VariantInstanceProvisionTimeoutInSeconds), got it with the single instance type "
            f"{pools.first.instance_type.name};",
            "pass instance_type=[...] as a list (one type is one pool), or drop provision_timeout",
        )
    return duration_problem(
        "provision_timeout",
        value,
        minimum_s=_MIN_PROVISION_TIMEOUT_S,
        maximum_s=_MAX_PROVISION_TIMEOUT_S,
        bounds=f"{_MIN_PROVISION_TIMEOUT_S} and {_MAX_PROVISION_TIMEOUT_S} seconds (5-60 minutes)",
        why="SageMaker's range for VariantInstanceProvisionTimeoutInSeconds",
    )


def pool_problem(
    pools: InstancePools,
    index: int,
    found: Problem,
    *,
    too_small: bool = True,
    where: str = "instance_type=[...]",
) -> Problem:
    """A problem of the model on one pool, with the pool named and the fix: each pool may be
    the one SageMaker provisions, so the model must run on every one.

    :param too_small: the pool lacks room (memory, devices), rather than support. @default True
    :param where: the list to drop the pool from. @default ``instance_type=[...]``
    """
    if not pools.listed:
        return found
    name = pools.placements[index].instance_type.name
    other = "a larger type" if too_small else "a type the model runs on"
    return replace(
        found,
        wrong=f"{pools.label(index)}: {found};",
        fix=f"every pool may be the one SageMaker provisions: drop {name} from {where} or "
        f"replace it with {other}",
        where="",
    )


def host_ami_problem(pools: InstancePools, amis: Sequence[str | None]) -> Problem | None:
    """``InferenceAmiVersion`` is a variant property: every pool's image must want the same."""
    if len(set(amis)) < 2:
        return None
    pairs = zip(pools.instance_types, amis, strict=True)
    wanted = ", ".join(f"{t.name}: {ami or 'the default'}" for t, ami in pairs)
    return Problem.of(
        _PROP,
        pools.instance_types,
        f"the pools' images need different host AMIs ({wanted}), but InferenceAmiVersion is set "
        "once per variant:",
        "keep pools whose images need the same host AMI",
    )


def _placement(value: object, prefix: str) -> tuple[Placement | None, list[Problem]]:
    """The whole instance ``value`` names, or its problems (each after ``prefix``)."""
    found = InstanceType.problems_of(value)
    if found or not isinstance(value, str | InstanceType):
        return None, [p.at(prefix) for p in found]
    return Placement(InstanceType.of(value)), []


def _not_a_list(value: object) -> Problem:
    return Problem.of(
        _PROP,
        value,
        f"{_PROP} must be an instance type such as 'ml.g5.2xlarge' or a list of them in order of "
        f"preference, got {type(value).__name__} {value!r}",
        kind=InstanceTypeError,
    )


def _empty() -> Problem:
    return Problem.of(
        _PROP,
        [],
        f"{_PROP}=[] names no instance type;",
        f"give one or more (at most {_MAX_POOLS}) in order of preference, or one type as a string",
    )


def _too_many(value: Sequence[object]) -> Problem:
    names = ", ".join(str(v) for v in value)
    return Problem.of(
        _PROP,
        value,
        f"{_PROP} lists {len(value)} instance types ({names}); SageMaker allows at most "
        f"{_MAX_POOLS} instance pools per variant:",
        "drop the least preferred",
    )


def _duplicates(placements: Sequence[Placement]) -> list[Problem]:
    where: dict[str, list[int]] = {}
    for index, placement in enumerate(placements):
        where.setdefault(placement.instance_type.name, []).append(index)
    return [
        Problem.of(
            _PROP,
            name,
            f"{_PROP} lists {name} {len(at)} times (at {', '.join(map(str, at))}); a type is one "
            "pool:",
            "keep it once, where it belongs in the order of preference",
        )
        for name, at in where.items()
        if len(at) > 1
    ]
