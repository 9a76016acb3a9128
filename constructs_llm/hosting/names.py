"""Names of hosting resources: SageMaker's name pattern, its check, and the names derived
from a construct's path for resources that must be named before CloudFormation creates them."""

from __future__ import annotations

import re

from aws_cdk import Names, Token
from constructs import Construct

from constructs_llm.problems import fail

__all__ = ["SAGEMAKER_NAME", "generated_name", "name_problem"]

# SageMaker's pattern for Endpoint, EndpointConfig, variant and inference component names
# (max 63 characters).
SAGEMAKER_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


def name_problem(prop: str, value: str | None) -> str | None:
    """SageMaker names: the pattern, at most 63 characters, no underscores."""
    if value is None or Token.is_unresolved(value):
        return None
    if isinstance(value, str) and SAGEMAKER_NAME.match(value):
        return None
    if not isinstance(value, str):
        return f"{prop} must be a string, got {value!r}"
    hint = "at most 63 characters" if len(value) > 63 else "letters, digits and hyphens"
    return (
        f"{prop} must match {SAGEMAKER_NAME.pattern} ({hint}, starting and ending with a letter "
        f"or digit), got {value!r} ({len(value)} characters)"
    )


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
