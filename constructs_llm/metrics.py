"""CloudWatch metrics shared by endpoints and inference components."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch


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
        statistic: str = "Average",
        period: Duration | None = None,
    ) -> cloudwatch.Metric:
        """A metric of this target (``AWS/SageMaker`` by default)."""
        from aws_cdk import aws_cloudwatch as cloudwatch  # loaded when a metric is asked for

        return cloudwatch.Metric(
            namespace=namespace,
            metric_name=metric_name,
            dimensions_map=self._metric_dimensions(),
            statistic=statistic,
            period=period or Duration.minutes(1),
        )

    def metric_invocations(self) -> cloudwatch.Metric:
        return self.metric("Invocations", statistic="Sum")

    def metric_invocation_4xx_errors(self) -> cloudwatch.Metric:
        return self.metric("Invocation4XXErrors", statistic="Sum")

    def metric_invocation_5xx_errors(self) -> cloudwatch.Metric:
        return self.metric("Invocation5XXErrors", statistic="Sum")

    def metric_model_latency(self) -> cloudwatch.Metric:
        """Microseconds the container took to answer (until the last byte when streaming)."""
        return self.metric("ModelLatency", statistic="p90")

    def metric_concurrent_requests(self) -> cloudwatch.Metric:
        """Requests in flight (per model or per copy): what the default autoscaling tracks."""
        return self.metric(self._CONCURRENCY_METRIC, statistic="Maximum")
