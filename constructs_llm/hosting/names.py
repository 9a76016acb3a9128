"""Names of hosting resources: SageMaker's name pattern, its check, the names derived from a
construct's path for resources that must be named before CloudFormation creates them, and the
names of variants, derived from their fleet."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from aws_cdk import Names
from constructs import Construct

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.pools import VARIANT_NAME, InstancePools
from constructs_llm.problems import Problem, fail
from constructs_llm.values import is_unresolved

# SageMaker's pattern for Endpoint, EndpointConfig, variant and inference component names
# (max 63 characters).
SAGEMAKER_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


def name_problem(prop: str, value: str | None) -> Problem | None:
    """SageMaker names: the pattern, at most 63 characters, no underscores."""
    if value is None or is_unresolved(value):
        return None
    if isinstance(value, str) and SAGEMAKER_NAME.match(value):
        return None
    if not isinstance(value, str):
        return Problem.of(prop, value, f"{prop} must be a string, got {value!r}")
    hint = "at most 63 characters" if len(value) > 63 else "letters, digits and hyphens"
    return Problem.of(
        prop,
        value,
        f"{prop} must match {SAGEMAKER_NAME.pattern} ({hint}, starting and ending with a letter "
        f"or digit), got {value!r} ({len(value)} characters)",
    )


def generated_name(scope: Construct, prop: str, *, suffix: str | None = None) -> str:
    """A stable, account-unique SageMaker name derived from ``scope``'s path (63 characters at
    most), for resources something must name before CloudFormation creates them (components,
    guarded endpoints), ending in ``-<suffix>`` when given (an endpoint named after its fleet).
    """
    name = _path_name(scope, 63 - (len(suffix) + 1 if suffix else 0))
    if suffix:
        name = f"{name}-{suffix}"
    if not SAGEMAKER_NAME.match(name):
        fail(
            f"{type(scope).__name__} '{scope.node.path}'",
            Problem.of(
                prop,
                name,
                f"cannot derive a valid name (got {name!r});",
                f"pass {prop}='...'",
            ),
        )
    return name


def generated_prefix(scope: Construct, longest_suffix: int) -> str:
    """What every name :func:`generated_name` derives for ``scope`` with a suffix of up to
    ``longest_suffix`` characters starts with: the path-derived part and its hyphen when that
    part is the same whatever the suffix (a path short enough to stay whole), else the start
    the shortened parts share (CDK shortens a long path to fit the room the suffix leaves)."""
    parts = {_path_name(scope, 63 - (length + 1)) for length in range(1, longest_suffix + 1)}
    if len(parts) == 1:
        return f"{parts.pop()}-"
    first, last = min(parts), max(parts)  # the sorted ends share what all of them share
    shared = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
    )
    return first[:shared]


def _path_name(scope: Construct, room: int) -> str:
    """``scope``'s path as a SageMaker name part of at most ``room`` characters."""
    name = Names.unique_resource_name(scope, max_length=room, separator="-")
    return re.sub(r"[^a-zA-Z0-9-]", "", name).strip("-")


def variant_name_for(instance_type: InstanceType) -> str:
    """Names the variant after the fleet: a new instance type is a new variant."""
    name = instance_type.name.removeprefix("ml.").replace(".", "-")
    problem = name_problem("the variant name derived from the instance type", name)
    if problem:
        # the name comes from the instance type: that is the property to change
        fail(f"instance type {instance_type.name!r}", replace(problem, property="instance_type"))
    return name


def fleet_key(variant_name: str, instance_types: Iterable[InstanceType]) -> str:
    """The variant and the instance types it runs on, for an acknowledgeable warning id that
    changes whenever either does: the variant's name when it already names its fleet
    (``g5-12xlarge``, ``Llama-g5-12xlarge``), else the name and the fleet
    (``pools:g6e-2xlarge+g5-4xlarge``, ``blue:g5-12xlarge``)."""
    fleet = "+".join(variant_name_for(t) for t in instance_types)
    return variant_name if variant_name.endswith(fleet) else f"{variant_name}:{fleet}"


def fleet_variant_name(pools: InstancePools) -> str:
    """The variant named after its fleet: the instance type (``g5-2xlarge``), or ``pools``
    for a list of them, whatever their order (see ``VARIANT_NAME``)."""
    return VARIANT_NAME if pools.listed else variant_name_for(pools.first.instance_type)
