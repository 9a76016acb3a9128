"""The invoker's LLM metrics, as CloudWatch metrics of the records its runtime writes.

The runtime writes one Embedded Metric Format record per chat request (``runtime/metrics.py``,
where each metric is defined); CloudWatch Logs turns them into metrics in the invoker's
namespace, by ``Target`` (endpoint or inference component name) and ``Model`` (the served
model's name), and errors also by ``ErrorKind``. An invoker of several targets has metrics
for each: ``metric_*(target=...)`` picks one (the first by default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_llm.contract import ERROR_KINDS, NAMESPACE
from constructs_llm.operations.metrics import MetricOverrides, check_metric_name, with_defaults
from constructs_llm.operations.periods import one_minute
from constructs_llm.problems import Problem, fail
from constructs_llm.values import describe

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch
    from typing_extensions import Unpack

    from constructs_llm.hosting.target import InvocationTarget


def _metric_dimensions(target: InvocationTarget) -> dict[str, str]:
    """The dimensions the runtime writes for requests to ``target`` (its route's target and
    served model name)."""
    facts = target.facts
    name = facts.inference_component_name or facts.endpoint_name
    return {"Target": name, "Model": facts.served_model_name}


class InvokerMetrics:
    """``metric()`` and the ``metric_*`` helpers of a ``StreamingInvoker``; each takes
    ``target=`` (one of the invoker's targets) and ``cloudwatch.MetricOptions`` keywords."""

    target: InvocationTarget
    targets: tuple[InvocationTarget, ...]

    def metric(
        self,
        metric_name: str,
        *,
        target: InvocationTarget | None = None,
        **options: Unpack[MetricOverrides],
    ) -> cloudwatch.Metric:
        """A metric the invoker's runtime writes (``runtime/metrics.py``).

        :param target: which of the invoker's targets. @default the first
        :param options: ``cloudwatch.MetricOptions`` keywords. @default statistic "Average",
            period 1 minute, the target and its model as dimensions
        """
        from aws_cdk import aws_cloudwatch as cloudwatch  # loaded when a metric is asked for

        check_metric_name(metric_name, NAMESPACE)
        props = with_defaults(
            options,
            dimensions_map=_metric_dimensions(self._metered(target)),
            statistic="Average",
            period=one_minute(),
        )
        return cloudwatch.Metric(namespace=NAMESPACE, metric_name=metric_name, **props)

    def _metered(self, target: InvocationTarget | None) -> InvocationTarget:
        if target is None:
            return self.target
        if not any(target is t for t in self.targets):
            served = ", ".join(repr(t.facts.served_model_name) for t in self.targets)
            name = getattr(target, "served_model_name", None)
            if not isinstance(name, str):
                fail(
                    "",
                    Problem.of(
                        "target",
                        target,
                        f"target must be one of this invoker's targets ({served}), got "
                        f"{describe(target)};",
                        "pass one of them, or leave target out for the first",
                    ),
                )
            fail(
                "",
                Problem.of(
                    "target",
                    name,
                    f"target {name!r} is not one of this invoker's targets ({served});",
                    "pass one of them, or leave target out for the first",
                ),
            )
        return target

    def metric_requests(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Chat requests. @default statistic "Sum" """
        return self.metric("Requests", target=target, **with_defaults(options, statistic="Sum"))

    def metric_time_to_first_token(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Milliseconds from the request to the first token relayed. @default statistic "p90" """
        return self.metric(
            "TimeToFirstToken", target=target, **with_defaults(options, statistic="p90")
        )

    def metric_duration(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Milliseconds from the request to the end of the answer. @default statistic "p90" """
        return self.metric("Duration", target=target, **with_defaults(options, statistic="p90"))

    def metric_output_tokens(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Tokens relayed to clients. @default statistic "Sum" """
        return self.metric("OutputTokens", target=target, **with_defaults(options, statistic="Sum"))

    def metric_tokens_per_second(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Each answer's pace after its first token (answers of two tokens or more).
        @default statistic "p50" """
        return self.metric(
            "TokensPerSecond", target=target, **with_defaults(options, statistic="p50")
        )

    def metric_overhead_latency(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Milliseconds the invoker spends before SageMaker is called (reading and checking
        the request and its key). @default statistic "p90" """
        return self.metric(
            "OverheadLatency", target=target, **with_defaults(options, statistic="p90")
        )

    def metric_errors(
        self,
        kind: str | None = None,
        *,
        target: InvocationTarget | None = None,
        **options: Unpack[MetricOverrides],
    ) -> cloudwatch.Metric:
        """Failed requests; ``kind`` picks one kind: ``auth``, ``invalid_request``,
        ``throttled``, ``timeout``, ``upstream``, ``stream`` or ``internal``.
        @default every kind, statistic "Sum" """
        if kind is None:
            return self.metric("Errors", target=target, **with_defaults(options, statistic="Sum"))
        if kind not in ERROR_KINDS:
            fail(
                "metric_errors",
                Problem.of(
                    "kind",
                    kind,
                    f"kind must be one of {', '.join(ERROR_KINDS)} or None (every kind), got "
                    f"{kind!r}",
                ),
            )
        dimensions = {**_metric_dimensions(self._metered(target)), "ErrorKind": kind}
        return self.metric(
            "Errors", **with_defaults(options, statistic="Sum", dimensions_map=dimensions)
        )

    def metric_client_disconnects(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Requests whose client went away before the answer ended. @default statistic "Sum" """
        return self.metric(
            "ClientDisconnects", target=target, **with_defaults(options, statistic="Sum")
        )

    def metric_held_requests(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Requests held while their inference component had no copy (``capacity_wait``).
        @default statistic "Sum" """
        return self.metric("HeldRequests", target=target, **with_defaults(options, statistic="Sum"))

    def metric_held_time(
        self, *, target: InvocationTarget | None = None, **options: Unpack[MetricOverrides]
    ) -> cloudwatch.Metric:
        """Milliseconds a held request waited for a copy (``capacity_wait``).
        @default statistic "p90" """
        return self.metric("HeldTime", target=target, **with_defaults(options, statistic="p90"))
