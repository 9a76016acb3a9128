"""CloudWatch metrics of endpoint variants and inference components.

Names, namespaces and dimensions are SageMaker's
(https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html): invocation
metrics in ``AWS/SageMaker``, instance metrics in ``/aws/sagemaker/Endpoints`` (by
``EndpointName, VariantName``), per-copy metrics in ``/aws/sagemaker/InferenceComponents``
(by ``InferenceComponentName``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from aws_cdk import Duration

from constructs_llm.problems import Problems
from constructs_llm.validation import (
    bool_problem,
    duration_type_problem,
    str_problem,
    type_problem,
)

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch
    from typing_extensions import Unpack

    from constructs_llm.hardware.instance_type import InstanceType
    from constructs_llm.operations.alarms import AlarmMetrics

__all__ = [
    "CopyMetrics",
    "InvocationMetrics",
    "MetricOverrides",
    "VariantMetrics",
    "check_metric_name",
    "with_defaults",
]

INSTANCE_NAMESPACE = "/aws/sagemaker/Endpoints"
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


def _option_problem(name: str, value: object) -> str | None:
    if name not in MetricOverrides.__annotations__:
        known = ", ".join(sorted(MetricOverrides.__annotations__))
        return f"the metric options are {known}; got {name}={value!r}"
    if name == "period":
        return duration_type_problem(name, value)
    if name == "visible":
        return bool_problem(name, value, optional=False)
    if name == "dimensions_map":
        strings = isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
        return None if strings else f"dimensions_map must map names to strings, got {value!r}"
    if name == "unit":
        from aws_cdk import aws_cloudwatch as cloudwatch

        return type_problem(name, value, cloudwatch.Unit, "use a member such as Unit.COUNT")
    return str_problem(name, value, example=_EXAMPLES.get(name, "..."), optional=False)


_EXAMPLES = {"statistic": "p90", "color": "#1f77b4", "label": "Latency"}


class InvocationMetrics:
    """``metric()`` and the invocation ``metric_*`` helpers, for whatever dimensions the
    subclass names (a variant of an endpoint, or an inference component)."""

    #: Requests in flight per model (variant) or per copy (component).
    _CONCURRENCY_METRIC = "ConcurrentRequestsPerModel"

    if TYPE_CHECKING:  # each subclass names the dimensions of its metrics

        def _metric_dimensions(self) -> dict[str, str]: ...

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
            period=Duration.minutes(1),
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


class VariantMetrics(InvocationMetrics):
    """The metrics of an endpoint variant's instances (an ``LlmEndpoint``'s first variant, or
    one ``EndpointVariant``), on top of the invocation metrics."""

    instance_type: InstanceType

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

    def alarm_metrics(self) -> AlarmMetrics:
        """What the variant's default alarms watch (see ``constructs_llm.operations.alarms``)."""
        from constructs_llm.operations.alarms import AlarmMetrics

        instance = self.instance_type
        nvidia = instance.accelerator == "nvidia" and instance.known
        gpus = instance.accelerator_count if nvidia else 0
        return AlarmMetrics(
            errors=self.metric_invocation_5xx_errors(),
            model_errors=self.metric_invocation_model_errors(),
            latency=self.metric_model_latency(),
            gpu_memory=self.metric_gpu_memory_utilization() if gpus else None,
            gpu_memory_scale=gpus or 1,
            disk=self.metric_disk_utilization(),
        )


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
