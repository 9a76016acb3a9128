"""Bad input to running in production: rollouts, alarms, schedules and the dashboard."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import Duration, Stack, TimeZone
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch

from constructs_llm import (
    Alarms,
    Deployment,
    Engine,
    LlmDashboard,
    LlmEndpoint,
    ModelSource,
    ScheduledCapacity,
    Variant,
    dashboard_url,
)
from constructs_llm.errors import ConfigurationError, ScalingError
from constructs_llm.operations.deployment import Fleet
from constructs_llm.problems import Problems
from tests.matrix.builders import (
    G5_4GPU,
    component,
    custom,
    endpoint,
    ic_endpoint,
    model,
    scaling,
)

BAKE = Duration.minutes(10)
NIGHT = appscaling.Schedule.cron(hour="20", minute="0", week_day="MON-FRI")


def canary(**props: Any) -> Deployment:
    props.setdefault("percent", 10)
    props.setdefault("bake", BAKE)
    return Deployment.canary(**props)


def rolling(**props: Any) -> Deployment:
    props.setdefault("batch_percent", 25)
    props.setdefault("bake", BAKE)
    return Deployment.rolling(**props)


def night(**props: Any) -> ScheduledCapacity:
    return ScheduledCapacity(schedule=NIGHT, **props)


def night_at(expression: str) -> ScheduledCapacity:
    """A schedule given as a raw expression, which CDK passes on unchecked."""
    return ScheduledCapacity(schedule=appscaling.Schedule.expression(expression), min_capacity=1)


def rollout_on_serverless(stack: Stack) -> None:
    """The check a serverless endpoint would run on its rollout (no construct makes one yet)."""
    problems = Problems("LlmEndpoint 'Test/Endpoint'")
    fleet = Fleet(smallest=4, largest=4, startup=Duration.minutes(30))
    problems.extend(rolling().problems_for(fleet, serverless=True))
    problems.raise_if_any()


def two_variants(stack: Stack, *, count: int = 2, **props: Any) -> LlmEndpoint:
    """An endpoint of ``count`` weighted variants, two instances each."""
    served = [model(stack, id=f"M{i}", bound=False) for i in range(count)]
    variants = [Variant(model=m, instance_count=2) for m in served]
    return LlmEndpoint(stack, "Endpoint", variants=variants, **props)


def _alarms(stack: Stack, count: int) -> list[cloudwatch.Alarm]:
    metric = cloudwatch.Metric(namespace="Team", metric_name="BadAnswers")
    return [
        cloudwatch.Alarm(stack, f"A{i}", metric=metric, threshold=1, evaluation_periods=1)
        for i in range(count)
    ]


BAD_OPERATIONS = [
    # Deployment values
    pytest.param(
        lambda s: canary(percent=60),
        ConfigurationError,
        r"percent must be an integer from 1 to 50 \(percent of the fleet SageMaker accepts for "
        r"a canary update\), got 60",
        "percent",
        id="deployment-canary-above-half-the-fleet",
    ),
    pytest.param(
        lambda s: Deployment.linear(step_percent=5, bake=BAKE),
        ConfigurationError,
        r"step_percent must be an integer from 10 to 50 .*linear update\), got 5",
        "step_percent",
        id="deployment-linear-step-below-10",
    ),
    pytest.param(
        lambda s: Deployment.linear(step_percent=75, bake=BAKE),
        ConfigurationError,
        r"step_percent must be an integer from 10 to 50 .*got 75",
        "step_percent",
        id="deployment-linear-step-above-50",
    ),
    pytest.param(
        lambda s: rolling(batch_percent=4),
        ConfigurationError,
        r"batch_percent must be an integer from 5 to 50 .*rolling update\), got 4",
        "batch_percent",
        id="deployment-rolling-batch-below-5",
    ),
    pytest.param(
        lambda s: canary(bake=Duration.minutes(61)),
        ConfigurationError,
        r"bake must be between 0 and 60 minutes, got 3660 s",
        "bake",
        id="deployment-bake-over-an-hour",
    ),
    pytest.param(
        lambda s: canary(bake=600),
        ConfigurationError,
        r"bake must be a Duration, got 600; use Duration\.minutes",
        "bake",
        id="deployment-bake-not-a-duration",
    ),
    pytest.param(
        lambda s: canary(timeout=Duration.minutes(5)),
        ConfigurationError,
        r"timeout must be between 10 minutes and 8 hours, got 300 s",
        "timeout",
        id="deployment-timeout-below-10-minutes",
    ),
    pytest.param(
        lambda s: canary(rollback_alarms=_alarms(s, 11)),
        ConfigurationError,
        r"rollback_alarms must hold 1-10 alarms \(CloudFormation's limit\), got 11",
        "rollback_alarms",
        id="deployment-rollback-alarms-above-10",
    ),
    # Deployment on an endpoint
    pytest.param(
        lambda s: endpoint(s, deployment=canary()),
        ConfigurationError,
        r"canary 10 %, bake 10 min: the fleet may be as small as 1 instance, and a step is at "
        r"least one instance, more than the 50 % .*keep 2 or more \(instance_count or autoscaling "
        r"min_capacity\), or use Deployment\.all_at_once",
        "deployment",
        id="deployment-canary-larger-than-a-one-instance-fleet",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_count=2,
            autoscaling=scaling(min_capacity=1, max_capacity=4),
            deployment=Deployment.linear(step_percent=50, bake=BAKE),
        ),
        ConfigurationError,
        r"linear 50 %, bake 10 min: the fleet may be as small as 1 instance",
        "deployment",
        id="deployment-linear-on-a-fleet-that-scales-to-one",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_count=2,
            deployment=canary(bake=Duration.minutes(30), timeout=Duration.minutes(40)),
        ),
        ConfigurationError,
        r"canary 10 %, bake 30 min: timeout 2,400 s is not longer than the update's bakes "
        r"\(3,600 s in all\).*raise timeout or leave it out",
        "deployment.timeout",
        id="deployment-timeout-shorter-than-the-bakes",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_count=10,
            deployment=Deployment.linear(step_percent=10, bake=Duration.minutes(50)),
        ),
        ConfigurationError,
        r"linear 10 %, bake 50 min: the update may take up to 32,400 s .* SageMaker stops an "
        r"update after 28,800 s \(8 h\); shorten bake, use larger steps",
        "deployment.timeout",
        id="deployment-longer-than-sagemaker-allows",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_type="ml.inf1.xlarge",
            engine=custom(accelerator="neuron"),
            model_props={"source": ModelSource.hugging_face("acme/tiny-chat")},
            deployment=Deployment.all_at_once(bake=BAKE),
        ),
        ConfigurationError,
        r"deployment guardrails are not available on ml\.inf1\.xlarge: SageMaker falls back to "
        r"an all-at-once blue/green update without a bake on Inf1 endpoints",
        "deployment",
        id="deployment-on-inf1",
    ),
    pytest.param(
        lambda s: two_variants(s, deployment=rolling()),
        ConfigurationError,
        r"Deployment\.rolling\(\.\.\.\) is not available on a 2-variant endpoint",
        "deployment",
        id="deployment-rolling-on-a-multi-variant-endpoint",
    ),
    pytest.param(
        lambda s: two_variants(
            s,
            count=4,
            alarms=Alarms(model_latency=Duration.seconds(30)),
            deployment=canary(),
        ),
        ConfigurationError,
        r"the 4 production variants have 3 rollback alarms each, 12 in all, but a deployment "
        r"may watch at most 10",
        "deployment",
        id="deployment-too-many-variant-alarms-to-watch",
    ),
    pytest.param(
        lambda s: rollout_on_serverless(s),
        ConfigurationError,
        r"Deployment\.rolling\(\.\.\.\) is not available on a serverless endpoint",
        "deployment",
        id="deployment-rolling-on-a-serverless-endpoint",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_count=2, alarms=False, deployment=canary()),
        ConfigurationError,
        r"'Test/Endpoint' has deployment= but no alarms to roll back on \(alarms=False and no "
        r"rollback_alarms\)",
        "deployment",
        id="deployment-without-alarms",
    ),
    pytest.param(
        lambda s: endpoint(s, deployment="canary"),
        ConfigurationError,
        r"deployment must be a Deployment, got str 'canary'; use Deployment\.canary",
        "deployment",
        id="deployment-not-a-deployment",
    ),
    pytest.param(
        lambda s: endpoint(
            s, instance_count=10, alarms=Alarms(error_rate=0.5), deployment=canary()
        ),
        ConfigurationError,
        r"canary 10 %, bake 10 min with Alarms\(error_rate=0\.5\): the first step moves 1 of up "
        r"to 10 instances, about 10% of requests.*reach 10%, below 50%: a broken first step "
        r"cannot trip them.*Alarms\(error_rate=0\.05\).*\(percent=\.\.\.\)",
        "alarms.error_rate",
        id="deployment-canary-below-the-alarms-error-rate",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_count=2,
            autoscaling=scaling(min_capacity=2, max_capacity=10),
            alarms=Alarms(error_rate=0.3),
            deployment=Deployment.linear(step_percent=20, bake=BAKE),
        ),
        ConfigurationError,
        r"linear 20 %, bake 10 min with Alarms\(error_rate=0\.3\): the first step moves 2 of up "
        r"to 10 instances, about 20% of requests.*\(step_percent=\.\.\.\)",
        "alarms.error_rate",
        id="deployment-linear-first-step-below-the-alarms-error-rate",
    ),
    # Deployment on a component
    pytest.param(
        lambda s: component(s, accelerators=1, copies=2, deployment=canary()),
        ConfigurationError,
        r"an inference component updates its copies in rolling batches, got canary 10 %, bake "
        r"10 min; use Deployment\.rolling",
        "deployment",
        id="deployment-canary-on-a-component",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, deployment=rolling()),
        ConfigurationError,
        r"rolling 25 %, bake 10 min: the fleet may be as small as 1 copy.*keep 2 or more "
        r"\(copies or autoscaling min_capacity\), or drop deployment=",
        "deployment",
        id="deployment-rolling-a-single-copy",
    ),
    pytest.param(
        lambda s: component(
            s, accelerators=1, copies=4, alarms=Alarms(error_rate=0.5), deployment=rolling()
        ),
        ConfigurationError,
        r"rolling 25 %, bake 10 min with Alarms\(error_rate=0\.5\): the first step moves 1 of up "
        r"to 4 copies, about 25% of requests.*\(batch_percent=\.\.\.\)",
        "alarms.error_rate",
        id="deployment-component-batch-below-the-alarms-error-rate",
    ),
    pytest.param(
        lambda s: canary(percent=0.1),
        ConfigurationError,
        r"percent must be an integer from 1 to 50 .* got 0\.1; 0\.1 reads as 0\.1 % \(a percent "
        r"runs from 0 to 100\): for 10 % pass 10",
        "percent",
        id="deployment-canary-percent-as-a-share",
    ),
    # Alarms
    pytest.param(
        lambda s: Alarms(error_rate=5),
        ConfigurationError,
        r"error_rate must be a number above 0 and at most 1 \(e\.g\. a share such as 0\.05\), "
        r"got 5; 5 reads as 500 % \(a share runs from 0 to 1\): for 5 % pass 0\.05",
        "error_rate",
        id="alarms-error-rate-above-1",
    ),
    pytest.param(
        lambda s: Alarms(gpu_memory_percent=0.9),
        ConfigurationError,
        r"gpu_memory_percent is a percent \(0-100\), got 0\.9, an alarm that trips as soon as an "
        r"engine reserves its memory; 0\.9 reads as 0\.9 % .*: for 90 % pass 90",
        "gpu_memory_percent",
        id="alarms-gpu-memory-as-a-share",
    ),
    pytest.param(
        lambda s: Alarms(model_latency=Duration.millis(5_000_000)),
        ConfigurationError,
        r"model_latency 83 min can never be reached: no SageMaker invocation runs longer than an "
        r"hour.*ModelLatency is published in microseconds; if that figure was in microseconds, "
        r"5,000,000 µs is Duration\.millis\(5000\)",
        "model_latency",
        id="alarms-latency-in-microseconds",
    ),
    pytest.param(
        lambda s: Alarms(gpu_memory_percent=0),
        ConfigurationError,
        r"gpu_memory_percent must be a number above 0 and at most 100",
        "gpu_memory_percent",
        id="alarms-gpu-memory-zero",
    ),
    pytest.param(
        lambda s: Alarms(model_latency=30),  # type: ignore[arg-type]
        ConfigurationError,
        r"model_latency must be a Duration, got 30",
        "model_latency",
        id="alarms-latency-not-a-duration",
    ),
    pytest.param(
        lambda s: Alarms(topic="arn:aws:sns:us-east-1:123456789012:oncall"),  # type: ignore[arg-type]
        ConfigurationError,
        r"topic must be an SNS topic \(sns\.ITopic\), got 'arn:aws:sns",
        "topic",
        id="alarms-topic-as-a-string",
    ),
    pytest.param(
        lambda s: endpoint(s, alarms="on"),
        ConfigurationError,
        r"alarms must be True, False or Alarms\(\.\.\.\), got 'on'",
        "alarms",
        id="alarms-not-alarms",
    ),
    pytest.param(
        lambda s: Alarms(kv_cache_percent=0.9),
        ConfigurationError,
        r"kv_cache_percent is a percent \(0-100\), got 0\.9, an alarm that trips whenever the "
        r"KV cache holds a request; 0\.9 reads as 0\.9 % .*: for 90 % pass 90",
        "kv_cache_percent",
        id="alarms-kv-cache-as-a-share",
    ),
    pytest.param(
        lambda s: Alarms(kv_cache_percent=120),
        ConfigurationError,
        r"kv_cache_percent must be a number above 0 and at most 100 \(e\.g\. 95\), got 120",
        "kv_cache_percent",
        id="alarms-kv-cache-above-100",
    ),
    pytest.param(
        lambda s: Alarms(requests_waiting=0),
        ConfigurationError,
        r"requests_waiting must be an integer >= 1, got 0",
        "requests_waiting",
        id="alarms-requests-waiting-zero",
    ),
    pytest.param(
        lambda s: Alarms(requests_waiting=0.5),  # type: ignore[arg-type]
        ConfigurationError,
        r"requests_waiting must be an integer >= 1, got 0\.5",
        "requests_waiting",
        id="alarms-requests-waiting-a-fraction",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            engine=Engine.vllm(),
            detailed_observability=False,
            alarms=Alarms(kv_cache_percent=80),
        ),
        ConfigurationError,
        r"Alarms\(kv_cache_percent=80\) asks for an alarm on the engine's own metrics, but "
        r"detailed_observability=False: SageMaker publishes no engine metrics without it; pass "
        r"detailed_observability=True, or drop the threshold \(None\)",
        "alarms",
        id="alarms-engine-without-detailed-observability",
    ),
    pytest.param(
        lambda s: endpoint(s, alarms=Alarms(requests_waiting=4)),
        ConfigurationError,
        r"Alarms\(requests_waiting=4\) asks for an alarm on the engine's own metrics, but "
        r"Engine\.tgi\(\) publish no metrics SageMaker's detailed observability is documented "
        r"to scrape \(it names vLLM and SGLang\); serve the model with Engine\.vllm\(\) or "
        r"Engine\.sglang\(\), or drop the threshold \(None\)",
        "alarms",
        id="alarms-engine-on-an-engine-without-signals",
    ),
    pytest.param(
        lambda s: component(s, alarms=Alarms(kv_cache_percent=90)),
        ConfigurationError,
        r"InferenceComponent 'Test/Chat'.*Alarms\(kv_cache_percent=90\) asks for an alarm on the "
        r"engine's own metrics, but Engine\.tgi\(\) publish no metrics",
        "alarms",
        id="alarms-engine-on-a-component-without-signals",
    ),
    pytest.param(
        lambda s: Alarms(email="oncall"),
        ConfigurationError,
        r"email must be an e-mail address such as 'oncall@example\.com', got 'oncall'",
        "email",
        id="alarms-email-not-an-address",
    ),
    pytest.param(
        lambda s: Alarms(email=["a@example.com", "b@example"]),
        ConfigurationError,
        r"email\[1\] must be an e-mail address such as 'oncall@example\.com', got 'b@example'",
        "email[1]",
        id="alarms-email-without-a-domain",
    ),
    pytest.param(
        lambda s: Alarms(email=[]),
        ConfigurationError,
        r"email must name at least one address, got \[\]; pass None for none",
        "email",
        id="alarms-email-empty-list",
    ),
    pytest.param(
        lambda s: Alarms(email=["a@example.com", "a@example.com"]),
        ConfigurationError,
        r"email names 'a@example\.com' more than once; name each once",
        "email",
        id="alarms-email-twice",
    ),
    pytest.param(
        lambda s: Alarms(email={"to": "a@example.com"}),  # type: ignore[arg-type]
        ConfigurationError,
        r"email must be an address such as 'oncall@example\.com' or a list of them, got dict",
        "email",
        id="alarms-email-a-dict",
    ),
    # Schedules
    pytest.param(
        lambda s: scaling(max_capacity=4, schedule=[night(min_capacity=3, max_capacity=2)]),
        ScalingError,
        r"schedule\[0\] min_capacity \(3\) is above max_capacity \(2\)",
        "schedule[0] min_capacity",
        id="schedule-min-above-max",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=4, schedule=[night()]),
        ScalingError,
        r"schedule\[0\] sets neither min_capacity nor max_capacity",
        "schedule[0]",
        id="schedule-sets-nothing",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=4, schedule=[{"hour": "20"}]),
        ScalingError,
        r"schedule\[0\] must be a ScheduledCapacity\(schedule=appscaling\.Schedule\.cron",
        "schedule[0]",
        id="schedule-item-not-a-scheduled-capacity",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=4, schedule=[night(min_capacity=-1)]),
        ScalingError,
        r"schedule\[0\] min_capacity must be an integer >= 0, got -1",
        "schedule[0] min_capacity",
        id="schedule-negative-min",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            autoscaling=scaling(max_capacity=2, schedule=[night(min_capacity=0, max_capacity=0)]),
        ),
        ScalingError,
        r"schedule\[0\] min_capacity=0: a real-time endpoint variant cannot scale to zero",
        "autoscaling.schedule[0]",
        id="schedule-endpoint-variant-to-zero",
    ),
    pytest.param(
        lambda s: component(
            s,
            accelerators=1,
            autoscaling=scaling(max_capacity=2, schedule=[night(min_capacity=0, max_capacity=0)]),
        ),
        ScalingError,
        r"schedule\[0\] scales the copies to zero, but endpoint 'Test/Shared' keeps "
        r"min_instances=1 instance\(s\), which bill with no copy on them",
        "autoscaling.schedule[0]",
        id="schedule-component-to-zero-keeps-the-instances",
    ),
    pytest.param(
        lambda s: component(
            s,
            accelerators=2,
            autoscaling=scaling(max_capacity=2, schedule=[night(max_capacity=5)]),
        ),
        ScalingError,
        r"schedule\[0\] max_capacity=5 copies at most need 3 instances of ml\.g5\.12xlarge",
        "schedule[0] max_capacity",
        id="schedule-component-above-the-fleet",
    ),
    # Schedule expressions Application Auto Scaling rejects, and time-zone abbreviations
    pytest.param(
        lambda s: night_at("cron(0 20 * * 1-5)"),
        ConfigurationError,
        r"ScheduledCapacity\(cron\(0 20 \* \* 1-5\)\): schedule cron\(0 20 \* \* 1-5\) has the 5 "
        r"fields of a crontab line, but Application Auto Scaling's cron has six: minutes, hours, "
        r"day-of-month, month, day-of-week, year.*: cron\(0 20 \? \* MON-FRI \*\)",
        "schedule",
        id="schedule-crontab-five-fields",
    ),
    pytest.param(
        lambda s: night_at("cron(0 20 * * MON-FRI *)"),
        ConfigurationError,
        r"day-of-month \('\*'\) and day-of-week \('MON-FRI'\) are both set; exactly one of them "
        r"must be '\?': cron\(0 20 \? \* MON-FRI \*\)",
        "schedule",
        id="schedule-day-of-month-and-day-of-week-both-set",
    ),
    pytest.param(
        lambda s: night_at("cron(0 8 ? * 0 *)"),
        ConfigurationError,
        r"day-of-week '0' is not valid \(1-7 or SUN-SAT, where 1 is Sunday\)",
        "schedule",
        id="schedule-day-of-week-zero",
    ),
    pytest.param(
        lambda s: night_at("rate(1 week)"),
        ConfigurationError,
        r"schedule 'rate\(1 week\)': a rate takes a positive whole number and one of minute, "
        r"minutes, hour, hours, day or days",
        "schedule",
        id="schedule-rate-in-weeks",
    ),
    pytest.param(
        lambda s: night(min_capacity=1, time_zone="PST"),
        ConfigurationError,
        r"ScheduledCapacity\(cron\(0 20 \? \* MON-FRI \*\)\): time_zone 'PST' is an abbreviation, "
        r"not the IANA name Application Auto Scaling takes; it usually means "
        r"'America/Los_Angeles'",
        "time_zone",
        id="schedule-time-zone-abbreviation",
    ),
    pytest.param(
        lambda s: night(min_capacity=1, time_zone="IST"),
        ConfigurationError,
        r"time_zone 'IST' is an abbreviation.*'Asia/Kolkata', 'Europe/Dublin' or 'Asia/Jerusalem'",
        "time_zone",
        id="schedule-time-zone-ambiguous-abbreviation",
    ),
    pytest.param(
        lambda s: night(min_capacity=1, time_zone=TimeZone.of("EST")),
        ConfigurationError,
        r"time_zone 'EST' is an abbreviation.*'America/New_York'",
        "time_zone",
        id="schedule-time-zone-legacy-est",
    ),
    # Dashboard
    pytest.param(
        lambda s: LlmDashboard(
            s, "Dashboard", endpoints=[endpoint(s)], dashboard_name="LLM operations (prod)"
        ),
        ConfigurationError,
        r"dashboard_name must be 1-255 characters of A-Z, a-z, 0-9, '-' and '_' \(CloudWatch's "
        r"PutDashboard\), got 'LLM operations \(prod\)'; e\.g\. 'LLM-operations-prod'",
        "dashboard_name",
        id="dashboard-name-cloudwatch-refuses",
    ),
    pytest.param(
        lambda s: LlmDashboard(s, "Dashboard"),
        ConfigurationError,
        r"nothing to show: pass endpoints=\[\.\.\.\], components=\[\.\.\.\] or invokers=\[\.\.\.\]",
        "endpoints",
        id="dashboard-empty",
    ),
    pytest.param(
        lambda s: LlmDashboard(
            s,
            "Dashboard",
            components=[ic_endpoint(s, instance_type=G5_4GPU)],  # type: ignore[list-item]
        ),
        ConfigurationError,
        r"components\[0\] must be an InferenceComponent, got InferenceComponentEndpoint "
        r"'Test/Shared'",
        "components[0]",
        id="dashboard-endpoint-as-a-component",
    ),
    pytest.param(
        lambda s: dashboard_url("llm-operations"),  # type: ignore[arg-type]
        ConfigurationError,
        r"dashboard must be an LlmDashboard or a cloudwatch\.Dashboard, got str "
        r"'llm-operations'; pass the dashboard construct",
        "dashboard",
        id="dashboard-url-of-a-name",
    ),
]
