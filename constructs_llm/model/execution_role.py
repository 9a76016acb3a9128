"""The execution role SageMaker assumes for a model or an endpoint: logs and metrics only, to
which callers add what they read; and the ordering that makes a resource wait for the role's
policies."""

from __future__ import annotations

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm.compliance import (
    ENDPOINT_LOG_GROUPS,
    ENDPOINT_LOG_STREAMS,
    UNSCOPED_ACTIONS,
    waive,
)

__all__ = ["depend_on_policies", "execution_role"]


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
