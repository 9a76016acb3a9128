"""The execution role SageMaker assumes for a model or an endpoint, created with no permission;
the grant of what its containers write (their log groups and metric namespaces), made by the
host that knows where they write; and the ordering that makes a resource wait for the role's
policies.

What a hosting execution role needs to write ("How to use SageMaker AI execution roles",
section "CreateModel API: Execution Role Permissions",
https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-roles.html): the four CloudWatch
Logs actions below and ``cloudwatch:PutMetricData``, which AWS's page grants on ``*``. Here
the logs actions are granted on the host's own log groups only, and ``PutMetricData`` (which
has no resource-level permission) only in the host's namespaces, by the ``cloudwatch:namespace``
condition CloudWatch documents for it ("Using condition keys to limit access to CloudWatch
namespaces", ``"StringEquals": {"cloudwatch:namespace": ...}``,
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/iam-cw-condition-keys-namespace.html).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm.compliance import (
    GENERATED_ENDPOINT_LOG_GROUPS,
    RUN_TIME_LOG_STREAMS,
    UNSCOPED_ACTIONS,
    resource_wildcard,
    waive,
)

#: What a container's log writes need, per AWS's execution role page.
LOG_ACTIONS = (
    "logs:CreateLogGroup",
    "logs:CreateLogStream",
    "logs:PutLogEvents",
    "logs:DescribeLogStreams",
)


class ExecutionRole(iam.Role):
    """A SageMaker execution role the library creates: no permission of its own; each host
    that serves with it grants what its containers write (:func:`grant_container_writes`) and
    callers add what they read."""

    def __init__(self, scope: Construct, id: str, *, description: str) -> None:
        super().__init__(
            scope,
            id,
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description=description,
        )


@dataclass(frozen=True)
class ContainerWrites:
    """Where the containers of one host write through their execution role.

    :param log_groups: CloudWatch Logs group names, e.g. ``/aws/sagemaker/Endpoints/chat``;
        a name ending in ``*`` stands for the groups of that prefix.
    :param namespaces: CloudWatch metric namespaces.
    """

    log_groups: tuple[str, ...]
    namespaces: tuple[str, ...]


def grant_container_writes(role: iam.IRole, writes: ContainerWrites) -> None:
    """Lets ``role`` write ``writes``' log groups (and their streams) and put metrics in its
    namespaces, if the library created the role; a role passed in is its owner's to scope.
    Hosts call it when they render: two hosts of one role grant both their groups (identical
    statements merge)."""
    if not isinstance(role, ExecutionRole) or not writes.log_groups:
        return
    stack = Stack.of(role)
    groups = [
        stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name=name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        for name in writes.log_groups
    ]
    streams = [f"{group}:log-stream:*" for group in groups]
    role.add_to_policy(
        iam.PolicyStatement(actions=list(LOG_ACTIONS), resources=[*groups, *streams])
    )
    namespaces = list(writes.namespaces)
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["cloudwatch:PutMetricData"],
            resources=["*"],
            conditions={
                "StringEquals": {
                    "cloudwatch:namespace": namespaces[0] if len(namespaces) == 1 else namespaces
                }
            },
        )
    )
    wildcards = [
        resource_wildcard(role, group, GENERATED_ENDPOINT_LOG_GROUPS)
        for name, group in zip(writes.log_groups, groups, strict=True)
        if name.endswith("*")
    ]
    wildcards += [resource_wildcard(role, stream, RUN_TIME_LOG_STREAMS) for stream in streams]
    waive(role, UNSCOPED_ACTIONS, *wildcards)


def depend_on_policies(resource: Construct, role: iam.IRole) -> None:
    """Makes ``resource`` wait for the role's policies (not the role: its GetAtt already does,
    and a second edge is a cfn-lint warning)."""
    role_resource = role.node.default_child
    for child in role.node.children:
        if role_resource is None or child.node.path != role_resource.node.path:
            resource.node.add_dependency(child)
