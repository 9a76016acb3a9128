"""Enhanced metrics: an endpoint's CloudWatch metrics per instance, per container and per GPU,
and how often SageMaker publishes them (the endpoint config's ``MetricsConfig``).

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
components. Both settings render nothing by default, so SageMaker's defaults apply.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, Token
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.values import describe

__all__ = ["PUBLISH_FREQUENCIES_S", "MetricsPlan", "metrics_problems"]

#: The publishing intervals SageMaker accepts, in seconds (botocore ``MetricsConfig``).
PUBLISH_FREQUENCIES_S = (10, 30, 60, 120, 180, 240, 300)


def metrics_problems(enhanced_metrics: object, metric_publish_frequency: object) -> list[str]:
    """What is wrong with ``enhanced_metrics`` and ``metric_publish_frequency``, each naming
    the value and the fix."""
    problems = []
    if not isinstance(enhanced_metrics, bool):
        problems.append(
            f"enhanced_metrics must be True or False, got {describe(enhanced_metrics)}"
            + (
                f"; pass the bool {enhanced_metrics.strip().capitalize()}, not a string"
                if isinstance(enhanced_metrics, str)
                and enhanced_metrics.strip().lower() in ("true", "false")
                else ""
            )
        )
    frequency = metric_publish_frequency
    allowed = ", ".join(str(s) for s in PUBLISH_FREQUENCIES_S[:-1])
    allowed += f" or {PUBLISH_FREQUENCIES_S[-1]} seconds"
    if frequency is None:
        return problems
    if not isinstance(frequency, Duration):
        hint = f"; use Duration.seconds({frequency})" if isinstance(frequency, int | float) else ""
        problems.append(
            f"metric_publish_frequency must be a Duration of {allowed}, got "
            f"{describe(frequency)}{hint}"
        )
    elif not Token.is_unresolved(frequency.to_seconds()):
        seconds = frequency.to_seconds()
        if seconds not in PUBLISH_FREQUENCIES_S:
            nearest = min(PUBLISH_FREQUENCIES_S, key=lambda s: abs(s - seconds))
            problems.append(
                f"metric_publish_frequency must be {allowed}, got {seconds:g} s; use "
                f"Duration.seconds({nearest})"
            )
    return problems


@dataclass(frozen=True)
class MetricsPlan:
    """What an endpoint config asks of SageMaker's metrics (checked by
    :func:`metrics_problems` first).

    :param enhanced: metrics per instance, container and GPU. @default False
    :param publish_frequency: how often SageMaker publishes them. @default SageMaker's 60 s
    """

    enhanced: bool = False
    publish_frequency: Duration | None = None

    def config(self) -> sagemaker.CfnEndpointConfig.MetricsConfigProperty | None:
        """The endpoint config's ``MetricsConfig``: None (SageMaker's defaults: no enhanced
        metrics, published every 60 s) unless enhanced metrics or a frequency is asked for."""
        frequency = self.publish_frequency
        if not self.enhanced and frequency is None:
            return None
        return sagemaker.CfnEndpointConfig.MetricsConfigProperty(
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
