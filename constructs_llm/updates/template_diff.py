"""What CloudFormation does with each resource when a stack goes from one template to another.

A resource whose logical id is only in the new template is created, one only in the old is
deleted (in the cleanup, after every create and update). A resource in both is compared
property by property; a property also counts as changed when it references (``Ref``,
``Fn::GetAtt``, ``Fn::Sub``) a resource that is replaced, since the reference then resolves
to the replacement. A changed create-only property (``rules.replaced_by``, from the
CloudFormation registry schemas) replaces the resource, which may in turn change what
references it: the comparison runs until nothing more is replaced. A resource whose type
changes is replaced too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from constructs_llm.updates.rules import replaced_by

_SUB_REFERENCE = re.compile(r"\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}")


class TemplateError(ValueError):
    """A file that is not a CloudFormation template: its name and what is wrong."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


@dataclass(frozen=True)
class Template:
    """A CloudFormation template's resources, by logical id.

    :param resources: each resource's ``Type`` and ``Properties`` (and the rest), as given.
    :param source: where it was read from (a file, or a stack), for messages.
    """

    resources: Mapping[str, Mapping[str, Any]]
    source: str

    @staticmethod
    def of(document: object, source: str) -> Template:
        """The template ``document`` (parsed JSON), or a :class:`TemplateError` naming
        ``source`` when it is not one."""
        if not isinstance(document, dict):
            kind = type(document).__name__
            raise TemplateError(source, f"not a CloudFormation template (a JSON {kind})")
        resources = document.get("Resources")
        if not isinstance(resources, dict):
            raise TemplateError(source, "not a CloudFormation template: it has no Resources object")
        for logical_id, resource in resources.items():
            if not isinstance(resource, dict) or not isinstance(resource.get("Type"), str):
                raise TemplateError(source, f"resource {logical_id!r} has no Type")
            props = resource.get("Properties", {})
            if not isinstance(props, dict):
                raise TemplateError(source, f"resource {logical_id!r}: Properties is not an object")
        return Template(resources=resources, source=source)

    def type_of(self, logical_id: str) -> str:
        kind: str = self.resources[logical_id]["Type"]
        return kind

    def props(self, logical_id: str) -> Mapping[str, Any]:
        found: Mapping[str, Any] = self.resources[logical_id].get("Properties", {})
        return found

    def of_type(self, kind: str) -> list[str]:
        """The logical ids of the resources of type ``kind``, sorted."""
        return sorted(k for k, r in self.resources.items() if r["Type"] == kind)


class CfnChange(str, Enum):
    """What CloudFormation does with one resource."""

    CREATED = "created"
    DELETED = "deleted"
    REPLACED = "replaced"
    UPDATED = "updated in place"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class ResourceChange:
    """One resource across the two templates.

    :param id: its logical id.
    :param type: its resource type (the new template's, else the old's).
    :param change: what CloudFormation does with it.
    :param properties: the top-level properties that change (by value, or through a reference
        to a replaced resource), sorted.
    """

    id: str
    type: str
    change: CfnChange
    properties: tuple[str, ...] = ()


def references(value: object) -> Iterator[str]:
    """The logical ids (and parameters) ``value`` references: ``Ref``, ``Fn::GetAtt`` (list or
    dotted string) and ``Fn::Sub`` (``${Id}``, ``${Id.Attr}``)."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, inner),) = value.items()
            if key == "Ref" and isinstance(inner, str):
                yield inner
                return
            if key == "Fn::GetAtt":
                if isinstance(inner, list) and inner and isinstance(inner[0], str):
                    yield inner[0]
                elif isinstance(inner, str):
                    yield inner.split(".", 1)[0]
                return
            if key == "Fn::Sub":
                text = inner[0] if isinstance(inner, list) and inner else inner
                if isinstance(text, str):
                    yield from _SUB_REFERENCE.findall(text)
                if isinstance(inner, list) and len(inner) > 1:
                    yield from references(inner[1])
                return
        for inner in value.values():
            yield from references(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from references(inner)


def referenced(value: object) -> str | None:
    """The logical id ``value`` is a ``Ref`` or ``Fn::GetAtt`` of, if it is one."""
    if isinstance(value, dict) and len(value) == 1 and ("Ref" in value or "Fn::GetAtt" in value):
        return next(references(value), None)
    return None


def compare(old: Template, new: Template) -> dict[str, ResourceChange]:
    """What CloudFormation does with every resource of either template, by logical id."""
    common = [k for k in new.resources if k in old.resources]
    replaced = {k for k in common if old.type_of(k) != new.type_of(k)}
    changed: dict[str, tuple[str, ...]] = {}
    while True:
        for logical_id in common:
            before, after = old.props(logical_id), new.props(logical_id)
            changed[logical_id] = tuple(
                p
                for p in sorted(set(before) | set(after))
                if before.get(p) != after.get(p) or set(references(after.get(p))) & replaced
            )
        more = {
            k
            for k in common
            if k not in replaced and any(replaced_by(new.type_of(k), p) for p in changed[k])
        }
        if not more:
            break
        replaced |= more
    found = {
        k: ResourceChange(k, new.type_of(k), CfnChange.CREATED)
        for k in new.resources
        if k not in old.resources
    }
    found |= {
        k: ResourceChange(k, old.type_of(k), CfnChange.DELETED)
        for k in old.resources
        if k not in new.resources
    }
    for k in common:
        change = (
            CfnChange.REPLACED
            if k in replaced
            else CfnChange.UPDATED
            if changed[k]
            else CfnChange.UNCHANGED
        )
        found[k] = ResourceChange(k, new.type_of(k), change, changed[k])
    return found
