"""One production variant of an endpoint config, as a function of a model binding and the
variant's own settings, so an endpoint with several variants builds a list of them.

A variant with instance pools (``VariantSettings.pools``) gets ``InstancePools`` instead of
``InstanceType``: each pool's type and priority, and a ``ModelNameOverride`` where the pool's
model differs from the priority-1 pool's (the variant's ``ModelName``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from aws_cdk import Duration, Size
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.pools import InstancePools
from constructs_llm.hosting.capacity_reservation import capacity_reservation_config
from constructs_llm.hosting.names import name_problem
from constructs_llm.hosting.storage import MAX_VOLUME_GB
from constructs_llm.model.binding import ModelBinding
from constructs_llm.problems import fail
from constructs_llm.sizing.memory import ModelArchitecture
from constructs_llm.sizing.timeouts import default_download_timeout, default_health_check_timeout

__all__ = [
    "PoolModels",
    "VariantSettings",
    "fleet_key",
    "instance_pools",
    "least_outstanding_requests",
    "production_variant",
    "startup_timeouts",
    "variant_name_for",
]

#: The model of each pool whose model is not the variant's, by its index in the pools.
PoolModels = dict[int, ModelBinding]


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
    :param pools: the instance types in order of preference; rendered as ``InstancePools``
        when given as a list. @default the binding's instance type alone
    :param pool_models: the pools whose model is not the variant's. @default none
    :param provision_timeout: ``VariantInstanceProvisionTimeoutInSeconds``. @default
        SageMaker's
    :param capacity_reservation: an ML capacity reservation's ARN; instances launch only into
        it. @default none (on-demand)
    """

    instance_count: int
    health_check_timeout: Duration
    download_timeout: Duration
    volume_size: Size | None = None
    weight: float = 1
    name: str | None = None
    pools: InstancePools | None = None
    pool_models: PoolModels | None = None
    provision_timeout: Duration | None = None
    capacity_reservation: str | None = None


def startup_timeouts(
    instance: InstanceType | InstancePools,
    architecture: ModelArchitecture | None,
    health_check: Duration | None,
    download: Duration | None,
) -> tuple[Duration, Duration]:
    """The given timeouts, else the defaults for the hardware and the model's size; for
    pools, the slowest pool's (each may be the one provisioned)."""
    types = instance.instance_types if isinstance(instance, InstancePools) else (instance,)
    return (
        health_check or _slowest(default_health_check_timeout(t, architecture) for t in types),
        download or _slowest(default_download_timeout(t, architecture) for t in types),
    )


def _slowest(timeouts: Iterable[Duration]) -> Duration:
    return max(timeouts, key=lambda d: d.to_seconds())


def production_variant(
    binding: ModelBinding, settings: VariantSettings
) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
    inst = binding.placement.instance_type
    pools = settings.pools if settings.pools is not None and settings.pools.listed else None
    timeout = settings.provision_timeout
    return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
        variant_name=settings.name or variant_name_for(inst),
        model_name=binding.model_name,
        instance_type=None if pools else inst.name,
        instance_pools=instance_pools(pools, settings.pool_models or {}) if pools else None,
        variant_instance_provision_timeout_in_seconds=int(timeout.to_seconds())
        if timeout is not None
        else None,
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


def instance_pools(
    pools: InstancePools, models: PoolModels
) -> list[sagemaker.CfnEndpointConfig.InstancePoolProperty]:
    """The ``InstancePools`` of a variant: priority 1 first."""
    return [
        sagemaker.CfnEndpointConfig.InstancePoolProperty(
            instance_type=inst.name,
            priority=index + 1,
            model_name_override=models[index].model_name if index in models else None,
        )
        for index, inst in enumerate(pools.instance_types)
    ]


def _volume_gb(binding: ModelBinding, volume_size: Size | None) -> int | None:
    if volume_size is not None:
        return int(volume_size.to_gibibytes())
    plan = binding.plan
    if plan is None or not binding.placement.instance_type.supports_volume_size:
        return None
    # Weights land on the volume, and some servers copy them once more.
    return min(MAX_VOLUME_GB, max(30, math.ceil(plan.weights_gib * 2.5 + 10)))


def variant_name_for(instance_type: InstanceType) -> str:
    """Names the variant after the fleet: a new instance type is a new variant."""
    name = instance_type.name.removeprefix("ml.").replace(".", "-")
    problem = name_problem("the variant name derived from the instance type", name)
    if problem:
        fail(f"instance type {instance_type.name!r}", problem)
    return name


def fleet_key(variant_name: str, instance_types: Iterable[InstanceType]) -> str:
    """The variant and the instance types it runs on, for an acknowledgeable warning id that
    changes whenever either does: the variant's name when it already names its fleet
    (``g5-12xlarge``, ``Llama-g5-12xlarge``), else the name and the fleet
    (``pools:g6e-2xlarge+g5-4xlarge``, ``blue:g5-12xlarge``)."""
    fleet = "+".join(variant_name_for(t) for t in instance_types)
    return variant_name if variant_name.endswith(fleet) else f"{variant_name}:{fleet}"


def least_outstanding_requests() -> sagemaker.CfnEndpointConfig.RoutingConfigProperty:
    """Routing to the least busy instance or copy: long streaming requests vary in length."""
    return sagemaker.CfnEndpointConfig.RoutingConfigProperty(
        routing_strategy="LEAST_OUTSTANDING_REQUESTS"
    )
