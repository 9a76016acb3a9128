"""Variants of an ``LlmEndpoint``: several models or instance types behind one endpoint, with
weighted traffic for A/B tests, and a shadow variant that gets a copy of the requests.

``Variant`` is what users write; ``plan_variants`` checks a list of them (each one and the
set) and names each; ``EndpointVariant`` is one variant as deployed: its model binding, its
production variant in the endpoint config, its autoscaling and its metrics.

SageMaker's limits, checked at synth: 1-10 production variants (botocore
``ProductionVariantList``); with a shadow variant, exactly one production variant and one
shadow ("If you use this field, you can only specify one variant for ``ProductionVariants``
and one variant for ``ShadowProductionVariants``", botocore ``CreateEndpointConfigInput``
``ShadowProductionVariants``; the shadow-test guide says the same); variant names unique,
SageMaker's name pattern; weights >= 0 (cfn-lint ``InitialVariantWeight`` minimum 0).

A variant given a list of instance types has instance pools (``hardware/pools.py``): the model
is bound to every pool and must run on each; a pool whose env, image or host AMI differs from
the priority-1 pool's gets its own SageMaker Model (``ModelNameOverride``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from aws_cdk import Duration, Size

from constructs_llm.errors import ScalingError, SizingError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement
from constructs_llm.hardware.pools import (
    VARIANT_NAME,
    InstancePools,
    InstanceTypes,
    host_ami_problem,
    instance_types_type_problems,
    pool_problem,
    provision_timeout_problem,
)
from constructs_llm.hosting.capacity_reservation import capacity_reservation_problem
from constructs_llm.hosting.names import name_problem
from constructs_llm.hosting.production_variant import (
    PoolModels,
    VariantSettings,
    production_variant,
    startup_timeouts,
    variant_name_for,
)
from constructs_llm.hosting.storage import kms_problem, storage_problem, volume_problem
from constructs_llm.model.llm_model import MODEL_FIX, LlmModel
from constructs_llm.operations import autoscaling as _scaling
from constructs_llm.operations.autoscaling import AUTOSCALING_FIX, Autoscaling
from constructs_llm.operations.metrics import DashboardView, VariantMetrics
from constructs_llm.problems import Problem, Problems
from constructs_llm.sizing.timeouts import timeout_problem
from constructs_llm.values import (
    describe,
    duration_type_problem,
    int_type_problem,
    positive_int_problem,
    str_problem,
    type_problem,
)

if TYPE_CHECKING:
    from aws_cdk import aws_applicationautoscaling as appscaling
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_sagemaker as sagemaker
    from constructs import Construct, Node

    from constructs_llm.model.binding import ModelBinding
    from constructs_llm.operations.alarms import LlmAlarms

__all__ = [
    "MAX_VARIANTS",
    "EndpointVariant",
    "PlannedVariant",
    "Variant",
    "plan_variants",
    "variant_type_problems",
]

MAX_VARIANTS = 10
# What a variant's name keeps of its model's construct id.
_NAME_PART = re.compile(r"[^a-zA-Z0-9]+")


@dataclass(frozen=True, kw_only=True)
class Variant:
    """One variant of an ``LlmEndpoint(variants=[...], shadow=...)``: a model on an instance
    type, with its share of the traffic.

    :param model: the model it serves (bound to ``instance_type``).
    :param weight: its share of the requests: its weight over the sum of the production
        variants' weights (``InitialVariantWeight``); for the shadow, passed as its
        ``InitialVariantWeight`` too. @default 1
    :param instance_type: one type, or a list in order of preference (instance pools: up to
        5, priority 1 first). @default the model's ``instance_type``
    :param instance_count: initial instances. @default 1
    :param autoscaling: target tracking on this variant's instance count. @default none
    :param name: the variant's name, for metrics, autoscaling and pinning
        (``X-Target-Variant``). @default the model's id and the instance type, such as
        ``Llama-g5-2xlarge``
    :param health_check_timeout: @default as ``LlmEndpoint``
    :param download_timeout: @default as ``LlmEndpoint``
    :param volume_size: only for instance types without local NVMe. @default as
        ``LlmEndpoint``
    :param provision_timeout: with instance pools, how long SageMaker may try the pools for
        capacity (5-60 minutes). @default SageMaker's
    :param capacity_reservation: the ARN of an ML capacity reservation its instances launch
        into (only there: no on-demand fallback). @default none (on-demand)
    """

    model: LlmModel
    weight: float = 1
    instance_type: InstanceTypes | None = None
    instance_count: int = 1
    autoscaling: Autoscaling | None = None
    name: str | None = None
    health_check_timeout: Duration | None = None
    download_timeout: Duration | None = None
    volume_size: Size | None = None
    provision_timeout: Duration | None = None
    capacity_reservation: str | None = None

    def __post_init__(self) -> None:
        """Values of the wrong type fail here; the rest is checked with the endpoint's other
        variants (``variants[i]: ...``)."""
        problems = Problems("Variant")
        problems.extend(variant_type_problems(vars(self)))
        problems.raise_if_any()


def variant_type_problems(props: Mapping[str, object]) -> list[str | Problem | None]:
    """The props of a variant (``Variant(...)``, or ``LlmEndpoint(model=...)``'s one variant)
    whose type is wrong, with the messages the endpoint's own checks give."""
    weight = props.get("weight", 1)
    return [
        type_problem("model", props.get("model"), LlmModel, MODEL_FIX),
        None
        if isinstance(weight, int | float) and not isinstance(weight, bool)
        else f"weight must be a number >= 0 (its share of the traffic), got {weight!r}",
        *instance_types_type_problems(props.get("instance_type")),
        int_type_problem("instance_count", props.get("instance_count")),
        type_problem(
            "autoscaling", props.get("autoscaling"), Autoscaling, AUTOSCALING_FIX, optional=True
        ),
        str_problem("name", props.get("name"), example="Llama-g5-2xlarge"),
        duration_type_problem("health_check_timeout", props.get("health_check_timeout")),
        duration_type_problem("download_timeout", props.get("download_timeout")),
        type_problem(
            "volume_size", props.get("volume_size"), Size, "use Size.gibibytes(...)", optional=True
        ),
        duration_type_problem("provision_timeout", props.get("provision_timeout")),
        _reservation_type_problem(props.get("capacity_reservation")),
    ]


def _reservation_type_problem(value: object) -> str | None:
    """Only a reservation that is not a string (its ARN is checked with the variant)."""
    return None if isinstance(value, str) else capacity_reservation_problem(value)


@dataclass(frozen=True, kw_only=True)
class PlannedVariant:
    """A checked variant: its instance types (pools) and name, and whether it is the shadow."""

    spec: Variant
    pools: InstancePools
    name: str
    shadow: bool = False

    @property
    def placement(self) -> Placement:
        """The priority-1 pool (the only one without pools)."""
        return self.pools.first

    @functools.cached_property
    def startup(self) -> tuple[Duration, Duration]:
        """The health-check and download timeouts: as given, else the defaults for the
        slowest pool and the model's size (computed once, for rollout checks and hosting)."""
        spec = self.spec
        return startup_timeouts(
            self.pools, spec.model.architecture, spec.health_check_timeout, spec.download_timeout
        )


def plan_variants(
    variants: Sequence[Variant],
    *,
    shadow: Variant | None,
    kms_key: kms.IKey | None,
    problems: Problems,
    single: bool = False,
    asynchronous: bool = False,
) -> list[PlannedVariant]:
    """Checks each variant and the set, adding every problem to ``problems``, and names them.

    :param single: ``LlmEndpoint(model=...)``: one variant named after its instance type, whose
        problems read as the endpoint's own (no ``variants[i]`` label)
    :param asynchronous: the endpoint queues requests (``async_inference=``): it scales on
        its backlog and may scale to zero
    """
    labelled = [("" if single else f"variants[{i}]", v, False) for i, v in enumerate(variants)]
    if shadow is not None:
        labelled.append(("shadow", shadow, True))
    planned: list[PlannedVariant] = []
    for label, spec, is_shadow in labelled:
        pools = _check_variant(
            label,
            spec,
            kms_key,
            problems,
            who="LlmEndpoint" if single else "Variant",
            asynchronous=asynchronous,
        )
        if pools is not None:
            name = _name(spec, pools, single)
            planned.append(PlannedVariant(spec=spec, pools=pools, name=name, shadow=is_shadow))
    if not single:
        problems.extend(_set_problems(variants, shadow, planned))
    return planned


def _check_variant(
    label: str,
    spec: object,
    kms_key: kms.IKey | None,
    problems: Problems,
    *,
    who: str,
    asynchronous: bool = False,
) -> InstancePools | None:
    """The variant's instance types, or None when it cannot be checked further."""
    where = f"{label}: " if label else ""
    if not isinstance(spec, Variant):
        problems.add(f"{label} must be a Variant(model=..., ...), got {describe(spec)}")
        return None
    found = [
        type_problem("model", spec.model, LlmModel, MODEL_FIX),
        type_problem("autoscaling", spec.autoscaling, Autoscaling, AUTOSCALING_FIX, optional=True),
    ]
    if any(found):
        problems.extend(f"{where}{p}" for p in found if p)
        return None
    pools = _pools(spec, problems, where, who)
    problems.extend(f"{where}{p}" for p in _prop_problems(spec) if p)
    timeout = provision_timeout_problem(spec.provision_timeout, pools)
    problems.add(f"{where}{timeout}" if timeout else None)
    for scaling in _scaling_problems(spec.autoscaling, spec.instance_count, asynchronous):
        problems.add(f"{where}{scaling}" if scaling else None, ScalingError)
    if pools is not None:
        for inst in dict.fromkeys(pools.instance_types):
            problems.extend(
                f"{where}{p}"
                for p in (
                    volume_problem(inst, spec.volume_size),
                    kms_problem(inst, kms_key),
                    storage_problem(inst, spec.volume_size, spec.model.architecture),
                )
                if p
            )
        on_pools = [
            Problem(where + _on_pool(pools, index, problem), problem.kind)
            for index, placement in enumerate(pools)
            for problem in spec.model.problems_for(placement)
        ]
        problems.extend(on_pools)
        if not on_pools:
            amis = [spec.model.derive(p).inference_ami_version for p in pools]
            ami = host_ami_problem(pools, amis)
            problems.add(f"{where}{ami}" if ami else None)
    return pools


def _prop_problems(spec: Variant) -> list[str | None]:
    weight = spec.weight
    bad_weight = isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0
    return [
        f"weight must be a number >= 0 (its share of the traffic), got {weight!r}"
        if bad_weight
        else None,
        positive_int_problem("instance_count", spec.instance_count),
        timeout_problem("health_check_timeout", spec.health_check_timeout),
        timeout_problem("download_timeout", spec.download_timeout),
        name_problem("name", spec.name),
        capacity_reservation_problem(spec.capacity_reservation),
    ]


def _pools(spec: Variant, problems: Problems, where: str, who: str) -> InstancePools | None:
    """The variant's instance types (whole instances), else the model's default."""
    if spec.instance_type is None:
        default = spec.model.default_placement
        if default is None:
            problems.add(where + _instance_type_required(spec.model.node.path, who))
            return None
        return InstancePools.single(default)
    pools, found = InstancePools.parse(spec.instance_type)
    problems.extend(Problem(f"{where}{p.message}", p.kind) for p in found)
    return None if found else pools


def _instance_type_required(model_path: str, who: str = "LlmEndpoint") -> str:
    return (
        f"instance_type is required: model '{model_path}' has no default instance type; pass "
        f"{who}(instance_type=...) or LlmModel(instance_type=...)"
    )


def _scaling_problems(
    autoscaling: Autoscaling | None, instance_count: int, asynchronous: bool = False
) -> list[str | None]:
    if autoscaling is None or not isinstance(instance_count, int):
        return []
    target = _scaling.target_problem(autoscaling, asynchronous=asynchronous)
    low, high = autoscaling.min_capacity, autoscaling.max_capacity
    if asynchronous:  # scales to zero on its backlog (operations/backlog_scaling.py)
        outside = not low <= instance_count <= high
        return [
            target,
            _instance_count_outside_scaling(instance_count, low, high) if outside else None,
        ]
    if low < 1:
        return [_variant_scale_to_zero(low), target]
    return [
        target,
        _instance_count_outside_scaling(instance_count, low, high)
        if not low <= instance_count <= high
        else None,
        *(
            _schedule_to_zero_on_variant(
                index, "min_capacity" if item.min_capacity == 0 else "max_capacity"
            )
            for index, item in enumerate(autoscaling.schedule)
            if 0 in (item.min_capacity, item.max_capacity)
        ),
    ]


def _schedule_to_zero_on_variant(index: int, bound: str) -> str:
    return (
        f"schedule[{index}] {bound}=0: a real-time endpoint variant cannot scale to zero; use "
        "1 or more, an InferenceComponent on an InferenceComponentEndpoint(min_instances=0) to "
        "release instances at night, or an asynchronous endpoint (async_inference=...)"
    )


def _variant_scale_to_zero(min_capacity: int) -> str:
    return (
        f"autoscaling min_capacity={min_capacity}: a real-time endpoint variant cannot scale "
        "to zero; use InferenceComponentEndpoint with an InferenceComponent, or an "
        "asynchronous endpoint (LlmEndpoint(async_inference=AsyncInference(...)), whose "
        "requests queue while it has no instance), for scale to zero, or set min_capacity >= 1"
    )


def _instance_count_outside_scaling(count: int, low: int, high: int) -> str:
    return (
        f"instance_count {count} is outside autoscaling's [{low}, {high}]; set instance_count "
        "within that range"
    )


def _name(spec: Variant, pools: InstancePools, single: bool) -> str:
    """``LlmEndpoint(model=...)``: the instance type (a new one is a new variant), or
    ``pools`` for a list of them (see ``VARIANT_NAME``). Otherwise the given name, else the
    model's id before that, within 63 characters."""
    fleet = VARIANT_NAME if pools.listed else variant_name_for(pools.first.instance_type)
    if single:
        return fleet
    if spec.name is not None:
        return spec.name
    model = _NAME_PART.sub("-", spec.model.node.id).strip("-")[: 62 - len(fleet)].strip("-")
    return f"{model}-{fleet}" if model else fleet


def _set_problems(
    variants: Sequence[Variant], shadow: Variant | None, planned: list[PlannedVariant]
) -> list[str]:
    problems = []
    count = len(variants)
    if count > MAX_VARIANTS:
        problems.append(
            f"variants holds {count} production variants; SageMaker allows at most "
            f"{MAX_VARIANTS} per endpoint config: split them over endpoints"
        )
    if shadow is not None and count != 1:
        problems.append(
            f"shadow= needs exactly one production variant (SageMaker allows one production "
            f"and one shadow variant when a shadow is used), got {count}"
        )
    weights = [p.spec.weight for p in planned if not p.shadow]
    if len(weights) == count and all(isinstance(w, int | float) and w == 0 for w in weights):
        problems.append("every production variant has weight 0: give at least one weight > 0")
    problems += _duplicate_names(planned)
    problems += _format_problems(planned)
    return problems


def _duplicate_names(planned: list[PlannedVariant]) -> list[str]:
    owners: dict[str, list[str]] = {}
    for p in planned:
        owners.setdefault(p.name, []).append(f"LlmModel '{p.spec.model.node.path}'")
    return [
        f"the variant name {name!r} is used {len(who)} times ({', '.join(who)}); pass "
        "Variant(name=...) to tell them apart"
        for name, who in owners.items()
        if len(who) > 1
    ]


def _format_problems(planned: list[PlannedVariant]) -> list[str]:
    """The invoker sends one request body to the endpoint, whichever variant serves it."""
    formats = {p.spec.model.request_format for p in planned}
    if len(formats) < 2:
        return []
    takes = ", ".join(
        f"{p.name} ({p.spec.model.engine.name}) takes {p.spec.model.request_format.value}"
        for p in planned
    )
    return [
        f"the variants take different request bodies ({takes}); every variant of one endpoint "
        "gets the same request: serve them with engines of one request format"
    ]


class HasEndpointName(Protocol):
    @property
    def node(self) -> Node: ...

    @property
    def endpoint_name(self) -> str: ...

    @property
    def metric_endpoint_name(self) -> str: ...

    @property
    def enhanced_period(self) -> Duration | None: ...


class EndpointVariant(VariantMetrics):
    """One variant as deployed (``endpoint.variants[i]``, ``endpoint.shadow_variant``): its
    name, weight, model binding, timeouts, scalable target and ``metric_*()`` helpers
    (dimensions ``EndpointName`` and ``VariantName``).

    With instance pools, ``instance_type`` and ``binding`` are the priority-1 pool's,
    ``pools`` holds every pool, ``pool_bindings`` the model bound to each, and the start-up
    timeouts default to the slowest pool's."""

    def __init__(self, *, endpoint: HasEndpointName, planned: PlannedVariant) -> None:
        spec = planned.spec
        self.endpoint = endpoint
        self.name = planned.name
        self.shadow = planned.shadow
        self.model = spec.model
        self.weight = spec.weight
        self.pools = planned.pools
        self.instance_type = planned.placement.instance_type
        self.instance_count = spec.instance_count
        self.autoscaling = spec.autoscaling
        self.provision_timeout = spec.provision_timeout
        self.binding: ModelBinding = spec.model.bind(planned.placement)
        self._pool_models = _pool_models(spec.model, planned.pools)
        self.health_check_timeout, self.download_timeout = planned.startup
        self._volume_size = spec.volume_size
        self.capacity_reservation = spec.capacity_reservation
        self.enhanced_period = endpoint.enhanced_period
        self.scalable_target: appscaling.ScalableTarget | None = None
        #: Its default alarms (``LlmEndpoint(alarms=...)``); None for the shadow or without.
        self.alarms: LlmAlarms | None = None

    def dashboard_view(self) -> DashboardView:
        """This variant's row of an endpoint's dashboard, under a heading of its own."""
        role = "shadow" if self.shadow else f"weight {self.weight:g}"
        heading = f"#### variant {self.name} ({self.fleet_label}, {role})"
        return replace(super().dashboard_view(), heading=heading)

    @property
    def describe(self) -> str:
        """``<endpoint path> variant <name>`` (for messages)."""
        return f"{self.endpoint.node.path} variant {self.name}"

    @property
    def pool_bindings(self) -> tuple[ModelBinding, ...]:
        """The model each pool runs, in priority order: the variant's own (``binding``), or
        the pool's ``ModelNameOverride`` where its env, image or host AMI differ."""
        return tuple(self._pool_models.get(index, self.binding) for index in range(len(self.pools)))

    @property
    def fleet_label(self) -> str:
        """The instance type, or the instance pools in priority order, for titles."""
        return self.pools.describe()

    @property
    def pool_instance_types(self) -> tuple[InstanceType, ...]:
        """The pools' instance types when given as a list (metrics by ``InstanceType``)."""
        return self.pools.instance_types if self.pools.listed else ()

    def production_variant(self) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        """This variant in the endpoint config."""
        settings = VariantSettings(
            instance_count=self.instance_count,
            health_check_timeout=self.health_check_timeout,
            download_timeout=self.download_timeout,
            volume_size=self._volume_size,
            weight=self.weight,
            name=self.name,
            pools=self.pools,
            pool_models=self._pool_models,
            provision_timeout=self.provision_timeout,
            capacity_reservation=self.capacity_reservation,
        )
        return production_variant(self.binding, settings)

    def autoscale(self, scope: Construct, id: str) -> appscaling.ScalableTarget | None:
        """Target tracking on this variant's instance count, if it asks for it. The target's
        ``ResourceId`` names the endpoint (by ``GetAtt``, so CloudFormation creates or updates
        the endpoint first) and the variant, so a new instance type (a new variant) brings a
        new target, created after the endpoint update; the old one is deleted in the cleanup
        that follows, too late for SageMaker, which refuses to remove a registered variant
        (see ``constructs-llm:autoscaled-fleet``)."""
        from aws_cdk import aws_applicationautoscaling as appscaling  # only stacks that scale

        scaling = self.autoscaling
        if scaling is None:
            return None
        self.scalable_target = _scaling.scalable_target(
            scope,
            id,
            resource_id=f"endpoint/{self.endpoint.endpoint_name}/variant/{self.name}",
            dimension="sagemaker:variant:DesiredInstanceCount",
            min_capacity=scaling.min_capacity,
            max_capacity=scaling.max_capacity,
        )
        _scaling.track(
            self.scalable_target,
            scaling,
            concurrency_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
            invocations_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
        )
        return self.scalable_target

    def _metric_dimensions(self) -> dict[str, str]:
        return {"EndpointName": self.endpoint.metric_endpoint_name, "VariantName": self.name}


def _on_pool(pools: InstancePools, index: int, problem: Problem) -> str:
    """The model's problem on one pool, naming it; a sizing problem's fix is a larger type."""
    return pool_problem(
        pools, index, problem.message, too_small=issubclass(problem.kind, SizingError)
    )


def _pool_models(model: LlmModel, pools: InstancePools) -> PoolModels:
    """The model bound to each pool that cannot share the priority-1 pool's SageMaker Model;
    pools that can share it create nothing."""
    first = model.derive(pools.first)
    return {
        index: model.bind(placement)
        for index, placement in enumerate(pools)
        if index and not model.derive(placement).shares_model_with(first)
    }
