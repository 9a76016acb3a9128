"""The hosting plan: what a hosting construct will deploy, built once from its props and
checked before anything is created. Frozen values; every fact has one field.

- :class:`PoolPlan`: one instance pool (or the one instance type): its priority, its
  placement (the instance type and the devices a copy gets: the one home of both), the model
  bound to that placement (its engine settings and memory plan) and which pool's SageMaker
  Model it names (its own, or the priority-1 pool's where one Model serves both).
- :class:`VariantPlan`: one production (or shadow) variant of an endpoint config: its name and
  its start-up timeouts (computed once), its pools in priority order, its share of traffic,
  instance count, scaling, storage and capacity.
- :class:`EndpointPlan`: an ``LlmEndpoint``: its variants and shadow, and the endpoint-wide
  settings (asynchronous inference, metrics, deployment, alarms, key, name).

The plans of an ``InferenceComponentEndpoint`` and of an ``InferenceComponent`` are in
``hosting/components/plan.py``; the rules that tie features together are in
``hosting/rules.py``. Rendering, notes, quota lines, alarms, dashboards, invokers and the
native OpenAI route read these plans.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from constructs_llm.hardware.pools import InstancePools
from constructs_llm.hosting.fleet_change import FleetChange
from constructs_llm.hosting.names import fleet_key
from constructs_llm.hosting.routing import DEFAULT as DEFAULT_ROUTING
from constructs_llm.hosting.routing import Routing
from constructs_llm.hosting.storage import default_volume_gb

if TYPE_CHECKING:
    from aws_cdk import Duration, Size
    from aws_cdk import aws_kms as kms

    from constructs_llm.hardware.instance_type import InstanceType
    from constructs_llm.hardware.placement import Placement
    from constructs_llm.hosting.async_inference import AsyncInference
    from constructs_llm.hosting.metrics_config import MetricsPlan
    from constructs_llm.model.llm_model import LlmModel, ModelBinding
    from constructs_llm.operations.alarms import Alarms
    from constructs_llm.operations.autoscaling import Autoscaling
    from constructs_llm.operations.deployment import Deployment


@dataclass(frozen=True, kw_only=True)
class PoolPlan:
    """One instance pool of a variant (or its one instance type).

    :param priority: 1 for the preferred type, then 2, 3, ... (SageMaker's ``Priority``).
    :param placement: the instance type, and the devices one model copy gets there.
    :param binding: the model bound to ``placement`` (this pool's own engine settings and
        memory plan). @default none: the pool of an endpoint that hosts inference components,
        whose components bind their own models
    :param model_pool: the priority of the pool whose SageMaker Model this pool's instances
        run: its own, or 1 where the priority-1 pool's Model serves it too (the same env,
        image and host AMI). @default none: bound to no model
    """

    priority: int
    placement: Placement
    binding: ModelBinding | None = None
    model_pool: int | None = None

    @property
    def instance_type(self) -> InstanceType:
        return self.placement.instance_type

    @property
    def own_model(self) -> bool:
        """Its instances run a SageMaker Model of their own placement."""
        return self.model_pool == self.priority


class BoundPools:
    """What a plan whose pools are bound to models offers (a variant's pools run instances,
    a component's its copies): the SageMaker Models they run."""

    pools: Sequence[PoolPlan]

    @property
    def bindings(self) -> tuple[ModelBinding, ...]:
        """The bindings of the SageMaker Models its pools run, priority 1 first."""
        own = (pool.binding for pool in self.pools if pool.own_model and pool.binding is not None)
        return tuple(dict.fromkeys(own))

    def model_binding(self, pool: PoolPlan) -> ModelBinding | None:
        """The binding whose SageMaker Model ``pool`` (one of its pools) runs."""
        return self.pools[pool.model_pool - 1].binding if pool.model_pool is not None else None


@dataclass(frozen=True, kw_only=True)
class VariantPlan(BoundPools):
    """One variant of an endpoint config.

    :param name: the variant's name (``VariantName``), computed once from the props.
    :param pools: its instance pools in priority order (one without pools).
    :param listed: the instance types were given as a list: rendered as ``InstancePools``,
        even of one type.
    :param instance_count: initial instances.
    :param weight: its share of traffic (``InitialVariantWeight``). @default 1; none on an
        endpoint hosting components
    :param shadow: a shadow variant. @default False
    :param autoscaling: target tracking on its instance count. @default none
    :param health_check_timeout: the container start-up health check, as given or defaulted
        for the slowest pool and the model's size. @default none: an endpoint hosting
        components, whose components have their own
    :param download_timeout: the model download, likewise. @default none
    :param volume_size: the ML storage volume as given. @default sized from the checkpoint
    :param provision_timeout: how long SageMaker may try the pools for capacity. @default
        SageMaker's
    :param capacity_reservation: the ARN of the training plan the instances launch into
        (``hosting/capacity_reservation.py``). @default none (on demand)
    :param managed_instances: ``(min, max)`` of managed instance scaling (an endpoint hosting
        components). @default none
    :param routing: how requests are spread over its instances (``RoutingConfig``).
        @default least outstanding requests
    """

    name: str
    pools: tuple[PoolPlan, ...]
    listed: bool
    instance_count: int
    weight: float | None = 1
    shadow: bool = False
    autoscaling: Autoscaling | None = None
    health_check_timeout: Duration | None = None
    download_timeout: Duration | None = None
    volume_size: Size | None = None
    provision_timeout: Duration | None = None
    capacity_reservation: str | None = None
    managed_instances: tuple[int, int] | None = None
    routing: Routing = DEFAULT_ROUTING

    # -- its hardware ----------------------------------------------------------------------

    @property
    def first(self) -> PoolPlan:
        """The priority-1 pool (the only one without pools)."""
        return self.pools[0]

    @property
    def instance_types(self) -> tuple[InstanceType, ...]:
        return tuple(pool.instance_type for pool in self.pools)

    @property
    def placements(self) -> tuple[Placement, ...]:
        return tuple(pool.placement for pool in self.pools)

    @property
    def fleet(self) -> InstancePools:
        """The pools as instance types in order of preference (for labels and messages)."""
        return InstancePools(*self.placements, listed=self.listed)

    @property
    def pool_instance_types(self) -> tuple[InstanceType, ...]:
        """The pools' instance types when given as a list (metrics by ``InstanceType``)."""
        return self.instance_types if self.listed else ()

    @property
    def fleet_name(self) -> str:
        """What capacity notes count: the instance type, or the pools
        (``ml.g6e.2xlarge (or fallback pools ml.g5.4xlarge)``)."""
        first, *fallbacks = self.instance_types
        if not fallbacks:
            return first.name
        return f"{first.name} (or fallback pools {', '.join(t.name for t in fallbacks)})"

    @property
    def fleet_key(self) -> str:
        """The variant and its fleet, for an acknowledgeable warning id that changes whenever
        either does (``names.fleet_key``)."""
        return fleet_key(self.name, self.instance_types)

    # -- its model -------------------------------------------------------------------------

    @property
    def binding(self) -> ModelBinding | None:
        """The model on the priority-1 pool (the variant's ``ModelName``)."""
        return self.first.binding

    @property
    def model(self) -> LlmModel | None:
        binding = self.binding
        return binding.model if binding is not None else None

    # -- its numbers -----------------------------------------------------------------------

    @property
    def startup(self) -> Duration | None:
        """How long a new instance may take to serve: download plus health check."""
        if self.health_check_timeout is None or self.download_timeout is None:
            return None
        return self.health_check_timeout.plus(self.download_timeout)

    @property
    def most_instances(self) -> int:
        """The most instances it may run: autoscaling's highest bound, else its count."""
        return self.autoscaling.highest_max if self.autoscaling else self.instance_count

    @property
    def volume_gb(self) -> int | None:
        """``VolumeSizeInGB``: as given, else sized from the priority-1 model's checkpoint as
        downloaded where the instance type takes a volume size and the model is sized
        (``storage.default_volume_gb``), else SageMaker's default."""
        if self.volume_size is not None:
            return int(self.volume_size.to_gibibytes())
        binding = self.binding
        if binding is None or binding.plan is None or binding.model.architecture is None:
            return None
        if not self.first.instance_type.supports_volume_size:
            return None
        return default_volume_gb(binding.model.architecture)


@dataclass(frozen=True, kw_only=True)
class EndpointPlan:
    """An ``LlmEndpoint``: its variants and what applies to all of them.

    :param variants: the production variants, in the order given.
    :param shadow: the shadow variant. @default none
    :param single: built from ``model=`` (one variant, named after its fleet, whose problems
        read as the endpoint's own), not ``variants=``. @default True
    :param async_inference: the endpoint queues requests. @default none (real-time)
    :param metrics: enhanced metrics and their publishing interval (``MetricsConfig``).
    :param deployment: how updates roll out. @default SageMaker's blue/green, all at once
    :param alarms: the thresholds of each production variant's default alarms. @default none
    :param kms_key: encrypts the ML storage volumes. @default none
    :param endpoint_name: the Endpoint's physical name (given, derived from the path and the
        fleet for ``FleetChange.NEW_ENDPOINT``, or generated for a guarded rollout).
        @default none: CloudFormation names it
    :param fleet_prefix: what every name following the fleet starts with, when
        ``endpoint_name`` follows it: the containers' log permission covers them all, so the
        endpoint a new fleet replaces keeps logging until it is deleted. @default none
    :param served_model_name: the name OpenAI clients send. @default derived from the models
    :param fleet_change: how an instance-type change reaches the endpoint when it
        autoscales (``hosting/fleet_change.py``). @default ``TWO_DEPLOYS``
    """

    variants: tuple[VariantPlan, ...]
    metrics: MetricsPlan
    shadow: VariantPlan | None = None
    single: bool = True
    async_inference: AsyncInference | None = None
    deployment: Deployment | None = None
    alarms: Alarms | None = None
    kms_key: kms.IKey | None = None
    endpoint_name: str | None = None
    fleet_prefix: str | None = None
    served_model_name: str | None = None
    fleet_change: FleetChange = FleetChange.TWO_DEPLOYS

    @property
    def autoscaled(self) -> bool:
        """Some variant of the config autoscales."""
        return any(v.autoscaling is not None for v in self.hosted)

    @property
    def replaced_on_fleet_change(self) -> bool:
        """An instance-type change replaces the Endpoint (a name that follows its fleet)
        instead of updating it, which SageMaker would refuse while a variant autoscales."""
        return self.autoscaled and self.fleet_change is FleetChange.NEW_ENDPOINT

    @property
    def hosted(self) -> tuple[VariantPlan, ...]:
        """Every variant of the config: the production variants, then the shadow."""
        return (*self.variants, *((self.shadow,) if self.shadow else ()))

    @property
    def bindings(self) -> tuple[ModelBinding, ...]:
        """The bindings of every SageMaker Model the config runs, in variant and pool
        order."""
        return tuple(dict.fromkeys(b for v in self.hosted for b in v.bindings))


def pools_of(placements: Sequence[Placement]) -> tuple[PoolPlan, ...]:
    """The pools of ``placements`` in priority order, bound to no model (an endpoint hosting
    inference components, or a variant whose model cannot run there)."""
    return tuple(PoolPlan(priority=i + 1, placement=p) for i, p in enumerate(placements))


Pool = TypeVar("Pool", bound=PoolPlan)


def bound_pools(model: LlmModel, pools: Sequence[Pool]) -> tuple[Pool, ...]:
    """``pools`` (priority 1 first) with ``model`` bound to each one's placement. A pool whose
    SageMaker Model would be the priority-1 pool's runs that Model (one Model serves both);
    every other pool runs a Model of its own (a ``ModelNameOverride``, or a specification per
    instance type), whose placement its host records with the model once it is built
    (``model.add_placement``: the model renders it)."""
    own = [model.bind(pool.placement) for pool in pools]
    return tuple(
        replace(
            pool,
            binding=binding,
            model_pool=1 if binding.shares_model_with(own[0]) else pool.priority,
        )
        for pool, binding in zip(pools, own, strict=True)
    )
