"""InferenceComponentEndpoint: the model-less endpoint that hosts inference components."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Protocol

from aws_cdk import Duration, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, Node

from constructs_llm.cdk_values import key_problem, role_problem
from constructs_llm.hardware.instance_type import InstanceType, unknown_instance_type
from constructs_llm.hardware.pools import (
    VARIANT_NAME,
    InstancePools,
    InstanceTypes,
    provision_timeout_problem,
)
from constructs_llm.hosting.capacity_reservation import (
    capacity_reservation_config,
    capacity_reservation_problem,
)
from constructs_llm.hosting.endpoint_base import EndpointAttributes
from constructs_llm.hosting.metrics_config import (
    enhanced_period,
    metrics_config,
    metrics_problems,
)
from constructs_llm.hosting.names import name_problem
from constructs_llm.hosting.production_variant import (
    fleet_key,
    instance_pools,
    least_outstanding_requests,
    variant_name_for,
)
from constructs_llm.hosting.storage import (
    VOLUME_KEY_ACTIONS,
    kms_problem,
    storage_settings,
    volume_problem,
)
from constructs_llm.model.execution_role import depend_on_policies, execution_role
from constructs_llm.notes import add_note, quota_note
from constructs_llm.operations.capacity_notes import fleet_capacity_note
from constructs_llm.operations.deployment import Surge
from constructs_llm.problems import Problems, fail
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.sizing.copy_demand import CopyDemand
from constructs_llm.sizing.timeouts import timeout_problem
from constructs_llm.synth_hook import render_at_synth
from constructs_llm.values import all_ints, positive_int_problem

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms

    from constructs_llm.model.binding import ModelBinding
    from constructs_llm.operations.autoscaling import Autoscaling

__all__ = ["COMPONENT_FLEET", "HostedComponent", "InferenceComponentEndpoint"]

#: The id of the warning on an endpoint that hosts components, followed by ``:`` and its
#: fleet (``fleet_key``): acknowledging it records the fleet deployed, and a new instance type
#: warns again under a new id.
COMPONENT_FLEET = "constructs-llm:component-fleet"


class HostedComponent(Protocol):
    """What an endpoint needs of a component it hosts (``InferenceComponent`` provides it)."""

    @property
    def node(self) -> Node: ...

    @property
    def copies(self) -> int: ...

    @property
    def demand(self) -> CopyDemand: ...

    @property
    def binding(self) -> ModelBinding: ...

    @property
    def pool_bindings(self) -> tuple[ModelBinding, ...]:
        """The model its copies run on each pool (``binding`` without pools)."""
        ...

    @property
    def autoscaling(self) -> Autoscaling | None: ...

    def demand_on(self, pool: int) -> CopyDemand:
        """What one copy reserves on an instance of the endpoint's pool ``pool``."""
        ...


class InferenceComponentEndpoint(EndpointAttributes, Construct):
    """A real-time endpoint that hosts inference components instead of one model.

    SageMaker needs three things from such an endpoint's config, which this construct
    supplies: no ``ModelName`` on the variant, an ``ExecutionRoleArn`` on the config, and
    managed instance scaling, so that the instance count follows the copies the components
    ask for (between ``min_instances`` and ``max_instances``). Requests are routed to the
    least busy copy. The variant is named after the instance type, as on ``LlmEndpoint``.

    Given a list of instance types (instance pools, in order of preference), SageMaker
    provisions the fleet from the first type with capacity; each component's copy is then
    checked, and its model bound, on every pool, and a component whose model or resources
    differ between pools gets one specification per instance type (``Specifications``). The
    variant is then named ``pools``, whatever the types and their order.

    The execution role is SageMaker's for the endpoint itself: it gets CloudWatch Logs under
    ``/aws/sagemaker/Endpoints/`` and ``PutMetricData`` in the ``/aws/sagemaker/*``
    namespaces, plus the KMS key when one is given. Each component's model keeps its own role
    for its image and weights.

    :param instance_type: the instance type of every instance in the fleet, or a list of up
        to 5 in order of preference (instance pools).
    :param provision_timeout: with instance pools, how long SageMaker may try the pools for
        capacity (5-60 minutes). @default SageMaker's
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
    :param enhanced_metrics: CloudWatch metrics per instance, per component container and per
        GPU (``MetricsConfig``), which multiply the metric series and so what alarms,
        dashboards and queries on them cost (see ``hosting/metrics_config.py``).
        @default False
    :param metric_publish_frequency: how often SageMaker publishes the utilization metrics,
        and the invocation metrics with ``enhanced_metrics``: 10, 30, 60, 120, 180, 240 or 300
        seconds. @default SageMaker's 60 s
    :param capacity_reservation: the ARN of an ML capacity reservation the fleet's instances
        launch into, only there (no on-demand fallback): keep ``max_instances`` within it.
        @default none (on-demand)
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        instance_type: InstanceTypes,
        provision_timeout: Duration | None = None,
        min_instances: int = 1,
        max_instances: int = 1,
        health_check_timeout: Duration | None = None,
        endpoint_name: str | None = None,
        role: iam.IRole | None = None,
        volume_size: Size | None = None,
        kms_key: kms.IKey | None = None,
        enhanced_metrics: bool = False,
        metric_publish_frequency: Duration | None = None,
        capacity_reservation: str | None = None,
    ) -> None:
        super().__init__(scope, id)
        problems = Problems(f"InferenceComponentEndpoint '{self.node.path}'")
        problems.add(role_problem("role", role))
        problems.add(key_problem("kms_key", kms_key))
        pools, found = InstancePools.parse(instance_type)
        problems.extend(found)
        problems.raise_if_any()  # nothing below can be checked without them
        assert pools is not None
        self.pools = pools
        self.instance_type = pools.first.instance_type
        self.min_instances = min_instances
        self.max_instances = max_instances
        self.health_check_timeout = health_check_timeout
        self.provision_timeout = provision_timeout
        self.kms_key = kms_key
        self.capacity_reservation = capacity_reservation
        self._check(
            problems,
            endpoint_name,
            volume_size,
            metrics_problems(enhanced_metrics, metric_publish_frequency),
        )
        self.variant_name = (
            VARIANT_NAME if self.pools.listed else variant_name_for(self.instance_type)
        )
        self.components: list[HostedComponent] = []
        #: How often its enhanced metrics arrive (None: enhanced metrics off).
        self.enhanced_period = enhanced_period(enhanced_metrics, metric_publish_frequency)
        self._volume_size = volume_size
        self._host_ami: str | None = None

        self.role: iam.IRole = role or execution_role(
            self, "Role", description="Execution role of an inference-component endpoint"
        )
        self.config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            execution_role_arn=self.role.role_arn,
            production_variants=[self._variant()],
            kms_key_id=kms_key.key_arn if kms_key else None,
            metrics_config=metrics_config(enhanced_metrics, metric_publish_frequency),
        )
        # The role's policy must exist before SageMaker assumes it, and outlive the endpoint.
        depend_on_policies(self.config, self.role)
        storage_settings(self.config, [self.instance_type], kms_key, [self.role])
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
        )
        self._annotate()

    @property
    def capacity(self) -> CopyDemand | None:
        """What one instance offers components (None when the instance type is unknown); with
        instance pools, one instance of the priority-1 pool."""
        return CopyDemand.capacity_of(self.instance_type)

    @property
    def fleet_name(self) -> str:
        """The instance type, or the pools (for notes)."""
        first, *fallbacks = self.pools.instance_types
        if not fallbacks:
            return first.name
        return f"{first.name} (or fallback pools {', '.join(t.name for t in fallbacks)})"

    def host_ami_problem(self, ami: str | None, component_path: str) -> str | None:
        """The host AMI serves every component: CUDA 13 images need the newer driver, and two
        components cannot ask for different AMIs."""
        if ami is None or self._host_ami is None or ami == self._host_ami:
            return None
        return _host_ami_conflict(component_path, ami, self.node.path, self._host_ami)

    def add_component(self, component: HostedComponent) -> None:
        """Hosts ``component``: its copies count towards the fleet check, its model's role may
        use the volume key, its image sets the host AMI, and the endpoint's role may pull its
        image and read its weights (which role SageMaker uses for that is undocumented)."""
        binding = component.binding
        problem = self.host_ami_problem(binding.inference_ami_version, component.node.path)
        if problem:
            fail(f"InferenceComponentEndpoint '{self.node.path}'", problem)
        if not self.components:  # the endpoint's fleet is now fixed by what it hosts
            key = fleet_key(self.variant_name, self.pools.instance_types)
            warn(
                self,
                SynthWarning(
                    WarningId.COMPONENT_FLEET, _component_fleet_change(self, key), detail=key
                ),
            )
        self.components.append(component)
        if self.kms_key is not None:
            self.kms_key.grant(binding.role, *VOLUME_KEY_ACTIONS)
        if binding.inference_ami_version is not None and self._host_ami is None:
            self._host_ami = binding.inference_ami_version
            self.config.production_variants = [self._variant()]
        for each in dict.fromkeys(component.pool_bindings):
            each.grant_read(self.role)

    def fleet_problems(self, component: HostedComponent) -> list[str]:
        """Whether the initial copies of every component, ``component`` included, fit on
        ``max_instances`` instances of each pool (each may be the one SageMaker provisions): a
        necessary condition (SageMaker also packs per instance). Each component checks that its
        own copies fit; this catches components that only fit alone. Checked as each component
        is added: the demand only grows, so the component that overflows the fleet is named."""
        parts = [*self.components, component]
        return [
            problem
            for index, inst in enumerate(self.pools.instance_types)
            if (problem := self._fits(inst, parts, [c.demand_on(index) for c in parts]))
        ]

    def _fits(
        self, instance: InstanceType, parts: list[HostedComponent], demands: list[CopyDemand]
    ) -> str | None:
        capacity = CopyDemand.capacity_of(instance)
        if capacity is None or len(parts) < 2:
            return None
        fleet = self.max_instances
        need = functools.reduce(
            CopyDemand.plus, (d.times(c.copies) for d, c in zip(demands, parts, strict=True))
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
            return None
        names = ", ".join(
            f"{c.node.id} ({c.copies} x {d.describe()})"
            for d, c in zip(demands, parts, strict=True)
        )
        return _fleet_total_too_small(self.node.path, names, "; ".join(over), fleet, instance.name)

    def _check(
        self,
        problems: Problems,
        endpoint_name: str | None,
        volume: Size | None,
        found: list[str],
    ) -> None:
        low, high = self.min_instances, self.max_instances
        problems.add(provision_timeout_problem(self.provision_timeout, self.pools))
        problems.extend(found)
        problems.add(capacity_reservation_problem(self.capacity_reservation))
        problems.add(positive_int_problem("min_instances", low, minimum=0))
        problems.add(positive_int_problem("max_instances", high))
        if all_ints(low, high) and low > high:
            problems.add(_min_instances_above_max(low, high))
        problems.add(timeout_problem("health_check_timeout", self.health_check_timeout))
        problems.add(name_problem("endpoint_name", endpoint_name))
        for inst in self.pools.instance_types:
            problems.add(volume_problem(inst, volume))
            problems.add(kms_problem(inst, self.kms_key))
        problems.raise_if_any()

    def _variant(self) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        volume, pools, timeout = self._volume_size, self.pools, self.provision_timeout
        return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
            variant_name=self.variant_name,
            instance_type=None if pools.listed else self.instance_type.name,
            instance_pools=instance_pools(pools, {}) if pools.listed else None,
            variant_instance_provision_timeout_in_seconds=int(timeout.to_seconds())
            if timeout is not None
            else None,
            # The API needs at least one instance to create the endpoint, even when scaling
            # may later release them all.
            initial_instance_count=max(1, self.min_instances),
            managed_instance_scaling=sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
                status="ENABLED",
                min_instance_count=self.min_instances,
                max_instance_count=self.max_instances,
            ),
            routing_config=least_outstanding_requests(),
            volume_size_in_gb=int(volume.to_gibibytes()) if volume else None,
            inference_ami_version=self._host_ami,
            capacity_reservation_config=capacity_reservation_config(self.capacity_reservation),
        )

    def _annotate(self) -> None:
        # Every pool may be the one SageMaker provisions the whole fleet from, old and new.
        for inst in self.pools.instance_types:
            add_note(self, quota_note(inst.name, self.max_instances, _config_update_surge(self)))
        render_at_synth(self, self._note_capacity)
        for inst in self.pools.instance_types:
            if not inst.known:
                warn(
                    self,
                    SynthWarning(
                        WarningId.UNKNOWN_INSTANCE_TYPE,
                        unknown_instance_type(inst, for_components=True),
                    ),
                )
        if self.min_instances == 0:
            warn(
                self,
                SynthWarning(WarningId.MIN_INSTANCES_ZERO_REGION, _min_instances_zero_region()),
            )

    def _note_capacity(self) -> None:
        note = fleet_capacity_note(
            self.fleet_name,
            min_instances=self.min_instances,
            max_instances=self.max_instances,
            capacity=self.capacity,
            components=self.components,
        )
        add_note(self, note)


def _component_fleet_change(endpoint: InferenceComponentEndpoint, key: str) -> str:
    """Why the instance type of an endpoint with components cannot change, and the way that
    works: a new endpoint with new components."""
    return (
        f"InferenceComponentEndpoint '{endpoint.node.path}' hosts inference components on "
        f"{endpoint.pools.describe()} (variant '{endpoint.variant_name}'). A new instance_type "
        "renames that variant, on which each component was created (CreateInferenceComponent "
        "VariantName: 'The name of an existing production variant where you host the "
        "inference component'), and UpdateInferenceComponent cannot move a component (it "
        "takes no VariantName or EndpointName), so the change cannot deploy in place. Move to "
        "new hardware with a new endpoint: an InferenceComponentEndpoint and its "
        "InferenceComponents under new construct ids (and new endpoint_name and "
        "inference_component_name if set), in one deploy: CloudFormation creates them, points "
        "the invokers at them, then deletes the old components before the old endpoint. Once "
        f"this fleet is deployed, or for a new endpoint, acknowledge "
        f"Annotation::{COMPONENT_FLEET}:{key}; another instance type warns again under its own "
        "id"
    )


def _config_update_surge(endpoint: InferenceComponentEndpoint) -> Surge:
    """What an update of the endpoint's own config (its instance counts, host AMI, volume)
    runs beside the fleet: UpdateEndpoint "deploys the EndpointConfig specified in the
    request to a new fleet of instances" and deletes the old ones after the shift (botocore
    ``UpdateEndpoint``), up to ``max_instances`` of them. Component updates place their new
    copies within ``max_instances`` (managed instance scaling's bound), so they add none."""
    return Surge(
        endpoint.max_instances,
        "while an update of the endpoint's config runs a new fleet beside the old",
    )


def _min_instances_above_max(low: int, high: int) -> str:
    return (
        f"min_instances ({low}) is above max_instances ({high}); lower min_instances or raise "
        "max_instances"
    )


def _min_instances_zero_region() -> str:
    return (
        "min_instances=0 (MinInstanceCount 0) is rejected in some regions (reported in "
        "eu-west-3: 'Min instance count needs to be greater than 0 for enabled managed "
        "instance scaling'); if CreateEndpointConfig fails there, use min_instances=1 "
        "(components can still scale their copies to zero)"
    )


def _host_ami_conflict(component_path: str, ami: str, endpoint_path: str, current: str) -> str:
    return (
        f"InferenceComponent '{component_path}' needs host AMI {ami}, but endpoint "
        f"'{endpoint_path}' already uses {current} for another component; put images that "
        "need different host AMIs on separate endpoints"
    )


def _fleet_total_too_small(
    endpoint_path: str, components: str, over: str, fleet: int, instance: str
) -> str:
    return (
        f"InferenceComponentEndpoint '{endpoint_path}': the initial copies of its components "
        f"({components}) need {over} with max_instances={fleet} x {instance}; raise "
        "max_instances or lower copies"
    )
