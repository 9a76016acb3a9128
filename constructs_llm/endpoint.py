"""LlmEndpoint: a real-time SageMaker endpoint serving one LlmModel on one instance type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Annotations, Duration, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm import _messages as msg
from constructs_llm import _operations_messages as ops
from constructs_llm import scaling as _scaling
from constructs_llm._capacity import add_capacity_note
from constructs_llm._hosting import (
    EndpointAttributes,
    generated_name,
    grant_invoke,
    kms_problem,
    storage_settings,
    variant_name_for,
    volume_problem,
)
from constructs_llm._problems import Problems
from constructs_llm._validation import (
    add_memory_plan_note,
    add_quota_note,
    name_problem,
    positive_int_problem,
    timeout_problem,
    type_problem,
)
from constructs_llm._variant import VariantSettings, production_variant, startup_timeouts
from constructs_llm.alarms import AlarmMetrics, Alarms, LlmAlarms, alarm_settings, create_alarms
from constructs_llm.deployment import Deployment, Fleet, endpoint_deployment_config
from constructs_llm.errors import InstanceTypeError, ScalingError
from constructs_llm.imported_endpoint import ImportedEndpoint
from constructs_llm.instance_type import InstanceType
from constructs_llm.invocation_target import ServesModel
from constructs_llm.metrics import InstanceMetrics
from constructs_llm.model import LlmModel
from constructs_llm.placement import Placement
from constructs_llm.scaling import Autoscaling

if TYPE_CHECKING:
    from aws_cdk import aws_applicationautoscaling as appscaling
    from aws_cdk import aws_kms as kms


__all__ = ["LlmEndpoint"]


class LlmEndpoint(EndpointAttributes, ServesModel, InstanceMetrics, Construct):
    """An EndpointConfig and Endpoint serving one ``LlmModel`` on GPU or Inferentia instances.

    The endpoint binds the model to its instance type (``model.bind``): the model's env and
    memory plan are derived for that hardware, and a model served on two instance types gets
    one SageMaker Model for each. Only the Endpoint may carry a physical name; the
    EndpointConfig is replaced on every change, so model, image, env and instance-type changes
    deploy in one ``cdk deploy``. The variant is named after the instance type, so with
    autoscaling a new instance type brings a new variant and a new scalable target instead of
    an update SageMaker refuses.

    :param model: the model to serve.
    :param instance_type: @default the model's ``instance_type`` (its default placement)
    :param instance_count: initial instances. @default 1
    :param health_check_timeout: container start-up health check. @default 15 min on GPUs
        (longer for large models), 60 min on Neuron
    :param download_timeout: model download. @default as ``health_check_timeout``
    :param volume_size: ML storage volume; only for instance types without local NVMe.
        @default sized from the model's weights where known, else SageMaker's default
    :param kms_key: encrypts the ML storage volume; not for NVMe instance types. @default none
    :param endpoint_name: physical name of the Endpoint. @default generated
    :param autoscaling: target tracking on the instance count, and scheduled bounds.
        @default none
    :param deployment: how updates roll out (``Deployment.canary(...)``, ``linear``,
        ``all_at_once``, ``rolling``), rolled back by the endpoint's alarms. It guards updates
        that keep the instance type; the Endpoint then gets a physical name (generated from
        its path unless ``endpoint_name`` is given), which its alarms name. @default
        SageMaker's blue/green update with all traffic shifted at once and no bake
    :param alarms: the default alarms (``endpoint.alarms``): ``True``, ``Alarms(...)`` for
        other thresholds and an SNS topic, or ``False`` for none. @default True
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        model: LlmModel,
        instance_type: str | InstanceType | None = None,
        instance_count: int = 1,
        health_check_timeout: Duration | None = None,
        download_timeout: Duration | None = None,
        volume_size: Size | None = None,
        kms_key: kms.IKey | None = None,
        endpoint_name: str | None = None,
        autoscaling: Autoscaling | None = None,
        deployment: Deployment | None = None,
        alarms: Alarms | bool = True,
    ) -> None:
        super().__init__(scope, id)
        problems = Problems(f"LlmEndpoint '{self.node.path}'")
        problems.add(type_problem("model", model, LlmModel, msg.MODEL_FIX))
        problems.add(
            type_problem(
                "autoscaling", autoscaling, Autoscaling, msg.AUTOSCALING_FIX, optional=True
            )
        )
        problems.add(
            type_problem("deployment", deployment, Deployment, ops.DEPLOYMENT_FIX, optional=True)
        )
        alarm_props = alarm_settings(alarms, problems)
        problems.raise_if_any()  # nothing below can be checked without them
        placement = _placement(model, instance_type, problems)
        problems.add(positive_int_problem("instance_count", instance_count))
        timeouts = [
            timeout_problem("health_check_timeout", health_check_timeout),
            timeout_problem("download_timeout", download_timeout),
        ]
        problems.extend(timeouts)
        problems.add(name_problem("endpoint_name", endpoint_name))
        problems.extend(_scaling_problems(autoscaling, instance_count), ScalingError)
        if placement is not None:
            problems.add(volume_problem(placement.instance_type, volume_size))
            problems.add(kms_problem(placement.instance_type, kms_key))
            problems.extend(model.problems_for(placement))
            startup = startup_timeouts(
                placement.instance_type, model.architecture, health_check_timeout, download_timeout
            )
            if deployment is not None and not any(timeouts) and isinstance(instance_count, int):
                fleet = _fleet(autoscaling, instance_count, startup)
                problems.extend(
                    deployment.problems_for(fleet, instance_type=placement.instance_type)
                )
        if deployment is not None and alarm_props is None and deployment.rollback_alarms is None:
            problems.add(ops.rollback_needs_alarms(self.node.path))
        problems.raise_if_any()
        assert placement is not None  # a missing one is a problem raised above

        self.model = model
        self.autoscaling = autoscaling
        self.instance_count = instance_count
        self.binding = model.bind(placement)
        self.instance_type = placement.instance_type
        self.variant_name = variant_name_for(self.instance_type)
        self.health_check_timeout, self.download_timeout = startup
        settings = VariantSettings(
            instance_count=instance_count,
            health_check_timeout=self.health_check_timeout,
            download_timeout=self.download_timeout,
            volume_size=volume_size,
            name=self.variant_name,
        )
        self.config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            production_variants=[production_variant(self.binding, settings)],
            kms_key_id=kms_key.key_arn if kms_key else None,
        )
        storage_settings(self.config, self.instance_type, kms_key, model.role)
        if deployment is not None and endpoint_name is None:
            # The rollback alarms name the endpoint and the endpoint names them: a name known
            # before CloudFormation creates the endpoint breaks that cycle.
            endpoint_name = generated_name(self, "endpoint_name")
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
            # Keep the instance count the autoscaler has set across config updates.
            retain_all_variant_properties=True if autoscaling else None,
        )
        self.scalable_target = self._autoscale(autoscaling) if autoscaling else None
        self.alarms: LlmAlarms | None = (
            create_alarms(self, self, alarm_props) if alarm_props else None
        )
        self.deployment = deployment
        if deployment is not None:
            self._guard(deployment)
        self._annotate(instance_count)

    # -- notes and guarded rollouts ------------------------------------------------------------

    def _annotate(self, instance_count: int) -> None:
        add_memory_plan_note(self, self.binding.plan, per_copy=False)
        scaling = self.autoscaling
        name = self.instance_type.name
        add_quota_note(self, name, scaling.highest_max if scaling else instance_count)
        add_capacity_note(self, name, scaling, instance_count)

    def _guard(self, deployment: Deployment) -> None:
        rollback = deployment.rollback_alarms
        if rollback is None:
            assert self.alarms is not None  # checked with the props
            rollback = self.alarms.rollback
        startup = (self.health_check_timeout, self.download_timeout)
        self.resource.deployment_config = endpoint_deployment_config(
            deployment,
            alarms=rollback,
            fleet=_fleet(self.autoscaling, self.instance_count, startup),
        )
        Annotations.of(self).add_warning_v2(
            "constructs-llm:guarded-rollout-hardware",
            ops.guardrails_hardware_change(
                deployment.describe, self.instance_type.name, self.variant_name
            ),
        )

    # -- endpoints deployed elsewhere ----------------------------------------------------------

    @staticmethod
    def from_endpoint_name(scope: Construct, id: str, endpoint_name: str) -> ImportedEndpoint:
        """An endpoint deployed elsewhere, by name, to front with a ``StreamingInvoker`` or
        grant invoke on. Its engine is unknown: the invoker sends chat (messages) requests and
        detects the stream framing line by line (``StreamFormat.AUTO``); use
        :meth:`from_endpoint_attributes` to state the engine or formats."""
        return ImportedEndpoint(scope, id, endpoint_name=endpoint_name)

    #: An endpoint deployed elsewhere, with what is known of it: ``endpoint_name`` and,
    #: optionally, ``engine``, ``stream_format``, ``request_format``, ``variant_name`` and
    #: ``served_model_name`` (see :class:`ImportedEndpoint` for each default).
    from_endpoint_attributes = staticmethod(ImportedEndpoint)

    # -- public API ----------------------------------------------------------------------------

    @property
    def inference_component_name(self) -> str | None:
        return None

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on this endpoint."""
        return grant_invoke(grantee, self.endpoint_arn)

    def _metric_dimensions(self) -> dict[str, str]:
        # A name given to the Endpoint is used as is, so alarms that the Endpoint's rollback
        # configuration names do not depend on it in turn.
        name = self.resource.endpoint_name or self.endpoint_name
        return {"EndpointName": name, "VariantName": self.variant_name}

    def alarm_metrics(self) -> AlarmMetrics:
        """What the default alarms watch (see ``constructs_llm.alarms``)."""
        gpus = self.instance_type.accelerator_count if self._has_gpu_metrics else 0
        return AlarmMetrics(
            errors=self.metric_invocation_5xx_errors(),
            model_errors=self.metric_invocation_model_errors(),
            latency=self.metric_model_latency(),
            gpu_memory=self.metric_gpu_memory_utilization() if gpus else None,
            gpu_memory_scale=gpus or 1,
            disk=self.metric_disk_utilization(),
        )

    @property
    def _has_gpu_metrics(self) -> bool:
        return self.instance_type.accelerator == "nvidia" and self.instance_type.known

    # -- construction helpers ------------------------------------------------------------------

    def _autoscale(self, autoscaling: Autoscaling) -> appscaling.ScalableTarget:
        from aws_cdk import aws_applicationautoscaling as appscaling  # only stacks that scale

        target = _scaling.scalable_target(
            self,
            "ScalableTarget",
            resource_id=f"endpoint/{self.endpoint_name}/variant/{self.variant_name}",
            dimension="sagemaker:variant:DesiredInstanceCount",
            min_capacity=autoscaling.min_capacity,
            max_capacity=autoscaling.max_capacity,
        )
        _scaling.track(
            target,
            autoscaling,
            concurrency_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
            invocations_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
        )
        return target


def _placement(
    model: LlmModel, instance_type: str | InstanceType | None, problems: Problems
) -> Placement | None:
    """The endpoint's instance type (the whole instance), else the model's default."""
    if instance_type is None:
        if model.default_placement is None:
            problems.add(msg.instance_type_required(model.node.path))
        return model.default_placement
    try:
        return Placement(instance_type)
    except InstanceTypeError as err:
        problems.add(str(err), InstanceTypeError)
        return None


def _fleet(
    autoscaling: Autoscaling | None, instance_count: int, startup: tuple[Duration, Duration]
) -> Fleet:
    """The instances an update may find, and how long a new one may take to start."""
    return Fleet(
        smallest=autoscaling.lowest_min if autoscaling else instance_count,
        largest=autoscaling.highest_max if autoscaling else instance_count,
        startup=startup[0].plus(startup[1]),
    )


def _scaling_problems(autoscaling: Autoscaling | None, instance_count: int) -> list[str | None]:
    if autoscaling is None or not isinstance(instance_count, int):
        return []
    low, high = autoscaling.min_capacity, autoscaling.max_capacity
    if low < 1:
        return [msg.variant_scale_to_zero(low)]
    return [
        msg.instance_count_outside_scaling(instance_count, low, high)
        if not low <= instance_count <= high
        else None,
        *(
            ops.schedule_to_zero_on_variant(
                index, "min_capacity" if item.min_capacity == 0 else "max_capacity"
            )
            for index, item in enumerate(autoscaling.schedule)
            if 0 in (item.min_capacity, item.max_capacity)
        ),
    ]
