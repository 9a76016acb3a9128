"""Inference components: several LLMs, each with its own copies, on one shared endpoint.

``InferenceComponentEndpoint`` is the model-less EndpointConfig and Endpoint SageMaker requires
(execution role on the config, no model on the variant, managed instance scaling).
``InferenceComponent`` places one ``LlmModel`` on it with per-copy accelerators, CPU and memory,
copy autoscaling and, with ``Autoscaling(min_capacity=0, ...)``, scale to zero.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import jsii
from aws_cdk import Annotations, Duration, Names, Size
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IValidation

from constructs_llm import scaling as _scaling
from constructs_llm._validation import (
    SAGEMAKER_NAME,
    Problems,
    add_quota_note,
    all_ints,
    name_problem,
    positive_int_problem,
    timeout_problem,
    type_problem,
)
from constructs_llm.endpoint import (
    INVOKE_ACTIONS,
    VOLUME_KEY_ACTIONS,
    EndpointAttributes,
    kms_problem,
    storage_settings,
    variant_name_for,
    volume_problem,
)
from constructs_llm.errors import ConfigurationError, ScalingError, SizingError
from constructs_llm.instance_type import InstanceType
from constructs_llm.invocation_target import ServesModel
from constructs_llm.metrics import InvocationMetrics
from constructs_llm.model import MODEL_FIX, LlmModel, depend_on_policies, execution_role
from constructs_llm.notes import add_note
from constructs_llm.scaling import AUTOSCALING_FIX, Autoscaling
from constructs_llm.timeouts import default_download_timeout, default_health_check_timeout

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch

#: SageMaker's floors for one copy's requirements (CreateInferenceComponent).
MIN_MEMORY_MIB = 128
MIN_CPU_CORES = 0.25
#: Entries SageMaker documents for an inference component's container environment.
MAX_COMPONENT_ENV = 16


class InferenceComponentEndpoint(EndpointAttributes, Construct):
    """A real-time endpoint that hosts inference components instead of one model.

    SageMaker needs three things from such an endpoint's config, which this construct
    supplies: no ``ModelName`` on the variant, an ``ExecutionRoleArn`` on the config, and
    managed instance scaling, so that the instance count follows the copies the components
    ask for (between ``min_instances`` and ``max_instances``). Requests are routed to the
    least busy copy. The variant is named after the instance type, as on ``LlmEndpoint``.

    The execution role is SageMaker's for the endpoint itself: it gets CloudWatch Logs under
    ``/aws/sagemaker/Endpoints/`` and ``PutMetricData`` in the ``/aws/sagemaker/*``
    namespaces, plus the KMS key when one is given. Each component's model keeps its own role
    for its image and weights.

    :param instance_type: the instance type of every instance in the fleet.
    :param min_instances: fewest instances managed scaling keeps. ``0`` lets the endpoint
        release every instance when all components have scaled their copies to zero.
        @default 1
    :param max_instances: most instances managed scaling starts. @default 1
    :param health_check_timeout: default container start-up health check of the components
        on this endpoint. @default as ``LlmEndpoint`` (15 min on GPUs, longer for large models)
    :param endpoint_name: physical name of the Endpoint. @default generated
    :param role: execution role of the endpoint config. @default a new role with logs and
        metrics only
    :param volume_size: ML storage volume per instance; only for types without local NVMe.
        @default SageMaker's default
    :param kms_key: encrypts the ML storage volume; not for NVMe instance types. @default none
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        instance_type: str | InstanceType,
        min_instances: int = 1,
        max_instances: int = 1,
        health_check_timeout: Duration | None = None,
        endpoint_name: str | None = None,
        role: iam.IRole | None = None,
        volume_size: Size | None = None,
        kms_key: kms.IKey | None = None,
    ) -> None:
        super().__init__(scope, id)
        self.instance_type = InstanceType.of(instance_type)
        self.min_instances = min_instances
        self.max_instances = max_instances
        self.health_check_timeout = health_check_timeout
        self.kms_key = kms_key
        self._validate(health_check_timeout, endpoint_name, volume_size)
        self.variant_name = variant_name_for(self.instance_type)
        self.components: list[InferenceComponent] = []
        self._volume_size = volume_size
        self._host_ami: str | None = None

        self.role: iam.IRole = role or execution_role(
            self, "Role", description="Execution role of an inference-component endpoint"
        )
        self.config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            execution_role_arn=self.role.role_arn,
            production_variants=[self._variant(volume_size)],
            kms_key_id=kms_key.key_arn if kms_key else None,
        )
        # The role's policy must exist before SageMaker assumes it, and outlive the endpoint.
        depend_on_policies(self.config, self.role)
        storage_settings(self.config, self.instance_type, kms_key, self.role)
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
        )
        self.node.add_validation(_FleetFits(self))
        self._annotate()

    @property
    def capacity(self) -> _Demand | None:
        """What one instance offers components (None when the instance type is unknown)."""
        inst = self.instance_type
        if not inst.known or inst.vcpus is None or inst.memory_gib is None:
            return None
        return _Demand(
            accelerators=inst.accelerator_count,
            cpu_cores=float(inst.vcpus),
            memory_mib=int(inst.memory_gib * 1024),
        )

    def _register(self, component: InferenceComponent) -> None:
        self.components.append(component)
        if self.kms_key is not None:
            self.kms_key.grant(component.model.role, *VOLUME_KEY_ACTIONS)
        self._use_host_ami(component.model.inference_ami_version, component.node.path)
        # SageMaker's samples give the endpoint config the models' own role; which one pulls
        # a component's image and weights is not documented, so both can.
        component.model.grant_read(self.role)

    def _use_host_ami(self, ami: str | None, path: str) -> None:
        """The host AMI serves every component: CUDA 13 images need the newer driver."""
        if ami is None or ami == self._host_ami:
            return
        if self._host_ami is not None:
            raise ConfigurationError(
                f"InferenceComponent '{path}' needs host AMI {ami}, but endpoint "
                f"'{self.node.path}' already uses {self._host_ami} for another component; "
                "put images that need different host AMIs on separate endpoints"
            )
        self._host_ami = ami
        self.config.production_variants = [self._variant(self._volume_size)]

    def _validate(
        self, health_check_timeout: Duration | None, endpoint_name: str | None, volume: Size | None
    ) -> None:
        problems = Problems(f"InferenceComponentEndpoint '{self.node.path}'")
        problems.add(positive_int_problem("min_instances", self.min_instances, minimum=0))
        problems.add(positive_int_problem("max_instances", self.max_instances))
        if (
            all_ints(self.min_instances, self.max_instances)
            and self.min_instances > self.max_instances
        ):
            problems.add(
                f"min_instances ({self.min_instances}) is above max_instances "
                f"({self.max_instances}); lower min_instances or raise max_instances"
            )
        problems.add(timeout_problem("health_check_timeout", health_check_timeout))
        problems.add(name_problem("endpoint_name", endpoint_name))
        problems.add(volume_problem(self.instance_type, volume))
        problems.add(kms_problem(self.instance_type, self.kms_key))
        problems.raise_if_any()

    def _variant(
        self, volume_size: Size | None
    ) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
            variant_name=self.variant_name,
            instance_type=self.instance_type.name,
            # The API needs at least one instance to create the endpoint, even when scaling
            # may later release them all.
            initial_instance_count=max(1, self.min_instances),
            managed_instance_scaling=sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
                status="ENABLED",
                min_instance_count=self.min_instances,
                max_instance_count=self.max_instances,
            ),
            routing_config=sagemaker.CfnEndpointConfig.RoutingConfigProperty(
                routing_strategy="LEAST_OUTSTANDING_REQUESTS"
            ),
            volume_size_in_gb=int(volume_size.to_gibibytes()) if volume_size else None,
            inference_ami_version=self._host_ami,
        )

    def _annotate(self) -> None:
        add_quota_note(self, self.instance_type.name, self.max_instances)
        if not self.instance_type.known:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:unknown-instance-type",
                f"{self.instance_type.name} is not in the packaged hardware catalog, so the "
                "components' accelerators, CPU cores and memory were not checked against it; "
                "verify that each copy fits one instance",
            )
        if self.min_instances == 0:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:min-instances-zero-region",
                "min_instances=0 (MinInstanceCount 0) is rejected in some regions (reported "
                "in eu-west-3: 'Min instance count needs to be greater than 0 for enabled "
                "managed instance scaling'); if CreateEndpointConfig fails there, use "
                "min_instances=1 (components can still scale their copies to zero)",
            )


class InferenceComponent(ServesModel, InvocationMetrics, Construct):
    """One ``LlmModel`` served as copies on an ``InferenceComponentEndpoint``.

    Each copy gets ``accelerators`` devices, ``cpu_cores`` and ``min_memory_mib`` of the
    instance, and the model's engine is re-derived for the copy (a copy with one of four GPUs
    shards over one: ``SM_NUM_GPUS=1``), so its memory plan is checked for the copy's devices.
    Everything is validated at synth against the endpoint's instance type.

    The component references the endpoint and the model through ``Fn::GetAtt``, so
    CloudFormation creates it after both and deletes it before them (SageMaker refuses to
    delete an endpoint or model that still hosts a component). Autoscaling targets the copy
    count; ``Autoscaling(min_capacity=0, ...)`` scales to zero with the AWS recipe: target
    tracking down to zero copies plus a step policy that adds a copy when a request finds no
    capacity (``NoCapacityInvocationFailures``).

    CloudFormation exposes no attribute with the component's name, and callers and the
    scalable target need it, so the component is given a physical name (derived from its
    construct path unless ``inference_component_name`` is set). Components update in place,
    so the name never blocks an update.

    :param endpoint: the endpoint that hosts the copies.
    :param model: the model to serve; its ``instance_type`` must be the endpoint's.
    :param accelerators: GPUs (or Neuron devices) per copy. @default every accelerator of
        the instance (one copy per instance); none on CPU instances
    :param cpu_cores: vCPUs reserved per copy (0.25 or more). @default not reserved
    :param min_memory_mib: host memory reserved per copy, in MiB (128 or more).
    :param copies: copies started at deploy time (1 or more: SageMaker rejects 0 at
        creation; scale to zero happens afterwards). @default 1
    :param autoscaling: copy-count autoscaling; ``min_capacity=0`` scales to zero and needs
        an endpoint with ``min_instances=0``. @default none
    :param health_check_timeout: container start-up health check. @default the endpoint's,
        else as ``LlmEndpoint``
    :param download_timeout: model download. @default as ``LlmEndpoint``
    :param inference_component_name: physical name. @default generated from the path
    """

    _CONCURRENCY_METRIC = "ConcurrentRequestsPerCopy"

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoint: InferenceComponentEndpoint,
        model: LlmModel,
        min_memory_mib: int,
        accelerators: int | None = None,
        cpu_cores: float | None = None,
        copies: int = 1,
        autoscaling: Autoscaling | None = None,
        health_check_timeout: Duration | None = None,
        download_timeout: Duration | None = None,
        inference_component_name: str | None = None,
    ) -> None:
        super().__init__(scope, id)
        self._check_kinds(endpoint, model, autoscaling)
        self.endpoint = endpoint
        self.model = model
        self.instance_type = endpoint.instance_type
        self.accelerators = _default_accelerators(accelerators, self.instance_type)
        self.demand = _Demand(
            accelerators=self.accelerators or 0,
            cpu_cores=float(cpu_cores) if isinstance(cpu_cores, int | float) else 0.0,
            memory_mib=min_memory_mib,
        )
        self.copies = copies
        self.autoscaling = autoscaling
        self._validate(cpu_cores, health_check_timeout, download_timeout, inference_component_name)
        self._validate_scaling()
        self._size_model()

        arch = model.architecture
        self.health_check_timeout = (
            health_check_timeout
            or endpoint.health_check_timeout
            or default_health_check_timeout(self.instance_type, arch)
        )
        self.download_timeout = download_timeout or default_download_timeout(
            self.instance_type, arch
        )
        self._name = inference_component_name or _generated_name(self)
        self.resource = sagemaker.CfnInferenceComponent(
            self,
            "Resource",
            inference_component_name=self._name,
            # GetAtt, not the literal name: the component is created after the endpoint and
            # deleted before it.
            endpoint_name=endpoint.endpoint_name,
            variant_name=endpoint.variant_name,
            specification=self._specification(cpu_cores),
            runtime_config=sagemaker.CfnInferenceComponent.InferenceComponentRuntimeConfigProperty(
                copy_count=copies
            ),
        )
        endpoint._register(self)
        self.scalable_target = self._autoscale(autoscaling) if autoscaling else None
        self._annotate()

    # -- public API ------------------------------------------------------------------

    @property
    def inference_component_name(self) -> str:
        """The component's name, passed as ``InferenceComponentName`` on every invocation."""
        return self._name

    @property
    def inference_component_arn(self) -> str:
        return self.resource.attr_inference_component_arn

    @property
    def endpoint_name(self) -> str:
        return self.endpoint.endpoint_name

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on this component.

        The IAM Service Authorization Reference lists the endpoint as the required resource
        of both actions and the inference component as an optional one; there is no
        condition key for the component's name. The grant therefore names the endpoint's ARN
        and this component's ARN (``arn:...:inference-component/<name>``).
        """
        return iam.Grant.add_to_principal(
            grantee=grantee,
            actions=INVOKE_ACTIONS,
            resource_arns=[self.endpoint.endpoint_arn, self.inference_component_arn],
        )

    def _metric_dimensions(self) -> dict[str, str]:
        return {"InferenceComponentName": self.inference_component_name}

    def metric_no_capacity_invocation_failures(self) -> cloudwatch.Metric:
        """Requests that found no copy to serve them (scaled to zero, or all copies busy)."""
        return self.metric("NoCapacityInvocationFailures", statistic="Sum")

    def metric_gpu_utilization(self) -> cloudwatch.Metric:
        """GPU use of the copies, normalized to the accelerators they reserve."""
        return self.metric(
            "GPUUtilizationNormalized", namespace="/aws/sagemaker/InferenceComponents"
        )

    # -- validation ------------------------------------------------------------------

    def _check_kinds(self, endpoint: object, model: object, autoscaling: object) -> None:
        problems = Problems(f"InferenceComponent '{self.node.path}'")
        problems.add(
            type_problem(
                "endpoint",
                endpoint,
                InferenceComponentEndpoint,
                "create one with InferenceComponentEndpoint(self, 'Shared', instance_type=...); "
                "an LlmEndpoint serves one model on its variant and cannot host components",
            )
        )
        problems.add(type_problem("model", model, LlmModel, MODEL_FIX))
        problems.add(
            type_problem("autoscaling", autoscaling, Autoscaling, AUTOSCALING_FIX, optional=True)
        )
        problems.raise_if_any()

    def _validate(
        self,
        cpu_cores: float | None,
        health_check_timeout: Duration | None,
        download_timeout: Duration | None,
        name: str | None,
    ) -> None:
        problems = Problems(f"InferenceComponent '{self.node.path}'")
        inst = self.instance_type
        if self.model.instance_type != inst:
            problems.add(
                f"the model's instance_type {self.model.instance_type.name} differs from the "
                f"endpoint's {inst.name}, and its engine settings and memory plan were "
                f"derived for the model's; create the LlmModel with instance_type='{inst.name}'"
            )
        problems.add(positive_int_problem("copies", self.copies))
        problems.add(
            positive_int_problem("min_memory_mib", self.demand.memory_mib, minimum=MIN_MEMORY_MIB)
        )
        problems.add(_cpu_problem(cpu_cores))
        problems.add(self._accelerator_problem())
        problems.add(timeout_problem("health_check_timeout", health_check_timeout))
        problems.add(timeout_problem("download_timeout", download_timeout))
        problems.add(name_problem("inference_component_name", name))
        problems.raise_if_any()
        problems.extend(self._hardware_problems())
        problems.add(self._fleet_problem("copies", self.copies, "copies"))
        problems.raise_if_any()

    def _accelerator_problem(self) -> str | None:
        value, inst = self.accelerators, self.instance_type
        if value is None and inst.accelerator is not None:
            # An unknown type in an accelerated family: the device count is not in the catalog.
            return (
                f"accelerators is required on {inst.name}: it is not in the hardware catalog, "
                "so the number of devices per copy cannot be defaulted; pass accelerators=N"
            )
        if value is None:
            return None
        if inst.known and inst.accelerator is None:
            return (
                f"accelerators={value} but {inst.name} has no accelerators (CPU only); drop "
                "accelerators, or use a GPU (ml.g5, ml.g6, ...) or Neuron (ml.inf2) endpoint"
            )
        return positive_int_problem("accelerators", value)

    def _hardware_problems(self) -> list[str]:
        """Per-copy requirements against one instance of the endpoint."""
        capacity = self.endpoint.capacity
        if capacity is None:
            return []
        inst, want = self.instance_type, self.demand
        problems = []
        if want.accelerators > capacity.accelerators:
            problems.append(
                f"accelerators={want.accelerators} per copy but {inst.name} has "
                f"{capacity.accelerators}; a copy must fit on one instance: lower accelerators "
                "or choose a larger instance type"
            )
        if want.memory_mib > capacity.memory_mib:
            problems.append(
                f"min_memory_mib={want.memory_mib} per copy but {inst.name} has "
                f"{capacity.memory_mib} MiB of host memory ({inst.memory_gib:g} GiB); lower "
                "min_memory_mib or choose a larger instance type"
            )
        if want.cpu_cores > capacity.cpu_cores:
            problems.append(
                f"cpu_cores={want.cpu_cores:g} per copy but {inst.name} has "
                f"{capacity.cpu_cores:g} vCPUs; lower cpu_cores or choose a larger instance type"
            )
        return problems

    def _fleet_problem(self, prop: str, count: int, what: str) -> str | None:
        """``count`` copies must fit on ``max_instances`` instances."""
        capacity = self.endpoint.capacity
        if capacity is None or not isinstance(count, int):
            return None
        per_instance = self.demand.copies_on(capacity)
        room = per_instance * self.endpoint.max_instances
        if count <= room:
            return None
        needed = math.ceil(count / per_instance) if per_instance else "more"
        return (
            f"{prop}={count} {what} need {needed} instances of {self.instance_type.name} "
            f"({per_instance} cop{'y' if per_instance == 1 else 'ies'} of "
            f"{self.demand.describe()} fit on one) but the endpoint's max_instances is "
            f"{self.endpoint.max_instances}; raise max_instances or lower {prop}"
        )

    def _validate_scaling(self) -> None:
        s = self.autoscaling
        if s is None:
            return
        problems = Problems(f"InferenceComponent '{self.node.path}'")
        if not max(1, s.min_capacity) <= self.copies <= s.max_capacity:
            problems.add(
                f"copies {self.copies} is outside autoscaling's [{max(1, s.min_capacity)}, "
                f"{s.max_capacity}]; set copies within that range (copies start at 1 or more "
                "even when scaling to zero)"
            )
        if s.min_capacity == 0 and self.endpoint.min_instances > 0:
            problems.add(
                "autoscaling min_capacity=0 (scale to zero) needs an endpoint that can "
                f"release its instances, but endpoint '{self.endpoint.node.path}' has "
                f"min_instances={self.endpoint.min_instances}; create the "
                "InferenceComponentEndpoint with min_instances=0"
            )
        problems.add(
            self._fleet_problem("autoscaling max_capacity", s.max_capacity, "copies at most")
        )
        problems.raise_if_any(ScalingError)

    def _size_model(self) -> None:
        """Re-derive the engine for the copy's devices; a model that cannot fit fails here."""
        if self.accelerators is None:
            return
        try:
            self.model.use_accelerators(self.accelerators)
        except SizingError as err:
            raise SizingError(
                f"InferenceComponent '{self.node.path}': the model does not fit on the "
                f"{self.accelerators} accelerator(s) each copy gets on "
                f"{self.instance_type.name}: {err}"
            ) from None

    # -- construction helpers ------------------------------------------------------------

    def _specification(
        self, cpu_cores: float | None
    ) -> sagemaker.CfnInferenceComponent.InferenceComponentSpecificationProperty:
        spec = sagemaker.CfnInferenceComponent
        return spec.InferenceComponentSpecificationProperty(
            model_name=self.model.model_name,
            compute_resource_requirements=spec.InferenceComponentComputeResourceRequirementsProperty(
                number_of_accelerator_devices_required=self.accelerators,
                number_of_cpu_cores_required=cpu_cores,
                min_memory_required_in_mb=self.demand.memory_mib,
            ),
            startup_parameters=spec.InferenceComponentStartupParametersProperty(
                container_startup_health_check_timeout_in_seconds=int(
                    self.health_check_timeout.to_seconds()
                ),
                model_data_download_timeout_in_seconds=int(self.download_timeout.to_seconds()),
            ),
        )

    def _autoscale(self, autoscaling: Autoscaling) -> appscaling.ScalableTarget:
        target = _scaling.scalable_target(
            self,
            "ScalableTarget",
            resource_id=f"inference-component/{self.inference_component_name}",
            dimension="sagemaker:inference-component:DesiredCopyCount",
            min_capacity=autoscaling.min_capacity,
            max_capacity=autoscaling.max_capacity,
        )
        # The resource id holds the literal name, so state the order: the target is
        # registered after the component exists and deregistered before it is deleted.
        target.node.add_dependency(self.resource)
        _scaling.track(
            target,
            autoscaling,
            concurrency_metric=appscaling.PredefinedMetric.SAGEMAKER_INFERENCE_COMPONENT_CONCURRENT_REQUESTS_PER_COPY_HIGH_RESOLUTION,
            invocations_metric=appscaling.PredefinedMetric.SAGEMAKER_INFERENCE_COMPONENT_INVOCATIONS_PER_COPY,
        )
        if autoscaling.min_capacity == 0:
            self._scale_out_from_zero(target)
        return target

    def _scale_out_from_zero(self, target: appscaling.ScalableTarget) -> None:
        """Target tracking cannot leave zero copies; a failed request adds the first one.

        The AWS recipe: a step policy (+1 copy) on an alarm on NoCapacityInvocationFailures
        (Sum over 60 s, one period). ``scale_on_metric`` needs two intervals; the lower one
        (change 0) adds no alarm, so this synthesizes one alarm at >= 1 and one policy.
        """
        target.scale_on_metric(
            "ScaleOutFromZero",
            metric=self.metric_no_capacity_invocation_failures(),
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

    def _annotate(self) -> None:
        plan = self.model.plan
        if plan is not None and self.accelerators is not None:
            add_note(self, f"Memory plan per copy: {plan.summary()}")
        env = self.model.environment
        if len(env) > MAX_COMPONENT_ENV:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:component-env-size",
                f"the model's container environment has {len(env)} entries "
                f"({', '.join(sorted(env))}); SageMaker documents at most {MAX_COMPONENT_ENV} "
                "for an inference component's container. This component references the model "
                "by name, where the model's limit applies; if CreateInferenceComponent "
                "rejects the environment, drop entries from env",
            )
        if self.autoscaling is not None and self.autoscaling.min_capacity == 0:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:scale-to-zero",
                f"scale to zero: the first deploy starts {self.copies} copy(ies) on at least "
                f"one {self.instance_type.name} and bills for them until target tracking "
                "scales in (SageMaker rejects CopyCount 0 at creation). Once at zero, the "
                "next request waits minutes for an instance and a copy to start, and requests "
                "fail with NoCapacityInvocationFailures meanwhile (the first one triggers the "
                "scale-out alarm); clients should retry with backoff",
            )
            if self.autoscaling.uses_concurrency:
                Annotations.of(self).add_warning_v2(
                    "constructs-llm:scale-to-zero-metric",
                    "scale to zero with target_concurrent_requests: AWS's documented recipe "
                    "tracks invocations per copy (target_invocations_per_instance=1); verify "
                    "that ConcurrentRequestsPerCopy reaches 0 when idle so the last copy is "
                    "released, or use the invocations target",
                )


@dataclass(frozen=True)
class _Demand:
    """Resources one copy reserves, or one instance offers."""

    accelerators: int
    cpu_cores: float
    memory_mib: int

    def copies_on(self, capacity: _Demand) -> int:
        """How many such copies fit on an instance offering ``capacity``."""
        fits = [capacity.memory_mib // max(self.memory_mib, 1)]
        if self.accelerators:
            fits.append(capacity.accelerators // self.accelerators)
        if self.cpu_cores:
            fits.append(math.floor(capacity.cpu_cores / self.cpu_cores))
        return max(0, min(fits))

    def describe(self) -> str:
        parts = [f"{self.accelerators} accelerator(s)"] if self.accelerators else []
        if self.cpu_cores:
            parts.append(f"{self.cpu_cores:g} vCPU")
        parts.append(f"{self.memory_mib} MiB")
        return " + ".join(parts)


@jsii.implements(IValidation)
class _FleetFits:
    """At synth: the initial copies of all components fit on ``max_instances`` instances.

    A necessary condition (SageMaker also packs per instance); each component already checked
    that its own copies fit, so this catches components that only fit alone.
    """

    def __init__(self, endpoint: InferenceComponentEndpoint) -> None:
        self._endpoint = endpoint

    def validate(self) -> list[str]:
        endpoint = self._endpoint
        capacity = endpoint.capacity
        if capacity is None or len(endpoint.components) < 2:
            return []
        fleet = endpoint.max_instances
        parts = endpoint.components
        need = _Demand(
            accelerators=sum(c.copies * c.demand.accelerators for c in parts),
            cpu_cores=sum(c.copies * c.demand.cpu_cores for c in parts),
            memory_mib=sum(c.copies * c.demand.memory_mib for c in parts),
        )
        over = [
            f"{wanted:g} {what} (the fleet has {have * fleet:g})"
            for what, wanted, have in (
                ("accelerators", need.accelerators, capacity.accelerators),
                ("vCPUs", need.cpu_cores, capacity.cpu_cores),
                ("MiB of memory", need.memory_mib, capacity.memory_mib),
            )
            if wanted > have * fleet
        ]
        if not over:
            return []
        names = ", ".join(f"{c.node.id} ({c.copies} x {c.demand.describe()})" for c in parts)
        return [
            f"InferenceComponentEndpoint '{endpoint.node.path}': the initial copies of its "
            f"components ({names}) need {'; '.join(over)} with max_instances={fleet} x "
            f"{endpoint.instance_type.name}; raise max_instances or lower copies"
        ]


def _default_accelerators(accelerators: int | None, instance: InstanceType) -> int | None:
    """One copy per instance by default, as on an ``LlmEndpoint``."""
    if accelerators is not None:
        return accelerators
    return instance.accelerator_count or None


def _cpu_problem(cpu_cores: float | None) -> str | None:
    if cpu_cores is None:
        return None
    if isinstance(cpu_cores, bool) or not isinstance(cpu_cores, int | float):
        return f"cpu_cores must be a number, got {cpu_cores!r}"
    if cpu_cores < MIN_CPU_CORES:
        return (
            f"cpu_cores must be at least {MIN_CPU_CORES} (SageMaker's minimum), got {cpu_cores!r}"
        )
    return None


def _generated_name(component: InferenceComponent) -> str:
    """A stable, account-unique name within SageMaker's 63-character pattern."""
    name = Names.unique_resource_name(component, max_length=63, separator="-")
    name = re.sub(r"[^a-zA-Z0-9-]", "", name).strip("-")
    if not SAGEMAKER_NAME.match(name):
        raise ConfigurationError(
            f"InferenceComponent '{component.node.path}': cannot derive a valid name "
            f"(got {name!r}); pass inference_component_name='...'"
        )
    return name
