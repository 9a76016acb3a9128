"""LlmModel: a SageMaker Model for an LLM serving engine, with a least-privilege role."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from aws_cdk import Acknowledgment, Annotations, ArnFormat, Stack, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm._validation import Problems, positive_int_problem
from constructs_llm.engine import Engine, EngineContext
from constructs_llm.errors import ConfigurationError, SizingError
from constructs_llm.instance_type import InstanceType
from constructs_llm.model_source import ModelSource, SourceBinding
from constructs_llm.sizing import MemoryPlan, ModelArchitecture, plan_memory
from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat


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
    :param network_isolation: block all container network access. @default False
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
        network_isolation: bool = False,
        architecture: ModelArchitecture | None = None,
    ) -> None:
        super().__init__(scope, id)
        self.instance_type = InstanceType.of(instance_type)
        self.engine = engine
        self.source = source
        self.max_input_tokens = max_input_tokens
        self.max_total_tokens = max_total_tokens
        self.network_isolation = network_isolation
        self._user_env = dict(env or {})
        self._check_props(vpc, vpc_subnets)
        self.architecture = architecture or (
            ModelArchitecture.lookup(source.model_id) if source.model_id else None
        )
        self.role: iam.IRole = role or self._default_role()
        self.accelerators: int | None = None
        self.plan: MemoryPlan | None = None

        image_uri = engine.image_for(self.instance_type).bind(self, self.role)
        self._binding: SourceBinding = source.bind(
            self, self.role, token_env_names=engine.token_env_names
        )
        self.resource = sagemaker.CfnModel(
            self,
            "Resource",
            execution_role_arn=self.role.role_arn,
            enable_network_isolation=network_isolation or None,
            vpc_config=self._vpc_config(vpc, vpc_subnets, security_groups),
            primary_container=self._container(image_uri, self._environment(None)),
        )
        # The role's policy must exist before SageMaker pulls the image and weights, and must
        # outlive the model on delete.
        self.resource.node.add_dependency(self.role)
        self._image_uri = image_uri
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
        if vpc is not None and self.source.is_hub:
            problems.add(_hub_route_problem(vpc, subnets, self.source.model_id))
        problems.raise_if_any()
        if not self.instance_type.known:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:unknown-instance-type",
                f"{self.instance_type.name} is not in the packaged hardware catalog, so GPU "
                "count, memory fit and volume rules were not checked; verify tensor parallel "
                "degree and memory by hand",
            )

    def _default_role(self) -> iam.Role:
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="Execution role of an LLM model (constructs_llm)",
        )
        stack = Stack.of(self)
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

    def _vpc_config(
        self,
        vpc: ec2.IVpc | None,
        subnets: ec2.SubnetSelection | None,
        security_groups: Sequence[ec2.ISecurityGroup] | None,
    ) -> sagemaker.CfnModel.VpcConfigProperty | None:
        if vpc is None:
            return None
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
            subnets=vpc.select_subnets(selection).subnet_ids,
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
            plan=self._plan(accelerators),
        )
        problems = Problems(f"LlmModel '{self.node.path}'")
        problems.extend(self.engine.validate(ctx, self._user_env))
        problems.raise_if_any()
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
        if self.plan is not None:
            Annotations.of(self).add_info(f"Memory plan: {self.plan.summary()}")
            for warning in self.plan.warnings:
                Annotations.of(self).add_warning_v2("constructs-llm:sizing-estimate", warning)
        elif self.instance_type.accelerator is not None and self.architecture is None:
            Annotations.of(self).add_warning_v2(
                "constructs-llm:unknown-model-size",
                f"the size of '{self.source.model_id or 'this model'}' is unknown, so memory "
                "fit was not checked; pass architecture=ModelArchitecture(...) to check it",
            )


_LOG_GROUP_FINDING = (
    "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/sagemaker/Endpoints/*"
)


def _hub_route_problem(
    vpc: ec2.IVpc, subnets: ec2.SubnetSelection | None, model_id: str | None
) -> str | None:
    """A Hub download needs egress; isolated subnets have none."""
    selection = subnets or ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
    if selection.subnet_type == ec2.SubnetType.PRIVATE_ISOLATED:
        return (
            f"Hub model '{model_id}' cannot download from isolated subnets (no route to the "
            "Hub); use subnets with egress or stage the weights with ModelSource.s3(...)"
        )
    return None

