"""Copy autoscaling of an inference component: target tracking, scheduled bounds and the
step policy that brings a component back from zero copies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from aws_cdk import Duration
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Node

from constructs_llm.operations import autoscaling as _scaling
from constructs_llm.operations.autoscaling import Autoscaling

if TYPE_CHECKING:
    from aws_cdk import aws_applicationautoscaling as appscaling
    from aws_cdk import aws_cloudwatch as cloudwatch


class ScaledComponent(Protocol):
    """What copy autoscaling needs of a component (``InferenceComponent`` provides it)."""

    @property
    def node(self) -> Node: ...

    @property
    def inference_component_name(self) -> str: ...

    @property
    def resource(self) -> sagemaker.CfnInferenceComponent: ...

    def metric_no_capacity_invocation_failures(self) -> cloudwatch.Metric: ...


def autoscale_component(
    component: ScaledComponent, autoscaling: Autoscaling
) -> appscaling.ScalableTarget:
    from aws_cdk import aws_applicationautoscaling as appscaling  # only stacks that scale

    target = _scaling.scalable_target(
        component,  # type: ignore[arg-type]  # a Construct
        "ScalableTarget",
        resource_id=f"inference-component/{component.inference_component_name}",
        dimension="sagemaker:inference-component:DesiredCopyCount",
        min_capacity=autoscaling.min_capacity,
        max_capacity=autoscaling.max_capacity,
    )
    # The resource id holds the literal name, so state the order: the target is registered
    # after the component exists and deregistered before it is deleted.
    target.node.add_dependency(component.resource)
    _scaling.track(
        target,
        autoscaling,
        concurrency_metric=appscaling.PredefinedMetric.SAGEMAKER_INFERENCE_COMPONENT_CONCURRENT_REQUESTS_PER_COPY_HIGH_RESOLUTION,
        invocations_metric=appscaling.PredefinedMetric.SAGEMAKER_INFERENCE_COMPONENT_INVOCATIONS_PER_COPY,
    )
    if autoscaling.may_reach_zero:  # a scheduled zero needs the way back up as much
        _scale_out_from_zero(target, component.metric_no_capacity_invocation_failures())
    return target


def _scale_out_from_zero(target: appscaling.ScalableTarget, failures: cloudwatch.Metric) -> None:
    """Target tracking cannot leave zero copies; a failed request adds the first one.

    The AWS recipe: a step policy (+1 copy) on an alarm on NoCapacityInvocationFailures
    (Sum over 60 s, one period). ``scale_on_metric`` needs two intervals; the lower one
    (change 0) adds no alarm, so this synthesizes one alarm at >= 1 and one policy.
    """
    from aws_cdk import aws_applicationautoscaling as appscaling

    target.scale_on_metric(
        "ScaleOutFromZero",
        metric=failures,
        scaling_steps=[
            appscaling.ScalingInterval(upper=0, change=0),
            appscaling.ScalingInterval(lower=1, change=1),
        ],
        adjustment_type=appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
        cooldown=Duration.minutes(1),
        evaluation_periods=1,
        datapoints_to_alarm=1,
        metric_aggregation_type=appscaling.MetricAggregationType.MAXIMUM,
    )
