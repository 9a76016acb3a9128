"""Autoscaling of an asynchronous endpoint: target tracking on its backlog per instance, and a
step policy that brings it back from zero instances.

The recipe of SageMaker's guide "Autoscale an asynchronous endpoint"
(https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html):

- register the variant's ``DesiredInstanceCount`` with ``MinCapacity`` 0 ("We set MinCapacity
  to 0 because Asynchronous Inference enables you to autoscale to 0 when there are no requests
  to process");
- track ``ApproximateBacklogSizePerInstance`` (namespace ``AWS/SageMaker``, dimension
  ``EndpointName``, statistic ``Average``) with a ``CustomizedMetricSpecification`` ("For
  asynchronous endpoints SageMaker strongly recommends that you create a policy configuration
  for target-tracking scaling for a variant");
- add a step policy on ``HasBacklogWithoutCapacity``, which "is 1 when there are requests in
  the queue but zero instances behind the endpoint" ("Alarms and logs for tracking metrics
  from asynchronous endpoints", .../async-inference-monitor.html; valid statistic
  ``Average``): without it "your endpoint only starts scaling up from zero after the number of
  backlog requests exceeds the target tracking value".

The step adds one instance (``ChangeInCapacity`` +1, as the guide's policy does) when the
metric's 1-minute average reaches 1, so the first request wakes the endpoint within about a
minute. Its cooldown is the variant's start-up bound (download plus health check timeouts): an
LLM instance takes many minutes to start, and the metric stays 1 until it serves, so a shorter
cooldown would add a second and third instance for the same request. Once an instance serves,
target tracking takes over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration
from constructs import Construct

from constructs_llm.operations import autoscaling as _scaling
from constructs_llm.operations.autoscaling import Autoscaling

if TYPE_CHECKING:
    from aws_cdk import aws_applicationautoscaling as appscaling
    from aws_cdk import aws_cloudwatch as cloudwatch

_BACKLOG_METRIC = "ApproximateBacklogSizePerInstance"
_NO_CAPACITY_METRIC = "HasBacklogWithoutCapacity"


def _backlog_metric(metric_name: str, endpoint_name: str) -> cloudwatch.Metric:
    """An asynchronous endpoint's metric (``AWS/SageMaker``, by ``EndpointName``; 1-minute
    ``Average``, the statistic each backlog metric is published for)."""
    from aws_cdk import aws_cloudwatch as cloudwatch

    return cloudwatch.Metric(
        namespace="AWS/SageMaker",
        metric_name=metric_name,
        dimensions_map={"EndpointName": endpoint_name},
        statistic="Average",
        period=Duration.minutes(1),
    )


def autoscale_on_backlog(
    scope: Construct,
    id: str,
    *,
    endpoint_name: str,
    metric_endpoint_name: str,
    variant_name: str,
    scaling: Autoscaling,
    startup: Duration,
) -> appscaling.ScalableTarget:
    """The variant's scalable target, its backlog tracking, its scheduled actions and, when it
    may reach zero instances, the step policy that wakes it.

    :param endpoint_name: the endpoint's name, as the resource id names it.
    :param metric_endpoint_name: the endpoint's name in its metrics.
    :param startup: how long a new instance may take to serve (the step's cooldown).
    """
    from aws_cdk import aws_applicationautoscaling as appscaling  # only stacks that scale

    target = _scaling.variant_scalable_target(
        scope, id, endpoint_name=endpoint_name, variant_name=variant_name, scaling=scaling
    )
    _scaling.schedule_actions(target, scaling)
    target.scale_to_track_metric(
        "Tracking",
        target_value=scaling.backlog_target,
        custom_metric=_backlog_metric(_BACKLOG_METRIC, metric_endpoint_name),
        scale_in_cooldown=scaling.in_cooldown,
        scale_out_cooldown=scaling.out_cooldown,
    )
    if scaling.may_reach_zero:  # a scheduled zero needs the way back up as much
        target.scale_on_metric(
            "ScaleOutFromZero",
            metric=_backlog_metric(_NO_CAPACITY_METRIC, metric_endpoint_name),
            scaling_steps=[
                appscaling.ScalingInterval(upper=0, change=0),
                appscaling.ScalingInterval(lower=1, change=1),
            ],
            adjustment_type=appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
            cooldown=startup,
            evaluation_periods=1,
            datapoints_to_alarm=1,
            metric_aggregation_type=appscaling.MetricAggregationType.AVERAGE,
        )
    return target
