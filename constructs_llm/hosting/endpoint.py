"""LlmEndpoint: a real-time SageMaker endpoint serving one LlmModel on one instance type (or on
instance pools: a list of types in order of preference), or several models and instance types
as weighted variants (with an optional shadow).

The endpoint's plan is built and checked when it is created; it creates what is its own (the
Endpoint, the config it names, scaling, alarms, notes), and at synth what depends on other
constructs (``constructs_llm.synth_hook``): the grants its models' roles need, asked of the
models, then the config's variants, naming the SageMaker Models the models rendered."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from aws_cdk import Duration, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm.cdk_values import key_problem
from constructs_llm.contract import ModelKind, RequestFormat, StreamFormat
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath, least_served
from constructs_llm.hardware.pools import GUIDE as POOLS_GUIDE
from constructs_llm.hardware.pools import InstanceTypes
from constructs_llm.hosting.async_inference import (
    AsyncInference,
    alarms_on_async,
    async_inference_problem,
)
from constructs_llm.hosting.container_writes import endpoint_writes
from constructs_llm.hosting.endpoint_base import EndpointAttributes, grant_invoke
from constructs_llm.hosting.endpoint_logs import EndpointLogs, create_log_group, endpoint_logs_of
from constructs_llm.hosting.endpoint_variant import EndpointVariant
from constructs_llm.hosting.fleet_change import (
    FleetChange,
    async_toggle_warning,
    fleet_change_of,
    fleet_endpoint_name,
    fleet_endpoint_prefix,
    named_endpoint_problem,
)
from constructs_llm.hosting.metrics_config import (
    MetricsPlan,
    detailed_described,
    metrics_problems,
)
from constructs_llm.hosting.name_clash import claim_endpoint_name
from constructs_llm.hosting.names import generated_name, name_problem
from constructs_llm.hosting.openai_route import OffersOpenAiRoute, OpenAiRoute
from constructs_llm.hosting.plan import EndpointPlan, VariantPlan
from constructs_llm.hosting.production_variant import (
    ENDPOINT_FEATURES,
    production_variant,
    variant_features,
)
from constructs_llm.hosting.routing import DEFAULT as DEFAULT_ROUTING
from constructs_llm.hosting.routing import (
    Routing,
    kv_aware_problem,
    routing_problem,
    routing_schema_warning,
    runs_vllm_dlc,
    single_instance_note,
)
from constructs_llm.hosting.rules import rule_problems
from constructs_llm.hosting.stack_size import watch_stack_size
from constructs_llm.hosting.storage import waive_nvme_volume_key
from constructs_llm.hosting.target import (
    EmbeddingTraits,
    IEndpoint,
    TargetFacts,
    default_served_name,
    embedding_traits_of,
    hosted_facts,
    served_name_problem,
)
from constructs_llm.hosting.variant import Variant, plan_variants, variant_type_problems
from constructs_llm.model.llm_model import LlmModel
from constructs_llm.notes import add_note, memory_plan_note, quota_note
from constructs_llm.operations.alarms import Alarms, LlmAlarms, alarm_settings, create_alarms
from constructs_llm.operations.autoscaling import Autoscaling
from constructs_llm.operations.backlog_scaling import autoscale_on_backlog
from constructs_llm.operations.capacity_notes import variant_capacity_note
from constructs_llm.operations.deployment import (
    DEPLOYMENT_FIX,
    MAX_ROLLBACK_ALARMS,
    Deployment,
    Fleet,
    Surge,
    endpoint_deployment_config,
    rollback_needs_alarms,
    update_surge,
)
from constructs_llm.operations.engine_signals import engine_alarm_problem
from constructs_llm.operations.metrics import DashboardView, VariantMetrics
from constructs_llm.operations.promql_regions import promql_region_problem
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.region_availability import assert_available, availability_problems
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.scope_facts import path_of, place, region_of
from constructs_llm.sizing.instance_prices import PricePerHour, price_problems, prices_of
from constructs_llm.synth_hook import reference_at_synth, render_at_synth
from constructs_llm.updates.rules import rule
from constructs_llm.values import describe, type_problem

if TYPE_CHECKING:
    from aws_cdk import aws_applicationautoscaling as appscaling
    from aws_cdk import aws_kms as kms

    from constructs_llm.engines.engine import Engine


#: SageMaker's guide on updating endpoints that use autoscaling: the source of the update rule
#: the fleet guard words (``constructs_llm/updates/rules.py``), which check_update cites too.
_SCALING_UPDATE_GUIDE = rule("autoscaled-variant").citation


class LlmEndpoint(EndpointAttributes, VariantMetrics, OffersOpenAiRoute, Construct):
    """An EndpointConfig and Endpoint serving one ``LlmModel`` on GPU or Inferentia instances,
    or several as weighted variants (``variants=[Variant(...), ...]``, ``shadow=Variant(...)``).

    The endpoint builds its plan (``endpoint.plan``: its variants, their pools and the model
    bound to each, ``hosting/plan.py``) and checks it, with the rules that tie features
    together (``hosting/rules.py``), when it is created: the model's env and memory plan are
    derived for each instance type, and a model served on two instance types gets one
    SageMaker Model for each, rendered by the model when the app synthesizes. Only the
    Endpoint may carry a physical name; the EndpointConfig is replaced on every change, so
    model, image, env and instance-type changes deploy in one ``cdk deploy``. The variant is
    named after the instance type. With autoscaling, an instance-type change removes a variant
    registered with Application Auto Scaling, which SageMaker refuses in an endpoint update
    (``hosting/fleet_change.py``): with ``FleetChange.NEW_ENDPOINT`` the Endpoint is named
    after its path and fleet, so that change replaces it in one deploy (CloudFormation creates
    the new endpoint and scalable target, then deletes the old ones); with
    ``FleetChange.TWO_DEPLOYS`` it takes two deploys (first ``autoscaling=None``), and each
    autoscaled variant warns so under an id naming its fleet
    (``constructs-llm:autoscaled-fleet:<fleet>``), which a new instance type changes.

    With ``variants`` each ``Variant`` is a model on an instance type with its share of the
    traffic, its own autoscaling and metrics (``endpoint.variants[i]``); a variant is named
    after its model and instance type, so an instance-type change is a new variant there too.
    ``shadow`` adds a shadow variant that gets a copy of the requests (its answers are not
    returned), with exactly one production variant as SageMaker requires. The per-variant
    arguments (``model`` to ``autoscaling``) then go on each ``Variant``.

    :param model: the model to serve. @default none: give ``variants`` instead
    :param instance_type: one type, or a list of up to 5 in order of preference (instance
        pools: SageMaker provisions the first and falls back to the next when a type has no
        capacity; the model is bound to, and checked on, each). @default the model's
        ``instance_type`` (its default placement)
    :param provision_timeout: with instance pools, how long SageMaker may try the pools for
        capacity before the deploy or scale-out fails (5-60 minutes). @default SageMaker's
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
    :param variants: production variants (1-10), instead of ``model``. @default none
    :param shadow: a shadow variant, next to exactly one production variant. @default none
    :param served_model_name: the name OpenAI clients send as ``model`` to a
        ``StreamingInvoker``. @default the Hub id of the weights, else the model's id; with
        variants of several models, the endpoint's id
    :param deployment: how updates roll out (``Deployment.canary(...)``, ``linear``,
        ``all_at_once``, ``rolling``), rolled back by the endpoint's alarms. It guards updates
        that keep each variant's instance type; the Endpoint then gets a physical name
        (generated from its path unless ``endpoint_name`` is given), which its alarms name.
        @default SageMaker's blue/green update with all traffic shifted at once and no bake
    :param alarms: the default alarms of each production variant (``endpoint.alarms`` for the
        first, ``endpoint.variants[i].alarms``): ``True``, ``Alarms(...)`` for other thresholds
        and an SNS topic, or ``False`` for none. @default True
    :param enhanced_metrics: CloudWatch metrics per instance and per GPU (``MetricsConfig``),
        which multiply the metric series and so what alarms, dashboards and queries on them
        cost (see ``hosting/metrics_config.py``). @default False
    :param metric_publish_frequency: how often SageMaker publishes the utilization metrics,
        and the invocation metrics with ``enhanced_metrics``: 10, 30, 60, 120, 180, 240 or 300
        seconds; with ``detailed_observability``, the engine's, GPU and host metrics too.
        @default SageMaker's 60 s
    :param detailed_observability: SageMaker's detailed observability
        (``MetricsConfig.EnableDetailedObservability``, always rendered): an OpenTelemetry
        collector on each instance scrapes the engine's Prometheus metrics (KV cache, requests
        waiting and running, time to first token, inter-token latency), per-GPU and host
        metrics, into the account's CloudWatch as OpenTelemetry metrics, queried with PromQL.
        SageMaker charges nothing; CloudWatch bills the ingestion at its OpenTelemetry rates
        (see ``hosting/metrics_config.py``). The engine alarms need it. @default True
        (SageMaker's own default for configs created after 2026-06-17)
    :param capacity_reservation: the ARN of a SageMaker training plan reserved for an
        endpoint (``…:training-plan/<name>``) the instances launch into, only there (no
        on-demand fallback; when the plan's window ends the endpoint stops serving); with
        ``variants``, give it to each ``Variant``. @default none (on-demand)
    :param routing: how requests are spread over the instances of every variant and instance
        pool (``RoutingConfig``): ``Routing.least_outstanding_requests()``,
        ``Routing.random()``, ``Routing.prefix_aware(prefix_length=, concurrency_threshold=)``
        (requests sharing a prompt prefix to the same instance; two instances or more) or
        ``Routing.kv_aware()`` (the vLLM DLC only). @default least outstanding requests
    :param async_inference: queue requests instead of answering them while the caller waits
        (``AsyncInference(output=bucket, ...)``): answers go to S3, a request may run up to an
        hour, and ``Autoscaling(min_capacity=0, ...)`` scales on the backlog, down to zero
        instances. One production variant, no shadow; ``grant_invoke_async`` for callers.
        @default real-time
    :param fleet_change: how an instance-type (or pools) change reaches an autoscaled
        endpoint: ``FleetChange.NEW_ENDPOINT`` (a new endpoint, in one deploy; the Endpoint's
        name follows its path and fleet, so ``endpoint_name`` cannot be given) or
        ``FleetChange.TWO_DEPLOYS``. No effect without autoscaling, except on an asynchronous
        endpoint, which ``NEW_ENDPOINT`` names after its mode (``-async``) so that turning
        async inference on or off replaces it (``hosting/fleet_change.py``). @default
        ``NEW_ENDPOINT`` where the app's context sets
        ``"constructs-llm:newEndpointOnFleetChange": true`` (new apps' ``cdk.json``), else
        ``TWO_DEPLOYS``, so upgrading the library never renames a deployed endpoint
    :param price_per_hour: what one instance costs, in USD per hour, as the sizing command's
        ``--price`` takes it: one number for an endpoint of one instance type, or one per type
        (``{"ml.g6e.2xlarge": 2.24, "ml.g5.4xlarge": 2.03}``, a type left out unpriced). The
        capacity note then gives each priced type's cost per month at the minimum and maximum
        instance count. No price ships with the library. @default none (instance-hours only)
    :param logs: the endpoint's log group, created by the stack before the endpoint:
        ``EndpointLogs(retention=..., encryption_key=..., removal_policy=...)``, ``True`` for
        the defaults, or ``False`` to leave it to SageMaker. Only an endpoint whose name is
        known at synth (``endpoint_name``, or the name a rollout or ``NEW_ENDPOINT`` derives)
        can have one (``hosting/endpoint_logs.py``). @default ``EndpointLogs()`` for such an
        endpoint where the app's context sets ``"constructs-llm:endpointLogGroups": true``
        (new apps' ``cdk.json``), else none, so upgrading the library never creates a group
        SageMaker already created
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        model: LlmModel | None = None,
        instance_type: InstanceTypes | None = None,
        provision_timeout: Duration | None = None,
        instance_count: int | None = None,
        health_check_timeout: Duration | None = None,
        download_timeout: Duration | None = None,
        volume_size: Size | None = None,
        kms_key: kms.IKey | None = None,
        endpoint_name: str | None = None,
        autoscaling: Autoscaling | None = None,
        variants: Sequence[Variant] | None = None,
        shadow: Variant | None = None,
        served_model_name: str | None = None,
        deployment: Deployment | None = None,
        alarms: Alarms | bool = True,
        enhanced_metrics: bool = False,
        metric_publish_frequency: Duration | None = None,
        detailed_observability: bool = True,
        capacity_reservation: str | None = None,
        async_inference: AsyncInference | None = None,
        fleet_change: FleetChange | None = None,
        logs: EndpointLogs | bool | None = None,
        routing: Routing | None = None,
        price_per_hour: PricePerHour | None = None,
    ) -> None:
        super().__init__(scope, id)
        place(self, scope, id)
        problems = Problems(f"LlmEndpoint '{path_of(self)}'")
        problems.add(routing_problem(routing))
        single = variants is None and shadow is None
        one = {
            "model": model,
            "instance_type": instance_type,
            "instance_count": instance_count,
            "health_check_timeout": health_check_timeout,
            "download_timeout": download_timeout,
            "volume_size": volume_size,
            "autoscaling": autoscaling,
            "provision_timeout": provision_timeout,
            "capacity_reservation": capacity_reservation,
        }
        problems.extend(
            metrics_problems(enhanced_metrics, metric_publish_frequency, detailed_observability)
        )
        problems.add(async_inference_problem(async_inference))
        problems.add(
            type_problem("deployment", deployment, Deployment, DEPLOYMENT_FIX, optional=True)
        )
        alarm_props = alarm_settings(alarms, problems)
        problems.add(key_problem("kms_key", kms_key))
        mode, mode_problem = fleet_change_of(self, fleet_change)
        problems.add(mode_problem)
        if single:
            problems.extend(variant_type_problems(one))
        else:
            problems.extend(_per_variant_problems(one, variants))
        problems.raise_if_any()  # nothing below can be checked without them
        queued = async_inference if isinstance(async_inference, AsyncInference) else None
        given = {k: v for k, v in one.items() if v is not None}
        specs = [Variant(**given)] if single else list(variants or ())  # type: ignore[arg-type]
        planned = plan_variants(
            specs,
            shadow=shadow,
            kms_key=kms_key,
            problems=problems,
            single=single,
            asynchronous=queued is not None,
        )
        problems.add(name_problem("endpoint_name", endpoint_name))
        # only a name the user gives can clash: names derived from construct paths are unique
        given_name = endpoint_name
        problems.add(served_name_problem("served_model_name", served_model_name))
        mode = mode or FleetChange.TWO_DEPLOYS
        fleet_prefix = None
        scaled = any(v.autoscaling is not None for v in planned)
        if scaled:
            problems.add(named_endpoint_problem(endpoint_name, fleet_change, mode))
        follows = scaled or queued is not None
        if follows and mode is FleetChange.NEW_ENDPOINT and endpoint_name is None:
            if not problems:
                # A new fleet, or async inference turned on or off, is a new name:
                # CloudFormation replaces the Endpoint instead of calling UpdateEndpoint.
                keys = [v.fleet_key for v in planned] if scaled else []
                endpoint_name = fleet_endpoint_name(self, keys, asynchronous=queued is not None)
                fleet_prefix = fleet_endpoint_prefix(self)
        elif queued is not None:
            # Async inference can only be turned off (or on) by a new endpoint: say how.
            warn(self, async_toggle_warning(path_of(self), endpoint_name))
        if deployment is not None and endpoint_name is None and not problems:
            # The rollback alarms name the endpoint and the endpoint names them: a name known
            # before CloudFormation creates the endpoint breaks that cycle.
            endpoint_name = generated_name(self, "endpoint_name")
        self._logs, logs_problem = endpoint_logs_of(self, logs, endpoint_name)
        problems.add(logs_problem)
        routed = routing if isinstance(routing, Routing) else DEFAULT_ROUTING
        planned = tuple(replace(v, routing=routed) for v in planned)
        self.plan = EndpointPlan(
            variants=tuple(v for v in planned if not v.shadow),
            shadow=next((v for v in planned if v.shadow), None),
            single=single,
            async_inference=queued,
            metrics=MetricsPlan(
                enhanced_metrics,
                metric_publish_frequency,
                detailed_observability,
                described=detailed_described(
                    (t for v in planned for t in v.instance_types), asynchronous=queued is not None
                ),
            ),
            deployment=deployment,
            alarms=alarm_props,
            kms_key=kms_key,
            endpoint_name=endpoint_name,
            fleet_prefix=fleet_prefix,
            served_model_name=served_model_name,
            fleet_change=mode,
        )
        problems.extend(rule_problems(self.plan))
        types = [t for v in planned for t in v.instance_types]
        problems.extend(price_problems(price_per_hour, types))
        problems.add(kv_aware_problem(routed, _engines_off_vllm_dlc(self.plan)))
        engines = [m.engine for m in self._models]
        metrics = self.plan.metrics
        problems.add(
            engine_alarm_problem(
                alarm_props, engines, detailed=metrics.detailed, described=metrics.described
            )
        )
        region, concrete = region_of(self)
        if metrics.detailed and any(engine.signals is not None for engine in engines):
            problems.add(promql_region_problem(region, alarm_props))
        features = [*ENDPOINT_FEATURES, *variant_features(self.plan.hosted)]
        problems.extend(availability_problems(region, features, concrete=concrete))
        if deployment is not None and not problems:
            problems.extend(_rollout_problems(self, self.plan))
        problems.raise_if_any()
        for binding in self.plan.bindings:  # the model renders the Model of each
            binding.model.add_placement(binding.placement)
        #: USD per instance-hour by instance type, as given (``price_per_hour``).
        self._prices = prices_of(price_per_hour, types)
        assert_available(self, features)
        claim_endpoint_name(self, given_name, problems.subject)
        self._note_routing(routed)
        self._create()
        render_at_synth(self, self._render)
        reference_at_synth(self, self._reference)
        watch_stack_size(self, *self._models)

    # -- what is its own, created now --------------------------------------------------------

    def _note_routing(self, routing: Routing) -> None:
        """A note where prefix-aware routing cannot act, a warning where CloudFormation's
        schema does not list the strategy yet."""
        for v in self.plan.hosted:
            most = v.autoscaling.max_capacity if v.autoscaling else v.instance_count
            note = single_instance_note(routing, f"variant {v.name!r}", most)
            if note is not None:
                add_note(self, note)
        schema = routing_schema_warning(routing)
        if schema is not None:
            warn(self, SynthWarning(WarningId.ROUTING_SCHEMA, schema))

    def _create(self) -> None:
        plan = self.plan
        self.config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            production_variants=[],  # rendered at synth (their Models are the models')
            kms_key_id=plan.kms_key.key_arn if plan.kms_key else None,
            metrics_config=plan.metrics.config(),
            async_inference_config=plan.async_inference.config() if plan.async_inference else None,
        )
        waive_nvme_volume_key(self.config, [v.first.instance_type for v in plan.hosted])
        scaled = any(v.autoscaling for v in plan.hosted)
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.config.attr_endpoint_config_name,
            endpoint_name=plan.endpoint_name,
            # Keep the instance counts the autoscaler has set across config updates.
            retain_all_variant_properties=True if scaled else None,
        )
        #: The endpoint's log group, when the stack creates it (``logs=``); else None.
        self.log_group = (
            create_log_group(self, self.resource, plan.endpoint_name, self._logs)
            if self._logs is not None and plan.endpoint_name is not None
            else None
        )
        #: The production variants as deployed, in the order given.
        self.variants = [EndpointVariant(endpoint=self, plan=v) for v in plan.variants]
        #: The shadow variant as deployed, if any.
        self.shadow_variant = (
            EndpointVariant(endpoint=self, plan=plan.shadow) if plan.shadow else None
        )
        for v in self._hosted:
            self._autoscale(v, "ScalableTarget" if plan.single else f"ScalableTarget-{v.name}")
            _note_plans(self, v.plan)
            types = dict.fromkeys(t.name for t in v.plan.instance_types)
            priced = {name: self._prices[name] for name in types if name in self._prices}
            capacity = variant_capacity_note(
                v.plan.fleet_name, v.plan.autoscaling, v.plan.instance_count, priced
            )
            add_note(self, capacity)
            replaced = plan.replaced_on_fleet_change
            pools = _pools_autoscaling(v, replaced) if v.plan.listed else None
            if pools is not None and v.plan.autoscaling is not None:
                warn(self, SynthWarning(WarningId.POOLS_AUTOSCALING, pools))
            if v.plan.autoscaling is not None and not replaced:
                key = v.plan.fleet_key
                change = _autoscaled_fleet_change(v, key)
                warn(self, SynthWarning(WarningId.AUTOSCALED_FLEET, change, detail=key))
        _quota_notes(self, plan)
        for v in self.variants:
            if plan.alarms is not None:
                group, label = ("Alarms", None) if plan.single else (f"Alarms-{v.name}", v.describe)
                v.alarms = create_alarms(
                    self,
                    v,
                    plan.alarms,
                    id=group,
                    label=label,
                    named=plan.deployment is not None,
                    watched=self.resource,
                )
        if plan.async_inference is not None and plan.alarms is not None:
            warn(self, alarms_on_async())
        if plan.deployment is not None:
            self._guard(plan.deployment)

    @property
    def _hosted(self) -> list[EndpointVariant]:
        return [*self.variants, *([self.shadow_variant] if self.shadow_variant else [])]

    def _autoscale(self, variant: EndpointVariant, id: str) -> None:
        """Target tracking on concurrency or invocations, or, asynchronous, on the backlog."""
        scaling = variant.plan.autoscaling
        # The startup (a Duration sum: a jsii call) only where the backlog scaling needs it.
        startup = variant.plan.startup if scaling and self.plan.async_inference else None
        if self.plan.async_inference is None or scaling is None or startup is None:
            variant.autoscale(self, id)
            return
        variant.scalable_target = autoscale_on_backlog(
            self,
            id,
            endpoint_name=self.endpoint_name,
            metric_endpoint_name=self.metric_endpoint_name,
            variant_name=variant.name,
            scaling=scaling,
            startup=startup,
        )

    def _guard(self, deployment: Deployment) -> None:
        rollback = deployment.rollback_alarms
        if rollback is None:  # each production variant's (checked with the props)
            rollback = [a for v in self.variants if v.alarms for a in v.alarms.rollback]
        self.resource.deployment_config = endpoint_deployment_config(
            deployment, alarms=rollback, fleet=_fleet(self.plan.variants)
        )
        for v in self.variants:
            change = (
                _guardrails_pools_change(deployment.describe, v.plan.fleet.describe(), v.name)
                if v.plan.listed
                else _guardrails_hardware_change(
                    deployment.describe, v.plan.first.instance_type.name, v.name
                )
            )
            scaled = ""
            if v.plan.autoscaling is not None:
                scaled = _guarded_and_autoscaled(self.plan.replaced_on_fleet_change)
            warn(self, SynthWarning(WarningId.GUARDED_ROLLOUT_HARDWARE, change + scaled))

    # -- what depends on other constructs, rendered at synth ---------------------------------

    def _render(self) -> None:
        """Where the containers write (this endpoint's log group and metric namespace), asked
        of each model (one per role), so that a Model its model renders after this waits for
        it."""
        plan = self.plan
        for model in self._granted_models:
            writes = endpoint_writes(plan.endpoint_name, fleet_prefix=plan.fleet_prefix)
            model.grant_container_writes(writes)

    def _reference(self) -> None:
        """Once the models have rendered their SageMaker Models: the config's variants, which
        name them, then what the running endpoint needs of the models' roles (the volume key,
        the asynchronous folders), asked of each model."""
        plan = self.plan
        self.config.production_variants = [production_variant(v) for v in plan.variants]
        if plan.shadow is not None:
            self.config.shadow_production_variants = [production_variant(plan.shadow)]
        for model in self._granted_models:
            model.grant_volume_key(plan.kms_key)
        if plan.async_inference is not None:
            for model in self._granted_models:
                model.grant_async_processing(plan.async_inference, self)

    @property
    def _granted_models(self) -> list[LlmModel]:
        """The models of its variants, one per execution role (a role two models share is
        granted once)."""
        return list({id(b.model.role): b.model for b in self.plan.bindings}.values())

    # -- endpoints deployed elsewhere ----------------------------------------------------------

    @staticmethod
    def from_endpoint_name(scope: Construct, id: str, endpoint_name: str) -> IEndpoint:
        """An endpoint deployed elsewhere, by name, to front with a ``StreamingInvoker`` or
        grant invoke on. Its engine is unknown: the invoker sends chat (messages) requests and
        detects the stream framing line by line (``StreamFormat.AUTO``); use
        :meth:`from_endpoint_attributes` to state the engine or formats."""
        from constructs_llm.hosting.imported_endpoint import ImportedEndpoint

        return ImportedEndpoint(scope, id, endpoint_name=endpoint_name)

    @staticmethod
    def from_endpoint_attributes(
        scope: Construct,
        id: str,
        *,
        endpoint_name: str,
        engine: Engine | None = None,
        stream_format: StreamFormat | None = None,
        request_format: RequestFormat | None = None,
        variant_name: str | None = None,
        served_model_name: str | None = None,
        tool_calls: bool | None = None,
    ) -> IEndpoint:
        """An endpoint deployed elsewhere, with what is known of it: ``endpoint_name`` and,
        optionally, ``engine``, ``stream_format``, ``request_format``, ``variant_name``,
        ``served_model_name`` and ``tool_calls`` (see :class:`ImportedEndpoint` for each
        default)."""
        from constructs_llm.hosting.imported_endpoint import ImportedEndpoint

        return ImportedEndpoint(
            scope,
            id,
            endpoint_name=endpoint_name,
            engine=engine,
            stream_format=stream_format,
            request_format=request_format,
            variant_name=variant_name,
            served_model_name=served_model_name,
            tool_calls=tool_calls,
        )

    # -- what it serves (read from the plan) -------------------------------------------------

    @property
    def variant_plan(self) -> VariantPlan:
        """The first production variant (what ``metric_*()`` and ``alarms`` are of)."""
        return self.plan.variants[0]

    @property
    def alarms(self) -> LlmAlarms | None:
        """The first production variant's default alarms (each variant's: ``variants[i]``)."""
        return self.variants[0].alarms

    @property
    def scalable_target(self) -> appscaling.ScalableTarget | None:
        """The first production variant's scalable target (None without autoscaling)."""
        return self.variants[0].scalable_target

    @property
    def enhanced_period(self) -> Duration | None:
        return self.plan.metrics.enhanced_period

    @property
    def detailed_observability(self) -> bool:
        return self.plan.metrics.engine_metrics

    @property
    def facts(self) -> TargetFacts:
        """What an invoker, a dashboard or an alarm reads of the endpoint, from its plan: every
        production variant's pools (a request may reach any of them)."""
        pools = [pool for v in self.plan.variants for pool in v.pools]
        return hosted_facts(self, pools, self.autoscaling)

    @property
    def inference_component_name(self) -> str | None:
        return None

    @property
    def _models(self) -> list[LlmModel]:
        """The production variants' models (a request may reach any of them)."""
        return [b.model for v in self.plan.variants for b in v.bindings[:1]]

    @property
    def stream_format(self) -> StreamFormat:
        """The production variants' framing; ``AUTO`` (per line) when their engines differ."""
        formats = {m.stream_format for m in self._models}
        return formats.pop() if len(formats) == 1 else StreamFormat.AUTO

    @property
    def request_format(self) -> RequestFormat:
        return self._models[0].request_format  # the same for every variant (checked)

    @property
    def chat_completions_path(self) -> ChatCompletionsPath:
        """What every production variant's container answers on ``/v1/chat/completions`` (a
        request through SageMaker's OpenAI route may reach any of them)."""
        return least_served(m.engine.chat_completions_path for m in self._models)

    @property
    def model_kind(self) -> ModelKind:
        return self._models[0].engine.model_kind

    @property
    def served_model_name(self) -> str:
        """``served_model_name`` if given, else the production variants' model name (the Hub
        id, else the model's id), else, for variants of several models, the endpoint's id."""
        names = {default_served_name(m) for m in self._models}
        derived = names.pop() if len(names) == 1 else self.node.id
        return self.plan.served_model_name or derived

    @property
    def variant_names(self) -> tuple[str, ...]:
        """The production variants' names, which ``X-Target-Variant`` may pin."""
        return tuple(v.name for v in self.plan.variants)

    @property
    def max_total_tokens(self) -> int | None:
        """The smallest ``max_total_tokens`` among the production variants' models that set
        one (a request may reach any of them)."""
        known = [m.max_total_tokens for m in self._models if m.max_total_tokens is not None]
        return min(known) if known else None

    @property
    def tool_calls(self) -> bool:
        """Whether every production variant's engine serves tool calls (a request may reach
        any of them; the shadow's answers never reach the client)."""
        return all(m.tool_calling.served for m in self._models)

    @property
    def embedding_traits(self) -> EmbeddingTraits | None:
        """For embedding models: the figures every production variant's model agrees on (a
        request may reach any of them), the smallest per-call input limit; None for chat."""
        found = [embedding_traits_of(m) for m in self._models]
        traits = [t for t in found if t is not None]
        if not traits:
            return None
        limits = [t.max_inputs_per_call for t in traits if t.max_inputs_per_call]
        shapes = {(t.dimensions, t.min_dimensions) for t in traits}
        dims, shortest = shapes.pop() if len(shapes) == 1 else (None, None)
        return EmbeddingTraits(
            dimensions=dims,
            min_dimensions=shortest,
            max_inputs_per_call=min(limits) if limits else None,
        )

    # -- grants -------------------------------------------------------------------------------

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on this endpoint."""
        return grant_invoke(grantee, self.endpoint_arn)

    @property
    def async_inference(self) -> AsyncInference | None:
        """How the endpoint queues requests (its folders, ``input_location`` ...), if it does."""
        return self.plan.async_inference

    @property
    def is_async(self) -> bool:
        """Whether the endpoint queues requests (``async_inference=``)."""
        return self.plan.async_inference is not None

    def grant_invoke_async(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` queue requests on this asynchronous endpoint
        (``InvokeEndpointAsync``), put request bodies in the input folder and read answers and
        failures (see ``AsyncInference``); returns the ``InvokeEndpointAsync`` grant."""
        queued = self.plan.async_inference
        if queued is None:
            fail(
                f"LlmEndpoint '{self.node.path}'",
                Problem.of(
                    "async_inference",
                    None,
                    "grant_invoke_async needs an asynchronous endpoint;",
                    "create it with "
                    "async_inference=AsyncInference(output=bucket), or use grant_invoke(...) for "
                    "this real-time endpoint",
                ),
            )
        return queued.grant_callers(self, grantee, self.endpoint_arn)

    def dashboard_view(self) -> DashboardView:
        """The endpoint's dashboard row: its one variant's metrics, or, with several variants,
        its invokers' row followed by a row per variant (the shadow's included), as SageMaker
        measures each variant and the invokers the endpoint."""
        parts = self._hosted
        if len(parts) == 1:
            return super().dashboard_view()
        return DashboardView(label=f"endpoint, {self.fleet_label}", parts=parts)

    def _openai_route(self) -> OpenAiRoute:
        return OpenAiRoute(
            self,
            invoke_arns=(self.endpoint_arn,),
            plan=self.plan,
        )

    @functools.cached_property
    def metric_endpoint_name(self) -> str:
        """The endpoint's name in its metrics: a name given to the Endpoint as is (its alarms
        then wait for it by ``DependsOn``, ``operations/alarms.py``), else the generated one
        (read once: every metric and alarm asks)."""
        return self.plan.endpoint_name or self.endpoint_name

    def _metric_dimensions(self) -> dict[str, str]:
        return {"EndpointName": self.metric_endpoint_name, "VariantName": self.variant_plan.name}


def _guardrails_hardware_change(describe: str, instance: str, variant: str) -> str:
    return (
        f"{describe} guards updates on {instance} (variant '{variant}'): a new model, image, "
        "env or timeout keeps the variant and rolls out as configured. Changing instance_type "
        "creates a new variant, and SageMaker guards only updates that keep the variant name, "
        "so that deploy shifts all traffic to the new fleet at once, with no canary, bake or "
        "auto-rollback; watch it, or move hardware with a new LlmEndpoint and shift clients"
    )


def _autoscaled_fleet_change(variant: EndpointVariant, key: str) -> str:
    """Why an autoscaled variant's instance type cannot change in one deploy, and how to."""
    pools = (
        " (whether adding, dropping or reordering pools counts as an instance-type change is "
        "not documented: see constructs-llm:pools-autoscaling)"
        if variant.plan.listed
        else ""
    )
    return (
        f"{variant.describe} scales on {variant.fleet_label} (Application Auto Scaling target "
        f"endpoint/<endpoint>/variant/{variant.name}). SageMaker refuses an endpoint update that "
        "changes the instance type of, or removes, a variant registered for autoscaling until "
        f"its scalable target is deregistered ({_SCALING_UPDATE_GUIDE}), and CloudFormation "
        "updates the endpoint before it deletes the old target: a deploy that changes "
        f"instance_type fails, and CloudFormation rolls it back{pools}. Change it in two "
        "deploys: first with autoscaling=None (CloudFormation deregisters the target; set "
        "instance_count to the instances needed meanwhile), then with the new instance_type "
        "and autoscaling. Once this fleet is deployed, or for a new endpoint, acknowledge "
        f"Annotation::{WarningId.AUTOSCALED_FLEET.value}:{key}; another instance type warns "
        "again under its "
        "own id"
    )


def _guarded_and_autoscaled(replaced: bool) -> str:
    if replaced:
        return (
            "; with autoscaling and FleetChange.NEW_ENDPOINT, that deploy replaces the endpoint "
            "(a new name, the new fleet beside the old until the old is deleted), unguarded too"
        )
    return (
        "; with autoscaling, that deploy must follow one with autoscaling=None "
        f"({WarningId.AUTOSCALED_FLEET.value})"
    )


def _per_variant_problems(given: Mapping[str, object], variants: object) -> list[Problem]:
    """With ``variants=``, the one-model arguments belong on each ``Variant``."""
    problems = [
        Problem.of(
            prop,
            value,
            f"{prop}= applies to one variant;",
            "with variants=[...] give it to each Variant(...)",
        )
        for prop, value in given.items()
        if value is not None
    ]
    if variants is None:
        problems.append(
            Problem.of(
                "shadow",
                None,
                "shadow= needs variants=[Variant(...)] with the one production variant",
            )
        )
    elif not isinstance(variants, list | tuple):
        problems.append(
            Problem.of(
                "variants",
                variants,
                f"variants must be a list of Variant(...), got {describe(variants)}",
            )
        )
    elif not variants:
        problems.append(
            Problem.of(
                "variants",
                variants,
                "variants must hold at least one Variant(...), got []",
            )
        )
    return problems


def _rollout_problems(endpoint: Construct, plan: EndpointPlan) -> list[Problem]:
    """What the plan's deployment cannot do on its production variants."""
    deployment, alarms = plan.deployment, plan.alarms
    if deployment is None:
        return []
    production = plan.variants
    instances = [t for v in production for t in v.instance_types]
    inf1 = next((i for i in instances if i.family == "inf1"), instances[0])
    # The default alarms roll the update back unless rollback_alarms names others.
    watched = alarms if deployment.rollback_alarms is None else None
    found = deployment.problems_for(
        _fleet(production),
        instance_type=inf1,
        variants=len(production),
        error_rate=watched.error_rate if watched else None,
    )
    if deployment.rollback_alarms is None:
        if alarms is None:
            found.append(rollback_needs_alarms(endpoint.node.path))
        else:
            per_variant = 2 + (alarms.model_latency is not None)
            if per_variant * len(production) > MAX_ROLLBACK_ALARMS:
                found.append(_too_many_rollback_alarms(len(production), per_variant))
    return found


def _too_many_rollback_alarms(variants: int, each: int) -> Problem:
    return Problem.of(
        "deployment",
        None,
        f"the {variants} production variants have {each} rollback alarms each, "
        f"{variants * each} in all, but a deployment may watch at most 10 (CloudFormation's "
        "limit);",
        "pass Deployment....(rollback_alarms=[...]) with the ones to watch",
    )


def _fleet(variants: Sequence[VariantPlan]) -> Fleet:
    """The instances an update may find across the production variants, and how long a new
    one may take to start."""
    bounds = [
        (v.autoscaling.lowest_min, v.autoscaling.highest_max)
        if v.autoscaling
        else (v.instance_count, v.instance_count)
        for v in variants
    ]
    starts = [v.startup for v in variants if v.startup is not None]
    return Fleet(
        smallest=min(b[0] for b in bounds),
        largest=max(b[1] for b in bounds),
        startup=max(starts, key=lambda d: d.to_seconds()),
    )


def _quota_notes(scope: Construct, plan: EndpointPlan) -> None:
    """One Service Quotas note per instance type: the most instances its variants may run,
    plus what an update runs beside them (a second fleet, or a rolling batch: UpdateEndpoint
    replaces every variant's fleet). Every pool of a variant may be the one SageMaker
    provisions the whole fleet from, old and new alike, so each pool's type needs the
    variant's most and its surge."""
    most: dict[str, int] = {}
    surges: dict[str, Surge] = {}
    for v in plan.hosted:
        count = v.most_instances
        surge = update_surge(plan.deployment, count)
        for inst in v.instance_types:
            most[inst.name] = most.get(inst.name, 0) + count
            extra = surges[inst.name].instances if inst.name in surges else 0
            surges[inst.name] = Surge(extra + surge.instances, surge.how)
    for instance_type, instances in most.items():
        add_note(scope, quota_note(instance_type, instances, surges[instance_type]))


def _note_plans(scope: Construct, variant: VariantPlan) -> None:
    """The memory plan of the variant's model on each of its pools."""
    first = variant.binding
    if not variant.listed:
        if first is not None and first.plan is not None:
            add_note(scope, memory_plan_note(first.plan, per_copy=False))
        return
    for pool in variant.pools:
        plan = pool.binding.plan if pool.binding is not None else None
        if plan is not None:
            where = (pool.priority - 1, len(variant.pools))
            own = variant.model_binding(pool) is not first
            add_note(scope, memory_plan_note(plan, per_copy=False, pool=where, own=own))


def _pools_autoscaling(variant: EndpointVariant, replaced: bool) -> str | None:
    """What to verify when a variant with instance pools scales: a target set for pools of
    different capacities, and, unless a pool change replaces the endpoint (``replaced``),
    whether SageMaker takes a pool change in place."""
    capacities = {
        t.name: f"{t.accelerator_count} x {t.accelerator_memory_gib:.0f} GiB"
        for t in variant.plan.instance_types
        if t.known and t.accelerator_memory_gib is not None
    }
    mixed = ""
    if len(set(capacities.values())) > 1:
        listed = ", ".join(f"{name} {gpus}" for name, gpus in capacities.items())
        mixed = (
            f" The pools differ in capacity ({listed}), and the scaling target is an average "
            "over every instance: set it for the smallest pool, or track a weighted metric per "
            "InstanceType as the guide shows."
        )
    scales = (
        f"{variant.describe} scales over instance pools ({variant.fleet_label}): "
        "SageMaker adds instances from the first pool with capacity and removes the "
        f"lowest-priority pool's first ({POOLS_GUIDE}).{mixed}"
    )
    if replaced:  # a pool change is a new endpoint: no UpdateEndpoint to refuse it
        return scales if mixed else None
    return (
        f"{scales} SageMaker's autoscaling guide fails an update that changes the instance "
        "type of a variant registered for autoscaling, and the pools guide does not say "
        "whether changing the pools does: try adding, dropping or reordering pools on a "
        "staging endpoint first"
    )


def _guardrails_pools_change(describe: str, pools: str, variant: str) -> str:
    return (
        f"{describe} guards updates on {pools} (variant '{variant}'): a new model, image, env "
        "or timeout, and adding, dropping or reordering pools, keep the variant name and roll "
        "out as configured, the new fleet taking whichever pool has capacity. Switching "
        "between one instance type and a list renames the variant, which SageMaker does not "
        "guard: that deploy shifts all traffic to the new fleet at once, with no canary, bake "
        "or auto-rollback"
    )


def _engines_off_vllm_dlc(plan: EndpointPlan) -> dict[str, str | None]:
    """Each model of ``plan`` (its path) and its engine's factory, None where it runs the
    SageMaker AI vLLM DLC (what ``Routing.kv_aware()`` needs)."""
    return {
        path_of(b.model): None
        if runs_vllm_dlc(b.model.engine.factory_name, b.derivation.image.repository_name)
        else f"Engine.{b.model.engine.factory_name}()"
        for b in plan.bindings
    }
