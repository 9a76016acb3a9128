"""A synthesized template's dependency graph: what each resource names by ``Ref``,
``Fn::GetAtt``, ``Fn::Sub`` or ``DependsOn``, which is the order CloudFormation creates and
updates resources in (and, reversed, deletes them in the cleanup)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from aws_cdk.assertions import Template

__all__ = ["CONFIG", "ENDPOINT", "POLICY", "TARGET", "Graph"]

ENDPOINT = "AWS::SageMaker::Endpoint"
CONFIG = "AWS::SageMaker::EndpointConfig"
TARGET = "AWS::ApplicationAutoScaling::ScalableTarget"
POLICY = "AWS::ApplicationAutoScaling::ScalingPolicy"


def _references(node: Any) -> Iterator[str]:
    """The logical ids ``node`` names by ``Ref``, ``Fn::GetAtt`` or ``Fn::Sub``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                yield value
            elif key == "Fn::GetAtt":
                yield value[0] if isinstance(value, list) else str(value).split(".")[0]
            elif key == "Fn::Sub":
                text = value[0] if isinstance(value, list) else value
                yield from (m.split(".")[0] for m in re.findall(r"\$\{([^!}][^}]*)\}", text))
                if isinstance(value, list):
                    yield from _references(value[1])
            else:
                yield from _references(value)
    elif isinstance(node, list):
        for item in node:
            yield from _references(item)


class Graph:
    """A synthesized template's resources, by logical id, and what each waits for."""

    def __init__(self, template: Template) -> None:
        self.resources: dict[str, Any] = template.to_json()["Resources"]
        self.edges: dict[str, set[str]] = {}
        for logical_id, resource in self.resources.items():
            depends = resource.get("DependsOn", [])
            named = set(_references(resource.get("Properties", {})))
            named |= {depends} if isinstance(depends, str) else set(depends)
            self.edges[logical_id] = named & set(self.resources)

    def one(self, kind: str) -> str:
        (logical_id,) = self.of(kind)
        return logical_id

    def of(self, kind: str) -> list[str]:
        return [k for k, v in self.resources.items() if v["Type"] == kind]

    def props(self, logical_id: str) -> dict[str, Any]:
        props: dict[str, Any] = self.resources[logical_id]["Properties"]
        return props

    def waits_for(self, later: str, earlier: str) -> bool:
        """Whether CloudFormation creates or updates ``earlier`` before ``later`` (a path of
        dependencies leads from ``later`` to ``earlier``)."""
        seen: set[str] = set()
        todo = [later]
        while todo:
            for named in self.edges[todo.pop()] - seen:
                if named == earlier:
                    return True
                seen.add(named)
                todo.append(named)
        return False

    def variant_names(self) -> list[str]:
        variants = self.props(self.one(CONFIG))["ProductionVariants"]
        return [v["VariantName"] for v in variants]
