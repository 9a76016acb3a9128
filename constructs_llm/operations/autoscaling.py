"""Target-tracking autoscaling settings shared by endpoints and inference components."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm.errors import ScalingError
from constructs_llm.operations.schedule import ScheduledCapacity, schedule_problems
from constructs_llm.problems import Problem, Problems
from constructs_llm.scope_facts import node_of, stack_of
from constructs_llm.values import all_ints, duration_type_problem, positive_int_problem

AUTOSCALING_FIX = "use Autoscaling(max_capacity=..., target_concurrent_requests=...)"

#: Requests queued or in process per instance that an asynchronous endpoint's target tracking
#: holds when ``Autoscaling`` names no target: the value of AWS's example policy ("Autoscale an
#: asynchronous endpoint", https://docs.aws.amazon.com/sagemaker/latest/dg/
#: async-inference-autoscale.html: ``'TargetValue': 5.0`` on ``ApproximateBacklogSizePerInstance``).
DEFAULT_BACKLOG_PER_INSTANCE = 5.0

# Application Auto Scaling acts through its service-linked role; naming it keeps CDK from
# creating an unused IAM role per scalable target.
_SAGEMAKER_SCALING_ROLE = (
    "aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
    "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)

if TYPE_CHECKING:
    from aws_cdk import aws_applicationautoscaling as appscaling


@dataclass(frozen=True, kw_only=True)
class Autoscaling:
    """Target tracking on instance count (endpoints) or copy count (inference components).

    One target: ``target_concurrent_requests`` (the high-resolution concurrency metric, emitted
    every 10 s, the right signal for long streaming requests) or
    ``target_invocations_per_instance`` (per-minute invocations) on real-time endpoints and
    inference components, which need one of them; ``target_backlog_per_instance`` on an
    asynchronous endpoint (``LlmEndpoint(async_inference=...)``), where it may be left out.

    :param max_capacity: upper bound of instances (or copies).
    :param min_capacity: lower bound. @default 1. ``0`` means scale to zero (inference
        components and asynchronous endpoints only).
    :param target_concurrent_requests: requests in flight per model/copy to hold. @default None
    :param target_invocations_per_instance: invocations per instance per minute. @default None
    :param target_backlog_per_instance: an asynchronous endpoint's requests queued or in
        process per instance (``ApproximateBacklogSizePerInstance``). @default None; an
        asynchronous endpoint then holds ``DEFAULT_BACKLOG_PER_INSTANCE`` (5, AWS's example)
    :param scale_in_cooldown: @default 10 minutes (LLM instances take minutes to come back).
    :param scale_out_cooldown: @default 2 minutes.
    :param schedule: scheduled changes of the bounds (``ScheduledCapacity``), e.g. fewer
        instances or no copies at night. @default none
    """

    max_capacity: int
    min_capacity: int = 1
    target_concurrent_requests: float | None = None
    target_invocations_per_instance: float | None = None
    target_backlog_per_instance: float | None = None
    scale_in_cooldown: Duration | None = None
    scale_out_cooldown: Duration | None = None
    schedule: Sequence[ScheduledCapacity] = ()

    def __post_init__(self) -> None:
        problems = Problems("Autoscaling")
        problems.extend(self._problems(), ScalingError)
        problems.raise_if_any()

    def _problems(self) -> list[Problem | None]:
        targets = [
            self.target_concurrent_requests,
            self.target_invocations_per_instance,
            self.target_backlog_per_instance,
        ]
        chosen = [n for n, t in zip(_TARGET_NAMES, targets, strict=True) if t is not None]
        return [
            positive_int_problem("min_capacity", self.min_capacity, minimum=0),
            positive_int_problem("max_capacity", self.max_capacity),
            None
            if not all_ints(self.min_capacity, self.max_capacity)
            or self.min_capacity <= self.max_capacity
            else Problem.of(
                "min_capacity",
                self.min_capacity,
                f"min_capacity ({self.min_capacity}) is above max_capacity ({self.max_capacity});",
                "lower min_capacity or raise max_capacity",
            ),
            Problem.of(
                chosen[1],
                targets,
                f"set one target, got {len(chosen)} ({', '.join(chosen)}):",
                "target_concurrent_requests or target_invocations_per_instance on a real-time "
                "endpoint or a component, target_backlog_per_instance on an asynchronous endpoint",
            )
            if len(chosen) > 1
            else None,
            *(_positive(name, v) for name, v in zip(_TARGET_NAMES, targets, strict=True)),
            duration_type_problem("scale_in_cooldown", self.scale_in_cooldown),
            duration_type_problem("scale_out_cooldown", self.scale_out_cooldown),
            *schedule_problems(self.schedule),
        ]

    @property
    def lowest_min(self) -> int:
        """The lowest lower bound the target may get, schedules included."""
        scheduled = [s.min_capacity for s in self.schedule if s.min_capacity is not None]
        return min([self.min_capacity, *scheduled])

    @property
    def may_reach_zero(self) -> bool:
        """Whether the count may drop to zero, by the base bounds or by a scheduled action."""
        return self.lowest_min == 0

    @property
    def highest_max(self) -> int:
        """The highest upper bound the target may get, schedules included."""
        scheduled = [s.max_capacity for s in self.schedule if s.max_capacity is not None]
        return max([self.max_capacity, *scheduled])

    @property
    def uses_concurrency(self) -> bool:
        return self.target_concurrent_requests is not None

    @property
    def backlog_target(self) -> float:
        """The asynchronous target: ``target_backlog_per_instance``, else the default."""
        value = self.target_backlog_per_instance
        return DEFAULT_BACKLOG_PER_INSTANCE if value is None else float(value)

    @property
    def in_cooldown(self) -> Duration:
        return self.scale_in_cooldown or Duration.minutes(10)

    @property
    def out_cooldown(self) -> Duration:
        return self.scale_out_cooldown or Duration.minutes(2)


_TARGET_NAMES = (
    "target_concurrent_requests",
    "target_invocations_per_instance",
    "target_backlog_per_instance",
)


def target_problem(scaling: Autoscaling, *, asynchronous: bool) -> Problem | None:
    """Whether the settings' target suits the endpoint: a real-time endpoint or a component
    tracks concurrency or invocations and needs one of them; an asynchronous endpoint tracks
    its backlog, because SageMaker publishes neither concurrency nor invocation metrics for it
    ("Any metric not listed below is not published if the endpoint is enabled for asynchronous
    inference. Such metrics include (but are not limited to): OverheadLatency, Invocations,
    InvocationsPerInstance", https://docs.aws.amazon.com/sagemaker/latest/dg/
    async-inference-monitor.html)."""
    if asynchronous:
        given = [
            name
            for name in _TARGET_NAMES[:2]
            if getattr(scaling, name) is not None  # the real-time targets
        ]
        return _realtime_target_on_async(given[0]) if given else None
    if scaling.target_backlog_per_instance is not None:
        return _backlog_target_on_realtime()
    if (
        scaling.target_concurrent_requests is None
        and scaling.target_invocations_per_instance is None
    ):
        return _no_realtime_target()
    return None


def start_outside_problem(
    prop: str, count: int, scaling: Autoscaling, *, low: int | None = None, note: str = ""
) -> Problem | None:
    """The count a host starts with (``instance_count``, ``copies``) outside the bounds
    ``scaling`` keeps it in (``low`` where the host raises the lower bound); ``note`` ends
    the fix."""
    low = scaling.min_capacity if low is None else low
    high = scaling.max_capacity
    if low <= count <= high:
        return None
    return Problem.of(
        prop,
        count,
        f"{prop} {count} is outside autoscaling's [{low}, {high}];",
        f"set {prop} within that range{note}",
    )


def _realtime_target_on_async(name: str) -> Problem:
    return Problem.of(
        name,
        None,
        f"autoscaling {name}= cannot steer an asynchronous endpoint: SageMaker publishes no "
        "concurrency or invocation metrics for it (only its backlog: "
        "ApproximateBacklogSizePerInstance);",
        "use target_backlog_per_instance=..., or leave "
        f"the target out for {DEFAULT_BACKLOG_PER_INSTANCE:g} requests per instance",
    )


def _backlog_target_on_realtime() -> Problem:
    return Problem.of(
        "target_backlog_per_instance",
        None,
        "autoscaling target_backlog_per_instance= applies to an asynchronous endpoint only "
        "(ApproximateBacklogSizePerInstance is published for async endpoints);",
        "pass "
        "LlmEndpoint(async_inference=AsyncInference(...)), or use target_concurrent_requests= "
        "on a real-time endpoint or a component",
    )


def _no_realtime_target() -> Problem:
    return Problem.of(
        "autoscaling",
        None,
        "autoscaling needs a target here:",
        "set target_concurrent_requests=... (requests in flight "
        "per instance or copy, the choice for LLMs) or target_invocations_per_instance=...; "
        "only an asynchronous endpoint (async_inference=...) has a default target (its backlog)",
    )


def _positive(name: str, value: float | None) -> Problem | None:
    if value is None or (isinstance(value, int | float) and value > 0):
        return None
    return Problem.of(name, value, f"{name} must be a number > 0, got {value!r}")


def _scaling_role(scope: Construct) -> iam.IRole:
    """The SageMaker service-linked role of Application Auto Scaling, imported once per stack."""
    stack = stack_of(scope)
    role = _scaling_roles.get(stack)
    if role is None:
        existing = node_of(stack).try_find_child("ConstructsLlmScalingRole")
        if existing is None:
            arn = stack.format_arn(
                service="iam", region="", resource="role", resource_name=_SAGEMAKER_SCALING_ROLE
            )
            existing = iam.Role.from_role_arn(stack, "ConstructsLlmScalingRole", arn, mutable=False)
        role = _scaling_roles[stack] = cast(iam.IRole, existing)
    return role


# The scaling role of each stack, once imported (every scalable target of the stack uses it).
_scaling_roles: weakref.WeakKeyDictionary[Stack, iam.IRole] = weakref.WeakKeyDictionary()


def scalable_target(
    scope: Construct,
    id: str,
    *,
    resource_id: str,
    dimension: str,
    min_capacity: int,
    max_capacity: int,
) -> appscaling.ScalableTarget:
    from aws_cdk import aws_applicationautoscaling as appscaling  # only stacks that scale

    return appscaling.ScalableTarget(
        scope,
        id,
        service_namespace=appscaling.ServiceNamespace.SAGEMAKER,
        resource_id=resource_id,
        scalable_dimension=dimension,
        min_capacity=min_capacity,
        max_capacity=max_capacity,
        role=_scaling_role(scope),
    )


def variant_scalable_target(
    scope: Construct, id: str, *, endpoint_name: str, variant_name: str, scaling: Autoscaling
) -> appscaling.ScalableTarget:
    """The scalable target of an endpoint variant's instance count, within ``scaling``'s base
    bounds. Its ``ResourceId`` names the endpoint (by ``GetAtt``, so CloudFormation creates or
    updates the endpoint first) and the variant."""
    return scalable_target(
        scope,
        id,
        resource_id=f"endpoint/{endpoint_name}/variant/{variant_name}",
        dimension="sagemaker:variant:DesiredInstanceCount",
        min_capacity=scaling.min_capacity,
        max_capacity=scaling.max_capacity,
    )


def track(
    target: appscaling.ScalableTarget,
    scaling: Autoscaling,
    *,
    concurrency_metric: appscaling.PredefinedMetric,
    invocations_metric: appscaling.PredefinedMetric,
) -> None:
    """Adds the one target-tracking policy the settings ask for (the construct has checked
    that they name a real-time target: :func:`target_problem`), and the scheduled actions."""
    schedule_actions(target, scaling)
    if scaling.target_concurrent_requests is not None:
        metric, value = concurrency_metric, scaling.target_concurrent_requests
    elif scaling.target_invocations_per_instance is not None:
        metric, value = invocations_metric, scaling.target_invocations_per_instance
    else:
        return
    target.scale_to_track_metric(
        "Tracking",
        target_value=float(value),
        predefined_metric=metric,
        scale_in_cooldown=scaling.in_cooldown,
        scale_out_cooldown=scaling.out_cooldown,
    )


def schedule_actions(target: appscaling.ScalableTarget, scaling: Autoscaling) -> None:
    """The scheduled actions of ``scaling.schedule`` on ``target``."""
    for index, item in enumerate(scaling.schedule):
        target.scale_on_schedule(
            f"Schedule{index}",
            schedule=item.schedule,
            min_capacity=item.min_capacity,
            max_capacity=item.max_capacity,
            time_zone=item.zone,
        )
