"""Checks of the AWS CDK values the constructs take (roles, keys, networks, layers, ...).

A CDK value of the wrong kind (a role's ARN where an ``iam.IRole`` goes, ``"arm64"`` where a
``lambda_.Architecture`` goes) would otherwise reach the CDK and come back as a long jsii
``TypeError``; each check here returns a problem naming the argument, what it got, and how to
make the right value (or None). The CDK modules are imported only to check a value given.
"""

from __future__ import annotations

import importlib

from constructs_llm.problems import Problem
from constructs_llm.values import is_a, list_problems, type_problem


def _cdk_type(module: str, name: str) -> type:
    """``aws_cdk.<module>.<name>``, imported only when a value is checked."""
    kind: type = getattr(importlib.import_module(f"aws_cdk.{module}"), name)
    return kind


def cdk_kind(value: object, module: str, name: str) -> bool:
    """Whether ``value`` is an ``aws_cdk.<module>.<name>`` (a class, or a jsii interface such
    as ``sns.ITopic``, which a value satisfies by its members)."""
    return is_a(value, _cdk_type(module, name))


def _problem(prop: str, value: object, module: str, name: str, fix: str) -> Problem | None:
    """None for no value (the argument is optional), else ``type_problem``."""
    if value is None:
        return None
    return type_problem(prop, value, _cdk_type(module, name), fix)


def role_problem(prop: str, value: object) -> Problem | None:
    fix = "pass an iam.Role, or import one with iam.Role.from_role_arn(self, 'Role', arn)"
    return _problem(prop, value, "aws_iam", "IRole", fix)


def grantee_problem(prop: str, value: object) -> Problem | None:
    fix = "pass a role, user, group or function (an iam.IGrantable)"
    return type_problem(prop, value, _cdk_type("aws_iam", "IGrantable"), fix)


def key_problem(prop: str, value: object) -> Problem | None:
    fix = "pass a kms.Key, or import one with kms.Key.from_key_arn(self, 'Key', arn)"
    return _problem(prop, value, "aws_kms", "IKey", fix)


def vpc_problem(prop: str, value: object) -> Problem | None:
    fix = "pass an ec2.Vpc, or import one with ec2.Vpc.from_lookup(self, 'Vpc', vpc_id=...)"
    return _problem(prop, value, "aws_ec2", "IVpc", fix)


def subnets_problem(prop: str, value: object) -> Problem | None:
    fix = (
        "use ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS), or "
        "ec2.SubnetSelection(subnets=[...]) for given subnets"
    )
    return _problem(prop, value, "aws_ec2", "SubnetSelection", fix)


def security_groups_problems(prop: str, value: object) -> list[Problem | None]:
    if value is None:
        return []
    fix = "import one with ec2.SecurityGroup.from_security_group_id(self, 'Sg', 'sg-...')"
    return list_problems(prop, value, _cdk_type("aws_ec2", "ISecurityGroup"), fix)


def layer_problem(prop: str, value: object) -> Problem | None:
    fix = "import it with lambda_.LayerVersion.from_layer_version_arn(self, 'Adapter', arn)"
    return _problem(prop, value, "aws_lambda", "ILayerVersion", fix)


def architecture_problem(prop: str, value: object) -> Problem | None:
    fix = "use lambda_.Architecture.ARM_64 or lambda_.Architecture.X86_64"
    return _problem(prop, value, "aws_lambda", "Architecture", fix)


def certificate_problem(prop: str, value: object) -> Problem | None:
    fix = (
        "request one in us-east-1 with acm.Certificate, or import it with "
        "acm.Certificate.from_certificate_arn(self, 'Certificate', arn)"
    )
    return _problem(prop, value, "aws_certificatemanager", "ICertificate", fix)


def log_retention_problem(prop: str, value: object) -> Problem | None:
    fix = "use a member such as logs.RetentionDays.ONE_MONTH"
    return type_problem(prop, value, _cdk_type("aws_logs", "RetentionDays"), fix)


def repository_problem(prop: str, value: object) -> Problem | None:
    fix = (
        "import it with ecr.Repository.from_repository_name(self, 'Repo', name), or use "
        "ContainerImage.from_uri(uri) for an image URI"
    )
    return type_problem(prop, value, _cdk_type("aws_ecr", "IRepository"), fix)
