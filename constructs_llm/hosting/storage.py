"""The ML storage volume of an endpoint's instances: its size, its KMS key, and the rules of
instance types with local NVMe storage (no volume size, no volume key).

The storage (the volume, or the instance's local NVMe) must hold the model's checkpoint as it
is downloaded, with headroom: AWS's LMI guide asks for a volume "slightly larger than the size
of your model" ("SageMaker AI endpoint parameters for large model inference",
large-model-inference-hosting); the check asks for 10 % more than the checkpoint. It does not
count the container image: the same guide keeps SageMaker's default volume for models up to
30 GB, so the image is not stored there. The checkpoint is the parameters in the dtype they
are stored in (``ModelArchitecture.download_bytes``), which a quantization at load time does
not shrink; for a model the table lacks, nothing is checked. Without ``volume_size`` an
EBS-only type's volume is sized from the same checkpoint (:func:`default_volume_gb`), so the
default passes the check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from aws_cdk import Size, Token
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.compliance import NVME_VOLUME_KEY, waive
from constructs_llm.hardware.instance_type import InstanceType, sizes_of
from constructs_llm.problems import Problem

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms

    from constructs_llm.sizing.memory import ModelArchitecture

MAX_VOLUME_GB = 512
#: The storage a checkpoint needs beyond its own size (AWS: "slightly larger").
_HEADROOM = 0.10


def waive_nvme_volume_key(
    config: sagemaker.CfnEndpointConfig, instance_types: Iterable[InstanceType]
) -> None:
    """Records on ``config``, just created, why NVMe types carry no volume key."""
    if any(t.local_nvme for t in instance_types):
        waive(config, NVME_VOLUME_KEY, new=True)


def kms_problem(instance_type: InstanceType, kms_key: kms.IKey | None) -> Problem | None:
    """KmsKeyId is rejected on instance types with local NVMe storage."""
    if kms_key is None or not instance_type.known or instance_type.supports_kms:
        return None
    return _kms_on_nvme(instance_type)


def _kms_on_nvme(instance: InstanceType) -> Problem:
    return Problem.of(
        "kms_key",
        None,
        f"kms_key cannot be used with {instance.name}: it has local NVMe storage, which "
        "SageMaker encrypts with a hardware key and for which CreateEndpointConfig rejects "
        "KmsKeyId;",
        "drop kms_key or pick an EBS-backed type",
    )


def volume_problem(instance_type: InstanceType, volume_size: Size | None) -> Problem | None:
    """VolumeSizeInGB: a Size, 1-512 GiB, and only on instance types without local NVMe."""
    if volume_size is None:
        return None
    if not isinstance(volume_size, Size):
        return Problem.of(
            "volume_size",
            volume_size,
            f"volume_size must be a Size, got {volume_size!r};",
            "use Size.gibibytes(...)",
        )
    if instance_type.known and not instance_type.supports_volume_size:
        return _volume_on_nvme(instance_type)
    gib = volume_size.to_gibibytes()
    if not Token.is_unresolved(gib) and not 1 <= gib <= MAX_VOLUME_GB:
        return Problem.of(
            "volume_size",
            volume_size,
            f"volume_size must be 1-{MAX_VOLUME_GB} GiB, got {gib:g} GiB",
        )
    return None


def _volume_on_nvme(instance: InstanceType) -> Problem:
    return Problem.of(
        "volume_size",
        None,
        f"volume_size cannot be set on {instance.name}: it has local NVMe storage "
        f"({instance.local_nvme_gb} GB) and SageMaker rejects VolumeSizeInGB there;",
        "drop volume_size",
    )


def storage_problem(
    instance_type: InstanceType, volume_size: Size | None, architecture: ModelArchitecture | None
) -> Problem | None:
    """Storage too small for the model's checkpoint with :data:`_HEADROOM`: the given
    ``volume_size`` on an EBS-only type, or the local NVMe of a type that has it. Without a
    ``volume_size`` on an EBS-only type the library sizes the volume itself."""
    if architecture is None or not instance_type.known:
        return None
    download = architecture.download_bytes
    needed = download * (1 + _HEADROOM)
    if instance_type.local_nvme:
        have = (instance_type.local_nvme_gb or 0) * 1e9  # EC2 lists instance store in GB
        if have >= needed:
            return None
        return _nvme_too_small(instance_type, architecture.name, download, needed)
    if not isinstance(volume_size, Size):
        return None
    gib = volume_size.to_gibibytes()
    if Token.is_unresolved(gib) or gib * 2**30 >= needed:
        return None
    return _volume_too_small(gib, architecture.name, download, needed)


def default_volume_gb(architecture: ModelArchitecture) -> int:
    """The volume the library gives an EBS-only type when ``volume_size`` is left out, in GiB:
    the checkpoint as downloaded (``download_bytes``, which a quantization at load time does
    not shrink) two and a half times over plus 10 GiB (the weights land on the volume, and
    some servers copy them once more), at least SageMaker's default of 30 and at most
    :data:`MAX_VOLUME_GB`. It is never below what :func:`storage_problem` asks (the checkpoint
    with :data:`HEADROOM`), so the default passes the check wherever a volume can."""
    download_gib = architecture.download_bytes / 2**30
    checked = math.ceil(download_gib * (1 + _HEADROOM))
    return min(MAX_VOLUME_GB, max(30, checked, math.ceil(download_gib * 2.5 + 10)))


def _checkpoint(model: str, download: float) -> str:
    return f"the checkpoint of {model} ({download / 1e9:,.1f} GB as downloaded)"


def _volume_too_small(gib: float, model: str, download: float, needed: float) -> Problem:
    at_least = math.ceil(needed / 2**30)
    fix = (
        f"set volume_size=Size.gibibytes({at_least}) or more, or leave volume_size out (the "
        "library then sizes the volume from the checkpoint)"
        if at_least <= MAX_VOLUME_GB
        else f"no volume SageMaker allows ({MAX_VOLUME_GB} GiB) holds it: choose an instance "
        "type with local NVMe (ml.p4d, ml.p5, ml.g6e)"
    )
    return Problem.of(
        "volume_size",
        gib,
        f"volume_size {gib:g} GiB cannot hold {_checkpoint(model, download)} with "
        f"{_HEADROOM:.0%} headroom ({needed / 2**30:,.1f} GiB);",
        fix,
    )


def _nvme_too_small(instance: InstanceType, model: str, download: float, needed: float) -> Problem:
    larger = [
        f"ml.{instance.family}.{size}"
        for size in sizes_of(instance.family)
        if (InstanceType(f"ml.{instance.family}.{size}").local_nvme_gb or 0) * 1e9 >= needed
    ]
    where = f" such as {' or '.join(larger[:2])}" if larger else " (another family)"
    return Problem.of(
        "instance_type",
        instance,
        f"{instance.name} stores the model on its {instance.local_nvme_gb:,} GB of local NVMe, "
        f"less than {_checkpoint(model, download)} with {_HEADROOM:.0%} headroom "
        f"({needed / 1e9:,.1f} GB);",
        f"choose an instance type with more local storage{where}, "
        "or serve a smaller or quantized checkpoint",
    )
