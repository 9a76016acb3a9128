"""A variant of an ``LlmEndpoint`` as deployed (``endpoint.variants[i]``,
``endpoint.shadow_variant``): what users hold of it (its plan, its scalable target, its
alarms and ``metric_*()`` helpers with dimensions ``EndpointName`` and ``VariantName``). Every
fact about it is read from its :class:`VariantPlan`."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from constructs_llm.hosting.plan import VariantPlan
from constructs_llm.operations import autoscaling as _scaling
from constructs_llm.operations.metrics import DashboardView, VariantMetrics

if TYPE_CHECKING:
    from aws_cdk import Duration
    from aws_cdk import aws_applicationautoscaling as appscaling
    from constructs import Construct, Node

    from constructs_llm.model.llm_model import LlmModel, ModelBinding
    from constructs_llm.operations.alarms import LlmAlarms


class _Endpoint(Protocol):
    """What a variant needs of its endpoint."""

    @property
    def node(self) -> Node: ...

    @property
    def endpoint_name(self) -> str: ...

    @property
    def metric_endpoint_name(self) -> str: ...

    @property
    def enhanced_period(self) -> Duration | None: ...

    @property
    def detailed_observability(self) -> bool: ...


class EndpointVariant(VariantMetrics):
    """One variant as deployed: its plan (``plan``: name, pools and their models, timeouts),
    its scalable target, its default alarms (None for the shadow or without) and its metrics.

    With instance pools, ``binding`` is the priority-1 pool's model; each pool's is in
    ``plan.pools``."""

    def __init__(self, *, endpoint: _Endpoint, plan: VariantPlan) -> None:
        self.endpoint = endpoint
        self.plan = plan
        self.scalable_target: appscaling.ScalableTarget | None = None
        #: Its default alarms (``LlmEndpoint(alarms=...)``); None for the shadow or without.
        self.alarms: LlmAlarms | None = None

    @property
    def variant_plan(self) -> VariantPlan:
        return self.plan

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def shadow(self) -> bool:
        return self.plan.shadow

    @property
    def binding(self) -> ModelBinding:
        """The model on the priority-1 pool (every pool of a built endpoint is bound)."""
        return self.plan.bindings[0]

    @property
    def model(self) -> LlmModel:
        return self.binding.model

    @property
    def enhanced_period(self) -> Duration | None:
        return self.endpoint.enhanced_period

    @property
    def detailed_observability(self) -> bool:
        return self.endpoint.detailed_observability

    @property
    def describe(self) -> str:
        """``<endpoint path> variant <name>`` (for messages)."""
        return f"{self.endpoint.node.path} variant {self.name}"

    def dashboard_view(self) -> DashboardView:
        """This variant's row of an endpoint's dashboard, under a heading of its own."""
        role = "shadow" if self.shadow else f"weight {self.plan.weight:g}"
        heading = f"#### variant {self.name} ({self.fleet_label}, {role})"
        return replace(super().dashboard_view(), heading=heading)

    def autoscale(self, scope: Construct, id: str) -> appscaling.ScalableTarget | None:
        """Target tracking on this variant's instance count, if it asks for it. The target
        names the variant, so a new instance type (a new variant) brings a new target, created
        after the endpoint update; the old one is deleted in the cleanup that follows, too late
        for SageMaker, which refuses to remove a registered variant (see
        ``constructs-llm:autoscaled-fleet``)."""
        from aws_cdk import aws_applicationautoscaling as appscaling  # only stacks that scale

        scaling = self.plan.autoscaling
        if scaling is None:
            return None
        self.scalable_target = _scaling.variant_scalable_target(
            scope,
            id,
            endpoint_name=self.endpoint.endpoint_name,
            variant_name=self.name,
            scaling=scaling,
        )
        _scaling.track(
            self.scalable_target,
            scaling,
            concurrency_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
            invocations_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
        )
        return self.scalable_target

    def _metric_dimensions(self) -> dict[str, str]:
        return {"EndpointName": self.endpoint.metric_endpoint_name, "VariantName": self.name}
