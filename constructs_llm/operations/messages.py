"""The text of the problems, warnings and notes of running in production: rollouts, alarms,
schedules and what capacity costs. Each problem names the bad value and the fix; each
warning says what to verify."""

from __future__ import annotations

__all__ = [
    "ALARMS_FIX",
    "DEPLOYMENT_FIX",
    "HOURS_PER_MONTH",
    "capacity_note",
    "component_rollout_kind",
    "guardrails_hardware_change",
    "guardrails_on_inf1",
    "percent_out_of_range",
    "rollback_needs_alarms",
    "rolling_excluded",
    "rollout_too_long",
    "schedule_releases_nothing",
    "schedule_to_zero_on_variant",
    "share_larger_than_fleet",
    "timeout_within_waits",
    "too_many_rollback_alarms",
]

DEPLOYMENT_FIX = (
    "use Deployment.canary(percent=..., bake=...), Deployment.linear(step_percent=..., "
    "bake=...), Deployment.all_at_once(bake=...) or Deployment.rolling(batch_percent=..., "
    "bake=...)"
)
ALARMS_FIX = "pass Alarms(...) for other thresholds, True for the defaults or False for none"
#: Instance-hours in an average month: 365 days x 24 hours / 12.
HOURS_PER_MONTH = 730


# -- rollouts -----------------------------------------------------------------------------------


def percent_out_of_range(name: str, value: object, low: int, high: int, kind: str) -> str:
    return (
        f"{name} must be an integer from {low} to {high} (percent of the fleet SageMaker "
        f"accepts for a {kind.replace('_', '-')} update), got {value!r}"
    )


def guardrails_on_inf1(instance: str) -> str:
    return (
        f"deployment guardrails are not available on {instance}: SageMaker falls back to an "
        "all-at-once blue/green update without a bake on Inf1 endpoints; drop deployment=, or "
        "serve on Inferentia2 (ml.inf2)"
    )


def rolling_excluded(variants: int, serverless: bool) -> str:
    what = "serverless" if serverless else f"{variants}-variant"
    return (
        f"Deployment.rolling(...) is not available on a {what} endpoint (SageMaker excludes "
        "rolling updates on multi-variant and serverless endpoints); use Deployment.canary, "
        "linear or all_at_once"
    )


def share_larger_than_fleet(describe: str, fleet: int, unit: str) -> str:
    if unit == "copy":
        units, props = ("copy" if fleet == 1 else "copies"), "copies or autoscaling min_capacity"
        other = "drop deployment= (SageMaker then replaces the copies all at once)"
    else:
        units, props = (
            f"{unit}{'' if fleet == 1 else 's'}",
            "instance_count or autoscaling min_capacity",
        )
        other = "use Deployment.all_at_once(bake=...)"
    return (
        f"{describe}: the fleet may be as small as {fleet} {units}, and a step is at least one "
        f"{unit}, more than the 50 % of the fleet SageMaker allows per step; keep 2 or more "
        f"({props}), or {other}"
    )


def rollout_too_long(describe: str, needed: int, bakes: int, per_batch: bool) -> str:
    start = "each batch's" if per_batch else "the new fleet's"
    return (
        f"{describe}: the update may take up to {needed:,} s ({start} download and "
        f"health-check timeouts, {bakes} bake(s), 10 minutes of margin) but SageMaker stops an "
        "update after 28,800 s (8 h); shorten bake, use larger steps, or lower the start-up "
        "timeouts"
    )


def timeout_within_waits(describe: str, timeout_s: int, waits_s: int) -> str:
    return (
        f"{describe}: timeout {timeout_s:,} s is not longer than the update's bakes "
        f"({waits_s:,} s in all), so it would time out before it can finish; raise timeout or "
        "leave it out (it is then derived)"
    )


def rollback_needs_alarms(path: str) -> str:
    return (
        f"'{path}' has deployment= but no alarms to roll back on (alarms=False and no "
        "rollback_alarms): a guarded rollout watches alarms during each bake; keep the default "
        "alarms or pass Deployment....(rollback_alarms=[...])"
    )


def too_many_rollback_alarms(variants: int, each: int) -> str:
    return (
        f"the {variants} production variants have {each} rollback alarms each, "
        f"{variants * each} in all, but a deployment may watch at most 10 (CloudFormation's "
        "limit); pass Deployment....(rollback_alarms=[...]) with the ones to watch"
    )


def component_rollout_kind(describe: str) -> str:
    return (
        f"an inference component updates its copies in rolling batches, got {describe}; use "
        "Deployment.rolling(batch_percent=..., bake=...)"
    )


def guardrails_hardware_change(describe: str, instance: str, variant: str) -> str:
    return (
        f"{describe} guards updates on {instance} (variant '{variant}'): a new model, image, "
        "env or timeout keeps the variant and rolls out as configured. Changing instance_type "
        "creates a new variant, and SageMaker guards only updates that keep the variant name, "
        "so that deploy shifts all traffic to the new fleet at once, with no canary, bake or "
        "auto-rollback; watch it, or move hardware with a new LlmEndpoint and shift clients"
    )


# -- schedules ----------------------------------------------------------------------------------


def schedule_to_zero_on_variant(index: int, bound: str) -> str:
    return (
        f"schedule[{index}] {bound}=0: a real-time endpoint variant cannot scale to zero; use "
        "1 or more, or an InferenceComponent on an "
        "InferenceComponentEndpoint(min_instances=0) to release instances at night"
    )


def schedule_releases_nothing(index: int, endpoint_path: str, min_instances: int) -> str:
    return (
        f"schedule[{index}] scales the copies to zero, but endpoint '{endpoint_path}' keeps "
        f"min_instances={min_instances} instance(s), which bill with no copy on them; create "
        "the InferenceComponentEndpoint with min_instances=0"
    )


# -- cost ---------------------------------------------------------------------------------------


def capacity_note(instance: str, low: int, high: int, scheduled: str | None) -> str:
    text = (
        f"Capacity: at minimum {low} x {instance} = {low * HOURS_PER_MONTH:,} instance-hours "
        f"per month (730 h), at most {high} = {high * HOURS_PER_MONTH:,}"
    )
    # Prices vary by region and change; the README says where to look them up.
    return f"{text}; {scheduled}" if scheduled else text
