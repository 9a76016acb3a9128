"""The ML storage volume of an endpoint's instances: its size, its KMS key, and the rules of
instance types with local NVMe storage (no volume size, no volume key)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from aws_cdk import Size, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.compliance import NVME_VOLUME_KEY, waive
from constructs_llm.hardware.instance_type import InstanceType

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms

__all__ = [
    "MAX_VOLUME_GB",
    "VOLUME_KEY_ACTIONS",
    "grant_volume_key",
    "kms_problem",
    "volume_problem",
    "waive_nvme_volume_key",
]

MAX_VOLUME_GB = 512
VOLUME_KEY_ACTIONS = (
    "kms:CreateGrant",
    "kms:DescribeKey",
    "kms:Decrypt",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
)


def waive_nvme_volume_key(
    config: sagemaker.CfnEndpointConfig, instance_types: Iterable[InstanceType]
) -> None:
    """Records on ``config`` why NVMe types carry no volume key."""
    if any(t.local_nvme for t in instance_types):
        waive(config, NVME_VOLUME_KEY)


def grant_volume_key(kms_key: kms.IKey | None, grantees: Iterable[iam.IGrantable]) -> None:
    """Lets each of ``grantees`` use the volume key there is (named actions only: a volume
    key needs no wildcard actions)."""
    if kms_key is not None:
        for grantee in grantees:
            kms_key.grant(grantee, *VOLUME_KEY_ACTIONS)


def kms_problem(instance_type: InstanceType, kms_key: kms.IKey | None) -> str | None:
    """KmsKeyId is rejected on instance types with local NVMe storage."""
    if kms_key is None or not instance_type.known or instance_type.supports_kms:
        return None
    return _kms_on_nvme(instance_type)


def _kms_on_nvme(instance: InstanceType) -> str:
    return (
        f"kms_key cannot be used with {instance.name}: it has local NVMe storage, which "
        "SageMaker encrypts with a hardware key and for which CreateEndpointConfig rejects "
        "KmsKeyId; drop kms_key or pick an EBS-backed type"
    )


def volume_problem(instance_type: InstanceType, volume_size: Size | None) -> str | None:
    """VolumeSizeInGB: a Size, 1-512 GiB, and only on instance types without local NVMe."""
    if volume_size is None:
        return None
    if not isinstance(volume_size, Size):
        return f"volume_size must be a Size, got {volume_size!r}; use Size.gibibytes(...)"
    if instance_type.known and not instance_type.supports_volume_size:
        return _volume_on_nvme(instance_type)
    gib = volume_size.to_gibibytes()
    if not Token.is_unresolved(gib) and not 1 <= gib <= MAX_VOLUME_GB:
        return f"volume_size must be 1-{MAX_VOLUME_GB} GiB, got {gib:g} GiB"
    return None


def _volume_on_nvme(instance: InstanceType) -> str:
    return (
        f"volume_size cannot be set on {instance.name}: it has local NVMe storage "
        f"({instance.local_nvme_gb} GB) and SageMaker rejects VolumeSizeInGB there; drop "
        "volume_size"
    )
