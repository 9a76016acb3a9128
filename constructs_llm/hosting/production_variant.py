"""One production variant of an endpoint config, as a function of a model binding and the
variant's own settings, so an endpoint with several variants builds a list of them."""

from __future__ import annotations

import math
from dataclasses import dataclass

from aws_cdk import Duration, Size
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hosting.capacity_reservation import capacity_reservation_config
from constructs_llm.hosting.shared import (
    MAX_VOLUME_GB,
    least_outstanding_requests,
    variant_name_for,
)
from constructs_llm.model.binding import ModelBinding
from constructs_llm.sizing.memory import ModelArchitecture
from constructs_llm.sizing.timeouts import default_download_timeout, default_health_check_timeout

__all__ = ["VariantSettings", "production_variant", "startup_timeouts"]


@dataclass(frozen=True, kw_only=True)
class VariantSettings:
    """What a variant adds to its model binding.

    :param instance_count: initial instances.
    :param health_check_timeout: container start-up health check.
    :param download_timeout: model download.
    :param volume_size: ML storage volume. @default sized from the plan's weights where the
        instance type takes a volume size, else SageMaker's default
    :param weight: share of traffic. @default 1
    :param name: @default named after the instance type
    :param capacity_reservation: an ML capacity reservation's ARN; instances launch only into
        it. @default none (on-demand)
    """

    instance_count: int
    health_check_timeout: Duration
    download_timeout: Duration
    volume_size: Size | None = None
    weight: float = 1
    name: str | None = None
    capacity_reservation: str | None = None


def startup_timeouts(
    instance: InstanceType,
    architecture: ModelArchitecture | None,
    health_check: Duration | None,
    download: Duration | None,
) -> tuple[Duration, Duration]:
    """The given timeouts, else the defaults for the hardware and the model's size."""
    return (
        health_check or default_health_check_timeout(instance, architecture),
        download or default_download_timeout(instance, architecture),
    )


def production_variant(
    binding: ModelBinding, settings: VariantSettings
) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
    inst = binding.placement.instance_type
    return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
        variant_name=settings.name or variant_name_for(inst),
        model_name=binding.model_name,
        instance_type=inst.name,
        initial_instance_count=settings.instance_count,
        initial_variant_weight=settings.weight,
        container_startup_health_check_timeout_in_seconds=int(
            settings.health_check_timeout.to_seconds()
        ),
        model_data_download_timeout_in_seconds=int(settings.download_timeout.to_seconds()),
        volume_size_in_gb=_volume_gb(binding, settings.volume_size),
        inference_ami_version=binding.inference_ami_version,
        routing_config=least_outstanding_requests(),
        capacity_reservation_config=capacity_reservation_config(settings.capacity_reservation),
    )


def _volume_gb(binding: ModelBinding, volume_size: Size | None) -> int | None:
    if volume_size is not None:
        return int(volume_size.to_gibibytes())
    plan = binding.plan
    if plan is None or not binding.placement.instance_type.supports_volume_size:
        return None
    # Weights land on the volume, and some servers copy them once more.
    return min(MAX_VOLUME_GB, max(30, math.ceil(plan.weights_gib * 2.5 + 10)))
