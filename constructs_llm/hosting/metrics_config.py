"""An endpoint config's ``MetricsConfig``: enhanced metrics (SageMaker's CloudWatch metrics per
instance, per container and per GPU), detailed observability (the engine's own metrics) and how
often SageMaker publishes them.

With ``EnableEnhancedMetrics`` SageMaker adds an ``InstanceId`` dimension to the utilization
and invocation metrics, a ``ContainerId`` dimension for inference components (in
``AWS/SageMaker`` and ``/aws/sagemaker/InferenceComponents``) and an ``AcceleratorId``
dimension to the GPU metrics; ``MetricPublishFrequencyInSeconds`` (10, 30, 60, 120, 180, 240
or 300; default 60) sets how often the utilization metrics are published, and the invocation
metrics too when enhanced metrics are on (AWS docs, "Amazon SageMaker AI enhanced metrics for
inference endpoints", ``monitoring-cloudwatch-enhanced-metrics``; botocore ``MetricsConfig``;
the CloudFormation schema of ``AWS::SageMaker::EndpointConfig`` lists the same values).

What it costs: every instance, container and GPU becomes a metric series of its own, so the
series multiply with the fleet (an ml.g5.12xlarge endpoint at 4 instances has 16 GPU series
instead of one), and a 10 s interval sends six data points a minute instead of one. SageMaker's
pages give no price of their own for these metrics; what you build on them is billed at
CloudWatch's rates (aws.amazon.com/cloudwatch/pricing): each alarm (an alarm on a period
under 60 s is a high-resolution alarm, at three times the standard alarm's rate), dashboard
and ``GetMetricData`` query, and each metric a dashboard or alarm reads. Turn it on where the
per-instance view is worth that: when debugging hot instances or sharing GPUs among
components. Off by default (SageMaker's default, rendered only when asked for).

With ``EnableDetailedObservability`` SageMaker publishes, at the same interval, the metrics an
OpenTelemetry collector on each instance scrapes: the container's Prometheus endpoint (the
engine's own metrics: KV cache in use, requests waiting and running, time to first token,
inter-token latency), per-GPU metrics attributed to components, per-instance host metrics and
component placement metrics (botocore ``MetricsConfig``; guides "Detailed observability for
SageMaker AI inference endpoints", ``monitoring-cloudwatch-detailed-observability``, and
"Getting started", ``monitoring-detailed-observability-getting-started``). They land in the
account's CloudWatch as OpenTelemetry metrics, queried with PromQL, not in the ``AWS/SageMaker``
namespaces: PromQL alarms and CloudWatch's Query Studio read them, classic alarms, dashboards'
graph widgets and Application Auto Scaling do not. SageMaker charges nothing for them;
CloudWatch bills their ingestion at its OpenTelemetry rates. SageMaker's default is True for
configs created after 2026-06-17 (False before), and the library renders the choice, on by
default, where the guides describe the feature: the engine alarms (``operations/engine_signals.py``)
read these metrics.

Where the guides describe it: "Detailed observability is a next-generation metrics experience for
Amazon SageMaker AI real-time inference endpoints", collecting GPU metrics from DCGM and engine
metrics from vLLM and SGLang (``monitoring-cloudwatch-detailed-observability``). Asynchronous
endpoints and AWS Inferentia or Trainium instances (Neuron devices, no DCGM) are not described,
so their configs leave ``EnableDetailedObservability`` out (SageMaker's own default applies)
and no engine alarm is built on them: an alarm on metrics nothing documents would stay OK
forever (:func:`detailed_described`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import Duration, Token
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.problems import Problem
from constructs_llm.values import describe

if TYPE_CHECKING:
    from constructs_llm.hardware.instance_type import InstanceType

#: The publishing intervals SageMaker accepts, in seconds (botocore ``MetricsConfig``).
_PUBLISH_FREQUENCIES_S = (10, 30, 60, 120, 180, 240, 300)


def metrics_problems(
    enhanced_metrics: object, metric_publish_frequency: object, detailed_observability: object
) -> list[Problem]:
    """What is wrong with ``enhanced_metrics``, ``metric_publish_frequency`` and
    ``detailed_observability``, each naming the value and the fix."""
    problems = [
        Problem.of(
            name, value, f"{name} must be True or False, got {describe(value)}{_string_hint(value)}"
        )
        for name, value in (
            ("enhanced_metrics", enhanced_metrics),
            ("detailed_observability", detailed_observability),
        )
        if not isinstance(value, bool)
    ]
    frequency = metric_publish_frequency
    allowed = ", ".join(str(s) for s in _PUBLISH_FREQUENCIES_S[:-1])
    allowed += f" or {_PUBLISH_FREQUENCIES_S[-1]} seconds"
    if frequency is None:
        return problems
    if not isinstance(frequency, Duration):
        hint = f"; use Duration.seconds({frequency})" if isinstance(frequency, int | float) else ""
        problems.append(
            Problem.of(
                "metric_publish_frequency",
                frequency,
                f"metric_publish_frequency must be a Duration of {allowed}, got "
                f"{describe(frequency)}{hint}",
            )
        )
    elif not Token.is_unresolved(frequency.to_seconds()):
        seconds = frequency.to_seconds()
        if seconds not in _PUBLISH_FREQUENCIES_S:
            nearest = min(_PUBLISH_FREQUENCIES_S, key=lambda s: abs(s - seconds))
            problems.append(
                Problem.of(
                    "metric_publish_frequency",
                    frequency,
                    f"metric_publish_frequency must be {allowed}, got {seconds:g} s;",
                    f"use Duration.seconds({nearest})",
                )
            )
    return problems


def _string_hint(value: object) -> str:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return f"; pass the bool {value.strip().capitalize()}, not a string"
    return ""


def detailed_described(instance_types: Iterable[InstanceType], *, asynchronous: bool) -> bool:
    """Whether SageMaker's guide describes detailed observability for a config: a real-time
    endpoint (not ``asynchronous``) whose instances carry no Neuron devices (module docstring)."""
    return not asynchronous and all(t.accelerator != "neuron" for t in instance_types)


@dataclass(frozen=True)
class MetricsPlan:
    """What an endpoint config asks of SageMaker's metrics (checked by
    :func:`metrics_problems` first).

    :param enhanced: metrics per instance, container and GPU. @default False
    :param publish_frequency: how often SageMaker publishes them. @default SageMaker's 60 s
    :param detailed: detailed observability: the engine's metrics, per-GPU and host metrics.
        @default True
    :param described: whether the guide describes detailed observability for this config
        (:func:`detailed_described`); where it does not, the choice is not rendered.
        @default True
    """

    enhanced: bool = False
    publish_frequency: Duration | None = None
    detailed: bool = True
    described: bool = True

    @property
    def engine_metrics(self) -> bool:
        """Whether the config asks for the engine's metrics where they are described."""
        return self.detailed and self.described

    def config(self) -> sagemaker.CfnEndpointConfig.MetricsConfigProperty:
        """The endpoint config's ``MetricsConfig``: detailed observability where the guide
        describes it (the choice is the user's, whatever SageMaker's default for the config's
        creation date), enhanced metrics and the frequency when asked for (SageMaker's defaults
        otherwise: none, 60 s)."""
        frequency = self.publish_frequency
        return sagemaker.CfnEndpointConfig.MetricsConfigProperty(
            enable_detailed_observability=self.detailed if self.described else None,
            enable_enhanced_metrics=True if self.enhanced else None,
            metric_publish_frequency_in_seconds=int(frequency.to_seconds())
            if frequency is not None
            else None,
        )

    @property
    def enhanced_period(self) -> Duration | None:
        """How often the enhanced metrics arrive (the dashboard's period for them), or None
        when the endpoint publishes none."""
        if not self.enhanced:
            return None
        return self.publish_frequency or Duration.minutes(1)
