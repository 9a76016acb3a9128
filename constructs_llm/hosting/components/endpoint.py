"""InferenceComponentEndpoint: the model-less endpoint that hosts inference components."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from aws_cdk import Duration, Size, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, Node

from constructs_llm.cdk_values import key_problem, role_problem
from constructs_llm.execution_role import (
    ExecutionRole,
    depend_on_policies,
    grant_container_writes,
    grant_volume_key,
)
from constructs_llm.hardware.instance_type import unknown_instance_type
from constructs_llm.hardware.pools import (
    InstancePools,
    InstanceTypes,
    provision_timeout_problem,
)
from constructs_llm.hosting.capacity_reservation import capacity_reservation_problem
from constructs_llm.hosting.components.endpoint_network import EndpointNetwork
from constructs_llm.hosting.components.endpoint_rules import HostingPlan, hosting_problems
from constructs_llm.hosting.components.plan import AdapterPlan, ComponentEndpointPlan, ComponentPlan
from constructs_llm.hosting.container_writes import component_endpoint_writes
from constructs_llm.hosting.endpoint_base import EndpointAttributes
from constructs_llm.hosting.endpoint_logs import EndpointLogs, create_log_group, endpoint_logs_of
from constructs_llm.hosting.metrics_config import (
    MetricsPlan,
    detailed_described,
    metrics_problems,
)
from constructs_llm.hosting.name_clash import claim_endpoint_name
from constructs_llm.hosting.names import fleet_variant_name, name_problem
from constructs_llm.hosting.plan import VariantPlan, pools_of
from constructs_llm.hosting.production_variant import (
    ENDPOINT_FEATURES,
    production_variant,
    variant_features,
)
from constructs_llm.hosting.routing import DEFAULT as DEFAULT_ROUTING
from constructs_llm.hosting.routing import (
    Routing,
    routing_problem,
    routing_schema_warning,
    single_instance_note,
)
from constructs_llm.hosting.rules import rule_problems
from constructs_llm.hosting.stack_size import watch_stack_size
from constructs_llm.hosting.storage import (
    kms_problem,
    volume_problem,
    waive_nvme_volume_key,
)
from constructs_llm.model.network import grant_network_interfaces
from constructs_llm.notes import add_note, quota_note
from constructs_llm.operations.capacity_notes import fleet_capacity_note
from constructs_llm.operations.deployment import Surge
from constructs_llm.problems import Problem, Problems
from constructs_llm.region_availability import assert_available, availability_problems
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.scope_facts import path_of
from constructs_llm.sizing.copy_demand import CopyDemand
from constructs_llm.sizing.instance_prices import PricePerHour, price_problems, prices_of
from constructs_llm.sizing.timeouts import timeout_problem
from constructs_llm.synth_hook import render_at_synth
from constructs_llm.updates.rules import rule
from constructs_llm.values import all_ints, positive_int_problem

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms


class HostedComponent(Protocol):
    """An ``InferenceComponent`` as its endpoint records it: its node and its plan."""

    @property
    def node(self) -> Node: ...

    @property
    def plan(self) -> ComponentPlan: ...


class HostedAdapter(Protocol):
    """An adapter component as its base's endpoint records it: its node and its plan."""

    @property
    def node(self) -> Node: ...

    @property
    def plan(self) -> AdapterPlan: ...


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

    Components register with :meth:`add_component` and adapters with :meth:`add_adapter`
    (each does so when created), which only record them, in two registries. At synth the
    endpoint checks what its components must share (one host AMI, one network, the routing,
    a fleet their copies fit: ``hosting/components/endpoint_rules.py``), once, over them in
    construct-path order, so a problem names the same component whatever order they were
    created in; then it renders, in that order, what depends on them: its variant's host AMI,
    the grants on its role and on their models' roles, and its capacity note.

    The execution role is SageMaker's for the endpoint itself: it may write the endpoint's log
    group and its components' (``hosting/container_writes.py``; the endpoint's is scoped to its
    name when ``endpoint_name`` is given) and put metrics in the endpoint and
    inference-component namespaces only, plus the KMS key when one is given. Each component's
    model keeps its own role for its image and weights, with the same writes.

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
        seconds; with ``detailed_observability``, the engine's, GPU and host metrics too.
        @default SageMaker's 60 s
    :param detailed_observability: SageMaker's detailed observability, always rendered: the
        components' engine metrics, per-GPU and host metrics in CloudWatch, queried with PromQL
        (as ``LlmEndpoint``'s; see ``hosting/metrics_config.py``); the components' engine
        alarms need it. @default True
    :param capacity_reservation: the ARN of a SageMaker training plan reserved for an
        endpoint (``…:training-plan/<name>``) the fleet's instances launch into, only there
        (no on-demand fallback; when the plan's window ends the endpoint stops serving): keep
        ``max_instances`` within it. @default none (on-demand)
    :param logs: the endpoint's log group, created by the stack before the endpoint, as
        ``LlmEndpoint``'s: ``EndpointLogs(...)``, ``True`` or ``False``; only with
        ``endpoint_name``. @default as ``LlmEndpoint``'s (the app's context
        ``"constructs-llm:endpointLogGroups"``)
    :param routing: how requests to each component are spread over its copies and the
        instances they run on (``RoutingConfig`` on the variant and its pools):
        ``Routing.least_outstanding_requests()``, ``Routing.random()``,
        ``Routing.prefix_aware(prefix_length=, concurrency_threshold=)`` (needs
        ``max_instances`` of two or more) or ``Routing.kv_aware()`` (every component on the vLLM
        DLC). @default least outstanding requests
    :param price_per_hour: what one instance costs, in USD per hour, as the sizing command's
        ``--price`` takes it: one number for one instance type, or one per pool's type
        (``{"ml.g5.12xlarge": 7.09, "ml.g6.12xlarge": 4.60}``, a type left out unpriced). The
        capacity note then gives each priced type's cost per month at the fleet's floor and at
        ``max_instances``. No price ships with the library. @default none (instance-hours only)
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
        detailed_observability: bool = True,
        capacity_reservation: str | None = None,
        logs: EndpointLogs | bool | None = None,
        routing: Routing | None = None,
        price_per_hour: PricePerHour | None = None,
    ) -> None:
        super().__init__(scope, id)
        self._path = self.node.path  # each component's checks name it
        problems = Problems(f"InferenceComponentEndpoint '{self._path}'")
        problems.add(routing_problem(routing))
        problems.add(role_problem("role", role))
        problems.add(key_problem("kms_key", kms_key))
        parsed, found = InstancePools.parse(instance_type)
        problems.extend(found)
        problems.raise_if_any()  # nothing below can be checked without them
        pools = problems.require(parsed)
        problems.add(provision_timeout_problem(provision_timeout, pools))
        problems.extend(
            metrics_problems(enhanced_metrics, metric_publish_frequency, detailed_observability)
        )
        problems.add(capacity_reservation_problem(capacity_reservation))
        problems.add(positive_int_problem("min_instances", min_instances, minimum=0))
        problems.add(positive_int_problem("max_instances", max_instances))
        if all_ints(min_instances, max_instances) and min_instances > max_instances:
            problems.add(_min_instances_above_max(min_instances, max_instances))
        problems.add(timeout_problem("health_check_timeout", health_check_timeout))
        problems.add(name_problem("endpoint_name", endpoint_name))
        log_settings, logs_problem = endpoint_logs_of(self, logs, endpoint_name)
        problems.add(logs_problem)
        for inst in pools.instance_types:
            problems.add(volume_problem(inst, volume_size))
            problems.add(kms_problem(inst, kms_key))
        problems.extend(price_problems(price_per_hour, pools.instance_types))
        problems.raise_if_any()  # the plan's numbers are well formed from here on
        #: USD per instance-hour by instance type, as given (``price_per_hour``).
        self._prices = prices_of(price_per_hour, pools.instance_types)
        self.plan = ComponentEndpointPlan(
            variant=VariantPlan(
                name=fleet_variant_name(pools),
                pools=pools_of(pools.placements),
                listed=pools.listed,
                # The API needs at least one instance to create the endpoint, even when
                # scaling may later release them all.
                instance_count=max(1, min_instances),
                weight=None,
                volume_size=volume_size,
                provision_timeout=provision_timeout,
                capacity_reservation=capacity_reservation,
                managed_instances=(min_instances, max_instances),
                routing=routing if isinstance(routing, Routing) else DEFAULT_ROUTING,
            ),
            metrics=MetricsPlan(
                enhanced_metrics,
                metric_publish_frequency,
                detailed_observability,
                described=detailed_described(pools.instance_types, asynchronous=False),
            ),
            health_check_timeout=health_check_timeout,
            kms_key=kms_key,
            endpoint_name=endpoint_name,
        )
        problems.extend(rule_problems(self.plan))
        features = [f for f in ENDPOINT_FEATURES if f != "AWS::SageMaker::Model"]
        features += variant_features([self.plan.variant])
        problems.extend(availability_problems(Stack.of(self).region, features))
        problems.raise_if_any()
        assert_available(self, features)
        claim_endpoint_name(self, endpoint_name, problems.subject)
        #: What it hosts, by construct path: its components, and the adapters on them.
        self._components: dict[str, HostedComponent] = {}
        self._adapters: dict[str, HostedAdapter] = {}
        variant = self.plan.variant
        note = single_instance_note(variant.routing, "its fleet", max_instances)
        if note is not None:
            add_note(self, note)
        schema = routing_schema_warning(variant.routing)
        if schema is not None:
            warn(self, SynthWarning(WarningId.ROUTING_SCHEMA, schema))

        self.role: iam.IRole = role or ExecutionRole(
            self, "Role", description="Execution role of an inference-component endpoint"
        )
        grant_container_writes(self.role, component_endpoint_writes(endpoint_name))
        self.config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            execution_role_arn=self.role.role_arn,
            production_variants=[],  # rendered at synth (its host AMI is its components')
            kms_key_id=kms_key.key_arn if kms_key else None,
            metrics_config=self.plan.metrics.config(),
        )
        # The role's policy must exist before SageMaker assumes it, and outlive the endpoint.
        depend_on_policies(self.config, self.role)
        waive_nvme_volume_key(self.config, [pools.first.instance_type])
        grant_volume_key(kms_key, [self.role])
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
        )
        #: The endpoint's log group, when the stack creates it (``logs=``); else None.
        self.log_group = (
            create_log_group(self, self.resource, endpoint_name, log_settings)
            if log_settings is not None and endpoint_name is not None
            else None
        )
        self._annotate()
        render_at_synth(self, self._render)
        watch_stack_size(self)

    # -- what it is -----------------------------------------------------------------------------

    @property
    def variant_name(self) -> str:
        """The variant its components are created on."""
        return self.plan.variant.name

    @property
    def enhanced_period(self) -> Duration | None:
        """How often its enhanced metrics arrive (None: enhanced metrics off)."""
        return self.plan.metrics.enhanced_period

    @property
    def capacity(self) -> CopyDemand | None:
        """What one instance offers components (None when the instance type is unknown); with
        instance pools, one instance of the priority-1 pool."""
        return CopyDemand.capacity_of(self.plan.variant.first.instance_type)

    @property
    def components(self) -> list[ComponentPlan]:
        """The plans of the inference components it hosts (adapters aside), in construct-path
        order."""
        return [self._components[path].plan for path in sorted(self._components)]

    # -- its components -------------------------------------------------------------------------

    def add_component(self, component: HostedComponent) -> None:
        """Hosts ``component`` (an ``InferenceComponent`` calls this when it is created). It
        only records it: what the components must share is checked, and what the endpoint
        does for them (host AMI, grants, capacity note) rendered, at synth, in construct-path
        order."""
        self._components[path_of(component)] = component

    def add_adapter(self, adapter: HostedAdapter) -> None:
        """Hosts ``adapter`` (an adapter component calls this when it is created, on its base's
        endpoint). It only records it: the read of its archive is granted at synth."""
        self._adapters[path_of(adapter)] = adapter

    @property
    def hosting(self) -> HostingPlan:
        """Its plan and those of the components it hosts, in construct-path order: what the
        checks that span its components read."""
        plans = {path: c.plan for path, c in self._components.items()}
        return HostingPlan.of(self._path, self.plan, plans)

    # -- rendered at synth ----------------------------------------------------------------------

    def _render(self) -> None:
        """The checks that span its components, then what depends on them, in construct-path
        order: the variant (its host AMI is theirs), the network their models agree on
        (isolation and VPC), the read grants and log groups of its role, the writes and volume
        key their models' roles need (asked of the models), and the capacity note; components
        first, then adapters."""
        hosting = self.hosting
        problems = Problems(f"InferenceComponentEndpoint '{self._path}'")
        problems.extend(hosting_problems(hosting))
        problems.raise_if_any()
        components = [c.plan for c in hosting.components]
        adapters = [self._adapters[path].plan for path in sorted(self._adapters)]
        ami = next((a for c in components if (a := c.binding.inference_ami_version)), None)
        self.config.production_variants = [production_variant(self.plan.variant, ami=ami)]
        if components:  # the network its components' models agree on (checked above)
            network = EndpointNetwork.of(components[0].model)
            self.config.enable_network_isolation = True if network.isolated else None
            self.config.vpc_config = network.config_vpc()
            if network.vpc_config is not None:
                grant_network_interfaces(self, self.role)
        if components:  # the endpoint's fleet is now fixed by what it hosts
            key = self.plan.variant.fleet_key
            change = _component_fleet_change(self, key)
            warn(self, SynthWarning(WarningId.COMPONENT_FLEET, change, detail=key))
        name = self.plan.endpoint_name
        names = [c.component_name for c in components]
        grant_container_writes(self.role, component_endpoint_writes(name, names))
        for component in components:
            # A component's model is created before its component, not before this endpoint:
            # its role can name the endpoint's group even when CloudFormation generates the
            # name (unless it is this endpoint's own role, which the config waits for).
            known = name
            if known is None and component.model.role is not self.role:
                known = self.resource.attr_endpoint_name
            writes = component_endpoint_writes(known, [component.component_name])
            component.model.grant_container_writes(writes)
            component.model.grant_volume_key(self.plan.kms_key)
            for binding in component.bindings:
                binding.grant_read(self.role)
        for adapter in adapters:
            adapter.source.grant_read(self, self.role)
            adapter.model.grant_adapter_read(adapter.source, self)
        # The config waits for every policy of its role, those added here included (and, for
        # a role of the caller's, the policies of this endpoint's that hold its wildcards), and
        # for the prefix reads, which sit in a policy of each model's, attached to this role
        # too: once, when every grant is in.
        depend_on_policies(self.config, self.role, self, *(c.model for c in components))
        note = fleet_capacity_note(
            self.plan.variant.fleet_name,
            min_instances=self.plan.min_instances,
            max_instances=self.plan.max_instances,
            capacity=self.capacity,
            components=components,
            prices=self._prices,
        )
        add_note(self, note)

    def _annotate(self) -> None:
        # Every pool may be the one SageMaker provisions the whole fleet from, old and new.
        surge = _config_update_surge(self.plan.max_instances)
        for inst in self.plan.variant.instance_types:
            add_note(self, quota_note(inst.name, self.plan.max_instances, surge))
        for inst in self.plan.variant.instance_types:
            if not inst.known:
                unknown = unknown_instance_type(inst, for_components=True)
                warn(self, SynthWarning(WarningId.UNKNOWN_INSTANCE_TYPE, unknown))
        if self.plan.min_instances == 0:
            zero = _min_instances_zero_region()
            warn(self, SynthWarning(WarningId.MIN_INSTANCES_ZERO_REGION, zero))


#: The update rule the component fleet guard words, which check_update cites too.
_MOVE = rule("component-move")


def _component_fleet_change(endpoint: InferenceComponentEndpoint, key: str) -> str:
    """Why the instance type of an endpoint with components cannot change, and the way that
    works: a new endpoint with new components."""
    return (
        f"InferenceComponentEndpoint '{endpoint.node.path}' hosts inference components on "
        f"{endpoint.plan.variant.fleet.describe()} (variant '{endpoint.variant_name}'). A new "
        "instance_type "
        "renames that variant, on which each component was created (CreateInferenceComponent "
        "VariantName: 'The name of an existing production variant where you host the "
        "inference component'), and UpdateInferenceComponent cannot move a component (it "
        f"takes no VariantName or EndpointName: {_MOVE.citation}), so the change cannot "
        "deploy in place (check_update's rule component-move). Move to "
        "new hardware with a new endpoint: an InferenceComponentEndpoint and its "
        "InferenceComponents under new construct ids (and new endpoint_name and "
        "inference_component_name if set), in one deploy: CloudFormation creates them, points "
        "the invokers at them, then deletes the old components before the old endpoint. Once "
        f"this fleet is deployed, or for a new endpoint, acknowledge "
        f"Annotation::{WarningId.COMPONENT_FLEET.value}:{key}; another instance type warns "
        "again under its own id"
    )


def _config_update_surge(max_instances: int) -> Surge:
    """What an update of the endpoint's own config (its instance counts, host AMI, volume)
    runs beside the fleet: UpdateEndpoint "deploys the EndpointConfig specified in the
    request to a new fleet of instances" and deletes the old ones after the shift (botocore
    ``UpdateEndpoint``), up to ``max_instances`` of them. Component updates place their new
    copies within ``max_instances`` (managed instance scaling's bound), so they add none."""
    return Surge(
        max_instances,
        "while an update of the endpoint's config runs a new fleet beside the old",
    )


def _min_instances_above_max(low: int, high: int) -> Problem:
    return Problem.of(
        "min_instances",
        low,
        f"min_instances ({low}) is above max_instances ({high});",
        "lower min_instances or raise max_instances",
    )


def _min_instances_zero_region() -> str:
    return (
        "min_instances=0 (MinInstanceCount 0) is rejected in some regions (reported in "
        "eu-west-3: 'Min instance count needs to be greater than 0 for enabled managed "
        "instance scaling'); if CreateEndpointConfig fails there, use min_instances=1 "
        "(components can still scale their copies to zero)"
    )
