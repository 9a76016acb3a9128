"""LlmModel: a SageMaker Model for an LLM serving engine, with a least-privilege role."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from aws_cdk import Acknowledgment, Annotations, ArnFormat, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm._validation import Problems, positive_int_problem, type_problem
from constructs_llm.container_image import ContainerImage
from constructs_llm.engine import Engine, EngineContext
from constructs_llm.errors import ConfigurationError, SizingError
from constructs_llm.instance_type import InstanceType
from constructs_llm.model_source import ModelSource, SourceBinding
from constructs_llm.sizing import MemoryPlan, ModelArchitecture, plan_memory
from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat

if TYPE_CHECKING:
    from aws_cdk import aws_ec2 as ec2


class LlmModel(Construct):
    """A SageMaker Model serving an LLM with one of the supported engines.

    The engine derives the container environment from the instance type (tensor parallel
    degree = all accelerators, continuous batching, token limits, streaming), the model source
    supplies the weights, and the execution role gets exactly the reads they need.
    The Model has no physical name, so any change deploys as a replacement in one update.

    :param source: where the weights come from (``ModelSource.hugging_face`` / ``s3`` / ...).
    :param engine: the serving engine (``Engine.tgi()``, ``Engine.lmi()``, ...).
    :param instance_type: the instance type the model is sized for (defaults and validation).
    :param max_input_tokens: longest prompt accepted. @default the engine's default
    :param max_total_tokens: longest prompt + generation. @default the engine's default
    :param env: extra container environment, checked against the derived one. @default none
    :param role: execution role. @default a new role with only the permissions it needs
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
        instance_type: str | InstanceType,
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
        _check_kinds(self, source, engine)
        self.instance_type = InstanceType.of(instance_type)
        self.engine = engine
        self.source = source
        self.max_input_tokens = max_input_tokens
        self.max_total_tokens = max_total_tokens
        self.network_isolation = (
            not source.is_hub if network_isolation is None else network_isolation
        )
        self._user_env = dict(env or {})
        self._check_props(vpc, vpc_subnets)
        self.architecture = architecture or (
            ModelArchitecture.lookup(source.model_id) if source.model_id else None
        )
        self.role: iam.IRole = role or self._default_role()
        self.accelerators: int | None = None
        self.plan: MemoryPlan | None = None

        image = self._image = engine.image_for(self.instance_type)
        self.inference_ami_version = host_ami_for(image, self.instance_type)
        image_uri = image.bind(self, self.role)
        self._binding: SourceBinding = source.bind(
            self, self.role, token_env_names=engine.token_env_names
        )
        self.resource = sagemaker.CfnModel(
            self,
            "Resource",
            execution_role_arn=self.role.role_arn,
            enable_network_isolation=self.network_isolation or None,
            vpc_config=self._vpc_config(vpc, vpc_subnets, security_groups),
            primary_container=self._container(image_uri, self._environment(None)),
        )
        # The role's policy must exist before SageMaker pulls the image and weights, and must
        # outlive the model on delete.
        depend_on_policies(self.resource, self.role)
        self._image_uri = image_uri
        if not self.network_isolation:
            self.resource.add_metadata("checkov", {"skip": [_ISOLATION_SKIP]})
        self._annotate()

    @property
    def model_name(self) -> str:
        """The generated name of the SageMaker Model (a CloudFormation attribute)."""
        return self.resource.attr_model_name

    @property
    def stream_format(self) -> StreamFormat:
        return self.engine.stream_format

    @property
    def request_format(self) -> RequestFormat:
        return self.engine.request_format

    @property
    def environment(self) -> dict[str, str]:
        """The container environment as synthesized (derived values merged with ``env``)."""
        return dict(self._env)

    def grant_read(self, grantee: iam.IGrantable) -> None:
        """Lets ``grantee`` pull this model's image and read its weights, as its role can."""
        self._image.bind(self, grantee)
        self.source.grant_read(self, grantee)

    def use_accelerators(self, accelerators: int) -> None:
        """Size the engine for ``accelerators`` devices instead of the whole instance.

        Inference components call this: a copy that gets one of four GPUs must shard over one.
        """
        if self.accelerators is not None and self.accelerators != accelerators:
            raise ConfigurationError(
                f"LlmModel '{self.node.path}' is already sized for {self.accelerators} "
                f"accelerator(s), got {accelerators}; create one LlmModel per accelerator count"
            )
        self.accelerators = accelerators
        self.resource.primary_container = self._container(
            self._image_uri, self._environment(accelerators)
        )

    # -- construction helpers ------------------------------------------------------------

    def _check_props(self, vpc: ec2.IVpc | None, subnets: ec2.SubnetSelection | None) -> None:
        problems = Problems(f"LlmModel '{self.node.path}'")
        problems.add(positive_int_problem("max_input_tokens", self.max_input_tokens))
        problems.add(positive_int_problem("max_total_tokens", self.max_total_tokens))
        if self.network_isolation and self.source.is_hub:
            problems.add(
                f"network_isolation=True blocks the download of Hub model "
                f"'{self.source.model_id}'; stage the weights in S3 and use "
                "ModelSource.s3(bucket, prefix), or drop network_isolation"
            )
        if subnets is not None and vpc is None:
            problems.add("vpc_subnets was given without vpc; pass vpc=... as well")
        if vpc is not None:
            problems.add(_subnet_problem(vpc, subnets, self.source))
        problems.raise_if_any()
        if not self.instance_type.known:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:unknown-instance-type",
                f"{self.instance_type.name} is not in the packaged hardware catalog, so GPU "
                "count, memory fit and volume rules were not checked; verify tensor parallel "
                "degree and memory by hand",
            )

    def _default_role(self) -> iam.Role:
        return execution_role(
            self, "Role", description="Execution role of an LLM model (constructs_llm)"
        )

    def _vpc_config(
        self,
        vpc: ec2.IVpc | None,
        subnets: ec2.SubnetSelection | None,
        security_groups: Sequence[ec2.ISecurityGroup] | None,
    ) -> sagemaker.CfnModel.VpcConfigProperty | None:
        if vpc is None:
            return None
        from aws_cdk import aws_ec2 as ec2

        groups = list(security_groups or [])
        if not groups:
            groups = [
                ec2.SecurityGroup(
                    self,
                    "SecurityGroup",
                    vpc=vpc,
                    description="LLM model containers (constructs_llm); no inbound rules",
                    allow_all_outbound=True,
                )
            ]
        selection = subnets or ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self._grant_vpc_access()
        return sagemaker.CfnModel.VpcConfigProperty(
            security_group_ids=[g.security_group_id for g in groups],
            subnets=_select(vpc, selection).subnet_ids,
        )

    def _grant_vpc_access(self) -> None:
        self.role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=[
                    "ec2:CreateNetworkInterface",
                    "ec2:CreateNetworkInterfacePermission",
                    "ec2:DeleteNetworkInterface",
                    "ec2:DeleteNetworkInterfacePermission",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeVpcs",
                    "ec2:DescribeDhcpOptions",
                    "ec2:DescribeSubnets",
                    "ec2:DescribeSecurityGroups",
                ],
                resources=["*"],
            )
        )

    def _environment(self, accelerators: int | None) -> dict[str, str]:
        ctx = EngineContext(
            instance=self.instance_type,
            accelerators=accelerators,
            model_location=self._binding.model_location,
            revision=self._binding.revision,
            max_input_tokens=self.max_input_tokens,
            max_total_tokens=self.max_total_tokens,
        )
        # Engine and hardware mistakes first: they explain a sizing failure better.
        problems = Problems(f"LlmModel '{self.node.path}'")
        problems.extend(self.engine.validate(ctx, self._user_env))
        problems.raise_if_any()
        self._engine_warnings = self.engine.warnings(ctx, self._user_env)
        ctx = replace(ctx, plan=self._plan(accelerators))
        derived = self.engine.derive_env(ctx)
        self._env = {**derived, **self._user_env, **self._binding.env}
        return self._env

    def _plan(self, accelerators: int | None) -> MemoryPlan | None:
        if self.architecture is None or not self.instance_type.known:
            self.plan = None
            return None
        if self.instance_type.accelerator is None:
            self.plan = None
            return None
        try:
            self.plan = plan_memory(
                self.architecture,
                instance=self.instance_type,
                accelerators=accelerators or self.instance_type.accelerator_count,
                engine=self.engine,
                max_total_tokens=self.max_total_tokens,
            )
        except SizingError as err:
            raise SizingError(f"LlmModel '{self.node.path}': {err}") from None
        return self.plan

    def _container(
        self, image_uri: str, env: Mapping[str, str]
    ) -> sagemaker.CfnModel.ContainerDefinitionProperty:
        return sagemaker.CfnModel.ContainerDefinitionProperty(
            image=image_uri,
            environment=dict(env),
            model_data_url=self._binding.model_data_url,
            model_data_source=self._binding.model_data_source,
        )

    def _annotate(self) -> None:
        for warning in self._engine_warnings:
            Annotations.of(self).add_warning_v2("constructs-llm:engine-setting", warning)
        if self.plan is not None:
            # The plan itself is reported per endpoint or per component copy, which know
            # how many devices serve the model.
            for warning in self.plan.warnings:
                Annotations.of(self).add_warning_v2("constructs-llm:sizing-estimate", warning)
        elif self.instance_type.accelerator is not None and self.architecture is None:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:unknown-model-size",
                f"the size of '{self.source.model_id or 'this model'}' is unknown, so memory "
                "fit was not checked; pass architecture=ModelArchitecture(...) to check it",
            )


#: How to create a model, for messages about the wrong kind of value.
MODEL_FIX = "create it with LlmModel(self, 'Model', source=..., engine=..., instance_type=...)"


def _check_kinds(model: LlmModel, source: object, engine: object) -> None:
    problems = Problems(f"LlmModel '{model.node.path}'")
    hub = repr(source) if isinstance(source, str) else "'org/name'"
    problems.add(
        type_problem(
            "source",
            source,
            ModelSource,
            f"use ModelSource.hugging_face({hub}), ModelSource.s3(bucket, prefix) or "
            "ModelSource.s3_archive(bucket, key)",
        )
    )
    problems.add(
        type_problem(
            "engine",
            engine,
            Engine,
            "use Engine.tgi(), Engine.tgi_neuronx(), Engine.lmi(), Engine.vllm(), "
            "Engine.sglang() or Engine.custom(image=..., stream_format=...)",
        )
    )
    problems.raise_if_any()


def execution_role(scope: Construct, id: str, *, description: str) -> iam.Role:
    """A SageMaker execution role with only logs and metrics; callers add what they read."""
    role = iam.Role(
        scope,
        id,
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        description=description,
    )
    stack = Stack.of(scope)
    log_groups = stack.format_arn(
        service="logs",
        resource="log-group",
        resource_name="/aws/sagemaker/Endpoints/*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
    role.add_to_policy(
        iam.PolicyStatement(
            actions=[
                "logs:CreateLogGroup",
                "logs:CreateLogStream",
                "logs:PutLogEvents",
                "logs:DescribeLogStreams",
            ],
            resources=[log_groups, f"{log_groups}:log-stream:*"],
        )
    )
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["cloudwatch:PutMetricData"],
            resources=["*"],
            conditions={"StringLike": {"cloudwatch:namespace": "/aws/sagemaker/*"}},
        )
    )
    Validations.of(role).acknowledge(
        Acknowledgment(
            id="AwsSolutions::AwsSolutions-IAM5[Resource::*]",
            reason="cloudwatch:PutMetricData has no resource-level permissions; it is "
            "limited to the /aws/sagemaker/* namespaces by condition. "
            "ecr:GetAuthorizationToken has no resource-level permissions either.",
        )
    )
    Validations.of(role).acknowledge(
        Acknowledgment(
            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{_LOG_GROUP_FINDING}]",
            reason="SageMaker names the log group after the endpoint, which is created "
            "after the model and may be generated; the grant stays inside "
            "/aws/sagemaker/Endpoints/.",
        )
    )
    Validations.of(role).acknowledge(
        Acknowledgment(
            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{_LOG_GROUP_FINDING}:log-stream:*]",
            reason="Log streams are created by SageMaker per instance at run time.",
        )
    )
    return role


def depend_on_policies(resource: Construct, role: iam.IRole) -> None:
    """Makes ``resource`` wait for the role's policies (not the role: its GetAtt already does,
    and a second edge is a cfn-lint warning)."""
    role_resource = role.node.default_child
    for child in role.node.children:
        if role_resource is None or child.node.path != role_resource.node.path:
            resource.node.add_dependency(child)


_ISOLATION_SKIP = {
    "id": "CKV_AWS_370",
    "comment": "The container downloads its Hub weights at start-up, which network isolation "
    "blocks; ModelSource.s3(...) sources get network isolation by default.",
}
CUDA13_HOST_AMI = "al2023-ami-sagemaker-inference-gpu-4-1"
_LOG_GROUP_FINDING = (
    "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/sagemaker/Endpoints/*"
)


def host_ami_for(image: ContainerImage, instance: InstanceType) -> str | None:
    """CUDA 13 images need the host AMI with NVIDIA driver 580; SageMaker's default has 535."""
    major = image.cuda_major
    if instance.accelerator == "nvidia" and major is not None and major >= 13:
        return CUDA13_HOST_AMI
    return None


def _select(vpc: ec2.IVpc, selection: ec2.SubnetSelection) -> ec2.SelectedSubnets:
    # The jsii binding takes the selection's fields as keywords, not the struct itself.
    return vpc.select_subnets(
        availability_zones=selection.availability_zones,
        one_per_az=selection.one_per_az,
        subnet_group_name=selection.subnet_group_name,
        subnet_type=selection.subnet_type,
        subnets=selection.subnets,
    )


def _subnet_problem(
    vpc: ec2.IVpc, subnets: ec2.SubnetSelection | None, source: ModelSource
) -> str | None:
    """The selected subnets must exist, and a Hub download needs a route out of them.

    SageMaker's network interfaces in a VPC get no public IP, so only private subnets with a
    NAT route reach the Hub: isolated subnets have no route and public ones no address.
    """
    from aws_cdk import aws_ec2 as ec2  # only VPC models pay for this import

    hub = f"Hub model '{source.model_id}'"
    stage_in_s3 = "stage the weights in S3 with ModelSource.s3(bucket, prefix)"
    if subnets is None and not vpc.private_subnets:
        if source.is_hub:
            return (
                f"{hub} needs private subnets with egress (a NAT route) to download, but vpc "
                f"'{vpc.node.path}' has no subnets with egress (SubnetType.PRIVATE_WITH_EGRESS, "
                f"the default selection); add a NAT gateway or {stage_in_s3}"
            )
        return (
            f"vpc '{vpc.node.path}' has no private subnets with egress "
            "(SubnetType.PRIVATE_WITH_EGRESS, the default selection); pass "
            "vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED) for "
            "isolated subnets (with an S3 gateway endpoint for the weights)"
        )
    kind = subnets.subnet_type if subnets is not None else None
    if not source.is_hub or kind not in (ec2.SubnetType.PRIVATE_ISOLATED, ec2.SubnetType.PUBLIC):
        return None
    why = (
        "isolated subnets (no route to the Hub)"
        if kind == ec2.SubnetType.PRIVATE_ISOLATED
        else "public subnets (SageMaker's network interfaces get no public IP)"
    )
    return f"{hub} cannot download from {why}; use private subnets with egress or {stage_in_s3}"
