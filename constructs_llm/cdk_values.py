"""Checks of the AWS CDK values the constructs take (roles, keys, networks, layers, ...).

A CDK value of the wrong kind (a role's ARN where an ``iam.IRole`` goes, ``"arm64"`` where a
``lambda_.Architecture`` goes) would otherwise reach the CDK and come back as a long jsii
``TypeError``; each check here returns a problem naming the argument, what it got, and how to
make the right value (or None). The CDK modules are imported only to check a value given.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from constructs_llm.problems import Problem
from constructs_llm.values import is_a, list_problems, type_problem

#: A check of one argument: its name and value in, a problem or None out.
ValueCheck = Callable[[str, object], "Problem | None"]


def _cdk_type(module: str, name: str) -> type:
    """``aws_cdk.<module>.<name>``, imported only when a value is checked."""
    kind: type = getattr(importlib.import_module(f"aws_cdk.{module}"), name)
    return kind


def cdk_kind(value: object, module: str, name: str) -> bool:
    """Whether ``value`` is an ``aws_cdk.<module>.<name>`` (a class, or a jsii interface such
    as ``sns.ITopic``, which a value satisfies by its members)."""
    return is_a(value, _cdk_type(module, name))


def _check(module: str, name: str, fix: str, *, optional: bool = True) -> ValueCheck:
    """The check of a value that must be an ``aws_cdk.<module>.<name>``: ``type_problem`` with
    ``fix``, or None; no value is no problem where the argument is ``optional``, and the CDK
    module is imported only when there is a value to check."""

    def check(prop: str, value: object) -> Problem | None:
        if optional and value is None:
            return None
        return type_problem(prop, value, _cdk_type(module, name), fix)

    return check


role_problem = _check(
    "aws_iam",
    "IRole",
    "pass an iam.Role, or import one with iam.Role.from_role_arn(self, 'Role', arn)",
)
grantee_problem = _check(
    "aws_iam",
    "IGrantable",
    "pass a role, user, group or function (an iam.IGrantable)",
    optional=False,
)
key_problem = _check(
    "aws_kms",
    "IKey",
    "pass a kms.Key, or import one with kms.Key.from_key_arn(self, 'Key', arn)",
)
vpc_problem = _check(
    "aws_ec2",
    "IVpc",
    "pass an ec2.Vpc, or import one with ec2.Vpc.from_lookup(self, 'Vpc', vpc_id=...)",
)
subnets_problem = _check(
    "aws_ec2",
    "SubnetSelection",
    "use ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS), or "
    "ec2.SubnetSelection(subnets=[...]) for given subnets",
)
layer_problem = _check(
    "aws_lambda",
    "ILayerVersion",
    "import it with lambda_.LayerVersion.from_layer_version_arn(self, 'Adapter', arn)",
)
architecture_problem = _check(
    "aws_lambda",
    "Architecture",
    "use lambda_.Architecture.ARM_64 or lambda_.Architecture.X86_64",
)
certificate_problem = _check(
    "aws_certificatemanager",
    "ICertificate",
    "request one in us-east-1 with acm.Certificate, or import it with "
    "acm.Certificate.from_certificate_arn(self, 'Certificate', arn)",
)
log_retention_problem = _check(
    "aws_logs",
    "RetentionDays",
    "use a member such as logs.RetentionDays.ONE_MONTH",
    optional=False,
)
repository_problem = _check(
    "aws_ecr",
    "IRepository",
    "import it with ecr.Repository.from_repository_name(self, 'Repo', name), or use "
    "ContainerImage.from_uri(uri) for an image URI",
    optional=False,
)


def security_groups_problems(prop: str, value: object) -> list[Problem | None]:
    if value is None:
        return []
    fix = "import one with ec2.SecurityGroup.from_security_group_id(self, 'Sg', 'sg-...')"
    return list_problems(prop, value, _cdk_type("aws_ec2", "ISecurityGroup"), fix)
