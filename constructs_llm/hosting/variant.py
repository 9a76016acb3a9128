"""Variants of an ``LlmEndpoint``: several models or instance types behind one endpoint, with
weighted traffic for A/B tests, and a shadow variant that gets a copy of the requests.

``Variant`` is what users write (its values' types are checked when it is built);
``plan_variants`` checks a list of them (each one and the set) and turns each into a
``VariantPlan`` (``hosting/plan.py``): its pools and the model bound to each, its name, its
start-up timeouts. The variant as deployed (scaling, alarms, metrics) is an
``EndpointVariant`` (``hosting/endpoint_variant.py``).

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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import Duration, Size

from constructs_llm.errors import ScalingError, SizingError
from constructs_llm.hardware.pools import (
    InstancePools,
    InstanceTypes,
    host_ami_problem,
    instance_types_type_problems,
    pool_problem,
    provision_timeout_problem,
)
from constructs_llm.hosting.capacity_reservation import capacity_reservation_problem
from constructs_llm.hosting.names import fleet_variant_name, name_problem
from constructs_llm.hosting.plan import VariantPlan, bound_pools, pools_of
from constructs_llm.hosting.production_variant import startup_timeouts
from constructs_llm.hosting.storage import kms_problem, storage_problem, volume_problem
from constructs_llm.model.llm_model import MODEL_FIX, LlmModel
from constructs_llm.operations import autoscaling as _scaling
from constructs_llm.operations.autoscaling import AUTOSCALING_FIX, Autoscaling
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
    from aws_cdk import aws_kms as kms


_MAX_VARIANTS = 10
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
    :param capacity_reservation: the ARN of a SageMaker training plan reserved for an
        endpoint (``…:training-plan/<name>``) its instances launch into (only there: no
        on-demand fallback; when the plan's window ends the variant stops serving).
        @default none (on-demand)
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


def variant_type_problems(props: Mapping[str, object]) -> list[Problem | None]:
    """The props of a variant (``Variant(...)``, or ``LlmEndpoint(model=...)``'s one variant)
    whose type is wrong, with the messages the endpoint's own checks give."""
    weight = props.get("weight", 1)
    return [
        type_problem("model", props.get("model"), LlmModel, MODEL_FIX),
        None
        if isinstance(weight, int | float) and not isinstance(weight, bool)
        else _weight(weight),
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


def _reservation_type_problem(value: object) -> Problem | None:
    """Only a reservation that is not a string (its ARN is checked with the variant)."""
    return None if isinstance(value, str) else capacity_reservation_problem(value)


def plan_variants(
    variants: Sequence[Variant],
    *,
    shadow: Variant | None,
    kms_key: kms.IKey | None,
    problems: Problems,
    single: bool = False,
    asynchronous: bool = False,
) -> tuple[VariantPlan, ...]:
    """The plan of each variant (the shadow last), every problem of each and of the set added
    to ``problems``. A variant whose instance types cannot be read has no plan.

    :param single: ``LlmEndpoint(model=...)``: one variant named after its instance type, whose
        problems read as the endpoint's own (no ``variants[i]`` label)
    :param asynchronous: the endpoint queues requests (``async_inference=``): it scales on
        its backlog and may scale to zero
    """
    labelled = [("" if single else f"variants[{i}]", v, False) for i, v in enumerate(variants)]
    if shadow is not None:
        labelled.append(("shadow", shadow, True))
    planned: list[tuple[VariantPlan, Variant]] = []
    for label, spec, is_shadow in labelled:
        if not isinstance(spec, Variant):
            problems.add(
                Problem.of(
                    label,
                    spec,
                    f"{label} must be a Variant(model=..., ...), got {describe(spec)}",
                )
            )
            continue
        where = f"{label}: " if label else ""
        who = "LlmEndpoint" if single else "Variant"
        plan = _plan_variant(spec, where, who, kms_key, problems, single, asynchronous, is_shadow)
        if plan is not None:
            planned.append((plan, spec))
    if not single:
        problems.extend(_set_problems(variants, shadow, planned))
    return tuple(plan for plan, _ in planned)


def _plan_variant(
    spec: Variant,
    where: str,
    who: str,
    kms_key: kms.IKey | None,
    problems: Problems,
    single: bool,
    asynchronous: bool,
    shadow: bool,
) -> VariantPlan | None:
    """One variant's plan (its types were checked when it was built), or None when its
    instance types cannot be read."""
    pools = _pools(spec, problems, where, who)
    problems.extend(p.at(where) for p in _prop_problems(spec) if p)
    timeout = provision_timeout_problem(spec.provision_timeout, pools)
    problems.add(timeout.at(where) if timeout else None)
    for scaling in _scaling_problems(spec.autoscaling, spec.instance_count, asynchronous):
        problems.add(scaling.at(where) if scaling else None, ScalingError)
    if pools is None:
        return None
    for inst in dict.fromkeys(pools.instance_types):
        problems.extend(
            p.at(where)
            for p in (
                volume_problem(inst, spec.volume_size),
                kms_problem(inst, kms_key),
                storage_problem(inst, spec.volume_size, spec.model.architecture),
            )
            if p
        )
    model = spec.model
    on_pools = [
        _on_pool(pools, index, problem).at(where)
        for index, placement in enumerate(pools)
        for problem in model.problems_for(placement)
    ]
    problems.extend(on_pools)
    unbound = pools_of(pools.placements)
    planned = unbound if on_pools else bound_pools(model, unbound)
    if not on_pools:
        amis = [p.binding.inference_ami_version if p.binding else None for p in planned]
        ami = host_ami_problem(pools, amis)
        problems.add(ami.at(where) if ami else None)
    health, download = startup_timeouts(
        pools, model.architecture, spec.health_check_timeout, spec.download_timeout
    )
    return VariantPlan(
        name=_name(spec, pools, single),
        pools=planned,
        listed=pools.listed,
        instance_count=spec.instance_count,
        weight=spec.weight,
        shadow=shadow,
        autoscaling=spec.autoscaling,
        health_check_timeout=health,
        download_timeout=download,
        volume_size=spec.volume_size,
        provision_timeout=spec.provision_timeout,
        capacity_reservation=spec.capacity_reservation,
    )


def _weight(weight: object) -> Problem:
    wrong = f"weight must be a number >= 0 (its share of the traffic), got {weight!r}"
    return Problem.of("weight", weight, wrong)


def _prop_problems(spec: Variant) -> list[Problem | None]:
    weight = spec.weight
    bad_weight = isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0
    return [
        _weight(weight) if bad_weight else None,
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
            problems.add(_instance_type_required(spec.model.node.path, who).at(where))
            return None
        return InstancePools.single(default)
    pools, found = InstancePools.parse(spec.instance_type)
    problems.extend(p.at(where) for p in found)
    return None if found else pools


def _instance_type_required(model_path: str, who: str = "LlmEndpoint") -> Problem:
    return Problem.of(
        "instance_type",
        None,
        f"instance_type is required: model '{model_path}' has no default instance type;",
        f"pass {who}(instance_type=...) or LlmModel(instance_type=...)",
    )


def _scaling_problems(
    autoscaling: Autoscaling | None, instance_count: int, asynchronous: bool = False
) -> list[Problem | None]:
    if autoscaling is None or not isinstance(instance_count, int):
        return []
    target = _scaling.target_problem(autoscaling, asynchronous=asynchronous)
    outside = _scaling.start_outside_problem("instance_count", instance_count, autoscaling)
    if asynchronous:  # scales to zero on its backlog (operations/backlog_scaling.py)
        return [target, outside]
    if autoscaling.min_capacity < 1:
        return [
            Problem.of(
                "autoscaling",
                autoscaling.min_capacity,
                f"autoscaling min_capacity={autoscaling.min_capacity}: a real-time endpoint "
                "variant cannot scale to zero;",
                "use InferenceComponentEndpoint with an InferenceComponent, or an asynchronous "
                "endpoint (LlmEndpoint(async_inference=AsyncInference(...)), whose requests queue "
                "while it has no instance), for scale to zero, or set min_capacity >= 1",
            ),
            target,
        ]
    return [
        target,
        outside,
        *(
            _schedule_to_zero_on_variant(
                index, "min_capacity" if item.min_capacity == 0 else "max_capacity"
            )
            for index, item in enumerate(autoscaling.schedule)
            if 0 in (item.min_capacity, item.max_capacity)
        ),
    ]


def _schedule_to_zero_on_variant(index: int, bound: str) -> Problem:
    return Problem.of(
        f"autoscaling.schedule[{index}]",
        0,
        f"schedule[{index}] {bound}=0: a real-time endpoint variant cannot scale to zero;",
        "use "
        "1 or more, an InferenceComponent on an InferenceComponentEndpoint(min_instances=0) to "
        "release instances at night, or an asynchronous endpoint (async_inference=...)",
    )


def _name(spec: Variant, pools: InstancePools, single: bool) -> str:
    """``LlmEndpoint(model=...)``: the instance type (a new one is a new variant), or
    ``pools`` for a list of them (see ``VARIANT_NAME``). Otherwise the given name, else the
    model's id before that, within 63 characters."""
    fleet = fleet_variant_name(pools)
    if single:
        return fleet
    if spec.name is not None:
        return spec.name
    model = _NAME_PART.sub("-", spec.model.node.id).strip("-")[: 62 - len(fleet)].strip("-")
    return f"{model}-{fleet}" if model else fleet


def _set_problems(
    variants: Sequence[Variant],
    shadow: Variant | None,
    planned: list[tuple[VariantPlan, Variant]],
) -> list[Problem]:
    problems = []
    count = len(variants)
    if count > _MAX_VARIANTS:
        problems.append(
            Problem.of(
                "variants",
                count,
                f"variants holds {count} production variants; SageMaker allows at most "
                f"{_MAX_VARIANTS} per endpoint config:",
                "split them over endpoints",
            )
        )
    if shadow is not None and count != 1:
        problems.append(
            Problem.of(
                "shadow",
                None,
                f"shadow= needs exactly one production variant (SageMaker allows one production "
                f"and one shadow variant when a shadow is used), got {count}",
            )
        )
    weights = [p.weight for p, _ in planned if not p.shadow]
    if len(weights) == count and all(isinstance(w, int | float) and w == 0 for w in weights):
        problems.append(
            Problem.of(
                "weight",
                0,
                "every production variant has weight 0:",
                "give at least one weight > 0",
            )
        )
    problems += _duplicate_names(planned)
    problems += _format_problems(planned)
    return problems


def _duplicate_names(planned: list[tuple[VariantPlan, Variant]]) -> list[Problem]:
    owners: dict[str, list[str]] = {}
    for p, spec in planned:
        owners.setdefault(p.name, []).append(f"LlmModel '{spec.model.node.path}'")
    return [
        Problem.of(
            "name",
            name,
            f"the variant name {name!r} is used {len(who)} times ({', '.join(who)});",
            "pass Variant(name=...) to tell them apart",
        )
        for name, who in owners.items()
        if len(who) > 1
    ]


def _format_problems(planned: list[tuple[VariantPlan, Variant]]) -> list[Problem]:
    """The invoker sends one request body to the endpoint, whichever variant serves it."""
    models = [(p.name, spec.model) for p, spec in planned]
    formats = {model.request_format for _, model in models}
    if len(formats) < 2:
        return []
    takes = ", ".join(
        f"{name} ({model.engine.name}) takes {model.request_format.value}" for name, model in models
    )
    return [
        Problem.of(
            "variants",
            takes,
            f"the variants take different request bodies ({takes}); every variant of one "
            "endpoint gets the same request:",
            "serve them with engines of one request format",
        )
    ]


def _on_pool(pools: InstancePools, index: int, problem: Problem) -> Problem:
    """The model's problem on one pool, naming it; a sizing problem's fix is a larger type."""
    return pool_problem(pools, index, problem, too_small=issubclass(problem.kind, SizingError))
