"""InferenceComponentEndpoint: the model-less endpoint that hosts inference components."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Protocol

from aws_cdk import Duration, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, Node

from constructs_llm import messages as msg
from constructs_llm.cdk_values import key_problem, role_problem
from constructs_llm.errors import ConfigurationError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hosting.shared import (
    VOLUME_KEY_ACTIONS,
    EndpointAttributes,
    depend_on_policies,
    execution_role,
    kms_problem,
    least_outstanding_requests,
    storage_settings,
    variant_name_for,
    volume_problem,
)
from constructs_llm.operations.capacity_notes import note_fleet_capacity
from constructs_llm.problems import Problems, fail
from constructs_llm.reporting import warn
from constructs_llm.sizing.copy_demand import CopyDemand
from constructs_llm.validation import (
    add_quota_note,
    all_ints,
    name_problem,
    positive_int_problem,
    timeout_problem,
)

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms

    from constructs_llm.model.binding import ModelBinding
    from constructs_llm.operations.autoscaling import Autoscaling

__all__ = ["HostedComponent", "InferenceComponentEndpoint"]


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
    def autoscaling(self) -> Autoscaling | None: ...


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
        problems = Problems(f"InferenceComponentEndpoint '{self.node.path}'")
        problems.add(role_problem("role", role))
        problems.add(key_problem("kms_key", kms_key))
        try:
            self.instance_type = InstanceType.of(instance_type)
        except ConfigurationError as err:
            problems.add_error(err, prefix="instance_type: ")
        problems.raise_if_any()  # nothing below can be checked without them
        self.min_instances = min_instances
        self.max_instances = max_instances
        self.health_check_timeout = health_check_timeout
        self.kms_key = kms_key
        self._check(problems, endpoint_name, volume_size)
        self.variant_name = variant_name_for(self.instance_type)
        self.components: list[HostedComponent] = []
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
        self._annotate()

    @property
    def capacity(self) -> CopyDemand | None:
        """What one instance offers components (None when the instance type is unknown)."""
        return CopyDemand.capacity_of(self.instance_type)

    def host_ami_problem(self, ami: str | None, component_path: str) -> str | None:
        """The host AMI serves every component: CUDA 13 images need the newer driver, and two
        components cannot ask for different AMIs."""
        if ami is None or self._host_ami is None or ami == self._host_ami:
            return None
        return msg.host_ami_conflict(component_path, ami, self.node.path, self._host_ami)

    def add_component(self, component: HostedComponent) -> None:
        """Hosts ``component``: its copies count towards the fleet check, its model's role may
        use the volume key, its image sets the host AMI, and the endpoint's role may pull its
        image and read its weights (which role SageMaker uses for that is undocumented)."""
        binding = component.binding
        problem = self.host_ami_problem(binding.inference_ami_version, component.node.path)
        if problem:
            fail(f"InferenceComponentEndpoint '{self.node.path}'", problem)
        self.components.append(component)
        if self.kms_key is not None:
            self.kms_key.grant(binding.role, *VOLUME_KEY_ACTIONS)
        if binding.inference_ami_version is not None and self._host_ami is None:
            self._host_ami = binding.inference_ami_version
            self.config.production_variants = [self._variant()]
        binding.grant_read(self.role)

    def fleet_problem(self, component: HostedComponent) -> str | None:
        """Whether the initial copies of every component, ``component`` included, fit on
        ``max_instances`` instances: a necessary condition (SageMaker also packs per
        instance). Each component checks that its own copies fit; this catches components that
        only fit alone. Checked as each component is added: the demand only grows."""
        capacity, parts = self.capacity, [*self.components, component]
        if capacity is None or len(parts) < 2:
            return None
        fleet = self.max_instances
        need = functools.reduce(CopyDemand.plus, (c.demand.times(c.copies) for c in parts))
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
        names = ", ".join(f"{c.node.id} ({c.copies} x {c.demand.describe()})" for c in parts)
        return msg.fleet_total_too_small(
            self.node.path, names, "; ".join(over), fleet, self.instance_type.name
        )

    def _check(self, problems: Problems, endpoint_name: str | None, volume: Size | None) -> None:
        low, high = self.min_instances, self.max_instances
        problems.add(positive_int_problem("min_instances", low, minimum=0))
        problems.add(positive_int_problem("max_instances", high))
        if all_ints(low, high) and low > high:
            problems.add(msg.min_instances_above_max(low, high))
        problems.add(timeout_problem("health_check_timeout", self.health_check_timeout))
        problems.add(name_problem("endpoint_name", endpoint_name))
        problems.add(volume_problem(self.instance_type, volume))
        problems.add(kms_problem(self.instance_type, self.kms_key))
        problems.raise_if_any()

    def _variant(self) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        volume = self._volume_size
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
            routing_config=least_outstanding_requests(),
            volume_size_in_gb=int(volume.to_gibibytes()) if volume else None,
            inference_ami_version=self._host_ami,
        )

    def _annotate(self) -> None:
        add_quota_note(self, self.instance_type.name, self.max_instances)
        note_fleet_capacity(self, self)
        if not self.instance_type.known:
            warn(
                self,
                "constructs-llm:unknown-instance-type",
                msg.unknown_instance_type(self.instance_type, for_components=True),
            )
        if self.min_instances == 0:
            warn(self, "constructs-llm:min-instances-zero-region", msg.min_instances_zero_region())
