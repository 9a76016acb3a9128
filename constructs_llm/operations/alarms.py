"""Default CloudWatch alarms of an endpoint variant or an inference component.

``create_alarms(scope, source, settings)`` builds them for anything that offers
:class:`AlarmMetrics` (``LlmEndpoint`` for its variant, ``InferenceComponent``), so each
variant of an endpoint can get its own. Metric names, namespaces and dimensions are
SageMaker's (https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html):
invocation metrics in ``AWS/SageMaker`` by ``EndpointName, VariantName`` or by
``InferenceComponentName``; instance metrics in ``/aws/sagemaker/Endpoints`` by
``EndpointName, VariantName``; per-copy metrics in ``/aws/sagemaker/InferenceComponents`` by
``InferenceComponentName``. ``Invocation5XXErrors`` and ``InvocationModelErrors`` send 1 per
failed request and 0 otherwise, so their Average is the share of requests that failed.

The engine alarms (KV cache, queue) are PromQL alarms on the engine's own metrics, which
SageMaker's detailed observability publishes (``operations/engine_signals.py``). With
``Alarms(email=...)`` the alarms notify those addresses through an SNS topic
(``operations/alarm_topic.py``), which lets CloudWatch publish.

Every alarm depends on the resource whose name its metrics carry (the Endpoint of a variant,
the InferenceComponent of a component), by reading the name from it (``Fn::GetAtt``) or, where
the name is a literal known at synth, by ``DependsOn``. CloudFormation creates and updates
resources in dependency order, and a new fleet replaces the Endpoint by creating the new one
first and then updating what depends on it ("creates the replacement resource first, changes
references from other dependent resources to point to the replacement resource, and then
deletes the old resource", guide "Update behaviors of stack resources"). An alarm that named
the endpoint by a literal string and did not depend on it would move to the new name as soon
as the update starts, leaving the old fleet, which serves until the new one is in service,
unwatched for the 10-30 minutes the new one takes (and the new one on the way back, in a
rollback). A guarded rollout's Endpoint names its rollback alarms; so that the dependency runs
one way, those alarms take a physical name (``named=True``) that the Endpoint's
``DeploymentConfig`` states as a literal (``operations/deployment.py``), as aws-cdk's ECS
alarm-based rollbacks name theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Protocol

from aws_cdk import CfnResource, Duration, Names
from constructs import Construct

from constructs_llm.cdk_values import cdk_kind
from constructs_llm.operations.alarm_topic import (
    alarm_topic,
    email_problems,
    emails_of,
    managed_key_problem,
)
from constructs_llm.operations.engine_signals import (
    DEFAULT_KV_CACHE_PERCENT,
    DEFAULT_REQUESTS_WAITING,
)
from constructs_llm.operations.periods import five_minutes, one_minute
from constructs_llm.operations.promql_regions import assert_promql_region, promql_alarms_on
from constructs_llm.problems import Problem, Problems
from constructs_llm.scope_facts import path_of, region_of
from constructs_llm.values import (
    bool_problem,
    duration_type_problem,
    is_unresolved,
    positive_int_problem,
    unit_hint,
)

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch
    from aws_cdk import aws_sns as sns

    from constructs_llm.operations.engine_signals import EngineQueries

#: vLLM reserves 90 % of each GPU by default (``gpu_memory_utilization``,
#: vllm-project/vllm: vllm/engine/arg_utils.py) and TGI fills 90 % of what the weights leave
#: (``TGI_WIGGLE_ROOM``, huggingface/text-generation-inference:
#: server/text_generation_server/models/globals.py), so a busy engine sits near 90-95 %: the default
#: threshold watches for memory beyond the engine's own reservation.
_DEFAULT_GPU_MEMORY_PERCENT = 98.0


@dataclass(frozen=True, kw_only=True)
class Alarms:
    """Thresholds of the default alarms, and where they notify.

    :param error_rate: share of requests (0-1) that must fail, in 2 of 3 minutes, to trip the
        ``Invocation5XXErrors`` and ``InvocationModelErrors`` alarms; keep it below a canary's
        share of traffic so a broken canary trips them. @default 0.05
    :param model_latency: the p90 ``ModelLatency`` (for a stream, until its last token) above
        which the latency alarm trips, in 2 of 3 minutes. @default no latency alarm
    :param gpu_memory_percent: GPU memory in use on any instance (or copy), for 5 minutes.
        @default 98
    :param disk_percent: disk in use on any instance. @default 90
    :param kv_cache_percent: the engine's KV cache in use on an instance (or copy), for 10
        minutes: a PromQL alarm on the engine's metrics, for vLLM and SGLang with detailed
        observability on; None for none. @default 95
    :param requests_waiting: requests waiting for a batch slot in the engine of an instance (or
        copy), for 5 minutes: a PromQL alarm, as ``kv_cache_percent``; None for none.
        @default 1
    :param topic: SNS topic each alarm notifies when it goes off. @default none; with
        ``email``, a topic of the endpoint's (or component's) own, encrypted with a KMS key
    :param email: an address, or a list of addresses, subscribed to the alarms' topic (each
        must confirm the subscription AWS mails it). @default none
    :param promql_alarms: the engine alarms (``kv_cache_percent``, ``requests_waiting``) are
        PromQL alarms, a CloudWatch preview with a region list of its own
        (``operations/promql_regions.py``): True renders them (a region off the list fails at
        synth, or at once with a rule where the region is unknown), False never.
        @default on only in a stack whose region is concrete and listed
    """

    error_rate: float = 0.05
    model_latency: Duration | None = None
    gpu_memory_percent: float = _DEFAULT_GPU_MEMORY_PERCENT
    disk_percent: float = 90.0
    kv_cache_percent: float | None = DEFAULT_KV_CACHE_PERCENT
    requests_waiting: int | None = DEFAULT_REQUESTS_WAITING
    topic: sns.ITopic | None = None
    email: str | Sequence[str] | None = None
    promql_alarms: bool | None = None

    def __post_init__(self) -> None:
        problems = Problems("Alarms")
        problems.add(_number_problem("error_rate", self.error_rate, 1, "a share such as 0.05"))
        problems.add(_gpu_percent_problem(self.gpu_memory_percent))
        problems.add(_number_problem("disk_percent", self.disk_percent, 100, "90"))
        if self.kv_cache_percent is not None:
            problems.add(_kv_cache_percent_problem(self.kv_cache_percent))
        problems.add(positive_int_problem("requests_waiting", self.requests_waiting))
        problems.add(duration_type_problem("model_latency", self.model_latency))
        problems.add(_latency_problem(self.model_latency))
        if self.topic is not None and not cdk_kind(self.topic, "aws_sns", "ITopic"):
            problems.add(
                Problem.of(
                    "topic",
                    self.topic,
                    f"topic must be an SNS topic (sns.ITopic), got {self.topic!r}",
                )
            )
        else:
            problems.add(managed_key_problem(self.topic))
        problems.extend(email_problems(self.email))
        problems.add(bool_problem("promql_alarms", self.promql_alarms))
        problems.raise_if_any()

    @property
    def emails(self) -> tuple[str, ...]:
        """The addresses subscribed to the alarms' topic, in the order given."""
        return emails_of(self.email)


def alarm_settings(alarms: object, problems: Problems) -> Alarms | None:
    """The settings ``alarms=`` asks for (``True``: the defaults, ``False``: none); a value of
    another kind is a problem."""
    if isinstance(alarms, Alarms):
        return alarms
    if alarms is True:
        return Alarms()
    if alarms is not False:
        problems.add(
            Problem.of(
                "alarms",
                alarms,
                f"alarms must be True, False or Alarms(...), got {alarms!r}; {_ALARMS_FIX}",
            )
        )
    return None


_ALARMS_FIX = "pass Alarms(...) for other thresholds, True for the defaults or False for none"


def _number_problem(name: str, value: object, high: float, example: str) -> Problem | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= high:
        return None
    hint = unit_hint(value, unit="share" if high == 1 else "percent")
    return Problem.of(
        name,
        value,
        f"{name} must be a number above 0 and at most {high:g} (e.g. {example}), got "
        f"{value!r}{hint}",
    )


def _gpu_percent_problem(value: object) -> Problem | None:
    """GPU memory in percent: the chat engines reserve about 90 % of each GPU as they start
    (vLLM's ``gpu_memory_utilization``, TGI's wiggle room), so an alarm at or below 1 % trips
    as soon as one loads: the threshold was a share (0.9 for 90 %)."""
    return _percent_problem(
        "gpu_memory_percent",
        value,
        "90",
        "an alarm that trips as soon as an engine reserves its memory",
    )


def _kv_cache_percent_problem(value: object) -> Problem | None:
    """The KV cache in percent: the engines publish a fraction (0-1), and a busy engine keeps
    most of its cache in use, so a threshold at or below 1 % trips on any traffic: it was a
    share (0.9 for 90 %)."""
    return _percent_problem(
        "kv_cache_percent", value, "95", "an alarm that trips whenever the KV cache holds a request"
    )


def _percent_problem(name: str, value: object, example: str, at_or_below_1: str) -> Problem | None:
    """A percent in (0, 100], and above 1: at or below 1 it was meant as a share, which
    ``at_or_below_1`` says what it would do."""
    problem = _number_problem(name, value, 100, example)
    if problem or not isinstance(value, int | float) or value > 1:
        return problem
    return Problem.of(
        name,
        value,
        f"{name} is a percent (0-100), got {value!r}, {at_or_below_1}"
        f"{unit_hint(value, unit='percent')}",
    )


#: ModelLatency can reach no further: an asynchronous invocation runs at most an hour
#: (``InvocationTimeoutSeconds`` up to 3600), a real-time one far less.
_LONGEST_INVOCATION_MS = 3_600_000


def _latency_problem(latency: object) -> Problem | None:
    """A latency threshold above 0 that an invocation can reach. SageMaker publishes
    ``ModelLatency`` in microseconds: a count of microseconds given to ``Duration.millis``
    lands 1,000 times too high, beyond any invocation."""
    if not isinstance(latency, Duration):
        return None
    millis = latency.to_milliseconds(integral=False)
    if millis <= 0:
        return Problem.of(
            "model_latency",
            latency,
            "model_latency must be longer than 0 ms",
        )
    if millis <= _LONGEST_INVOCATION_MS:
        return None
    micros = f"{millis:,.0f} µs is Duration.millis({millis / 1000:g})"
    return Problem.of(
        "model_latency",
        latency,
        f"model_latency {millis / 60_000:,.0f} min can never be reached: no SageMaker invocation "
        "runs longer than an hour, so the alarm would never trip. ModelLatency is published in "
        "microseconds;",
        f"if that figure was in microseconds, {micros}",
    )


#: A ``metric_*`` helper of a target (``metric_invocation_5xx_errors``, ...), called with
#: ``MetricOverrides`` keywords: the metric at the statistic and period an alarm asks, made
#: once, for that alarm.
MetricOf = Callable[..., "cloudwatch.Metric"]


@dataclass(frozen=True, kw_only=True)
class PoolMetric:
    """A metric of one instance pool's instances (its ``InstanceType`` dimension).

    :param instance_type: the pool's instance type.
    :param metric: the metric's helper, narrowed to that type.
    :param scale: what 100 % reads as, in hundreds (the GPUs of one such instance).
    """

    instance_type: str
    metric: MetricOf
    scale: int


@dataclass(frozen=True, kw_only=True)
class AlarmMetrics:
    """The metrics one target offers its alarms, as the helpers that make them: each alarm
    makes its one metric at its own statistic and period (a ``cloudwatch.Metric`` is a jsii
    object: one made and then copied with ``with_`` is two round trips to Node.js, and a metric
    no alarm watches is one for nothing).

    :param dimensions: the target's dimensions, as its metrics carry them.
    :param errors: ``Invocation5XXErrors``.
    :param model_errors: ``InvocationModelErrors``.
    :param latency: ``ModelLatency`` (microseconds).
    :param gpu_memory: GPU memory in use. @default none (no GPUs)
    :param gpu_memory_scale: what 100 % of ``gpu_memory`` reads as, in hundreds (the GPUs of
        an instance for ``GPUMemoryUtilization``). @default 1
    :param gpu_memory_by_instance_type: GPU memory of each instance pool, for a variant with
        pools, whose types may differ in GPUs (then instead of ``gpu_memory``). @default none
    :param gpu_memory_per_gpu: with enhanced metrics, the memory in use on the fullest single
        GPU, in percent of that GPU. @default none
    :param disk: ``DiskUtilization``. @default none
    :param no_capacity: ``NoCapacityInvocationFailures``. @default none
    :param no_capacity_minutes: how long requests must find no capacity before the alarm
        trips (longer where a cold start is expected). @default 5
    :param engine: PromQL over the engine's own metrics (KV cache, queue), where the engine
        publishes them and detailed observability is on. @default none
    """

    dimensions: Mapping[str, str]
    errors: MetricOf
    model_errors: MetricOf
    latency: MetricOf
    gpu_memory: MetricOf | None = None
    gpu_memory_scale: int = 1
    gpu_memory_by_instance_type: tuple[PoolMetric, ...] = ()
    gpu_memory_per_gpu: cloudwatch.IMetric | None = None
    disk: MetricOf | None = None
    no_capacity: MetricOf | None = None
    no_capacity_minutes: int = 5
    engine: EngineQueries | None = None


class AlarmSource(Protocol):
    """Anything alarms can watch: an endpoint variant (``LlmEndpoint``, ``EndpointVariant``),
    an ``InferenceComponent``."""

    def alarm_metrics(self) -> AlarmMetrics: ...


@dataclass(frozen=True)
class LlmAlarms:
    """The alarms of one target (``endpoint.alarms``, ``component.alarms``); iterate for all.

    A variant with instance pools has a GPU memory alarm per pool
    (``gpu_memory_by_instance_type``, by instance type) instead of ``gpu_memory``. With enhanced
    metrics, a variant on GPUs also watches its fullest single GPU (``gpu_memory_per_gpu``),
    which an instance's sum over its GPUs can hide (on a variant with instance pools too: the
    per-GPU series are published without ``InstanceType``, see ``operations/metrics.py``). With
    detailed observability, a vLLM or SGLang engine's KV cache (``kv_cache``) and queue
    (``queue``) are watched by PromQL alarms."""

    errors: cloudwatch.Alarm
    model_errors: cloudwatch.Alarm
    latency: cloudwatch.Alarm | None = None
    gpu_memory: cloudwatch.Alarm | None = None
    disk: cloudwatch.Alarm | None = None
    no_capacity: cloudwatch.Alarm | None = None
    gpu_memory_by_instance_type: Mapping[str, cloudwatch.Alarm] = field(default_factory=dict)
    gpu_memory_per_gpu: cloudwatch.Alarm | None = None
    kv_cache: cloudwatch.PromQLAlarm | None = None
    queue: cloudwatch.PromQLAlarm | None = None

    def __iter__(self) -> Iterator[cloudwatch.AlarmBase]:
        for each in fields(self):
            value = getattr(self, each.name)
            if isinstance(value, Mapping):
                yield from value.values()
            elif value is not None:
                yield value

    @property
    def rollback(self) -> list[cloudwatch.Alarm]:
        """The alarms that judge the answers of a new fleet (errors and latency), which roll
        a guarded update back; capacity alarms reflect load and are left out."""
        return [a for a in (self.errors, self.model_errors, self.latency) if a is not None]


@dataclass(frozen=True)
class _AlarmSpec:
    """One default alarm: where it goes in ``LlmAlarms`` (and under which key, for the
    per-pool GPU alarms), its construct id, what it watches and when it trips (at or above
    ``threshold`` in ``periods[1]`` of ``periods[0]`` periods), and why, for its description."""

    field: str
    name: str
    metric: cloudwatch.IMetric
    threshold: float
    periods: tuple[int, int]
    why: str
    key: str | None = None


def _specs(metrics: AlarmMetrics, settings: Alarms) -> list[_AlarmSpec]:
    """The alarms ``metrics`` allow, with ``settings``' thresholds, in a fixed order."""
    minute, five = one_minute(), five_minutes()
    rate, gpu = f"{settings.error_rate:.0%}", f"{settings.gpu_memory_percent:g} %"

    def at(metric: MetricOf, statistic: str, period: Duration) -> cloudwatch.IMetric:
        return metric(statistic=statistic, period=period)

    found = [
        _AlarmSpec(
            "errors",
            "Errors",
            at(metrics.errors, "Average", minute),
            settings.error_rate,
            (3, 2),
            f"at least {rate} of requests answered 5xx in 2 of 3 minutes; read the model's logs",
        ),
        _AlarmSpec(
            "model_errors",
            "ModelErrors",
            at(metrics.model_errors, "Average", minute),
            settings.error_rate,
            (3, 2),
            f"at least {rate} of requests got no 2xx from the model container (error status, "
            "broken connection or timeout) in 2 of 3 minutes; read the model's logs",
        ),
    ]
    if settings.model_latency is not None:
        latency_ms = settings.model_latency.to_milliseconds()
        found.append(
            _AlarmSpec(
                "latency",
                "Latency",
                at(metrics.latency, "p90", minute),
                latency_ms * 1000,
                (3, 2),
                f"p90 ModelLatency at or above {latency_ms:,.0f} ms in 2 of 3 minutes",
            )
        )
    if metrics.gpu_memory is not None:
        whose = "each instance" if metrics.gpu_memory_scale > 1 else "the reservation"
        found.append(
            _AlarmSpec(
                "gpu_memory",
                "GpuMemory",
                at(metrics.gpu_memory, "Maximum", minute),
                settings.gpu_memory_percent * metrics.gpu_memory_scale,
                (5, 5),
                f"GPU memory at or above {gpu} of {whose} for 5 minutes, beyond what the engine "
                "reserves; look for a second process or a leak",
            )
        )
    found += [
        _AlarmSpec(
            "gpu_memory_by_instance_type",
            f"GpuMemory-{pool.instance_type.removeprefix('ml.').replace('.', '-')}",
            at(pool.metric, "Maximum", minute),
            settings.gpu_memory_percent * pool.scale,
            (5, 5),
            f"GPU memory at or above {gpu} of each {pool.instance_type} instance (pool) for 5 "
            "minutes, beyond what the engine reserves; look for a second process or a leak",
            key=pool.instance_type,
        )
        for pool in metrics.gpu_memory_by_instance_type
    ]
    found += [
        _AlarmSpec(
            kind,
            name,
            metric,
            settings.gpu_memory_percent,
            (5, 5),
            f"GPU memory at or above {gpu} on a single GPU for 5 minutes (enhanced metrics, "
            f"the fullest GPU of any instance{where}), beyond what the engine reserves; look "
            "for a second process or a leak",
        )
        for kind, name, metric, where in (
            ("gpu_memory_per_gpu", "GpuMemoryPerGpu", metrics.gpu_memory_per_gpu, ""),
        )
        if metric is not None
    ]
    if metrics.disk is not None:
        found.append(
            _AlarmSpec(
                "disk",
                "Disk",
                at(metrics.disk, "Maximum", five),
                settings.disk_percent,
                (1, 1),
                f"disk at or above {settings.disk_percent:g} % on an instance; the weights may "
                "not fit on a new fleet: raise the volume size or pick an instance with more "
                "storage",
            )
        )
    if metrics.no_capacity is not None:
        minutes = metrics.no_capacity_minutes
        found.append(
            _AlarmSpec(
                "no_capacity",
                "NoCapacity",
                at(metrics.no_capacity, "Sum", minute),
                1,
                (minutes, minutes),
                f"requests found no copy to serve them in each of {minutes} minutes: scaling is "
                "not keeping up (max_capacity, max_instances, quota or capacity)",
            )
        )
    return found


def create_alarms(
    scope: Construct,
    source: AlarmSource,
    settings: Alarms,
    *,
    id: str = "Alarms",
    label: str | None = None,
    named: bool = False,
    watched: CfnResource | None = None,
) -> LlmAlarms:
    """The default alarms of ``source``, in a construct ``id`` under ``scope``: one per row of
    :func:`_specs`. Every alarm states how missing data counts: as not breaching (no traffic,
    or no instance, is not a failure), and depends on ``scope``'s own resource (its default
    child: the Endpoint or the InferenceComponent the metrics name), so CloudFormation moves it
    to a new fleet only once that fleet exists.

    :param label: what the alarms' descriptions name. @default ``scope``'s path
    :param named: give the rollback alarms (``LlmAlarms.rollback``) physical names, for a
        guarded rollout that names them. @default False
    :param watched: ``scope``'s own resource, when the caller holds it. @default ``scope``'s
        default child
    """
    from aws_cdk import aws_cloudwatch as cloudwatch  # loaded only when alarms are built

    group = Construct(scope, id)
    path = label or path_of(scope)
    topic = alarm_topic(scope, settings.topic, settings.emails)
    metrics = source.alarm_metrics()
    made: dict[str, cloudwatch.Alarm] = {}
    by_type: dict[str, cloudwatch.Alarm] = {}
    for spec in _specs(metrics, settings):
        created = cloudwatch.Alarm(
            group,
            spec.name,
            alarm_name=_physical_name(group, spec.name)
            if named and spec.field in _ROLLBACK
            else None,
            metric=spec.metric,
            threshold=spec.threshold,
            evaluation_periods=spec.periods[0],
            datapoints_to_alarm=spec.periods[1],
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"{path}: {spec.why}",
        )
        if topic is not None:
            _notify(created, topic)
        if spec.key is not None:
            by_type[spec.key] = created
        else:
            made[spec.field] = created
    engine: dict[str, cloudwatch.PromQLAlarm] = {}
    region, concrete = region_of(scope)
    on = promql_alarms_on(region, settings.promql_alarms, concrete=concrete)
    wanted = metrics.engine.alarms(settings) if metrics.engine and on else []
    if wanted:
        assert_promql_region(scope)
    for alarm in wanted:
        engine[alarm.field] = cloudwatch.PromQLAlarm(
            group,
            alarm.name,
            query=alarm.query,
            # How often the alarm evaluates its query (PutMetricAlarm's EvaluationInterval:
            # 10, 20, 30 or a multiple of 60 seconds); detailed observability publishes every
            # 60 s by default.
            evaluation_interval=one_minute(),
            pending_period=alarm.pending,
            recovery_period=alarm.recovery,
            alarm_description=f"{path}: {alarm.why}",
        )
        if topic is not None:
            _notify(engine[alarm.field], topic)
    own = watched if watched is not None else scope.node.default_child
    if not isinstance(own, CfnResource):
        raise TypeError(f"{path_of(scope)} has no resource of its own for its alarms to follow")
    # A name read from the resource (GetAtt) is a dependency already (cfn-lint W3005 refuses
    # a DependsOn beside it); a literal name needs one.
    if not any(is_unresolved(v) for v in metrics.dimensions.values()):
        for each in [*made.values(), *by_type.values(), *engine.values()]:
            each.node.add_dependency(own)
    return LlmAlarms(
        errors=made["errors"],
        model_errors=made["model_errors"],
        latency=made.get("latency"),
        gpu_memory=made.get("gpu_memory"),
        disk=made.get("disk"),
        no_capacity=made.get("no_capacity"),
        gpu_memory_by_instance_type=by_type,
        gpu_memory_per_gpu=made.get("gpu_memory_per_gpu"),
        kv_cache=engine.get("kv_cache"),
        queue=engine.get("queue"),
    )


def _notify(alarm: cloudwatch.AlarmBase, topic: sns.ITopic) -> None:
    """Alarm notifications to ``topic``, whose policies ``alarm_topic`` opened to CloudWatch."""
    from aws_cdk import aws_cloudwatch_actions as actions

    alarm.add_alarm_action(actions.SnsAction(topic))


#: The fields of ``LlmAlarms.rollback``: what a guarded rollout names.
_ROLLBACK = ("errors", "model_errors", "latency")


def _physical_name(group: Construct, name: str) -> str:
    """A rollback alarm's name, unique in the account and region as the stack's path is, and
    stable: ``<stack path of group, with a hash>-<name>``."""
    return f"{Names.unique_resource_name(group, max_length=200, separator='-')}-{name}"
