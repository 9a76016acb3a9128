"""CloudWatch metrics of endpoint variants and inference components.

Names, namespaces and dimensions are SageMaker's
(https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html): invocation
metrics in ``AWS/SageMaker``, instance metrics in ``/aws/sagemaker/Endpoints`` (by
``EndpointName, VariantName``), per-copy metrics in ``/aws/sagemaker/InferenceComponents``
(by ``InferenceComponentName``).

With instance pools SageMaker also publishes each metric by ``InstanceType``: "EndpointName,
VariantName, InstanceType" for endpoint and invocation metrics, "InferenceComponentName,
InstanceType" for components, standard and enhanced metrics alike (guide "Deploy to multiple
instance types with instance pools", section "Monitor instance pools",
https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html);
``instance_type_dimensions`` narrows any ``metric_*()`` to one pool.

With enhanced metrics (``enhanced_metrics=True`` on the endpoint) SageMaker adds an
``InstanceId`` dimension to the utilization and invocation metrics, ``AcceleratorId`` to the
GPU metrics and, for inference components, ``ContainerId`` (in ``AWS/SageMaker`` and
``/aws/sagemaker/InferenceComponents``), published as often as ``metric_publish_frequency``
says (guide "Amazon SageMaker AI enhanced metrics for inference endpoints",
https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html).
Instance, GPU and container ids are only known once the endpoint runs, so the dashboard finds
those series with search expressions (one line per instance, GPU or copy) and the alarm on the
fullest GPU reads them with a Metrics Insights query; both name the dimension set the guide
describes (the target's own dimensions plus those ids: for a variant's GPU metrics
``EndpointName, VariantName, InstanceId, AcceleratorId``). That set holds for a variant with
instance pools too: the pools guide keeps every existing metric ("continue to work the same
way") and adds one set per instance type, ``EndpointName, VariantName, InstanceType``, and no
guide describes a set joining ``InstanceType`` with ``InstanceId`` or ``AcceleratorId``. A
Metrics Insights ``SCHEMA`` matches exactly one dimension set, and an alarm on a set that is
never published stays OK forever (missing data does not breach), so only the described set is
queried.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from aws_cdk import Duration

from constructs_llm.operations.periods import one_minute
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.values import (
    bool_problem,
    duration_type_problem,
    str_problem,
    type_problem,
)

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch
    from typing_extensions import Unpack

    from constructs_llm.hardware.instance_type import InstanceType
    from constructs_llm.hosting.plan import VariantPlan
    from constructs_llm.operations.alarms import AlarmMetrics, MetricOf
    from constructs_llm.operations.autoscaling import Autoscaling
    from constructs_llm.operations.engine_signals import EngineQueries

INSTANCE_NAMESPACE = "/aws/sagemaker/Endpoints"
#: What enhanced metrics add to a variant's dimensions for each GPU.
_GPU_IDS = ("AcceleratorId", "InstanceId")
COPY_NAMESPACE = "/aws/sagemaker/InferenceComponents"


class MetricOverrides(TypedDict, total=False):
    """What every ``metric*`` helper accepts, as ``cloudwatch.MetricOptions``: each given key
    replaces the helper's default (``dimensions_map`` replaces this target's dimensions)."""

    account: str
    color: str
    dimensions_map: Mapping[str, str]
    id: str
    label: str
    period: Duration
    region: str
    stack_account: str
    stack_region: str
    statistic: str
    unit: cloudwatch.Unit
    visible: bool


def with_defaults(options: MetricOverrides, **defaults: Any) -> MetricOverrides:
    """``options`` over ``defaults``; an option of the wrong name or type fails here, naming
    it, instead of inside ``cloudwatch.Metric``."""
    problems = Problems("metric options")
    for name, value in options.items():
        problems.add(_option_problem(name, value))
    problems.raise_if_any()
    merged: MetricOverrides = {**defaults, **options}  # type: ignore[typeddict-item]
    return merged


def check_metric_name(metric_name: object, namespace: object = "AWS/SageMaker") -> None:
    """``metric(metric_name, namespace=...)``: both strings, such as SageMaker's own."""
    problems = Problems("metric")
    problems.add(str_problem("metric_name", metric_name, example="ModelLatency", optional=False))
    problems.add(str_problem("namespace", namespace, example="AWS/SageMaker", optional=False))
    problems.raise_if_any()


def _option_problem(name: str, value: object) -> Problem | None:
    if name not in MetricOverrides.__annotations__:
        known = ", ".join(sorted(MetricOverrides.__annotations__))
        return Problem.of(name, value, f"the metric options are {known}; got {name}={value!r}")
    if name == "period":
        return duration_type_problem(name, value)
    if name == "visible":
        return bool_problem(name, value, optional=False)
    if name == "dimensions_map":
        strings = isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
        wrong = f"dimensions_map must map names to strings, got {value!r}"
        return None if strings else Problem.of(name, value, wrong)
    if name == "unit":
        from aws_cdk import aws_cloudwatch as cloudwatch

        return type_problem(name, value, cloudwatch.Unit, "use a member such as Unit.COUNT")
    return str_problem(name, value, example=_EXAMPLES.get(name, "..."), optional=False)


_EXAMPLES = {"statistic": "p90", "color": "#1f77b4", "label": "Latency"}


@dataclass(frozen=True)
class DashboardView:
    """What an ``LlmDashboard`` row shows of one target, as the target describes itself, so the
    dashboard never asks what class a target is.

    :param label: what the target is, for the row's title (``endpoint, ml.g5.2xlarge``).
    :param sagemaker: whether SageMaker's own metrics are shown; False for targets this app
        does not host (an imported endpoint, an adapter), whose rows show their invokers'
        metrics only. @default True
    :param unit: what serves requests: ``instance`` or ``copy``. @default "instance"
    :param units: the same, as a plural heading. @default "Instances"
    :param fixed_count: instances (or copies) when nothing scales them. @default 1
    :param gpu: the GPU widget's title and metrics. @default none (no GPUs)
    :param extra_errors: error metrics of this kind of target beyond the invocation errors.
        @default none
    :param extra_latency: model latency lines beside the target's own (one per instance
        pool). @default none
    :param extra_counts: instance-count lines beside the target's own (one per instance
        pool). @default none
    :param parts: targets shown in rows of their own after this one's (an endpoint's
        variants). @default none
    :param heading: the markdown heading of such a part's row. @default none
    :param enhanced: graphs of the enhanced metrics (title, lines), one line per instance, GPU
        or copy. @default none (enhanced metrics off)
    :param engine: PromQL over the engine's own metrics, listed for CloudWatch's Query Studio
        (a dashboard graph cannot run PromQL here). @default none (no engine signals)
    """

    label: str
    sagemaker: bool = True
    unit: str = "instance"
    units: str = "Instances"
    fixed_count: int = 1
    gpu: tuple[str, Sequence[cloudwatch.IMetric]] | None = None
    extra_errors: Sequence[cloudwatch.IMetric] = ()
    extra_latency: Sequence[cloudwatch.IMetric] = ()
    extra_counts: Sequence[cloudwatch.IMetric] = ()
    parts: Sequence[Any] = field(default_factory=tuple)
    heading: str | None = None
    enhanced: Sequence[tuple[str, Sequence[cloudwatch.IMetric]]] = ()
    engine: EngineQueries | None = None


class InvocationMetrics:
    """``metric()`` and the invocation ``metric_*`` helpers, for whatever dimensions the
    subclass names (a variant of an endpoint, or an inference component)."""

    #: Requests in flight per model (variant) or per copy (component).
    _CONCURRENCY_METRIC = "ConcurrentRequestsPerModel"

    @property
    def enhanced_period(self) -> Duration | None:
        """How often the endpoint publishes enhanced metrics (per instance, GPU or copy), or
        None when it publishes none (``enhanced_metrics=False``, the default)."""
        return None

    @property
    def detailed_observability(self) -> bool:
        """Whether the endpoint publishes the engine's own metrics (detailed observability)."""
        return False

    if TYPE_CHECKING:  # each subclass names the dimensions of its metrics

        def _metric_dimensions(self) -> dict[str, str]: ...

    def instance_type_dimensions(self, instance_type: str | InstanceType) -> dict[str, str]:
        """This target's dimensions narrowed to one instance type, for ``dimensions_map=`` of
        any ``metric_*()``: with instance pools, SageMaker publishes every metric per
        ``InstanceType`` as well as across the variant (or component)."""
        from constructs_llm.hardware.instance_type import InstanceType

        fix = "use a name such as 'ml.g5.2xlarge'"
        problem = type_problem("instance_type", instance_type, (str, InstanceType), fix)
        if problem:
            fail(f"{type(self).__name__}.instance_type_dimensions", problem)
        return {**self._metric_dimensions(), "InstanceType": str(instance_type)}

    def metric(
        self,
        metric_name: str,
        *,
        namespace: str = "AWS/SageMaker",
        **options: Unpack[MetricOverrides],
    ) -> cloudwatch.Metric:
        """A metric of this target.

        :param namespace: @default "AWS/SageMaker"
        :param options: ``cloudwatch.MetricOptions`` keywords. @default statistic "Average",
            period 1 minute, this target's dimensions
        """
        from aws_cdk import aws_cloudwatch as cloudwatch  # loaded when a metric is asked for

        check_metric_name(metric_name, namespace)
        props = with_defaults(
            options,
            dimensions_map=self._metric_dimensions(),
            statistic="Average",
            period=one_minute(),  # one Duration for every metric: one jsii call fewer each
        )
        return cloudwatch.Metric(namespace=namespace, metric_name=metric_name, **props)

    def metric_invocations(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """Requests sent to the model. @default statistic "Sum" """
        return self.metric("Invocations", **with_defaults(options, statistic="Sum"))

    def metric_invocation_4xx_errors(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """Requests the model answered with a 4xx. @default statistic "Sum" """
        return self.metric("Invocation4XXErrors", **with_defaults(options, statistic="Sum"))

    def metric_invocation_5xx_errors(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """Requests the model answered with a 5xx. @default statistic "Sum" """
        return self.metric("Invocation5XXErrors", **with_defaults(options, statistic="Sum"))

    def metric_invocation_model_errors(
        self, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Requests that got no 2xx from the model container: an error status, a broken
        connection or a timeout. @default statistic "Sum" """
        return self.metric("InvocationModelErrors", **with_defaults(options, statistic="Sum"))

    def metric_model_latency(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """Microseconds the container took to answer (until the last byte when streaming).
        @default statistic "p90" """
        return self.metric("ModelLatency", **with_defaults(options, statistic="p90"))

    def metric_concurrent_requests(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """Requests in flight (per model or per copy): what the default autoscaling tracks.
        @default statistic "Maximum" """
        return self.metric(self._CONCURRENCY_METRIC, **with_defaults(options, statistic="Maximum"))

    def _per_id(
        self,
        period: Duration,
        namespace: str,
        metric_name: str,
        ids: tuple[str, ...],
        statistic: str,
    ) -> cloudwatch.SearchExpression:
        """One line per instance, GPU or copy (the enhanced-metrics ``ids``) of this target's
        ``metric_name``, at ``period``: a search for exactly this target's dimensions plus
        ``ids``."""
        from aws_cdk import aws_cloudwatch as cloudwatch

        dimensions = self._metric_dimensions()
        schema = ",".join([f'"{namespace}"', *sorted([*dimensions, *ids])])
        values = " ".join(f'{name}="{value}"' for name, value in dimensions.items())
        return cloudwatch.SearchExpression(
            expression=f"SEARCH('{{{schema}}} MetricName=\"{metric_name}\" {values}', "
            f"'{statistic}', {int(period.to_seconds())})",
            label="",  # each line is named by its own ids
            period=period,
        )


class VariantMetrics(InvocationMetrics):
    """The metrics of an endpoint variant's instances (an ``LlmEndpoint``'s first variant, or
    one ``EndpointVariant``), on top of the invocation metrics, read from the variant's plan."""

    if TYPE_CHECKING:  # each subclass names the variant it measures

        @property
        def variant_plan(self) -> VariantPlan: ...

    @property
    def instance_type(self) -> InstanceType:
        """The priority-1 pool's instance type (the only one without pools)."""
        return self.variant_plan.first.instance_type

    @property
    def pool_instance_types(self) -> tuple[InstanceType, ...]:
        """The instance pools' types, when the variant has pools (else empty)."""
        return self.variant_plan.pool_instance_types

    @property
    def autoscaling(self) -> Autoscaling | None:
        """The variant's autoscaling (its target is drawn on dashboards)."""
        return self.variant_plan.autoscaling

    def metric_gpu_utilization(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """GPU use of the variant's instances (percent of one GPU, summed over GPUs)."""
        return self.metric("GPUUtilization", namespace=INSTANCE_NAMESPACE, **options)

    def metric_gpu_memory_utilization(
        self, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """GPU memory in use on the variant's instances (percent of one GPU, summed)."""
        return self.metric("GPUMemoryUtilization", namespace=INSTANCE_NAMESPACE, **options)

    def metric_disk_utilization(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """Disk in use on the variant's instances, in percent."""
        return self.metric("DiskUtilization", namespace=INSTANCE_NAMESPACE, **options)

    def metric_cpu_utilization(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """CPU use of the variant's instances (percent of one vCPU, summed over vCPUs); each
        instance reports it, so its SampleCount per minute counts the instances."""
        return self.metric("CPUUtilization", namespace=INSTANCE_NAMESPACE, **options)

    def dashboard_view(self) -> DashboardView:
        """This variant's dashboard row: its instances, and its GPUs per instance; with
        instance pools, a line per pool for instances, model latency and GPUs, from the
        ``InstanceType`` dimension SageMaker publishes for pools (guide "Deploy to multiple
        instance types with instance pools", section "Monitor instance pools")."""
        from aws_cdk import aws_cloudwatch as cloudwatch

        pools = self.pool_instance_types
        latency = [
            cloudwatch.MathExpression(
                expression=f"latency{index} / 1000",  # microseconds to milliseconds
                using_metrics={
                    f"latency{index}": self.metric_model_latency(
                        dimensions_map=self.instance_type_dimensions(t)
                    )
                },
                label=f"ModelLatency p90 on {t.name} (ms)",
                period=one_minute(),
            )
            for index, t in enumerate(pools)
        ]
        counts = [
            self.metric_cpu_utilization(
                statistic="SampleCount",
                dimensions_map=self.instance_type_dimensions(t),
                label=f"{t.name} instances",
            )
            for t in pools
        ]
        return DashboardView(
            label=f"endpoint, {self.fleet_label}",
            fixed_count=self.variant_plan.instance_count,
            gpu=self._pool_gpus(pools) if pools else self._instance_gpus(),
            extra_latency=latency,
            extra_counts=counts,
            enhanced=self._enhanced_graphs(),
            engine=self.engine_queries(),
        )

    def _has_gpus(self) -> bool:
        return any(_gpus(t) for t in (self.pool_instance_types or (self.instance_type,)))

    def _enhanced_graphs(self) -> tuple[tuple[str, Sequence[cloudwatch.IMetric]], ...]:
        """With enhanced metrics: each GPU's memory and use, and each instance's requests."""
        period = self.enhanced_period
        if period is None:
            return ()
        requests = [self._per_id(period, "AWS/SageMaker", "Invocations", ("InstanceId",), "Sum")]
        if not self._has_gpus():
            return (("Requests per instance", requests),)
        # Pooled variants too: the described set has no InstanceType (module docstring).
        return (
            (
                "GPU memory per GPU (%)",
                [
                    self._per_id(
                        period, INSTANCE_NAMESPACE, "GPUMemoryUtilization", _GPU_IDS, "Maximum"
                    )
                ],
            ),
            (
                "GPU use per GPU (%)",
                [self._per_id(period, INSTANCE_NAMESPACE, "GPUUtilization", _GPU_IDS, "Average")],
            ),
            ("Requests per instance", requests),
        )

    def _fullest_gpu(self) -> cloudwatch.IMetric | None:
        """With enhanced metrics on GPU instances: the memory in use on the fullest GPU of any
        instance (percent of that GPU), by a Metrics Insights query, which alarms accept
        where they refuse a search. ``SCHEMA`` matches exactly one dimension set: the
        variant's with ``AcceleratorId`` and ``InstanceId`` (``_GPU_IDS``), the one the
        enhanced-metrics guide describes, with instance pools too (module docstring)."""
        from aws_cdk import aws_cloudwatch as cloudwatch

        if self.enhanced_period is None or not self._has_gpus():
            return None
        dimensions = self._metric_dimensions()
        schema = ", ".join(sorted([*dimensions, *_GPU_IDS]))
        where = " AND ".join(f"{name} = '{value}'" for name, value in dimensions.items())
        return cloudwatch.MathExpression(
            expression=f'SELECT MAX(GPUMemoryUtilization) FROM SCHEMA("{INSTANCE_NAMESPACE}", '
            f"{schema}) WHERE {where}",
            using_metrics={},
            label="GPU memory of the fullest GPU",
            period=one_minute(),
        )

    def engine_queries(self) -> EngineQueries | None:
        """PromQL over the variant's engine signals (KV cache, queue, token latencies), where
        its engine publishes them (vLLM, SGLang) and detailed observability is on."""
        from constructs_llm.operations.engine_signals import EngineQueries

        model = self.variant_plan.model
        signals = model.engine.signals if model is not None else None
        if signals is None or not self.detailed_observability:
            return None
        dimensions = self._metric_dimensions()
        return EngineQueries.of_variant(
            signals,
            dimensions["EndpointName"],
            dimensions["VariantName"],
            pooled=self.variant_plan.listed,
        )

    @property
    def fleet_label(self) -> str:
        """The instance type, or the instance pools in priority order, for titles."""
        return self.variant_plan.fleet.describe()

    def _pool_gpus(
        self, pools: tuple[InstanceType, ...]
    ) -> tuple[str, list[cloudwatch.IMetric]] | None:
        """GPU use and memory of each pool's instances, in percent of each of its GPUs (an
        instance's metrics sum its GPUs, and the pools' types may have different counts)."""
        from aws_cdk import aws_cloudwatch as cloudwatch

        lines: list[cloudwatch.IMetric] = []
        for index, t in enumerate(pools):
            gpus = _gpus(t)
            if not gpus:
                continue
            dimensions = self.instance_type_dimensions(t)
            lines += [
                cloudwatch.MathExpression(
                    expression=f"{id}{index} / {gpus}",
                    using_metrics={f"{id}{index}": metric},
                    label=f"{label} on {t.name}",
                    period=one_minute(),
                )
                for id, metric, label in (
                    ("gpu", self.metric_gpu_utilization(dimensions_map=dimensions), "GPU use"),
                    (
                        "memory",
                        self.metric_gpu_memory_utilization(dimensions_map=dimensions),
                        "GPU memory",
                    ),
                )
            ]
        return ("GPU use and memory per pool (% of each GPU)", lines) if lines else None

    def _instance_gpus(self) -> tuple[str, list[cloudwatch.IMetric]] | None:
        from aws_cdk import aws_cloudwatch as cloudwatch

        gpus = self.instance_type.accelerator_count
        if self.instance_type.accelerator != "nvidia" or not gpus:
            return None
        per_gpu: list[cloudwatch.IMetric] = [
            cloudwatch.MathExpression(
                expression=f"{id} / {gpus}",  # the metrics sum the GPUs of an instance
                using_metrics={id: metric},
                label=label,
                period=one_minute(),
            )
            for id, metric, label in (
                ("gpu", self.metric_gpu_utilization(), "GPU use"),
                ("memory", self.metric_gpu_memory_utilization(), "GPU memory"),
            )
        ]
        return f"GPU use and memory (% of each of {gpus} GPUs)", per_gpu

    def alarm_metrics(self) -> AlarmMetrics:
        """What the variant's default alarms watch (see ``constructs_llm.operations.alarms``)."""
        from constructs_llm.operations.alarms import AlarmMetrics, PoolMetric

        instance = self.instance_type
        gpus = _gpus(instance)
        pools = self.pool_instance_types
        # Pools of different types: an instance sums its own GPUs, so each type is watched on
        # its own dimension with its own scale.
        per_type = tuple(
            PoolMetric(
                instance_type=t.name,
                metric=self._narrowed(self.metric_gpu_memory_utilization, t),
                scale=_gpus(t),
            )
            for t in pools
            if _gpus(t)
        )
        return AlarmMetrics(
            dimensions=self._metric_dimensions(),
            errors=self.metric_invocation_5xx_errors,
            model_errors=self.metric_invocation_model_errors,
            latency=self.metric_model_latency,
            gpu_memory=self.metric_gpu_memory_utilization if gpus and not pools else None,
            gpu_memory_scale=gpus or 1,
            gpu_memory_by_instance_type=per_type,
            gpu_memory_per_gpu=self._fullest_gpu(),
            disk=self.metric_disk_utilization,
            engine=self.engine_queries(),
        )

    def _narrowed(self, helper: MetricOf, instance_type: InstanceType) -> MetricOf:
        """``helper`` on one instance type's dimensions (a pool's)."""
        dimensions = self.instance_type_dimensions(instance_type)

        def metric(**options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
            return helper(**with_defaults(options, dimensions_map=dimensions))

        return metric


def _gpus(instance: InstanceType) -> int:
    """The GPUs whose memory an instance's ``GPUMemoryUtilization`` sums (0: none known)."""
    nvidia = instance.accelerator == "nvidia" and instance.known
    return instance.accelerator_count if nvidia else 0


class CopyMetrics(InvocationMetrics):
    """The invocation metrics plus the per-copy metrics of an inference component."""

    _CONCURRENCY_METRIC = "ConcurrentRequestsPerCopy"

    def metric_no_capacity_invocation_failures(
        self, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Requests that found no copy to serve them (scaled to zero, or all copies busy).
        @default statistic "Sum" """
        return self.metric(
            "NoCapacityInvocationFailures", **with_defaults(options, statistic="Sum")
        )

    def metric_gpu_utilization(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """GPU use of the copies, normalized to the accelerators they reserve."""
        return self.metric("GPUUtilizationNormalized", namespace=COPY_NAMESPACE, **options)

    def metric_gpu_memory_utilization(
        self, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """GPU memory in use by the copies, in percent of the accelerators they reserve."""
        return self.metric("GPUMemoryUtilizationNormalized", namespace=COPY_NAMESPACE, **options)

    def metric_cpu_utilization(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric:
        """CPU use of the copies; each copy reports it, so its SampleCount per minute counts
        the copies running."""
        return self.metric("CPUUtilizationNormalized", namespace=COPY_NAMESPACE, **options)

    def _enhanced_graphs(self, gpus: bool) -> tuple[tuple[str, Sequence[cloudwatch.IMetric]], ...]:
        """With enhanced metrics: each copy's (container's) GPU memory, and its requests."""
        period = self.enhanced_period
        if period is None:
            return ()
        copy = ("ContainerId",)
        memory = "GPUMemoryUtilizationNormalized"
        requests = (
            "Requests per copy",
            [self._per_id(period, "AWS/SageMaker", "Invocations", copy, "Sum")],
        )
        if not gpus:
            return (requests,)
        per_copy = [self._per_id(period, COPY_NAMESPACE, memory, copy, "Maximum")]
        return (("GPU memory per copy (% of its GPUs)", per_copy), requests)
