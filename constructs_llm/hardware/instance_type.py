"""SageMaker instance types with the hardware facts that drive defaults and validation.

Pure Python (no ``aws_cdk`` import): the catalog is ``data/instances.json``, read once on
first use through ``constructs_llm.catalogs``. It holds every type SageMaker hosting accepts
(botocore's ``ProductionVariantInstanceType``), so a family or size it does not know is almost
always a typo and raises, naming the closest types. A type AWS launched after the catalog is
accepted with ``allow_unknown_family=True`` (or ``allow_unknown_size=True`` for a new size of a
known family): the constructs then warn and skip the hardware checks.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

from constructs_llm import catalogs
from constructs_llm.catalogs import InstanceFamily, InstanceSize
from constructs_llm.errors import InstanceTypeError
from constructs_llm.hardware.device_memory import engine_visible_mib
from constructs_llm.problems import Problem, fail_all

Accelerator = Literal["nvidia", "neuron", "habana"]

# Family may carry a hyphenated variant (ml.p6-b200.48xlarge); size is e.g. "2xlarge".
_NAME = re.compile(r"ml\.(?P<family>[a-z0-9]+(?:-[a-z0-9]+)*)\.(?P<size>[a-z0-9]+(?:-[a-z0-9]+)*)")
_LOOSE = re.compile(r"(?:ml\.)?[a-z0-9-]+\.[a-z0-9-]+")
_EXAMPLE = "ml.g5.2xlarge"
#: The property every construct names an instance type by (its problems' ``property``).
_PROP = "instance_type"


def _families() -> dict[str, InstanceFamily]:
    return catalogs.instances().families


def sizes_of(family: str) -> list[str]:
    """Sizes the catalog knows for ``family`` (e.g. ``"g5"``), smallest first; [] if unknown."""
    spec = _families().get(family)
    return [] if spec is None else list(spec.sizes)


def is_token(value: str) -> bool:
    """True for an unresolved CDK token encoded in a string (checked without importing CDK)."""
    return "${Token[" in value or "#{Token[" in value


class InstanceType:
    """A SageMaker instance type such as ``ml.g5.12xlarge``, with its hardware facts.

    The catalog holds every type SageMaker hosting accepts, so an unknown family (``ml.gg5``)
    or an unknown size in a known family (``ml.g5.45xlarge``) is almost always a typo and
    raises, naming the closest types. For a type launched after the catalog, opt out with
    ``allow_unknown_family=True`` or ``allow_unknown_size=True``: the type then has
    ``known=False`` and no hardware data, and the constructs warn and skip hardware checks.

    :param name: ``ml.<family>.<size>``, e.g. ``"ml.g5.2xlarge"``.
    :param allow_unknown_size: accept a size the catalog does not list for a known family.
        @default False (an error listing the family's sizes)
    :param allow_unknown_family: accept a family the catalog does not know (and any size of
        it). @default False (an error naming the closest hosting types)
    """

    __slots__ = ("_family", "_name", "_size", "_sizes", "_spec")

    def __init__(
        self, name: str, *, allow_unknown_size: bool = False, allow_unknown_family: bool = False
    ) -> None:
        parsed = _parse(name, allow_unknown_size, allow_unknown_family)
        if isinstance(parsed, list):
            fail_all("", parsed, InstanceTypeError)  # each message names the instance type
        self._name = name
        self._family, self._size, self._sizes, self._spec = parsed

    @classmethod
    def of(
        cls,
        value: str | InstanceType,
        *,
        allow_unknown_size: bool = False,
        allow_unknown_family: bool = False,
    ) -> InstanceType:
        """Accept a name or an existing InstanceType (returned as is)."""
        if isinstance(value, InstanceType):
            return value
        return cls(
            value, allow_unknown_size=allow_unknown_size, allow_unknown_family=allow_unknown_family
        )

    @staticmethod
    def problems_of(value: object) -> list[Problem]:
        """What stops ``value`` from being an instance type (none for an ``InstanceType``),
        each message naming it: what ``InstanceType.of(value)`` would raise."""
        if isinstance(value, InstanceType):
            return []
        parsed = _parse(value, False, False)
        return parsed if isinstance(parsed, list) else []

    # -- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def family(self) -> str:
        return self._family

    @property
    def size(self) -> str:
        return self._size

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"InstanceType({self._name!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InstanceType):
            return NotImplemented
        return self._name == other.name

    def __hash__(self) -> int:
        return hash(self._name)

    # -- catalog status -------------------------------------------------------------------
    @property
    def known(self) -> bool:
        """True when the catalog has full hardware data for this exact type."""
        return self._spec is not None

    @property
    def family_known(self) -> bool:
        return self._sizes is not None

    # -- accelerators ---------------------------------------------------------------------
    @property
    def accelerator(self) -> Accelerator | None:
        """The accelerator kind: "nvidia", "neuron" or None (CPU).

        For a family the catalog does not know, this is a guess from the family name
        (g*/p* = nvidia, inf*/trn* = neuron) so engines can still pick an image; check
        ``known`` before trusting hardware figures.
        """
        if self._sizes is not None:
            return self._sizes.accelerator
        return _guessed_accelerator(self._family)

    @property
    def accelerator_model(self) -> str | None:
        """Marketing name of the accelerator, e.g. "NVIDIA A10G"; None on CPU or unknown."""
        return None if self._sizes is None else self._sizes.accelerator_model

    @property
    def accelerator_count(self) -> int:
        """GPUs, or Neuron chips (devices), per instance; 0 on CPU and unknown types."""
        return 0 if self._spec is None else self._spec.accelerators

    @property
    def accelerator_memory_gib(self) -> float | None:
        """Memory per device in GiB (the EC2-reported figure for GPUs, HBM per Neuron chip)."""
        if self._spec is None or self._sizes is None or self._sizes.accelerator_memory_mib is None:
            return None
        return self._sizes.accelerator_memory_mib / 1024

    @property
    def engine_memory_gib(self) -> float | None:
        """Memory per device in GiB that a serving engine sizes from: the total CUDA reports
        (measured on the H100, 79.18 GiB; elsewhere a conservative estimate from the catalog's
        figure, ``hardware/device_memory.py``), or the HBM per Neuron chip."""
        if self._spec is None or self._sizes is None:
            return None
        mib = engine_visible_mib(self._sizes)
        return None if mib is None else mib / 1024

    @property
    def compute_capability(self) -> tuple[int, int] | None:
        """The GPU's CUDA compute capability, e.g. ``(8, 6)`` for the A10G (NVIDIA's list);
        None off NVIDIA or for unknown families."""
        text = None if self._sizes is None else self._sizes.compute_capability
        if text is None:
            return None
        major, _, minor = text.partition(".")
        return int(major), int(minor or 0)

    @property
    def memory_bandwidth_gbs(self) -> float | None:
        """Peak memory bandwidth of one device in GB/s (the datasheet's figure); None on CPU,
        for unknown types and where the catalog has no verified figure."""
        if self._spec is None or self._sizes is None:
            return None
        return self._sizes.memory_bandwidth_gbs

    @property
    def total_accelerator_memory_gib(self) -> float | None:
        per_device = self.accelerator_memory_gib
        return None if per_device is None else per_device * self.accelerator_count

    @property
    def neuron_cores(self) -> int | None:
        """NeuronCores per instance (two per Inferentia2 chip); None if not a Neuron type."""
        return None if self._spec is None else self._spec.neuron_cores

    # -- host -----------------------------------------------------------------------------
    @property
    def vcpus(self) -> int | None:
        return None if self._spec is None else self._spec.vcpus

    @property
    def memory_gib(self) -> float | None:
        """Host RAM in GiB."""
        return None if self._spec is None else self._spec.memory_gib

    @property
    def local_nvme_gb(self) -> int | None:
        """Instance-store NVMe in GB: 0 when EBS only, None when the type is unknown."""
        return None if self._spec is None else self._spec.local_nvme_gb

    @property
    def local_nvme(self) -> bool:
        """True if the instance has local NVMe storage.

        An unknown size follows its family when all known sizes agree. Unknown families
        fall back to the SageMaker Python SDK's rule (a "d" in the family, or g5/g6/p5/trn1
        families) plus the newer g7 and p6 families, which carry NVMe too.
        """
        if self._spec is not None:
            return self._spec.local_nvme_gb > 0
        if self._sizes is not None:
            kinds = {size.local_nvme_gb > 0 for size in self._sizes.sizes.values()}
            if len(kinds) == 1:
                return kinds.pop()
        family = self._family
        return "d" in family or family.startswith(("g5", "g6", "g7", "p5", "p6", "trn1"))

    @property
    def supports_volume_size(self) -> bool:
        """SageMaker accepts VolumeSizeInGB only on types without local NVMe."""
        return not self.local_nvme

    @property
    def supports_kms(self) -> bool:
        """KmsKeyId on the endpoint config only where there is no local NVMe (same rule)."""
        return not self.local_nvme

    def describe(self) -> str:
        """One line for messages.

        For example ``4 \u00d7 NVIDIA A10G 22.4 GiB, 48 vCPU, 192 GiB, local NVMe 3800 GB``.
        """
        spec = self._spec
        if spec is None:
            return f"unknown hardware ({self._name} is not in the instance catalog)"
        parts = [self._describe_accelerators()]
        parts.append(f"{spec.vcpus} vCPU, {_num(spec.memory_gib)} GiB")
        if spec.local_nvme_gb:
            parts.append(f"local NVMe {spec.local_nvme_gb} GB")
        return ", ".join(parts)

    def _describe_accelerators(self) -> str:
        memory = self.accelerator_memory_gib
        if self.accelerator_count == 0 or memory is None:
            return "no accelerators"
        text = f"{self.accelerator_count} \u00d7 {self.accelerator_model} {_num(memory)} GiB"
        if self.neuron_cores:
            text += f" ({self.neuron_cores} NeuronCores)"
        return text


def _guessed_accelerator(family: str) -> Accelerator | None:
    """The accelerator a family name suggests: g*/p* = nvidia, inf*/trn* = neuron."""
    if family.startswith(("inf", "trn")):
        return "neuron"
    if family.startswith(("g", "p")):
        return "nvidia"
    return None


def _num(value: float) -> str:
    """22.3515625 -> "22.4", 192.0 -> "192"."""
    return f"{value:.1f}".removesuffix(".0")


def _name_problem(name: object) -> Problem | None:
    if not isinstance(name, str):
        return Problem.of(
            _PROP,
            name,
            f"Instance type must be a string such as {_EXAMPLE!r} or an InstanceType, "
            f"got {type(name).__name__} {name!r}.",
            kind=InstanceTypeError,
        )
    if is_token(name):
        return Problem.of(
            _PROP,
            name,
            f"Instance type must be a concrete string, got a CDK token ({name}). "
            "constructs_llm derives defaults (tensor parallelism, timeouts, volume size) and "
            "validates the hardware from the instance type at synth time;",
            f"pass a literal such as {_EXAMPLE!r}.",
            InstanceTypeError,
        )
    if _NAME.fullmatch(name) is None:
        return _malformed_message(name)
    return None


_Parsed = tuple[str, str, InstanceFamily | None, InstanceSize | None]


def _parse(
    name: object, allow_unknown_size: object, allow_unknown_family: object
) -> _Parsed | list[Problem]:
    """Family, size and their catalog entries of the instance type ``name``, or every
    problem found (the name's form and the flags first; then the family, then the size)."""
    found = [
        Problem.of(
            flag, value, f"{flag} must be True or False, got {value!r}", "", InstanceTypeError
        )
        for flag, value in (
            ("allow_unknown_size", allow_unknown_size),
            ("allow_unknown_family", allow_unknown_family),
        )
        if not isinstance(value, bool)
    ]
    problem = _name_problem(name)
    match = _NAME.fullmatch(name) if isinstance(name, str) and problem is None else None
    if match is None:
        return [problem or _malformed_message(str(name)), *found]
    if found:
        return found
    family, size = match["family"], match["size"]
    family_spec = _families().get(family)
    if family_spec is None:
        return (
            (family, size, None, None)
            if allow_unknown_family
            else [_unknown_family_message(match[0], family)]
        )
    size_spec = family_spec.sizes.get(size)
    if size_spec is None and not allow_unknown_size:
        return [_unknown_size_message(match[0], family, family_spec)]
    return family, size, family_spec, size_spec


def _malformed_message(name: str) -> Problem:
    message = (
        f"Invalid instance type: got {name!r}. Expected 'ml.<family>.<size>', "
        f"for example {_EXAMPLE!r}."
    )
    return Problem.of(_PROP, name, message, _malformed_hint(name), InstanceTypeError)


def _malformed_hint(name: str) -> str:
    cleaned = "".join(name.split()).lower()
    if cleaned != name and _NAME.fullmatch(cleaned):
        problems = []
        if cleaned != name.lower():
            problems.append("contains whitespace")
        if name != name.lower():
            problems.append("must be lower case")
        return f"The name {' and '.join(problems)}: use {cleaned!r}."
    if _LOOSE.fullmatch(cleaned) and not cleaned.startswith("ml."):
        return f"SageMaker instance types start with 'ml.': use {'ml.' + cleaned!r}."
    parts = cleaned.split(".")
    if len(parts) == 2 and parts[0] == "ml" and parts[1]:
        sizes = sizes_of(parts[1])
        listed = f" Sizes of ml.{parts[1]}: {', '.join(sizes)}." if sizes else ""
        return f"The size is missing.{listed}"
    return ""


def _unknown_size_message(name: str, family: str, spec: InstanceFamily) -> Problem:
    sizes = list(spec.sizes)
    size = name.rsplit(".", 1)[-1]
    close = difflib.get_close_matches(size, sizes, n=2, cutoff=0.75)
    guess = " or ".join(f"'ml.{family}.{s}'" for s in close)
    suggestion = f" Did you mean {guess}?" if guess else ""
    return Problem.of(
        _PROP,
        name,
        f"Unknown instance size for family ml.{family}: got {name!r}.{suggestion} "
        f"Sizes of ml.{family}: {', '.join(sizes)}.",
        f"If AWS has launched this size after "
        f"this library's catalog, opt out of the check with "
        f"InstanceType({name!r}, allow_unknown_size=True) (hardware checks are then skipped).",
        InstanceTypeError,
    )


def _unknown_family_message(name: str, family: str) -> Problem:
    hosting = catalogs.instances().hosting
    # A typo in the family keeps the size: look among the types of that size first.
    # A typo in the family keeps the size and the kind of hardware: look among the types of
    # that size and accelerator first.
    kind, size = _guessed_accelerator(family), name.rsplit(".", 1)[-1]
    alike = [
        t
        for t in hosting.instance_types
        if t.endswith(f".{size}") and _families()[t.split(".")[1]].accelerator == kind
    ]
    close = difflib.get_close_matches(name, alike, n=2, cutoff=0.8)
    close = close or difflib.get_close_matches(name, hosting.instance_types, n=2, cutoff=0.8)
    guess = " or ".join(repr(c) for c in close)
    suggestion = f" Did you mean {guess}?" if guess else ""
    families = ", ".join(sorted(_families()))
    return Problem.of(
        _PROP,
        name,
        f"Unknown instance family ml.{family}: got {name!r}.{suggestion} The catalog lists "
        f"every type SageMaker hosting accepts (botocore {hosting.botocore}), in the families "
        f"{families}.",
        f"If AWS has launched ml.{family} after this catalog, opt out of the check with "
        f"InstanceType({name!r}, allow_unknown_family=True) (hardware checks are then skipped, "
        "with a warning saying what to verify by hand).",
        InstanceTypeError,
    )


def unknown_instance_type(instance: InstanceType, *, for_components: bool = False) -> str:
    if for_components:
        return (
            f"{instance.name} is not in the packaged hardware catalog, so the components' "
            "accelerators, CPU cores and memory were not checked against it; verify that each "
            "copy fits one instance"
        )
    return (
        f"{instance.name} is not in the packaged hardware catalog, so GPU count, memory fit and "
        "volume rules were not checked; verify tensor parallel degree and memory by hand"
    )
