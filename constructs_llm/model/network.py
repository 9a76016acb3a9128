"""A model's network: its VPC config, the security group it creates, and the subnet rules.

Only models in a VPC import ``aws_ec2`` (the costliest CDK module to load).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm.compliance import NETWORK_INTERFACES
from constructs_llm.execution_role import ExecutionRole
from constructs_llm.problems import Problem
from constructs_llm.wildcard_policy import grant_in_own_policy

if TYPE_CHECKING:
    from aws_cdk import aws_ec2 as ec2

    from constructs_llm.model.source import ModelSource

_ENI_ACTIONS = [
    "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcs",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
]


class ModelNetwork:
    """The VPC config every binding of one model shares, and its security groups.

    :param scope: the model (the security group is created under it).
    :param role: gets the network-interface permissions SageMaker needs in a VPC.
    :param vpc: the VPC.
    :param subnets: @default private subnets with egress
    :param security_groups: @default one new security group with no inbound rules
    """

    def __init__(
        self,
        scope: Construct,
        *,
        role: iam.IRole,
        vpc: ec2.IVpc,
        subnets: ec2.SubnetSelection | None,
        security_groups: Sequence[ec2.ISecurityGroup] | None,
    ) -> None:
        from aws_cdk import aws_ec2 as ec2

        groups = list(security_groups or [])
        if not groups:
            groups = [
                ec2.SecurityGroup(
                    scope,
                    "SecurityGroup",
                    vpc=vpc,
                    description="LLM model containers (constructs_llm); no inbound rules",
                    allow_all_outbound=True,
                )
            ]
        self.security_groups = groups
        selection = subnets or ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        grant_network_interfaces(scope, role)
        self.vpc_config = sagemaker.CfnModel.VpcConfigProperty(
            security_group_ids=[g.security_group_id for g in groups],
            subnets=_select(vpc, selection).subnet_ids,
        )

    @property
    def connections(self) -> ec2.Connections:
        """The model's security groups, to open other resources to it."""
        from aws_cdk import aws_ec2 as ec2

        return ec2.Connections(security_groups=self.security_groups)


def grant_network_interfaces(scope: Construct, role: iam.IRole) -> None:
    """The network-interface actions SageMaker needs to attach a container to a VPC (they take
    no resource: AWS's VPC guide for hosting grants them on ``*``), in a policy that holds them
    alone, acknowledged for cdk-nag there only: a child of the role when the library created
    it, else of ``scope`` (the model or the endpoint), attached to the role."""
    home = role if isinstance(role, ExecutionRole) else scope
    statement = iam.PolicyStatement(actions=_ENI_ACTIONS, resources=["*"])
    grant_in_own_policy(home, "NetworkInterfaces", role, [statement], NETWORK_INTERFACES)


def _select(vpc: ec2.IVpc, selection: ec2.SubnetSelection) -> ec2.SelectedSubnets:
    # The jsii binding takes the selection's fields as keywords, not the struct itself.
    return vpc.select_subnets(
        availability_zones=selection.availability_zones,
        one_per_az=selection.one_per_az,
        subnet_group_name=selection.subnet_group_name,
        subnet_type=selection.subnet_type,
        subnets=selection.subnets,
    )


def subnet_problem(
    vpc: ec2.IVpc, subnets: ec2.SubnetSelection | None, source: ModelSource
) -> Problem | None:
    """The selected subnets must exist, and a Hub download needs a route out of them.

    SageMaker's network interfaces in a VPC get no public IP, so only private subnets with a
    NAT route reach the Hub: isolated subnets have no route and public ones no address.
    """
    from aws_cdk import aws_ec2 as ec2

    if subnets is None and not vpc.private_subnets:
        return _no_egress_subnets(vpc.node.path, source)
    kind = subnets.subnet_type if subnets is not None else None
    if not source.is_hub or kind not in (ec2.SubnetType.PRIVATE_ISOLATED, ec2.SubnetType.PUBLIC):
        return None
    return _hub_download_blocked(source.model_id, kind == ec2.SubnetType.PRIVATE_ISOLATED)


_STAGE_IN_S3 = "stage the weights in S3 with ModelSource.s3(bucket, prefix)"


def _no_egress_subnets(vpc_path: str, source: ModelSource) -> Problem:
    if source.is_hub:
        return Problem.of(
            "vpc_subnets",
            None,
            f"Hub model '{source.model_id}' needs private subnets with egress (a NAT route) to "
            f"download, but vpc '{vpc_path}' has no subnets with egress "
            "(SubnetType.PRIVATE_WITH_EGRESS, the default selection);",
            f"add a NAT gateway or {_STAGE_IN_S3}",
        )
    return Problem.of(
        "vpc_subnets",
        None,
        f"vpc '{vpc_path}' has no private subnets with egress (SubnetType.PRIVATE_WITH_EGRESS, "
        "the default selection);",
        "pass vpc_subnets=ec2.SubnetSelection(subnet_type="
        "ec2.SubnetType.PRIVATE_ISOLATED) for isolated subnets (with an S3 gateway endpoint "
        "for the weights)",
    )


def _hub_download_blocked(model_id: str | None, isolated: bool) -> Problem:
    why = (
        "isolated subnets (no route to the Hub)"
        if isolated
        else "public subnets (SageMaker's network interfaces get no public IP)"
    )
    return Problem.of(
        "vpc_subnets",
        None,
        f"Hub model '{model_id}' cannot download from {why};",
        f"use private subnets with egress or {_STAGE_IN_S3}",
    )


def egress_problem(
    security_groups: Sequence[ec2.ISecurityGroup] | None, source: ModelSource
) -> Problem | None:
    """A Hub download through security groups that allow no egress at all: the container
    reaches huggingface.co only through an outbound rule (security groups are stateful, so
    nothing else lets the download out), and no VPC endpoint serves the Hub. The endpoint then
    fails its health check after the whole startup timeout. Only groups this app creates are
    read (an imported group's rules are not known); their rules are read as they stand when
    the model is created, so add a group's egress rules before passing it."""
    from aws_cdk import aws_ec2 as ec2

    owned = [g for g in security_groups or () if isinstance(g, ec2.SecurityGroup)]
    if not source.is_hub or not owned or len(owned) != len(list(security_groups or ())):
        return None
    if any(_allows_egress(group) for group in owned):
        return None
    names = ", ".join(f"'{g.node.path}'" for g in owned)
    return Problem.of(
        "security_groups",
        security_groups,
        f"Hub model '{source.model_id}' downloads through security groups {names}, which allow "
        "no outbound traffic, so the download never starts and the endpoint fails its health "
        "check;",
        "create the group with allow_all_outbound=True or add an egress rule for HTTPS "
        f"(port 443) before passing it, or {_STAGE_IN_S3}",
    )


def _allows_egress(group: ec2.SecurityGroup) -> bool:
    from aws_cdk import Stack
    from aws_cdk import aws_ec2 as ec2

    if group.allow_all_outbound or group.allow_all_ipv6_outbound:
        return True
    resolved = Stack.of(group).resolve(
        getattr(group.node.default_child, "security_group_egress", None)
    )
    # With allow_all_outbound=False, CDK renders one rule that matches no traffic (ICMP type
    # 252, code 86, to 255.255.255.255/32) until a real one is added.
    real = [r for r in resolved or [] if r.get("cidrIp") != "255.255.255.255/32"]
    separate = [c for c in group.node.children if isinstance(c, ec2.CfnSecurityGroupEgress)]
    return bool(real or separate)
