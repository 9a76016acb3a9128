"""LlmModel: an LLM's definition (source, engine, token limits, env, role, network), bound by
endpoints and inference components to the hardware they give it (a ``ModelBinding`` per
placement). The placements its hosts record get a SageMaker Model each, which the model
renders in its own scope (``model_resource.py``); hosts name them through ``binding.model_name``
and ask the model for the grants its role needs (``grant_container_writes`` and the others)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import jsii
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm.cdk_values import (
    grantee_problem,
    role_problem,
    security_groups_problems,
    subnets_problem,
    vpc_problem,
)
from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.engines.engine import ENGINE_FIX, Engine
from constructs_llm.engines.tools import ToolCalling
from constructs_llm.errors import SizingError
from constructs_llm.execution_role import (
    ContainerWrites,
    ExecutionRole,
    grant_container_writes,
    grant_volume_key,
)
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement, placement_problems
from constructs_llm.model.binding import Definition, Derivation
from constructs_llm.model.binding import derive as derive_on
from constructs_llm.model.model_resource import render_model
from constructs_llm.model.network import ModelNetwork, egress_problem, subnet_problem
from constructs_llm.model.source import ModelSource, SourceBinding
from constructs_llm.notes import add_note
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.scope_facts import path_of, place, region_of
from constructs_llm.sizing.memory import ModelArchitecture
from constructs_llm.synth_hook import render_at_synth
from constructs_llm.values import (
    bool_problem,
    env_problem,
    int_type_problem,
    positive_int_problem,
    type_problem,
)

if TYPE_CHECKING:
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_kms as kms

    from constructs_llm.sizing.memory import MemoryPlan

#: How to build the right kind of value, for messages about the wrong kind.
MODEL_FIX = "create it with LlmModel(self, 'Model', source=..., engine=..., instance_type=...)"

_PLACEMENT_FIX = "use Placement('ml.g5.2xlarge') or Placement(..., accelerators=1)"
_ARCHITECTURE_FIX = (
    "state the figures with ModelArchitecture(params_billion=..., layers=..., kv_heads=..., "
    "head_dim=..., hidden_size=..., context_length=...)"
)


@jsii.implements(iam.IGrantable)
class LlmModel(Construct):
    """An LLM served with one of the supported engines: a definition that endpoints and
    inference components bind to their hardware.

    ``model.bind(placement)`` is what the model becomes on one placement (an instance type and
    the devices one copy gets): the container env, memory plan and host AMI derived for it,
    checked, once per placement. ``LlmEndpoint`` and ``InferenceComponent`` bind for you, so
    the same model can serve on several instance types or copy sizes, and record each
    placement they serve (``add_placement``); the model renders the ``AWS::SageMaker::Model``
    of each recorded placement, in its own scope, when the app synthesizes. The model's own
    ``instance_type`` is its default placement: it is checked when the model is created, and
    its Model keeps the construct id ``Resource``. Every Model has no physical name, so any
    change deploys as a replacement in one update. The execution role gets exactly the reads
    the image and weights need, and each endpoint that serves the model asks it to grant that
    endpoint's log group and metric namespace (``grant_container_writes``) when it renders.

    :param source: where the weights come from (``ModelSource.hugging_face`` / ``s3`` / ...).
    :param engine: the serving engine (``Engine.tgi()``, ``Engine.lmi()``, ...).
    :param instance_type: the default placement (the whole instance), checked at once.
        @default none: every endpoint and component then states its own instance type
    :param max_input_tokens: longest prompt accepted. @default the engine's default
    :param max_total_tokens: longest prompt + generation. @default the engine's default
    :param env: extra container environment, checked against the derived one. @default none
    :param role: execution role: the image pull and weight reads are added to it, the log and
        metric writes of its endpoints are not (``hosting/container_writes.py`` lists them).
        @default a new role with only the permissions it needs
    :param vpc: run the container in this VPC. @default no VPC
    :param vpc_subnets: subnets in ``vpc``. @default private subnets with egress
    :param security_groups: @default one new security group with no inbound rules
    :param network_isolation: block all container network access (SageMaker still fetches
        S3 weights for the container). @default True for S3 sources, False for Hub models,
        which download at start-up
    :param architecture: the model's architecture for memory sizing. @default looked up by
        Hub model id in the packaged table of popular models
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        source: ModelSource,
        engine: Engine,
        instance_type: str | InstanceType | None = None,
        max_input_tokens: int | None = None,
        max_total_tokens: int | None = None,
        env: Mapping[str, str] | None = None,
        role: iam.IRole | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        network_isolation: bool | None = None,
        architecture: ModelArchitecture | None = None,
    ) -> None:
        super().__init__(scope, id)
        place(self, scope, id)
        self._path = path_of(self)  # read often, by checks of each placement
        problems = Problems(f"LlmModel '{self._path}'")
        problems.add(type_problem("source", source, ModelSource, _source_fix(source)))
        problems.add(type_problem("engine", engine, Engine, ENGINE_FIX))
        problems.extend(
            [
                int_type_problem("max_input_tokens", max_input_tokens),
                int_type_problem("max_total_tokens", max_total_tokens),
                env_problem("env", env),
                role_problem("role", role),
                vpc_problem("vpc", vpc),
                subnets_problem("vpc_subnets", vpc_subnets),
                *security_groups_problems("security_groups", security_groups),
                bool_problem("network_isolation", network_isolation),
                type_problem(
                    "architecture",
                    architecture,
                    ModelArchitecture,
                    _ARCHITECTURE_FIX,
                    optional=True,
                ),
            ]
        )
        problems.raise_if_any()  # nothing below can be checked without them
        architecture = architecture or (
            ModelArchitecture.lookup(source.model_id) if source.model_id else None
        )
        self.definition = Definition(
            # an engine that serves chat and embedding models serves the kind the model is
            engine=engine.for_model_kind(architecture.kind) if architecture else engine,
            source=source,
            max_input_tokens=max_input_tokens,
            max_total_tokens=max_total_tokens,
            env=dict(env or {}),
            architecture=architecture,
        )
        for note in engine.notes:  # the engine's own facts, such as its upstream status
            add_note(self, note)
        self.network_isolation = (
            not source.is_hub if network_isolation is None else network_isolation
        )
        self._derived: dict[Placement, Derivation] = {}
        self._bindings: dict[Placement, ModelBinding] = {}
        self._image_uris: dict[Placement, str] = {}
        self._pulled: set[Placement] = set()
        #: The placements its hosts serve (``add_placement``), each rendered as a Model.
        self._hosted: dict[Placement, ModelBinding] = {}
        self._resources: dict[Placement, sagemaker.CfnModel] = {}
        self.default_placement = self._default_placement(instance_type, problems)
        limits = [
            positive_int_problem("max_input_tokens", max_input_tokens),
            positive_int_problem("max_total_tokens", max_total_tokens),
        ]
        problems.extend(limits)
        problems.extend(self._network_problems(vpc, vpc_subnets, security_groups))
        if self.default_placement is not None and not any(limits):
            problems.extend(self.derive(self.default_placement).problems)
        problems.raise_if_any()

        self.role: iam.IRole = role or ExecutionRole(
            self, "Role", description="Execution role of an LLM model (constructs_llm)"
        )
        if self.default_placement is not None:
            # The default placement's image is granted first, as its model is the usual one.
            self.pull_image(self.default_placement)
        self.source_binding: SourceBinding = source.bind(
            self, self.role, token_env_names=engine.token_env_names
        )
        self.network = (
            ModelNetwork(
                self, role=self.role, vpc=vpc, subnets=vpc_subnets, security_groups=security_groups
            )
            if vpc is not None
            else None
        )

    # -- the definition ---------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        return self.definition.engine

    @property
    def source(self) -> ModelSource:
        return self.definition.source

    @property
    def max_input_tokens(self) -> int | None:
        return self.definition.max_input_tokens

    @property
    def max_total_tokens(self) -> int | None:
        return self.definition.max_total_tokens

    @property
    def env(self) -> dict[str, str]:
        """The extra env given to the model (before what the engine derives)."""
        return dict(self.definition.env or {})

    @property
    def architecture(self) -> ModelArchitecture | None:
        """The figures memory sizing uses (given, or from the packaged table)."""
        return self.definition.architecture

    # -- binding to hardware ---------------------------------------------------------------

    def bind(self, placement: Placement | None = None) -> ModelBinding:
        """This model on ``placement``: the env, memory plan and host AMI derived for that
        hardware, checked; the same binding for the same placement. Creates nothing: the
        construct that hosts the binding renders its SageMaker Model.

        :param placement: @default the model's default placement (its ``instance_type``)
        :raises ConfigurationError: the model cannot run there (each problem named), or no
            placement was given and the model has no default
        """
        if placement is not None and not isinstance(placement, Placement):
            fail(
                f"LlmModel '{self._path}'",
                Problem.of(
                    "placement",
                    placement,
                    f"bind() takes a Placement, got {placement!r}; {_PLACEMENT_FIX}",
                ),
            )
        placement = placement or self._require_default()
        bound = self._bindings.get(placement)
        if bound is None:
            problems = Problems(f"LlmModel '{self._path}' on {placement.describe()}")
            derivation = self.derive(placement)
            problems.extend(derivation.problems)
            problems.raise_if_any()
            bound = self._bindings[placement] = ModelBinding(model=self, derivation=derivation)
        return bound

    def add_placement(self, placement: Placement) -> ModelBinding:
        """Records that a host serves this model on ``placement`` (``LlmEndpoint`` and
        ``InferenceComponent`` call it once they are built) and returns its binding. The model
        renders the placement's SageMaker Model when the app synthesizes, once whichever hosts
        record it; its image is resolved in the stack now, so a region without it fails while
        the app is built.

        :raises ConfigurationError: the model cannot run there (each problem named)
        :raises ImageError: the stack's region has no such image (the fix is named)
        """
        binding = self.bind(placement)
        if not self._hosted:
            render_at_synth(self, self._render, path=self._path)
        if placement not in self._hosted:
            self.image_uri(placement)
            self._hosted[placement] = binding
        return binding

    def model_resource(self, binding: ModelBinding) -> sagemaker.CfnModel:
        """The SageMaker Model this model rendered for ``binding``'s placement.

        :raises ConfigurationError: no host serves the placement, or the app has not
            synthesized yet (the message says which)
        """
        placement = binding.placement
        found = self._resources.get(placement)
        if found is not None:
            return found
        if placement not in self._hosted:
            fail(
                f"LlmModel '{self._path}'",
                Problem.of(
                    "resource",
                    None,
                    f"no endpoint or component serves it on {placement.describe()}, so that "
                    "placement has no SageMaker Model;",
                    "read the binding of the construct that serves it "
                    "(endpoint.variants[i].binding, component.binding)",
                ),
            )
        fail(f"LlmModel '{self._path}'", _not_rendered(placement))

    def problems_for(self, placement: Placement) -> list[Problem]:
        """What stops this model from running on ``placement``, each naming the model and the
        hardware, for the construct that binds it to report with its own problems."""
        fits = f"LlmModel '{self._path}' does not fit on {placement.describe()}"
        runs = f"LlmModel '{self._path}' on {placement.describe()}"
        return [
            p.at(f"{fits if p.kind is SizingError else runs}: ")
            for p in self.derive(placement).problems
        ]

    def derive(self, placement: Placement) -> Derivation:
        """What this model becomes on ``placement`` (env, plan, warnings, problems), without
        creating anything; computed once per placement."""
        found = self._derived.get(placement)
        if found is None:
            found = self._derived[placement] = derive_on(self.definition, placement)
        return found

    def image_uri(self, placement: Placement) -> str:
        """The URI of the image the model runs on ``placement``, resolved in the model's stack,
        where what resolves it (the region's DLC registry mapping and rules) is created on
        first use. A construct that plans to host the model there asks when it is built, so a
        region without the image fails then.

        :raises ImageError: the stack's region has no such image (the fix is named)
        """
        if placement not in self._image_uris:
            self._image_uris[placement] = self.derive(placement).image.uri(self)
        return self._image_uris[placement]

    def pull_image(self, placement: Placement) -> str:
        """``image_uri(placement)``, after granting the execution role pull on its repository
        (once per placement: the construct rendering the placement's Model asks)."""
        uri = self.image_uri(placement)
        if placement not in self._pulled:
            self._pulled.add(placement)
            self.derive(placement).image.grant_pull(self, self.role)
        return uri

    # -- rendered at synth ------------------------------------------------------------------

    def _render(self) -> None:
        """The SageMaker Model of each placement its hosts recorded, in the order of the
        Models' paths (their construct ids), whichever host recorded each first."""
        hosted = sorted(self._hosted.values(), key=lambda b: b.construct_id)
        for binding in hosted:
            image = self.pull_image(binding.placement)
            self._resources[binding.placement] = render_model(
                self,
                binding.construct_id,
                role=self.role,
                image=image,
                environment=binding.environment,
                source=self.source_binding,
                network_isolation=self.network_isolation,
                vpc_config=self.network.vpc_config if self.network else None,
                warnings=binding.derivation.warnings,
            )

    # -- grants, network, formats -------------------------------------------------------------

    def grant_container_writes(self, writes: ContainerWrites) -> None:
        """Lets the execution role write where a host's containers write (its log groups and
        metric namespaces: ``hosting/container_writes.py``), if the library created the role;
        a role passed in is its owner's to scope. Each host that serves the model asks when it
        renders."""
        grant_container_writes(self.role, writes)

    def grant_volume_key(self, kms_key: kms.IKey | None) -> None:
        """Lets the execution role use a host's ML storage volume key, if there is one."""
        grant_volume_key(kms_key, [self.role])

    def grant_async_processing(self, processing: AsyncProcessing, scope: Construct) -> None:
        """Lets the execution role do what SageMaker does with it for an asynchronous
        endpoint (``processing``: the endpoint's ``AsyncInference``); a policy the library
        adds for a role passed in goes under ``scope`` (the endpoint)."""
        processing.grant_processing(scope, self.role)

    def grant_adapter_read(self, source: ModelSource, scope: Construct) -> None:
        """Lets the execution role read an adapter its copies load (``source``'s archive), as
        ``source.grant_read`` grants under ``scope`` (the endpoint hosting the adapter)."""
        source.grant_read(scope, self.role)

    @property
    def grant_principal(self) -> iam.IPrincipal:
        """The execution role (``iam.IGrantable``): grant it what the container reads."""
        return self.role

    @property
    def connections(self) -> ec2.Connections:
        """The model's security groups (``ec2.Connections``), to let it reach other resources.

        :raises ConfigurationError: the model runs outside a VPC (pass ``vpc=``)
        """
        if self.network is None:
            fail(
                "",
                Problem.of(
                    "vpc",
                    None,
                    f"LlmModel '{self._path}' has no security groups: it runs outside a VPC;",
                    "pass vpc=... to the LlmModel to manage its network connections",
                ),
            )
        return self.network.connections

    @property
    def stream_format(self) -> StreamFormat:
        return self.engine.stream_format

    @property
    def request_format(self) -> RequestFormat:
        return self.engine.request_format

    @property
    def tool_calling(self) -> ToolCalling:
        """Whether this model's engine serves OpenAI tool calls (and with which parser), from
        the engine's ``tool_calls`` setting, the model family and ``env``; the streaming
        invoker forwards ``tools`` only when it does."""
        return self.engine.tool_calling(family=self.definition.model_family, user_env=self.env)

    def grant_read(self, grantee: iam.IGrantable, placement: Placement | None = None) -> None:
        """Lets ``grantee`` pull this model's image and read its weights, as its role can.

        :param placement: whose image. @default the model's default placement
        """
        problems = Problems(f"LlmModel '{self._path}'.grant_read")
        problems.add(grantee_problem("grantee", grantee))
        problems.add(type_problem("placement", placement, Placement, _PLACEMENT_FIX, optional=True))
        problems.raise_if_any()
        self.derive(placement or self._require_default()).image.bind(self, grantee)
        self.source.grant_read(self, grantee)

    # -- checks -----------------------------------------------------------------------------

    def _default_placement(
        self, instance_type: str | InstanceType | None, problems: Problems
    ) -> Placement | None:
        if instance_type is None:
            return None
        found = placement_problems(instance_type)
        problems.extend(found)
        return None if found else Placement(instance_type)

    def _network_problems(
        self,
        vpc: ec2.IVpc | None,
        subnets: ec2.SubnetSelection | None,
        security_groups: Sequence[ec2.ISecurityGroup] | None,
    ) -> list[Problem | None]:
        source = self.source
        return [
            _hub_isolated(source.model_id) if self.network_isolation and source.is_hub else None,
            Problem.of(
                "vpc_subnets", subnets, "vpc_subnets was given without vpc;", "pass vpc=... as well"
            )
            if subnets is not None and vpc is None
            else None,
            subnet_problem(vpc, subnets, source) if vpc is not None else None,
            egress_problem(security_groups, source) if vpc is not None else None,
            source.region_problem(region_of(self)[0]),
        ]

    def _require_default(self) -> Placement:
        if self.default_placement is None:
            fail("", _no_default_placement(self._path))
        return self.default_placement


def _source_fix(given: object) -> str:
    hub = repr(given) if isinstance(given, str) else "'org/name'"
    return (
        f"use ModelSource.hugging_face({hub}), ModelSource.s3(bucket, prefix) or "
        "ModelSource.s3_archive(bucket, key)"
    )


def _hub_isolated(model_id: str | None) -> Problem:
    return Problem.of(
        "network_isolation",
        True,
        f"network_isolation=True blocks the download of Hub model '{model_id}'; stage the "
        "weights in S3 and use ModelSource.s3(bucket, prefix), or drop network_isolation",
    )


def _not_rendered(placement: Placement) -> Problem:
    return Problem.of(
        "resource",
        None,
        f"its SageMaker Model for {placement.describe()} is rendered when the app synthesizes;",
        "read it after app.synth() (or Template.from_stack(...))",
    )


class AsyncProcessing(Protocol):
    """What grants an asynchronous endpoint's processing to a model's role
    (``hosting/async_inference.py``: ``AsyncInference``)."""

    def grant_processing(self, scope: Construct, role: iam.IGrantable) -> None: ...


def _no_default_placement(path: str) -> Problem:
    return Problem.of(
        "instance_type",
        None,
        f"LlmModel '{path}' has no default placement (it was created without instance_type);",
        "pass instance_type=... to the LlmModel, or bind it to a placement with "
        "model.bind(Placement(...))",
    )


@dataclass(frozen=True, eq=False)
class ModelBinding:
    """An ``LlmModel`` bound to one :class:`Placement`: the container env, memory plan, host
    AMI and warnings derived for that hardware. A value: get one with
    ``model.bind(placement)``, which returns the same binding for the same placement, so every
    construct hosting a model on one placement shares one SageMaker Model. A host records the
    placements it serves (``model.add_placement``); the model renders their Models when the
    app synthesizes, in its own scope (their logical ids are the model's: ``Resource`` for the
    default placement), and hosts name them through ``model_name``.

    :param model: the model.
    :param derivation: what the placement derived.
    """

    model: LlmModel
    derivation: Derivation

    @property
    def placement(self) -> Placement:
        return self.derivation.placement

    @property
    def construct_id(self) -> str:
        """The id of its SageMaker Model under the model: ``Resource`` for the model's default
        placement, else one derived from the placement alone (``G5-12xlarge-1Device``)."""
        placement = self.placement
        return "Resource" if placement == self.model.default_placement else placement.construct_id

    @property
    def environment(self) -> dict[str, str]:
        """The container environment as synthesized (derived values merged with ``env``, and
        the token's references)."""
        return {**self.derivation.environment, **self.model.source_binding.env}

    @property
    def plan(self) -> MemoryPlan | None:
        """The memory plan of one copy on this placement (None when it cannot be made)."""
        return self.derivation.plan

    @property
    def inference_ami_version(self) -> str | None:
        """The host AMI the image needs on this hardware (None = SageMaker's default)."""
        return self.derivation.inference_ami_version

    @property
    def resource(self) -> sagemaker.CfnModel:
        """Its SageMaker Model, as its model rendered it (when the app synthesizes).

        :raises ConfigurationError: no host serves the placement, or not rendered yet (the
            message says which)
        """
        return self.model.model_resource(self)

    @property
    def model_name(self) -> str:
        """The generated name of its SageMaker Model (a CloudFormation attribute), once
        rendered."""
        return self.resource.attr_model_name

    def shares_model_with(self, other: ModelBinding) -> bool:
        """One SageMaker Model serves both (see :meth:`Derivation.shares_model_with`)."""
        return self.model is other.model and self.derivation.shares_model_with(other.derivation)

    def grant_read(self, grantee: iam.IGrantable) -> None:
        """Lets ``grantee`` pull this binding's image and read the weights, as the role can."""
        self.derivation.image.bind(self.model, grantee)
        self.model.source.grant_read(self.model, grantee)
