"""Inference components: several LLMs, each with its own copies, on one shared endpoint.

``InferenceComponentEndpoint`` (``inference_component_endpoint.py``) is the model-less
EndpointConfig and Endpoint SageMaker requires. ``InferenceComponent`` binds one ``LlmModel``
to a copy's share of that endpoint's instance (per-copy accelerators, CPU and memory), with
copy autoscaling and, with ``Autoscaling(min_capacity=0, ...)``, scale to zero.
"""

from __future__ import annotations

import math

from aws_cdk import Duration
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm import messages as msg
from constructs_llm.errors import ScalingError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement
from constructs_llm.hosting.components.adapter import AdapterComponent
from constructs_llm.hosting.components.endpoint import InferenceComponentEndpoint
from constructs_llm.hosting.components.scaling import autoscale_component
from constructs_llm.hosting.shared import ComponentAttributes, generated_name
from constructs_llm.hosting.target import ServesModel
from constructs_llm.model.llm_model import LlmModel
from constructs_llm.model.source import ModelSource
from constructs_llm.operations import messages as ops
from constructs_llm.operations.alarms import (
    AlarmMetrics,
    Alarms,
    LlmAlarms,
    alarm_settings,
    create_alarms,
)
from constructs_llm.operations.autoscaling import Autoscaling
from constructs_llm.operations.deployment import (
    Deployment,
    DeploymentKind,
    Fleet,
    component_deployment_config,
)
from constructs_llm.operations.metrics import CopyMetrics
from constructs_llm.problems import Problems
from constructs_llm.reporting import warn
from constructs_llm.sizing.copy_demand import MIN_MEMORY_MIB, CopyDemand, cpu_cores_problem
from constructs_llm.sizing.timeouts import default_download_timeout, default_health_check_timeout
from constructs_llm.validation import (
    add_memory_plan_note,
    int_type_problem,
    name_problem,
    positive_int_problem,
    served_name_problem,
    timeout_problem,
    type_problem,
)

__all__ = ["InferenceComponent"]


#: Entries SageMaker documents for an inference component's container environment.
MAX_COMPONENT_ENV = 16


class InferenceComponent(ComponentAttributes, ServesModel, CopyMetrics, Construct):
    """One ``LlmModel`` served as copies on an ``InferenceComponentEndpoint``.

    Each copy gets ``accelerators`` devices, ``cpu_cores`` and ``min_memory_mib`` of the
    instance, and the model is bound to the copy's share of it (``model.bind``): a copy with
    one of four GPUs shards over one (``SM_NUM_GPUS=1``), with a memory plan, engine checks
    and warnings for one GPU, in a SageMaker Model of its own. Everything is validated at
    synth against the endpoint's instance type.

    The component references the endpoint and the model through ``Fn::GetAtt``, so
    CloudFormation creates it after both and deletes it before them (SageMaker refuses to
    delete an endpoint or model that still hosts a component). Autoscaling targets the copy
    count; ``Autoscaling(min_capacity=0, ...)`` scales to zero with the AWS recipe: target
    tracking down to zero copies plus a step policy that adds a copy when a request finds no
    capacity (``NoCapacityInvocationFailures``).

    CloudFormation exposes no attribute with the component's name, which callers and the
    scalable target need, so it gets a physical name (from its path unless
    ``inference_component_name`` is set); components update in place, so it never blocks one.

    :param endpoint: the endpoint that hosts the copies.
    :param model: the model to serve (bound to the endpoint's instance type, whatever its
        own ``instance_type``).
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
    :param served_model_name: the name OpenAI clients send as ``model`` to a
        ``StreamingInvoker``. @default the Hub id of the weights, else the model's id
    :param deployment: ``Deployment.rolling(batch_percent=..., bake=...)``: updates replace the
        copies in batches, rolled back by the component's alarms. @default SageMaker's update
        of all copies at once
    :param alarms: the default alarms (``component.alarms``): ``True``, ``Alarms(...)`` for
        other thresholds and an SNS topic, or ``False`` for none. @default True
    """

    endpoint: InferenceComponentEndpoint

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
        served_model_name: str | None = None,
        deployment: Deployment | None = None,
        alarms: Alarms | bool = True,
    ) -> None:
        super().__init__(scope, id)
        problems = Problems(f"InferenceComponent '{self.node.path}'")
        problems.add(served_name_problem("served_model_name", served_model_name))
        problems.add(
            type_problem("endpoint", endpoint, InferenceComponentEndpoint, msg.IC_ENDPOINT_FIX)
        )
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
        problems.add(int_type_problem("accelerators", accelerators))
        problems.raise_if_any()  # nothing below can be checked without them
        self.endpoint, self.model = endpoint, model
        self.chosen_served_name = served_model_name
        self.instance_type = endpoint.instance_type
        self.accelerators = _default_accelerators(accelerators, self.instance_type)
        self.placement = Placement(self.instance_type, self.accelerators)
        self.demand = CopyDemand(
            accelerators=self.accelerators or 0,
            cpu_cores=float(cpu_cores) if isinstance(cpu_cores, int | float) else 0.0,
            memory_mib=min_memory_mib,
        )
        self.copies = copies
        self.autoscaling = autoscaling
        props = [
            positive_int_problem("copies", copies),
            positive_int_problem("min_memory_mib", min_memory_mib, minimum=MIN_MEMORY_MIB),
            cpu_cores_problem(cpu_cores),
            *self._accelerator_problems(),
            timeout_problem("health_check_timeout", health_check_timeout),
            timeout_problem("download_timeout", download_timeout),
            name_problem("inference_component_name", inference_component_name),
        ]
        problems.extend(props)
        arch = model.architecture
        self.health_check_timeout = (
            health_check_timeout
            or endpoint.health_check_timeout
            or default_health_check_timeout(self.instance_type, arch)
        )
        self.download_timeout = download_timeout or default_download_timeout(
            self.instance_type, arch
        )
        if not any(props):  # what follows needs well-formed numbers
            problems.extend(self._hardware_problems())
            problems.add(self._fleet_problem("copies", copies, "copies"))
            problems.add(endpoint.fleet_problem(self))
            problems.extend(self._scaling_problems(), ScalingError)
            problems.extend(model.problems_for(self.placement))
            problems.extend(self._deployment_problems(deployment, alarm_props))
        if not problems:
            ami = model.derive(self.placement).inference_ami_version
            problems.add(endpoint.host_ami_problem(ami, self.node.path))
        problems.raise_if_any()

        self.binding = model.bind(self.placement)
        self.component_name = inference_component_name or generated_name(
            self, "inference_component_name"
        )
        self.resource = sagemaker.CfnInferenceComponent(
            self,
            "Resource",
            inference_component_name=self.component_name,
            # GetAtt, not the literal name: the component is created after the endpoint and
            # deleted before it.
            endpoint_name=endpoint.endpoint_name,
            variant_name=endpoint.variant_name,
            specification=self._specification(cpu_cores),
            runtime_config=sagemaker.CfnInferenceComponent.InferenceComponentRuntimeConfigProperty(
                copy_count=copies
            ),
        )
        endpoint.add_component(self)
        self.scalable_target = autoscale_component(self, autoscaling) if autoscaling else None
        self.alarms: LlmAlarms | None = (
            create_alarms(self, self, alarm_props) if alarm_props else None
        )
        self.deployment = deployment
        if deployment is not None:
            rollback = deployment.rollback_alarms or (self.alarms.rollback if self.alarms else [])
            self.resource.deployment_config = component_deployment_config(
                deployment, alarms=rollback, fleet=self._fleet
            )
        self._annotate()

    # -- public API ----------------------------------------------------------------------------

    def add_adapter(
        self, name: str, *, source: ModelSource, inference_component_name: str | None = None
    ) -> AdapterComponent:
        """Serves the LoRA adapter ``source`` (``ModelSource.s3_archive``) on this component's
        copies, to clients as ``model=name`` (see :class:`AdapterComponent`).

        :param inference_component_name: physical name. @default generated from the path
        """
        named = inference_component_name
        return AdapterComponent(
            self, base=self, name=name, source=source, inference_component_name=named
        )

    def alarm_metrics(self) -> AlarmMetrics:
        """What the default alarms watch (see ``operations.alarms``); a component that may
        sit at zero copies waits out a cold start (15 minutes) before NoCapacity trips."""
        gpus = self.instance_type.accelerator == "nvidia" and bool(self.accelerators)
        may_be_zero = self.autoscaling is not None and self.autoscaling.may_reach_zero
        return AlarmMetrics(
            errors=self.metric_invocation_5xx_errors(),
            model_errors=self.metric_invocation_model_errors(),
            latency=self.metric_model_latency(),
            gpu_memory=self.metric_gpu_memory_utilization() if gpus else None,
            no_capacity=self.metric_no_capacity_invocation_failures(),
            no_capacity_minutes=15 if may_be_zero else 5,
        )

    # -- validation ----------------------------------------------------------------------------

    def _accelerator_problems(self) -> list[str]:
        inst = self.instance_type
        if self.accelerators is None and inst.accelerator is not None:
            # An unknown type in an accelerated family: the device count is not in the catalog.
            return [msg.accelerators_required(inst)]
        return self.placement.problems()

    def _hardware_problems(self) -> list[str]:
        """Per-copy host memory and vCPUs against one instance of the endpoint."""
        capacity, want, inst = self.endpoint.capacity, self.demand, self.instance_type
        if capacity is None:
            return []
        problems = []
        if want.memory_mib > capacity.memory_mib:
            problems.append(msg.memory_above_instance(want.memory_mib, capacity.memory_mib, inst))
        if want.cpu_cores > capacity.cpu_cores:
            problems.append(msg.cpu_above_instance(want.cpu_cores, capacity.cpu_cores, inst))
        return problems

    def _fleet_problem(self, prop: str, count: int, what: str) -> str | None:
        """``count`` copies must fit on ``max_instances`` instances."""
        capacity, most = self.endpoint.capacity, self.endpoint.max_instances
        if capacity is None or not isinstance(count, int):
            return None
        per_instance = self.demand.copies_on(capacity)
        if count <= per_instance * most:
            return None
        needed = math.ceil(count / per_instance) if per_instance else "more"
        return msg.fleet_too_small(
            prop,
            count,
            what,
            needed,
            self.instance_type.name,
            per_instance,
            self.demand.describe(),
            most,
        )

    def _scaling_problems(self) -> list[str | None]:
        s = self.autoscaling
        if s is None:
            return []
        low = max(1, s.min_capacity)
        min_instances = self.endpoint.min_instances
        return [
            msg.copies_outside_scaling(self.copies, low, s.max_capacity)
            if not low <= self.copies <= s.max_capacity
            else None,
            msg.scale_to_zero_needs_release(self.endpoint.node.path, min_instances)
            if s.min_capacity == 0 and min_instances > 0
            else None,
            self._fleet_problem("autoscaling max_capacity", s.max_capacity, "copies at most"),
            *self._schedule_problems(s),
        ]

    def _schedule_problems(self, scaling: Autoscaling) -> list[str | None]:
        min_instances = self.endpoint.min_instances
        found: list[str | None] = []
        for index, item in enumerate(scaling.schedule):
            if item.min_capacity == 0 and scaling.min_capacity > 0 and min_instances > 0:
                found.append(
                    ops.schedule_releases_nothing(index, self.endpoint.node.path, min_instances)
                )
            if item.max_capacity is not None:
                found.append(
                    self._fleet_problem(
                        f"schedule[{index}] max_capacity", item.max_capacity, "copies at most"
                    )
                )
        return found

    def _deployment_problems(
        self, deployment: Deployment | None, alarms: Alarms | None
    ) -> list[str]:
        if deployment is None:
            return []
        if deployment.kind is not DeploymentKind.ROLLING:
            return [ops.component_rollout_kind(deployment.describe)]
        found = deployment.problems_for(self._fleet)
        if alarms is None and deployment.rollback_alarms is None:
            found.append(ops.rollback_needs_alarms(self.node.path))
        return found

    @property
    def _fleet(self) -> Fleet:
        """The copies an update may find running: scheduled bounds move the count straight
        to their minimum, while scaling out from zero starts one copy; and how long a new
        copy may take to start."""
        scaling = self.autoscaling
        startup = self.health_check_timeout.plus(self.download_timeout)
        if scaling is None:
            return Fleet(self.copies, self.copies, startup, unit="copy")
        bounds = [s.min_capacity for s in scaling.schedule if s.min_capacity]
        smallest = 1 if scaling.min_capacity == 0 else min([scaling.min_capacity, *bounds])
        return Fleet(smallest, scaling.highest_max, startup, unit="copy")

    # -- construction helpers ------------------------------------------------------------------

    def _specification(
        self, cpu_cores: float | None
    ) -> sagemaker.CfnInferenceComponent.InferenceComponentSpecificationProperty:
        spec = sagemaker.CfnInferenceComponent
        return spec.InferenceComponentSpecificationProperty(
            model_name=self.binding.model_name,
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

    def _annotate(self) -> None:
        if self.accelerators is not None:
            add_memory_plan_note(self, self.binding.plan, per_copy=True)
        env = self.binding.environment
        if len(env) > MAX_COMPONENT_ENV:
            warn(
                self,
                "constructs-llm:component-env-size",
                msg.component_env_size(env, MAX_COMPONENT_ENV),
            )
        if self.autoscaling is not None and self.autoscaling.min_capacity == 0:
            warn(
                self,
                "constructs-llm:scale-to-zero",
                msg.scale_to_zero(self.copies, self.instance_type.name),
            )
            if self.autoscaling.uses_concurrency:
                warn(self, "constructs-llm:scale-to-zero-metric", msg.scale_to_zero_metric())


def _default_accelerators(accelerators: int | None, instance: InstanceType) -> int | None:
    """One copy per instance by default, as on an ``LlmEndpoint``."""
    if accelerators is not None:
        return accelerators
    return instance.accelerator_count or None
