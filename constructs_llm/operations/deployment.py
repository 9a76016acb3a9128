"""Guarded rollouts: how SageMaker replaces a fleet when an endpoint or component changes.

``Deployment`` renders the Endpoint's ``DeploymentConfig`` (a blue/green update with canary,
linear or all-at-once traffic shifting, or a rolling update) and an inference component's
rolling update, each with auto-rollback alarms and a derived ``MaximumExecutionTimeout``.

Limits are botocore's sagemaker service model (``TrafficRoutingConfig``: a canary at most
50 % of the variant's instances, linear steps 10-50 %; ``RollingUpdatePolicy`` and
``InferenceComponentRollingUpdatePolicy``: batches 5-50 %; ``WaitIntervalInSeconds`` and
``TerminationWaitInSeconds`` 0-3600; ``MaximumExecutionTimeoutInSeconds`` 600-28800, "larger
than the total waiting time"); the CloudFormation schemas cap rollback alarms at 10 (at least
1 on a component). Exclusions: Inf1 instances get no guardrails, and rolling updates exclude
multi-variant and serverless endpoints
(https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-exclusions.html).

``update_surge`` gives the instances an update runs beside the fleet in service, for the
Service Quotas note: a blue/green update (the default, and canary, linear and all at once)
"provisions a new fleet with the updates (the green fleet)" and terminates the old one only
after the shift and bake
(https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-blue-green.html); a
rolling update brings up one batch at a time, "Batch size for each rolling step to provision
capacity and turn on traffic on the new endpoint fleet, and terminate capacity on the old
endpoint fleet" (botocore ``RollingUpdatePolicy.MaximumBatchSize``; "reduced capacity
requirements when compared to blue/green deployments",
https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-rolling.html).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from aws_cdk import Duration, Token
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.cdk_values import cdk_kind
from constructs_llm.problems import Problem, Problems
from constructs_llm.values import duration_problem, unit_hint

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch

    from constructs_llm.hardware.instance_type import InstanceType

DEPLOYMENT_FIX = (
    "use Deployment.canary(percent=..., bake=...), Deployment.linear(step_percent=..., "
    "bake=...), Deployment.all_at_once(bake=...) or Deployment.rolling(batch_percent=..., "
    "bake=...)"
)

_MIN_EXECUTION_S = 600
_MAX_EXECUTION_S = 28800
_MAX_WAIT_S = 3600
MAX_ROLLBACK_ALARMS = 10
#: Room for SageMaker's own steps (routing changes, draining) beyond the start-up timeouts and
#: the bakes, in the derived timeout.
MARGIN_S = 600


@dataclass(frozen=True)
class Fleet:
    """What an update replaces: the fewest and most instances (or copies) it may find, and
    how long a new one may take to start (download plus health check timeouts).

    :param unit: "instance" or "copy". @default "instance"
    """

    smallest: int
    largest: int
    startup: Duration
    unit: str = "instance"


class DeploymentKind(str, Enum):
    CANARY = "canary"
    LINEAR = "linear"
    ALL_AT_ONCE = "all_at_once"
    ROLLING = "rolling"


#: What each kind's percent means, and the range SageMaker accepts for it.
_PERCENT = {
    DeploymentKind.CANARY: ("percent", 1, 50),
    DeploymentKind.LINEAR: ("step_percent", 10, 50),
    DeploymentKind.ROLLING: ("batch_percent", 5, 50),
}


@dataclass(frozen=True, kw_only=True)
class Deployment:
    """How an update replaces the fleet, watched by alarms that roll it back.

    Build one with :meth:`canary`, :meth:`linear`, :meth:`all_at_once` or :meth:`rolling`.

    :param kind: the traffic-shifting mode.
    :param bake: how long SageMaker watches the alarms after each step (and before it
        terminates the old fleet), 0-60 minutes.
    :param percent: the canary, linear step or rolling batch, in percent of the fleet.
        @default none (all at once)
    :param timeout: the update's time limit (10 min-8 h). @default derived: the start-up
        timeouts of the new fleet plus every bake, plus 10 minutes
    :param rollback_alarms: alarms that roll the update back (at most 10). @default the
        target's own error and latency alarms (``endpoint.alarms``)
    """

    kind: DeploymentKind
    bake: Duration
    percent: int | None = None
    timeout: Duration | None = None
    rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None

    def __post_init__(self) -> None:
        kind = _kind(self.kind)
        problems = Problems(f"Deployment.{kind.value}" if kind else "Deployment")
        if kind is None:
            kinds = ", ".join(f"DeploymentKind.{k.name}" for k in DeploymentKind)
            problems.add(
                Problem.of(
                    "kind",
                    self.kind,
                    f"kind must be one of {kinds}, got {self.kind!r};",
                    "build one with "
                    "Deployment.canary(...), linear(...), all_at_once(...) or rolling(...)",
                )
            )
        else:
            object.__setattr__(self, "kind", kind)
        problems.add(
            duration_problem(
                "bake",
                self.bake,
                minimum_s=0,
                maximum_s=_MAX_WAIT_S,
                bounds="0 and 60 minutes",
                why="SageMaker's wait between steps and before terminating the old fleet",
            )
        )
        problems.add(self._percent_problem())
        problems.add(
            duration_problem(
                "timeout",
                self.timeout,
                minimum_s=_MIN_EXECUTION_S,
                maximum_s=_MAX_EXECUTION_S,
                bounds="10 minutes and 8 hours",
                why="SageMaker's MaximumExecutionTimeoutInSeconds",
            )
        )
        problems.add(_alarms_problem(self.rollback_alarms))
        problems.raise_if_any()

    # -- factories -----------------------------------------------------------------------------

    @staticmethod
    def canary(
        *,
        percent: int,
        bake: Duration,
        timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> Deployment:
        """Blue/green: ``percent`` of the new fleet takes traffic for ``bake``, then the rest.

        :param percent: the canary's share of the fleet, 1-50 (the canary is at least one
            instance, so the fleet needs two or more).
        :param bake: alarms are watched this long after the canary step and again after the
            full shift, before the old fleet is terminated.
        :param timeout: @default derived (see :class:`Deployment`)
        :param rollback_alarms: @default the target's error and latency alarms
        """
        return _deployment(DeploymentKind.CANARY, percent, bake, timeout, rollback_alarms)

    @staticmethod
    def linear(
        *,
        step_percent: int,
        bake: Duration,
        timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> Deployment:
        """Blue/green in equal steps of ``step_percent`` (10-50), ``bake`` after each.

        :param timeout: @default derived (see :class:`Deployment`)
        :param rollback_alarms: @default the target's error and latency alarms
        """
        return _deployment(DeploymentKind.LINEAR, step_percent, bake, timeout, rollback_alarms)

    @staticmethod
    def all_at_once(
        *,
        bake: Duration,
        timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> Deployment:
        """Blue/green with all traffic shifted at once, then ``bake`` before the old fleet goes.

        :param timeout: @default derived (see :class:`Deployment`)
        :param rollback_alarms: @default the target's error and latency alarms
        """
        return _deployment(DeploymentKind.ALL_AT_ONCE, None, bake, timeout, rollback_alarms)

    @staticmethod
    def rolling(
        *,
        batch_percent: int,
        bake: Duration,
        timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> Deployment:
        """Rolling: batches of ``batch_percent`` (5-50) of the instances, or of an inference
        component's copies, are replaced in turn, ``bake`` after each; no second full fleet.

        :param timeout: @default derived (see :class:`Deployment`)
        :param rollback_alarms: @default the target's error and latency alarms
        """
        return _deployment(DeploymentKind.ROLLING, batch_percent, bake, timeout, rollback_alarms)

    # -- arithmetic ----------------------------------------------------------------------------

    @property
    def describe(self) -> str:
        """``canary 10 %, bake 10 min`` (for messages)."""
        share = f" {self.percent} %," if self.percent is not None else ""
        return f"{self.kind.value.replace('_', ' ')}{share} bake {_minutes(self.bake)}"

    def steps(self, fleet: Fleet) -> int:
        """Traffic steps (blue/green), or batches (rolling) of the largest fleet: a batch is
        at least one instance or copy."""
        if self.kind is DeploymentKind.CANARY:
            return 2
        if self.percent is None:
            return 1
        if self.kind is DeploymentKind.ROLLING:
            per_batch = max(1, fleet.largest * self.percent // 100)
            return math.ceil(fleet.largest / per_batch)
        return math.ceil(100 / self.percent)

    def waits_s(self, fleet: Fleet) -> int:
        """Every bake of the update: after each step or batch; the last one runs before the
        old fleet is terminated (a canary bakes twice)."""
        return self.steps(fleet) * int(self.bake.to_seconds())

    def needed_s(self, fleet: Fleet) -> int:
        """The longest the update may take: a new fleet (or each batch) starting within the
        fleet's start-up time (download plus health check timeouts), every bake, a margin."""
        start = int(fleet.startup.to_seconds())
        if self.kind is DeploymentKind.ROLLING:
            start *= self.steps(fleet)
        return start + self.waits_s(fleet) + MARGIN_S

    def first_step(self, fleet: Fleet) -> int:
        """Instances (or copies) the first step moves, at most: its percent of the largest
        fleet rounded up, at least one; the whole fleet when all at once."""
        if self.percent is None or fleet.largest < 1:
            return max(fleet.largest, 1)
        return min(fleet.largest, max(1, math.ceil(fleet.largest * self.percent / 100)))

    def first_step_share(self, fleet: Fleet) -> float:
        """The share of requests the first step sends to the new fleet, at most (requests
        spread over instances): the step's instances over the largest fleet."""
        return self.first_step(fleet) / max(fleet.largest, 1)

    def execution_timeout_s(self, fleet: Fleet) -> int:
        if self.timeout is not None:
            return int(self.timeout.to_seconds())
        return max(_MIN_EXECUTION_S, self.needed_s(fleet))

    def problems_for(
        self,
        fleet: Fleet,
        *,
        instance_type: InstanceType | None = None,
        variants: int = 1,
        serverless: bool = False,
        error_rate: float | None = None,
    ) -> list[Problem]:
        """What this rollout cannot do on ``fleet`` (of ``instance_type``, with ``variants``
        variants, or serverless), rolled back by error alarms at ``error_rate`` (the target's
        own ``Alarms``) when given."""
        found = []
        if instance_type is not None and instance_type.family == "inf1":
            found.append(
                Problem.of(
                    "deployment",
                    None,
                    f"deployment guardrails are not available on {instance_type.name}: "
                    "SageMaker falls back to an all-at-once blue/green update without a bake on "
                    "Inf1 endpoints;",
                    "drop deployment=, or serve on Inferentia2 (ml.inf2)",
                )
            )
        if self.kind is DeploymentKind.ROLLING and (variants > 1 or serverless):
            found.append(_rolling_excluded(variants, serverless))
        if self.percent is not None and fleet.smallest < 2:
            found.append(_share_larger_than_fleet(self.describe, fleet.smallest, fleet.unit))
        found.extend(self._timeout_problems(fleet))
        rate = None if error_rate is None else self._error_rate_problem(fleet, error_rate)
        return [*found, rate] if rate else found

    def _error_rate_problem(self, fleet: Fleet, error_rate: float) -> Problem | None:
        """The error alarms average Invocation5XXErrors (1 per failed request) over the
        variant or component, old and new fleet together: if every request of the first step
        fails, the rate reaches the step's share of requests and no more."""
        share = self.first_step_share(fleet)
        if self.percent is None or error_rate <= share + 1e-9:
            return None
        return _error_rate_above_first_step(
            self.describe, error_rate, self.first_step(fleet), fleet, share, _PERCENT[self.kind][0]
        )

    def _timeout_problems(self, fleet: Fleet) -> list[Problem]:
        needed, waits = self.needed_s(fleet), self.waits_s(fleet)
        rolling = self.kind is DeploymentKind.ROLLING
        if self.timeout is None:
            if needed <= _MAX_EXECUTION_S:
                return []
            return [_rollout_too_long(self.describe, needed, self.steps(fleet), rolling)]
        timeout = int(self.timeout.to_seconds())
        if timeout <= waits:
            return [_timeout_within_waits(self.describe, timeout, waits)]
        return []

    def _percent_problem(self) -> Problem | None:
        if self.kind not in _PERCENT:
            return None
        name, low, high = _PERCENT[self.kind]
        value = self.percent
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return None
        return _percent_out_of_range(name, value, low, high, self.kind.value)


def _percent_out_of_range(name: str, value: object, low: int, high: int, kind: str) -> Problem:
    wrong = (
        f"{name} must be an integer from {low} to {high} (percent of the fleet SageMaker "
        f"accepts for a {kind.replace('_', '-')} update), got {value!r}"
    )
    hint = unit_hint(value, unit="percent")
    if hint:
        return Problem.of(name, value, f"{wrong};", hint.removeprefix("; "))
    return Problem.of(name, value, wrong)


def _rolling_excluded(variants: int, serverless: bool) -> Problem:
    what = "serverless" if serverless else f"{variants}-variant"
    return Problem.of(
        "deployment",
        None,
        f"Deployment.rolling(...) is not available on a {what} endpoint (SageMaker excludes "
        "rolling updates on multi-variant and serverless endpoints);",
        "use Deployment.canary, linear or all_at_once",
    )


def _share_larger_than_fleet(describe: str, fleet: int, unit: str) -> Problem:
    if unit == "copy":
        units, props = ("copy" if fleet == 1 else "copies"), "copies or autoscaling min_capacity"
        other = "drop deployment= (SageMaker then replaces the copies all at once)"
    else:
        units, props = (
            f"{unit}{'' if fleet == 1 else 's'}",
            "instance_count or autoscaling min_capacity",
        )
        other = "use Deployment.all_at_once(bake=...)"
    return Problem.of(
        "deployment",
        None,
        f"{describe}: the fleet may be as small as {fleet} {units}, and a step is at least one "
        f"{unit}, more than the 50 % of the fleet SageMaker allows per step;",
        f"keep 2 or more ({props}), or {other}",
    )


def _error_rate_above_first_step(
    describe: str, error_rate: float, step: int, fleet: Fleet, share: float, prop: str
) -> Problem:
    units = (
        fleet.unit if fleet.largest == 1 else ("copies" if fleet.unit == "copy" else "instances")
    )
    suggested = min(0.05, math.floor(share * 100) / 100) or round(share, 3)
    return Problem.of(
        "alarms.error_rate",
        error_rate,
        f"{describe} with Alarms(error_rate={error_rate:g}): the first step moves {step} of up "
        f"to {fleet.largest} {units}, about {share:.0%} of requests, so even if every one of "
        f"them fails the error alarms (the share of failed requests) reach {share:.0%}, below "
        f"{error_rate:.0%}: a broken first step cannot trip them, and the update rolls back only "
        "after more traffic has moved to the new fleet;",
        "keep error_rate at or below the first "
        f"step's share (e.g. Alarms(error_rate={suggested:g})), or take a larger first step "
        f"({prop}=...)",
    )


def _rollout_too_long(describe: str, needed: int, bakes: int, per_batch: bool) -> Problem:
    start = "each batch's" if per_batch else "the new fleet's"
    return Problem.of(
        "deployment.timeout",
        None,
        f"{describe}: the update may take up to {needed:,} s ({start} download and "
        f"health-check timeouts, {bakes} bake(s), 10 minutes of margin) but SageMaker stops an "
        "update after 28,800 s (8 h);",
        "shorten bake, use larger steps, or lower the start-up timeouts",
    )


def _timeout_within_waits(describe: str, timeout_s: int, waits_s: int) -> Problem:
    return Problem.of(
        "deployment.timeout",
        timeout_s,
        f"{describe}: timeout {timeout_s:,} s is not longer than the update's bakes "
        f"({waits_s:,} s in all), so it would time out before it can finish;",
        "raise timeout or leave it out (it is then derived)",
    )


def _kind(value: object) -> DeploymentKind | None:
    """The kind ``value`` names (a member, or its value such as ``"canary"``)."""
    try:
        return DeploymentKind(value)
    except ValueError:
        return None


def _deployment(
    kind: DeploymentKind,
    percent: int | None,
    bake: Duration,
    timeout: Duration | None,
    rollback_alarms: Sequence[cloudwatch.IAlarm] | None,
) -> Deployment:
    """What every factory returns: the kind, with its percent (if any) and common settings."""
    return Deployment(
        kind=kind, percent=percent, bake=bake, timeout=timeout, rollback_alarms=rollback_alarms
    )


def _alarms_problem(alarms: Sequence[object] | None) -> Problem | None:
    if alarms is None:
        return None
    if isinstance(alarms, str | bytes) or not isinstance(alarms, Sequence):
        return Problem.of(
            "rollback_alarms",
            alarms,
            f"rollback_alarms must be a list of CloudWatch alarms, got {alarms!r}",
        )
    if not 1 <= len(alarms) <= MAX_ROLLBACK_ALARMS:
        return Problem.of(
            "rollback_alarms",
            alarms,
            f"rollback_alarms must hold 1-{MAX_ROLLBACK_ALARMS} alarms (CloudFormation's "
            f"limit), got {len(alarms)}",
        )
    odd = [a for a in alarms if not cdk_kind(a, "aws_cloudwatch", "IAlarm")]
    return (
        Problem.of(
            "rollback_alarms",
            alarms,
            f"rollback_alarms must be CloudWatch alarms, got {odd!r}",
        )
        if odd
        else None
    )


def _minutes(duration: Duration) -> str:
    seconds = int(duration.to_seconds())
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} s"


# -- rendering ----------------------------------------------------------------------------------


def endpoint_deployment_config(
    deployment: Deployment, *, alarms: Sequence[cloudwatch.IAlarm], fleet: Fleet
) -> sagemaker.CfnEndpoint.DeploymentConfigProperty:
    """The Endpoint's ``DeploymentConfig``: blue/green traffic routing or a rolling update."""
    cfn = sagemaker.CfnEndpoint
    bake = int(deployment.bake.to_seconds())
    timeout = deployment.execution_timeout_s(fleet)
    rollback = cfn.AutoRollbackConfigProperty(
        alarms=[cfn.AlarmProperty(alarm_name=rollback_alarm_name(a)) for a in alarms]
    )
    if deployment.kind is DeploymentKind.ROLLING:
        return cfn.DeploymentConfigProperty(
            rolling_update_policy=cfn.RollingUpdatePolicyProperty(
                maximum_batch_size=_percent_size(deployment.percent),
                wait_interval_in_seconds=bake,
                maximum_execution_timeout_in_seconds=timeout,
            ),
            auto_rollback_configuration=rollback,
        )
    size = _percent_size(deployment.percent) if deployment.percent is not None else None
    routing = cfn.TrafficRoutingConfigProperty(
        type=deployment.kind.value.upper(),
        canary_size=size if deployment.kind is DeploymentKind.CANARY else None,
        linear_step_size=size if deployment.kind is DeploymentKind.LINEAR else None,
        # botocore requires it; all-at-once has no step to wait between.
        wait_interval_in_seconds=0 if deployment.kind is DeploymentKind.ALL_AT_ONCE else bake,
    )
    return cfn.DeploymentConfigProperty(
        blue_green_update_policy=cfn.BlueGreenUpdatePolicyProperty(
            traffic_routing_configuration=routing,
            termination_wait_in_seconds=bake,
            maximum_execution_timeout_in_seconds=timeout,
        ),
        auto_rollback_configuration=rollback,
    )


def component_deployment_config(
    deployment: Deployment, *, alarms: Sequence[cloudwatch.IAlarm], fleet: Fleet
) -> sagemaker.CfnInferenceComponent.InferenceComponentDeploymentConfigProperty:
    """An inference component's rolling update with auto-rollback."""
    cfn = sagemaker.CfnInferenceComponent
    return cfn.InferenceComponentDeploymentConfigProperty(
        rolling_update_policy=cfn.InferenceComponentRollingUpdatePolicyProperty(
            maximum_batch_size=cfn.InferenceComponentCapacitySizeProperty(
                type="CAPACITY_PERCENT", value=deployment.percent or 100
            ),
            wait_interval_in_seconds=int(deployment.bake.to_seconds()),
            maximum_execution_timeout_in_seconds=deployment.execution_timeout_s(fleet),
        ),
        auto_rollback_configuration=cfn.AutoRollbackConfigurationProperty(
            alarms=[cfn.AlarmProperty(alarm_name=rollback_alarm_name(a)) for a in alarms]
        ),
    )


def rollback_alarm_name(alarm: cloudwatch.IAlarm) -> str:
    """The name a rollout states for ``alarm``: its physical name as a literal when it has one
    (the default alarms of a guarded target do), so the target does not depend on the alarm and
    the alarm may depend on the target (``operations/alarms.py``); else a reference to it."""
    from aws_cdk import aws_cloudwatch as cw

    child = alarm.node.default_child
    if isinstance(child, cw.CfnAlarm):
        name = child.alarm_name
        if isinstance(name, str) and not Token.is_unresolved(name):
            return name
    return alarm.alarm_name


def _percent_size(percent: int | None) -> sagemaker.CfnEndpoint.CapacitySizeProperty:
    return sagemaker.CfnEndpoint.CapacitySizeProperty(type="CAPACITY_PERCENT", value=percent or 100)


@dataclass(frozen=True)
class Surge:
    """The instances an update runs beside the ones in service, and how (for notes).

    :param instances: the extra instances at the update's peak.
    :param how: ``while a blue/green update runs the new fleet beside the old``.
    """

    instances: int
    how: str


def update_surge(deployment: Deployment | None, instances: int) -> Surge:
    """What an update of a variant of ``instances`` instances (at most) runs beside them: a
    whole new fleet (blue/green: the default without ``deployment``, canary, linear, all at
    once), or one batch of a rolling update, its percent of the fleet rounded up (at least
    one instance; how SageMaker rounds is not documented, so the quota note counts the
    larger)."""
    if deployment is None or deployment.kind is not DeploymentKind.ROLLING:
        return Surge(instances, "while a blue/green update runs the new fleet beside the old")
    percent = deployment.percent or 100
    batch = max(1, math.ceil(instances * percent / 100))
    return Surge(
        batch, f"while a rolling update runs a batch ({percent} % of the fleet) beside them"
    )


def rollback_needs_alarms(path: str) -> Problem:
    return Problem.of(
        "deployment",
        None,
        f"'{path}' has deployment= but no alarms to roll back on (alarms=False and no "
        "rollback_alarms): a guarded rollout watches alarms during each bake;",
        "keep the default alarms or pass Deployment....(rollback_alarms=[...])",
    )
