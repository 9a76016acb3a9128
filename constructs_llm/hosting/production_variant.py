"""One production variant of an endpoint config, rendered from its plan: the one renderer of
``LlmEndpoint`` variants (and its shadow) and of the variant of an endpoint that hosts
inference components. Also what names a variant and its start-up timeouts, computed once
when the plan is built.

(Variant names are in ``names.py``.) A variant with instance pools (``VariantPlan.listed``)
gets ``InstancePools`` instead of
``InstanceType``: each pool's type and priority, and a ``ModelNameOverride`` where the pool's
model differs from the priority-1 pool's (the variant's ``ModelName``). It creates nothing: the
Models it names are rendered by their models (``model/model_resource.py``), and it reads their
names from the pools' bindings (``binding.model_name``)."""

from __future__ import annotations

from collections.abc import Iterable

from aws_cdk import Duration
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.pools import InstancePools
from constructs_llm.hosting.capacity_reservation import capacity_reservation_config
from constructs_llm.hosting.plan import PoolPlan, VariantPlan
from constructs_llm.sizing.memory import ModelArchitecture
from constructs_llm.sizing.timeouts import default_download_timeout, default_health_check_timeout
from constructs_llm.values import seconds_of


def production_variant(
    plan: VariantPlan, *, ami: str | None = None
) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
    """The variant ``plan`` in its endpoint config, naming the SageMaker Models its models
    rendered (read once they are: at synth, after the renders).

    :param ami: the host AMI. @default the priority-1 model's (an endpoint hosting components
        passes its components')
    """
    first = plan.binding
    model_name = first.model_name if first is not None else None
    timeout, health, download = (
        plan.provision_timeout,
        plan.health_check_timeout,
        plan.download_timeout,
    )
    scaling = plan.managed_instances
    return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
        variant_name=plan.name,
        model_name=model_name,
        instance_type=None if plan.listed else plan.first.instance_type.name,
        instance_pools=_instance_pools(plan) if plan.listed else None,
        variant_instance_provision_timeout_in_seconds=_seconds(timeout),
        initial_instance_count=plan.instance_count,
        initial_variant_weight=plan.weight,
        managed_instance_scaling=sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
            status="ENABLED", min_instance_count=scaling[0], max_instance_count=scaling[1]
        )
        if scaling is not None
        else None,
        container_startup_health_check_timeout_in_seconds=_seconds(health),
        model_data_download_timeout_in_seconds=_seconds(download),
        volume_size_in_gb=plan.volume_gb,
        inference_ami_version=ami if first is None else first.inference_ami_version,
        routing_config=plan.routing.config(),
        capacity_reservation_config=capacity_reservation_config(plan.capacity_reservation),
    )


#: The resource types every endpoint renders (with the Models its models render for it).
ENDPOINT_FEATURES = (
    "AWS::SageMaker::Model",
    "AWS::SageMaker::EndpointConfig",
    "AWS::SageMaker::EndpointConfig.MetricsConfig",
    "AWS::SageMaker::Endpoint",
)


def variant_features(plans: Iterable[VariantPlan]) -> list[str]:
    """The CloudFormation features (``data/regions.json``) :func:`production_variant` renders
    for ``plans``: routing always, instance pools and capacity reservations where used."""
    found = ["AWS::SageMaker::EndpointConfig.ProductionVariants.RoutingConfig"]
    for plan in plans:
        if plan.listed:
            found.append("AWS::SageMaker::EndpointConfig.ProductionVariants.InstancePools")
        if plan.capacity_reservation is not None:
            found.append(
                "AWS::SageMaker::EndpointConfig.ProductionVariants.CapacityReservationConfig"
            )
    return list(dict.fromkeys(found))


def _instance_pools(plan: VariantPlan) -> list[sagemaker.CfnEndpointConfig.InstancePoolProperty]:
    """The ``InstancePools`` of a variant: priority 1 first; a pool whose model is not the
    variant's names its own."""
    return [
        sagemaker.CfnEndpointConfig.InstancePoolProperty(
            instance_type=pool.instance_type.name,
            priority=pool.priority,
            model_name_override=_model_name_override(plan, pool),
        )
        for pool in plan.pools
    ]


def _model_name_override(plan: VariantPlan, pool: PoolPlan) -> str | None:
    """The name of ``pool``'s Model where it is not the variant's."""
    binding = plan.model_binding(pool)
    return binding.model_name if binding is not None and binding is not plan.binding else None


def _seconds(duration: Duration | None) -> int | None:
    return int(seconds_of(duration)) if duration is not None else None


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
    return max(timeouts, key=seconds_of)
