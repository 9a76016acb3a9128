"""The glue shared by models, endpoints and inference components: endpoint attributes and
invoke grants, storage and KMS rules, the execution role, policy ordering, variant names and
host AMIs."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from aws_cdk import ArnFormat, Names, Size, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm import messages as msg
from constructs_llm.cdk_values import grantee_problem
from constructs_llm.compliance import (
    ENDPOINT_LOG_GROUPS,
    ENDPOINT_LOG_STREAMS,
    NVME_VOLUME_KEY,
    UNSCOPED_ACTIONS,
    waive,
)
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import fail
from constructs_llm.validation import SAGEMAKER_NAME, name_problem

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms

    from constructs_llm.model.container_image import ContainerImage

__all__ = [
    "CUDA13_HOST_AMI",
    "INVOKE_ACTIONS",
    "MAX_VOLUME_GB",
    "VOLUME_KEY_ACTIONS",
    "ComponentAttributes",
    "EndpointAttributes",
    "depend_on_policies",
    "execution_role",
    "generated_name",
    "grant_invoke",
    "host_ami_for",
    "kms_problem",
    "least_outstanding_requests",
    "storage_settings",
    "variant_name_for",
    "volume_problem",
]

INVOKE_ACTIONS = ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]
MAX_VOLUME_GB = 512
VOLUME_KEY_ACTIONS = (
    "kms:CreateGrant",
    "kms:DescribeKey",
    "kms:Decrypt",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
)
CUDA13_HOST_AMI = "al2023-ami-sagemaker-inference-gpu-4-1"


class EndpointAttributes:
    """``endpoint_name`` and ``endpoint_arn`` of a construct whose ``resource`` is the Endpoint."""

    resource: sagemaker.CfnEndpoint

    @property
    def endpoint_name(self) -> str:
        return self.resource.attr_endpoint_name

    @property
    def endpoint_arn(self) -> str:
        """The Endpoint's ARN (its ``Ref``)."""
        return self.resource.ref


class ComponentAttributes:
    """Name, ARN, endpoint, invoke grant and metric dimensions of an inference component (or
    adapter component) whose ``resource`` is the component and ``endpoint`` its endpoint."""

    resource: sagemaker.CfnInferenceComponent
    endpoint: EndpointAttributes
    component_name: str  # the physical name given to ``resource``

    @property
    def inference_component_name(self) -> str:
        """The component's name, passed as ``InferenceComponentName`` on every invocation."""
        return self.component_name

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
        return grant_invoke(grantee, self.endpoint.endpoint_arn, self.inference_component_arn)

    def _metric_dimensions(self) -> dict[str, str]:
        return {"InferenceComponentName": self.inference_component_name}


def grant_invoke(grantee: iam.IGrantable, *resource_arns: str) -> iam.Grant:
    """``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on these resources."""
    problem = grantee_problem("grantee", grantee)
    if problem:
        fail("grant_invoke", problem)
    return iam.Grant.add_to_principal(
        grantee=grantee, actions=INVOKE_ACTIONS, resource_arns=list(resource_arns)
    )


def least_outstanding_requests() -> sagemaker.CfnEndpointConfig.RoutingConfigProperty:
    """Routing to the least busy instance or copy: long streaming requests vary in length."""
    return sagemaker.CfnEndpointConfig.RoutingConfigProperty(
        routing_strategy="LEAST_OUTSTANDING_REQUESTS"
    )


def execution_role(scope: Construct, id: str, *, description: str) -> iam.Role:
    """A SageMaker execution role with only logs and metrics; callers add what they read."""
    role = iam.Role(
        scope,
        id,
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        description=description,
    )
    log_groups = Stack.of(scope).format_arn(
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
    waive(role, UNSCOPED_ACTIONS, ENDPOINT_LOG_GROUPS, ENDPOINT_LOG_STREAMS)
    return role


def depend_on_policies(resource: Construct, role: iam.IRole) -> None:
    """Makes ``resource`` wait for the role's policies (not the role: its GetAtt already does,
    and a second edge is a cfn-lint warning)."""
    role_resource = role.node.default_child
    for child in role.node.children:
        if role_resource is None or child.node.path != role_resource.node.path:
            resource.node.add_dependency(child)


def storage_settings(
    config: sagemaker.CfnEndpointConfig,
    instance_type: InstanceType,
    kms_key: kms.IKey | None,
    grantee: iam.IGrantable,
) -> None:
    """Records why NVMe types carry no volume key, and lets ``grantee`` use the key there is
    (named actions only: a volume key needs no wildcard actions)."""
    if instance_type.local_nvme:
        waive(config, NVME_VOLUME_KEY)
    if kms_key is not None:
        kms_key.grant(grantee, *VOLUME_KEY_ACTIONS)


def variant_name_for(instance_type: InstanceType) -> str:
    """Names the variant after the fleet: a new instance type is a new variant."""
    name = instance_type.name.removeprefix("ml.").replace(".", "-")
    problem = name_problem("the variant name derived from the instance type", name)
    if problem:
        fail(f"instance type {instance_type.name!r}", problem)
    return name


def kms_problem(instance_type: InstanceType, kms_key: kms.IKey | None) -> str | None:
    """KmsKeyId is rejected on instance types with local NVMe storage."""
    if kms_key is None or not instance_type.known or instance_type.supports_kms:
        return None
    return msg.kms_on_nvme(instance_type)


def volume_problem(instance_type: InstanceType, volume_size: Size | None) -> str | None:
    """VolumeSizeInGB: a Size, 1-512 GiB, and only on instance types without local NVMe."""
    if volume_size is None:
        return None
    if not isinstance(volume_size, Size):
        return f"volume_size must be a Size, got {volume_size!r}; use Size.gibibytes(...)"
    if instance_type.known and not instance_type.supports_volume_size:
        return msg.volume_on_nvme(instance_type)
    gib = volume_size.to_gibibytes()
    if not Token.is_unresolved(gib) and not 1 <= gib <= MAX_VOLUME_GB:
        return f"volume_size must be 1-{MAX_VOLUME_GB} GiB, got {gib:g} GiB"
    return None


def host_ami_for(image: ContainerImage, instance: InstanceType) -> str | None:
    """CUDA 13 images need the host AMI with NVIDIA driver 580; SageMaker's default has 535."""
    major = image.cuda_major
    if instance.accelerator == "nvidia" and major is not None and major >= 13:
        return CUDA13_HOST_AMI
    return None


def generated_name(scope: Construct, prop: str) -> str:
    """A stable, account-unique SageMaker name derived from ``scope``'s path (63 characters at
    most), for resources something must name before CloudFormation creates them (components,
    guarded endpoints)."""
    name = Names.unique_resource_name(scope, max_length=63, separator="-")
    name = re.sub(r"[^a-zA-Z0-9-]", "", name).strip("-")
    if not SAGEMAKER_NAME.match(name):
        fail(
            f"{type(scope).__name__} '{scope.node.path}'",
            f"cannot derive a valid name (got {name!r}); pass {prop}='...'",
        )
    return name
