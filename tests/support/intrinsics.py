"""Evaluate the few CloudFormation intrinsic functions a stack output's value uses, as
CloudFormation would in a given partition and region: ``Ref`` (pseudo parameters, and a
resource's physical id as given), ``Fn::Join`` and ``Fn::FindInMap`` over the template's own
mappings. Anything else fails, so a test never passes on a value it did not understand."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["evaluate"]


def evaluate(
    value: Any,
    template: Mapping[str, Any],
    *,
    partition: str,
    region: str,
    physical_ids: Mapping[str, str],
) -> str:
    """``value`` resolved: pseudo parameters from ``partition`` and ``region``, a ``Ref`` to
    a resource from ``physical_ids`` (logical id -> name CloudFormation gave it)."""
    pseudo = {"AWS::Partition": partition, "AWS::Region": region}

    def walk(node: Any) -> str:
        if isinstance(node, str):
            return node
        if not isinstance(node, dict) or len(node) != 1:
            raise ValueError(f"not an intrinsic function this helper evaluates: {node!r}")
        ((function, argument),) = node.items()
        if function == "Ref":
            if argument in pseudo:
                return pseudo[argument]
            return physical_ids[argument]
        if function == "Fn::Join":
            separator, parts = argument
            return str(separator).join(walk(part) for part in parts)
        if function == "Fn::FindInMap":
            mapping, first, second = (walk(part) for part in argument)
            return str(template["Mappings"][mapping][first][second])
        raise ValueError(f"not an intrinsic function this helper evaluates: {function}")

    return walk(value)
