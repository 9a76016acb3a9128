"""Names of hosting resources: SageMaker's name pattern and the names derived from a
construct's path for resources that must be named before CloudFormation creates them."""

from __future__ import annotations

import re

from aws_cdk import Names
from constructs import Construct

from constructs_llm.errors import ConfigurationError
from constructs_llm.validation import SAGEMAKER_NAME

__all__ = ["generated_name"]


def generated_name(scope: Construct, prop: str) -> str:
    """A stable, account-unique SageMaker name derived from ``scope``'s path (63 characters at
    most), for resources something must name before CloudFormation creates them (components,
    guarded endpoints)."""
    name = Names.unique_resource_name(scope, max_length=63, separator="-")
    name = re.sub(r"[^a-zA-Z0-9-]", "", name).strip("-")
    if not SAGEMAKER_NAME.match(name):
        raise ConfigurationError(
            f"{type(scope).__name__} '{scope.node.path}': cannot derive a valid name "
            f"(got {name!r}); pass {prop}='...'"
        )
    return name
