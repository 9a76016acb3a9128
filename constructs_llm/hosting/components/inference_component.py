"""Inference components: several LLMs, each with its own copies, on one shared endpoint.

``InferenceComponentEndpoint`` (``components/endpoint.py``) is the model-less EndpointConfig
and Endpoint SageMaker requires. ``InferenceComponent`` binds one ``LlmModel`` to a copy's
share of that endpoint's instance (per-copy accelerators, CPU and memory), with copy
autoscaling and, with ``Autoscaling(min_capacity=0, ...)``, scale to zero.

On an endpoint with instance pools, a copy is checked, and the model bound, on every pool: the
guide "Deploy to multiple instance types with instance pools" (section "Real-time endpoint
with inference components") offers one ``Specification`` for every type, or ``Specifications``
"to define different model or resource configurations for each instance type"; the
CloudFormation schema wants 2-5 of them. A component whose model and resources are the same on
every pool keeps one ``Specification``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aws_cdk import Duration
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm.errors import ScalingError, SizingError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement, above_instance
from constructs_llm.hardware.pools import InstancePools, host_ami_problem, pool_problem
from constructs_llm.hosting.components.adapter import AdapterComponent
from constructs_llm.hosting.components.component_base import ComponentAttributes
from constructs_llm.hosting.components.copy_placement import CopyPlacement
from constructs_llm.hosting.components.data_cache import data_cache_config, data_cache_problem
from constructs_llm.hosting.components.endpoint import InferenceComponentEndpoint
from constructs_llm.hosting.components.plan import ComponentEndpointPlan, ComponentPlan, CopyPlan
from constructs_llm.hosting.components.scaling import autoscale_component
from constructs_llm.hosting.names import generated_name, name_problem
from constructs_llm.hosting.openai_route import OffersOpenAiRoute, OpenAiRoute
from constructs_llm.hosting.plan import bound_pools
from constructs_llm.hosting.production_variant import startup_timeouts
from constructs_llm.hosting.storage import storage_problem
from constructs_llm.hosting.target import (
    ServesModel,
    TargetFacts,
    hosted_facts,
    served_name_problem,
)
from constructs_llm.model.llm_model import MODEL_FIX, LlmModel, ModelBinding
from constructs_llm.model.source import ModelSource
from constructs_llm.notes import add_note, memory_plan_note
from constructs_llm.operations.alarms import (
    AlarmMetrics,
    Alarms,
    LlmAlarms,
    alarm_settings,
    create_alarms,
)
from constructs_llm.operations.autoscaling import (
    AUTOSCALING_FIX,
    Autoscaling,
    start_outside_problem,
    target_problem,
)
from constructs_llm.operations.deployment import (
    DEPLOYMENT_FIX,
    Deployment,
    DeploymentKind,
    Fleet,
    component_deployment_config,
    rollback_needs_alarms,
)
from constructs_llm.operations.engine_signals import EngineQueries, engine_alarm_problem
from constructs_llm.operations.metrics import CopyMetrics, DashboardView
from constructs_llm.operations.promql_regions import promql_region_problem
from constructs_llm.problems import Problem, Problems
from constructs_llm.region_availability import assert_available, availability_problems
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.scope_facts import path_of, place, region_of
from constructs_llm.sizing.copy_demand import MIN_MEMORY_MIB, CopyDemand, cpu_cores_problem
from constructs_llm.sizing.timeouts import timeout_problem
from constructs_llm.synth_hook import reference_at_synth
from constructs_llm.values import (
    int_type_problem,
    memory_mib_problem,
    positive_int_problem,
    type_problem,
)

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch

#: Entries SageMaker documents for an inference component's container environment.
_MAX_COMPONENT_ENV = 16
_POOLS_FIX = "InferenceComponentEndpoint(instance_type=[...])"


class InferenceComponent(
    ComponentAttributes, ServesModel, CopyMetrics, OffersOpenAiRoute, Construct
):
    """One ``LlmModel`` served as copies on an ``InferenceComponentEndpoint``.

    Each copy gets ``accelerators`` devices, ``cpu_cores`` and ``min_memory_mib`` of the
    instance, and the model is bound to the copy's share of it (``model.bind``): a copy with
    one of four GPUs shards over one (``SM_NUM_GPUS=1``), with a memory plan, engine checks
    and warnings for one GPU, in a SageMaker Model of its own. The component's plan
    (``component.plan``: each pool's copy placement, model binding and reservation, its
    timeouts) is built and checked when it is created; it registers with its endpoint
    (``endpoint.add_component``), which checks at synth what it must share with the
    endpoint's other components; records its placements with the model (which renders their
    Models), and sets its specification, naming them, at synth.
    Everything is validated at synth against the endpoint's instance type, or each of its
    instance pools (with the default ``accelerators``, a copy then gets every device of each
    pool's type).

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
    :param data_cache: cache the model artifacts and image on each instance provisioned for the
        component, so copies added by autoscaling start sooner (``DataCacheConfig``).
        @default None: SageMaker's default, no caching
    :param copy_placement: ``CopyPlacement.spread()`` or ``CopyPlacement.binpack()``, with
        Availability Zone balance (``SchedulingConfig``). @default None: SageMaker's placement
    """

    endpoint: InferenceComponentEndpoint
    plan: ComponentPlan

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
        data_cache: bool | None = None,
        copy_placement: CopyPlacement | None = None,
    ) -> None:
        super().__init__(scope, id)
        place(self, scope, id)
        path = path_of(self)
        problems = Problems(f"InferenceComponent '{path}'")
        problems.add(data_cache_problem(data_cache))
        problems.add(
            type_problem(
                "copy_placement",
                copy_placement,
                CopyPlacement,
                "use CopyPlacement.spread() or CopyPlacement.binpack()",
                optional=True,
            )
        )
        problems.add(served_name_problem("served_model_name", served_model_name))
        problems.add(
            type_problem("endpoint", endpoint, InferenceComponentEndpoint, _IC_ENDPOINT_FIX)
        )
        problems.add(type_problem("model", model, LlmModel, MODEL_FIX))
        problems.add(
            type_problem("autoscaling", autoscaling, Autoscaling, AUTOSCALING_FIX, optional=True)
        )
        problems.add(
            type_problem("deployment", deployment, Deployment, DEPLOYMENT_FIX, optional=True)
        )
        alarm_props = alarm_settings(alarms, problems)
        problems.add(int_type_problem("accelerators", accelerators))
        problems.raise_if_any()  # nothing below can be checked without them
        self.endpoint = endpoint
        fleet = endpoint.plan.variant.fleet
        #: Devices a copy gets on each pool of the endpoint, priority 1 first.
        devices = tuple(_default_accelerators(accelerators, t) for t in fleet.instance_types)
        placements = tuple(
            Placement(t, a) for t, a in zip(fleet.instance_types, devices, strict=True)
        )
        #: A copy on each pool, bound to no model yet (its numbers are checked below).
        unbound = tuple(
            CopyPlan(priority=i + 1, placement=p, memory_mib=min_memory_mib, cpu_cores=cpu_cores)
            for i, p in enumerate(placements)
        )
        on_pools = _PoolChecks(fleet, unbound, devices, endpoint)
        problems.extend(
            [
                positive_int_problem("copies", copies),
                memory_mib_problem("min_memory_mib", min_memory_mib, minimum=MIN_MEMORY_MIB),
                cpu_cores_problem(cpu_cores),
                *on_pools.each(on_pools.accelerator_problems),
                timeout_problem("health_check_timeout", health_check_timeout),
                timeout_problem("download_timeout", download_timeout),
                name_problem("inference_component_name", inference_component_name),
            ]
        )
        problems.raise_if_any()  # what follows needs well-formed numbers
        model_problems = [
            on_pools.name(index, p, too_small=p.kind is SizingError)
            for index, placement in enumerate(placements)
            for p in model.problems_for(placement)
        ]
        pools = unbound if model_problems else bound_pools(model, unbound)
        # The slowest pool's defaults: each may be the one SageMaker provisions.
        slowest_health, slowest_download = startup_timeouts(fleet, model.architecture, None, None)
        self.plan = ComponentPlan(
            component_name=inference_component_name
            or generated_name(self, "inference_component_name"),
            pools=pools,
            copies=copies,
            health_check_timeout=health_check_timeout
            or endpoint.plan.health_check_timeout
            or slowest_health,
            download_timeout=download_timeout or slowest_download,
            autoscaling=autoscaling,
            data_cache=data_cache,
            copy_placement=copy_placement,
            deployment=deployment,
            alarms=alarm_props,
            served_model_name=served_model_name,
        )
        problems.extend(on_pools.each(on_pools.hardware_problems))
        problems.extend(on_pools.each(lambda i: [on_pools.storage_problem(i, model)]))
        problems.extend(on_pools.each(lambda i: [on_pools.fleet_problem("copies", copies, i)]))
        problems.extend(_scaling_problems(self.plan, endpoint.plan, on_pools), ScalingError)
        problems.extend(model_problems)
        problems.extend(_deployment_problems(path, self.plan))
        metrics = endpoint.plan.metrics
        problems.add(
            engine_alarm_problem(
                alarm_props,
                [model.engine],
                detailed=metrics.detailed,
                described=metrics.described,
            )
        )
        region = region_of(self)[0]
        if metrics.detailed and model.engine.signals is not None:
            problems.add(promql_region_problem(region, alarm_props))
        problems.extend(availability_problems(region, _FEATURES))
        if not problems:
            # What it must share with the endpoint's other components is checked once they all
            # exist, by the endpoint at synth (hosting/components/endpoint_rules.py).
            amis = [p.binding.inference_ami_version if p.binding else None for p in pools]
            problems.add(host_ami_problem(fleet, amis))
        problems.raise_if_any()
        for binding in self.plan.bindings:  # the model renders the Model of each
            binding.model.add_placement(binding.placement)
        assert_available(self, _FEATURES)

        self.resource = sagemaker.CfnInferenceComponent(
            self,
            "Resource",
            inference_component_name=self.plan.component_name,
            # GetAtt, not the literal name: the component is created after the endpoint and
            # deleted before it.
            endpoint_name=endpoint.endpoint_name,
            variant_name=endpoint.variant_name,
            runtime_config=sagemaker.CfnInferenceComponent.InferenceComponentRuntimeConfigProperty(
                copy_count=copies
            ),
        )
        endpoint.add_component(self)
        self.scalable_target = autoscale_component(self, autoscaling) if autoscaling else None
        self.alarms: LlmAlarms | None = (
            create_alarms(self, self, alarm_props, named=deployment is not None)
            if alarm_props
            else None
        )
        if deployment is not None:
            rollback = deployment.rollback_alarms or (self.alarms.rollback if self.alarms else [])
            self.resource.deployment_config = component_deployment_config(
                deployment, alarms=rollback, fleet=_fleet(self.plan)
            )
        self._annotate()
        reference_at_synth(self, self._reference, path=path)

    # -- what it serves (read from the plan) ---------------------------------------------------

    @property
    def binding(self) -> ModelBinding:
        """The model its copies run on the endpoint's priority-1 pool."""
        return self.plan.binding

    @property
    def placement(self) -> Placement:
        """Where a copy runs on the endpoint's priority-1 pool."""
        return self.plan.placement

    @property
    def autoscaling(self) -> Autoscaling | None:
        return self.plan.autoscaling

    @property
    def facts(self) -> TargetFacts:
        """What an invoker, a dashboard or an alarm reads of the component, from its plan: the
        pools its copies run on, each with its model's binding."""
        return hosted_facts(self, self.plan.pools, self.plan.autoscaling)

    @property
    def enhanced_period(self) -> Duration | None:
        return self.endpoint.enhanced_period

    @property
    def detailed_observability(self) -> bool:
        return self.endpoint.plan.metrics.engine_metrics

    def engine_queries(self) -> EngineQueries | None:
        """PromQL over the copies' engine signals (KV cache, queue, token latencies), where the
        engine publishes them (vLLM, SGLang) and detailed observability is on: one series per
        copy's container."""
        signals = self.model.engine.signals
        if signals is None or not self.detailed_observability:
            return None
        return EngineQueries.of_component(signals, self.plan.component_name)

    @property
    def _gpus(self) -> bool:
        """Its copies reserve NVIDIA GPUs."""
        first = self.plan.first.placement
        return first.instance_type.accelerator == "nvidia" and first.devices > 0

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

    def dashboard_view(self) -> DashboardView:
        """This component's dashboard row: its copies, no-capacity failures, and the GPUs the
        copies reserve."""
        gpu_metrics: list[cloudwatch.IMetric] = [
            self.metric_gpu_utilization(label="GPU use"),
            self.metric_gpu_memory_utilization(label="GPU memory"),
        ]
        return DashboardView(
            label=f"inference component on {path_of(self.endpoint)}",
            unit="copy",
            units="Copies",
            fixed_count=self.plan.copies,
            gpu=("GPU use and memory of the copies (% of their GPUs)", gpu_metrics)
            if self._gpus
            else None,
            extra_errors=[self.metric_no_capacity_invocation_failures(label="no capacity")],
            enhanced=self._enhanced_graphs(gpus=self._gpus),
            engine=self.engine_queries(),
        )

    def _openai_route(self) -> OpenAiRoute:
        return OpenAiRoute(
            self,
            invoke_arns=(self.endpoint.endpoint_arn, self.inference_component_arn),
            plan=self.endpoint.plan,
        )

    def alarm_metrics(self) -> AlarmMetrics:
        """What the default alarms watch (see ``operations.alarms``); a component that may
        sit at zero copies waits out a cold start (15 minutes) before NoCapacity trips."""
        scaling = self.plan.autoscaling
        may_be_zero = scaling is not None and scaling.may_reach_zero
        return AlarmMetrics(
            dimensions=self._metric_dimensions(),
            errors=self.metric_invocation_5xx_errors,
            model_errors=self.metric_invocation_model_errors,
            latency=self.metric_model_latency,
            gpu_memory=self.metric_gpu_memory_utilization if self._gpus else None,
            no_capacity=self.metric_no_capacity_invocation_failures,
            no_capacity_minutes=15 if may_be_zero else 5,
            engine=self.engine_queries(),
        )

    # -- set at synth ---------------------------------------------------------------------------

    def _reference(self) -> None:
        """The specification that names its SageMaker Models (which its model renders): one
        for every pool, or one per instance type where the pools' copies differ."""
        plan = self.plan
        if plan.per_type:
            self.resource.specifications = [
                sagemaker.CfnInferenceComponent.InferenceComponentSpecificationForInstanceTypeProperty(
                    instance_type=pool.instance_type.name,
                    model_name=_model_name(plan, pool),
                    compute_resource_requirements=_resources(pool),
                    startup_parameters=_startup(plan),
                    data_cache_config=data_cache_config(plan.data_cache),
                    scheduling_config=_scheduling(plan),
                )
                for pool in plan.pools
            ]
            return
        self.resource.specification = (
            sagemaker.CfnInferenceComponent.InferenceComponentSpecificationProperty(
                model_name=_model_name(plan, plan.first),
                compute_resource_requirements=_resources(plan.first),
                startup_parameters=_startup(plan),
                data_cache_config=data_cache_config(plan.data_cache),
                scheduling_config=_scheduling(plan),
            )
        )

    def _annotate(self) -> None:
        plan = self.plan
        listed = self.endpoint.plan.variant.listed
        first = plan.binding
        memory = first.plan
        if plan.first.placement.devices and not listed and memory is not None:
            add_note(self, memory_plan_note(memory, per_copy=True))
        for pool in plan.pools if listed else ():
            on_pool = pool.binding.plan if pool.binding is not None else None
            if on_pool is not None:
                where = (pool.priority - 1, len(plan.pools))
                add_note(self, memory_plan_note(on_pool, per_copy=True, pool=where))
        env = first.environment
        if len(env) > _MAX_COMPONENT_ENV:
            too_big = _component_env_size(env, _MAX_COMPONENT_ENV)
            warn(self, SynthWarning(WarningId.COMPONENT_ENV_SIZE, too_big))
        scaling = plan.autoscaling
        if scaling is not None and scaling.min_capacity == 0:
            instance = plan.first.instance_type.name
            warn(self, SynthWarning(WarningId.SCALE_TO_ZERO, _scale_to_zero(plan.copies, instance)))
            if scaling.uses_concurrency:
                warn(self, SynthWarning(WarningId.SCALE_TO_ZERO_METRIC, _scale_to_zero_metric()))


def _model_name(plan: ComponentPlan, pool: CopyPlan) -> str | None:
    binding = plan.model_binding(pool)
    return binding.model_name if binding is not None else None


def _resources(
    pool: CopyPlan,
) -> sagemaker.CfnInferenceComponent.InferenceComponentComputeResourceRequirementsProperty:
    return sagemaker.CfnInferenceComponent.InferenceComponentComputeResourceRequirementsProperty(
        number_of_accelerator_devices_required=pool.placement.devices or None,
        number_of_cpu_cores_required=pool.cpu_cores,
        min_memory_required_in_mb=pool.memory_mib,
    )


def _startup(
    plan: ComponentPlan,
) -> sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty:
    return sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty(
        container_startup_health_check_timeout_in_seconds=int(
            plan.health_check_timeout.to_seconds()
        ),
        model_data_download_timeout_in_seconds=int(plan.download_timeout.to_seconds()),
    )


def _scheduling(
    plan: ComponentPlan,
) -> sagemaker.CfnInferenceComponent.InferenceComponentSchedulingConfigProperty | None:
    placement = plan.copy_placement
    return placement.scheduling_config() if placement is not None else None


def _fleet(plan: ComponentPlan) -> Fleet:
    """The copies an update may find running: scheduled bounds move the count straight to
    their minimum, while scaling out from zero starts one copy; and how long a new copy may
    take to start."""
    scaling = plan.autoscaling
    if scaling is None:
        return Fleet(plan.copies, plan.copies, plan.startup, unit="copy")
    bounds = [s.min_capacity for s in scaling.schedule if s.min_capacity]
    smallest = 1 if scaling.min_capacity == 0 else min([scaling.min_capacity, *bounds])
    return Fleet(smallest, scaling.highest_max, plan.startup, unit="copy")


#: What a component renders (``data/regions.json``): its specification and its Models.
_FEATURES = ("AWS::SageMaker::InferenceComponent", "AWS::SageMaker::Model")


def _deployment_problems(path: str, plan: ComponentPlan) -> list[Problem]:
    deployment, alarms = plan.deployment, plan.alarms
    if deployment is None:
        return []
    if deployment.kind is not DeploymentKind.ROLLING:
        return [
            Problem.of(
                "deployment",
                None,
                "an inference component updates its copies in rolling batches, got "
                f"{deployment.describe};",
                "use Deployment.rolling(batch_percent=..., bake=...)",
            )
        ]
    # The component's own alarms roll the update back unless rollback_alarms names others.
    watched = alarms if deployment.rollback_alarms is None else None
    found = deployment.problems_for(
        _fleet(plan), error_rate=watched.error_rate if watched else None
    )
    if alarms is None and deployment.rollback_alarms is None:
        found.append(rollback_needs_alarms(path))
    return found


def _scaling_problems(
    plan: ComponentPlan, endpoint: ComponentEndpointPlan, pools: _PoolChecks
) -> list[Problem | None]:
    s = plan.autoscaling
    if s is None:
        return []
    min_instances = endpoint.min_instances
    return [
        target_problem(s, asynchronous=False),
        start_outside_problem(
            "copies",
            plan.copies,
            s,
            low=max(1, s.min_capacity),
            note=" (copies start at 1 or more even when scaling to zero)",
        ),
        Problem.of(
            "autoscaling",
            None,
            "autoscaling min_capacity=0 (scale to zero) needs an endpoint that can release its "
            f"instances, but endpoint '{pools.endpoint_path}' has min_instances={min_instances};",
            "create the InferenceComponentEndpoint with min_instances=0",
        )
        if s.min_capacity == 0 and min_instances > 0
        else None,
        *pools.fleet_problems("autoscaling max_capacity", s.max_capacity),
        *_schedule_problems(s, min_instances, pools),
    ]


def _schedule_problems(
    scaling: Autoscaling, min_instances: int, pools: _PoolChecks
) -> list[Problem | None]:
    found: list[Problem | None] = []
    for index, item in enumerate(scaling.schedule):
        if item.min_capacity == 0 and scaling.min_capacity > 0 and min_instances > 0:
            found.append(_schedule_releases_nothing(index, pools.endpoint_path, min_instances))
        if item.max_capacity is not None:
            found += pools.fleet_problems(f"schedule[{index}] max_capacity", item.max_capacity)
    return found


class _PoolChecks:
    """A copy's checks on each pool of the endpoint, each problem naming the pool."""

    def __init__(
        self,
        fleet: InstancePools,
        copies: tuple[CopyPlan, ...],
        devices: tuple[int | None, ...],
        endpoint: InferenceComponentEndpoint,
    ) -> None:
        self.fleet, self.copies = fleet, copies
        self.placements = tuple(copy.placement for copy in copies)
        self.devices, self.max_instances = devices, endpoint.plan.max_instances
        self.volume_size = endpoint.plan.variant.volume_size
        self.endpoint_path = path_of(endpoint)

    def each(self, check: Callable[[int], Sequence[Problem | None]]) -> list[Problem]:
        """``check`` on each pool, its problems naming the pool."""
        return [
            self.name(index, problem)
            for index in range(len(self.placements))
            for problem in check(index)
            if problem
        ]

    def name(self, index: int, problem: Problem, *, too_small: bool = True) -> Problem:
        return pool_problem(self.fleet, index, problem, too_small=too_small, where=_POOLS_FIX)

    def accelerator_problems(self, pool: int) -> list[Problem]:
        placement = self.placements[pool]
        inst = placement.instance_type
        if self.devices[pool] is None and inst.accelerator is not None:
            # An unknown type in an accelerated family: the device count is not in the catalog.
            return [
                Problem.of(
                    "accelerators",
                    None,
                    f"accelerators is required on {inst.name}: it is not in the hardware "
                    "catalog, so the number of devices per copy cannot be defaulted;",
                    "pass accelerators=N",
                )
            ]
        return placement.problems()

    def hardware_problems(self, pool: int) -> list[Problem]:
        """Per-copy host memory and vCPUs against one instance of the pool."""
        inst, want = self.placements[pool].instance_type, self.copies[pool].demand
        capacity = CopyDemand.capacity_of(inst)
        if capacity is None:
            return []
        memory = f"{capacity.memory_mib} MiB of host memory ({inst.memory_gib:g} GiB)"
        vcpus = f"{capacity.cpu_cores:g} vCPUs"
        asked = (  # (setting, wanted, have, both as the message shows them)
            ("min_memory_mib", want.memory_mib, capacity.memory_mib, f"{want.memory_mib}", memory),
            ("cpu_cores", want.cpu_cores, capacity.cpu_cores, f"{want.cpu_cores:g}", vcpus),
        )
        return [
            above_instance(prop, wanted, shown, have_shown, inst)
            for prop, wanted, have, shown, have_shown in asked
            if wanted > have
        ]

    def storage_problem(self, pool: int, model: LlmModel) -> Problem | None:
        """The endpoint's volume (or the pool's local NVMe) must hold ``model``'s checkpoint."""
        inst = self.placements[pool].instance_type
        return storage_problem(inst, self.volume_size, model.architecture)

    def fleet_problem(self, prop: str, count: int, pool: int) -> Problem | None:
        """``count`` copies must fit on ``max_instances`` instances of the pool."""
        inst, demand = self.placements[pool].instance_type, self.copies[pool].demand
        capacity, most = CopyDemand.capacity_of(inst), self.max_instances
        if capacity is None or not isinstance(count, int):
            return None
        per_instance = demand.copies_on(capacity)
        if count <= per_instance * most:
            return None
        needed = math.ceil(count / per_instance) if per_instance else "more"
        what = "copies" if prop == "copies" else "copies at most"
        return _fleet_too_small(
            prop, count, what, needed, inst.name, per_instance, demand.describe(), most
        )

    def fleet_problems(self, prop: str, count: int) -> list[Problem]:
        """``count`` copies at most must fit the fleet on every pool (each may be the one)."""
        return self.each(lambda pool: [self.fleet_problem(prop, count, pool)])


def _schedule_releases_nothing(index: int, endpoint_path: str, min_instances: int) -> Problem:
    return Problem.of(
        f"autoscaling.schedule[{index}]",
        None,
        f"schedule[{index}] scales the copies to zero, but endpoint '{endpoint_path}' keeps "
        f"min_instances={min_instances} instance(s), which bill with no copy on them;",
        "create the InferenceComponentEndpoint with min_instances=0",
    )


_IC_ENDPOINT_FIX = (
    "create one with InferenceComponentEndpoint(self, 'Shared', instance_type=...); an "
    "LlmEndpoint serves one model on its variant and cannot host components"
)


def _fleet_too_small(
    prop: str,
    count: int,
    what: str,
    needed: object,
    instance: str,
    per: int,
    demand: str,
    most: int,
) -> Problem:
    return Problem.of(
        prop,
        count,
        f"{prop}={count} {what} need {needed} instances of {instance} ({per} "
        f"cop{'y' if per == 1 else 'ies'} of {demand} fit on one) but the endpoint's "
        f"max_instances is {most};",
        f"raise max_instances or lower {prop}",
    )


def _component_env_size(env: dict[str, str], limit: int) -> str:
    return (
        f"the model's container environment has {len(env)} entries ({', '.join(sorted(env))}); "
        f"SageMaker documents at most {limit} for an inference component's container. This "
        "component references the model by name, where the model's limit applies; if "
        "CreateInferenceComponent rejects the environment, drop entries from env"
    )


def _scale_to_zero(copies: int, instance: str) -> str:
    return (
        f"scale to zero: the first deploy starts {copies} copy(ies) on at least one {instance} "
        "and bills for them until target tracking scales in (SageMaker rejects CopyCount 0 at "
        "creation). Once at zero, the next request waits minutes for an instance and a copy to "
        "start, and requests fail with NoCapacityInvocationFailures meanwhile (the first one "
        "triggers the scale-out alarm); clients should retry with backoff"
    )


def _scale_to_zero_metric() -> str:
    return (
        "scale to zero with target_concurrent_requests: AWS's documented recipe tracks "
        "invocations per copy (target_invocations_per_instance=1); verify that "
        "ConcurrentRequestsPerCopy reaches 0 when idle so the last copy is released, or use "
        "the invocations target"
    )


def _default_accelerators(accelerators: int | None, instance: InstanceType) -> int | None:
    """One copy per instance by default, as on an ``LlmEndpoint``."""
    if accelerators is not None:
        return accelerators
    return instance.accelerator_count or None
