"""What SageMaker does with a change, endpoint by endpoint and component by component: the
findings ``check_update`` returns, each with its verdict, the rule it rests on (``rules.py``),
what runs meanwhile and whether anything stops serving.

CloudFormation's part comes from ``template_diff.compare``. On top of it:

- An Endpoint replaced (its name changed) is a new endpoint: CreateEndpoint, the old one
  deleted in the cleanup; both fleets run meanwhile.
- An Endpoint updated onto another config is an UpdateEndpoint, refused when async inference
  is turned on or off (rule ``async-toggle``) or when a variant registered for autoscaling in
  the deployed template loses its instance type (or pools) or goes (``autoscaled-variant``);
  else blue/green (a new fleet beside the old), or rolling with a ``RollingUpdatePolicy`` (a
  batch beside the old fleet).
- A component that keeps its logical id but names another endpoint, variant or name cannot be
  moved by UpdateInferenceComponent (``component-move``); one with a new specification gets
  new copies (``component-specification``); one with a new copy count changes in place.
- A scalable target with new bounds is updated in place; one that scales something else is
  registered anew.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from constructs_llm.updates.rules import (
    COMPONENT,
    ENDPOINT,
    MODEL,
    TARGET,
    UpdateRule,
    rule,
)
from constructs_llm.updates.template_diff import (
    CfnChange,
    ResourceChange,
    Template,
    compare,
    referenced,
    references,
)

_VARIANT_DIMENSION = "sagemaker:variant:DesiredInstanceCount"


class Verdict(str, Enum):
    """What happens to one endpoint, component or scalable target."""

    UNCHANGED = "unchanged"
    IN_PLACE = "updated in place"
    BLUE_GREEN = "blue/green"
    ROLLING = "rolling"
    NEW_ENDPOINT = "a new endpoint"
    NEW_COPIES = "new copies"
    CREATED = "created"
    DELETED = "deleted"
    REFUSED = "refused"


@dataclass(frozen=True, kw_only=True)
class Finding:
    """What a deploy does to one endpoint, component or scalable target.

    :param resource: its logical id.
    :param kind: ``endpoint``, ``component`` or ``scalable target``.
    :param verdict: what happens to it.
    :param why: why, in a sentence (SageMaker's rule, said plainly).
    :param rule: the rule it rests on, with its citation. @default none
    :param changes: what changed, resource by resource. @default none
    :param meanwhile: the extra instances (or copies) the change runs beside the current
        ones, which the account's quota must allow. @default none
    :param downtime: whether anything stops serving. @default none
    """

    resource: str
    kind: str
    verdict: Verdict
    why: str
    rule: UpdateRule | None = None
    changes: tuple[str, ...] = ()
    meanwhile: str | None = None
    downtime: str | None = None

    @property
    def refused(self) -> bool:
        return self.verdict is Verdict.REFUSED

    def lines(self) -> list[str]:
        """The finding as the CLI prints it."""
        lines = [f"{self.kind} {self.resource}: {self.verdict.value.upper()}", f"  why: {self.why}"]
        lines += [f"  changed: {c}" for c in self.changes]
        if self.meanwhile:
            lines.append(f"  meanwhile: {self.meanwhile}")
        if self.downtime:
            lines.append(f"  downtime: {self.downtime}")
        if self.rule is not None:
            checked = "" if self.rule.verified else " (inferred from the API's shape)"
            lines.append(f"  rule: {self.rule.id}: {self.rule.citation}{checked}")
        return lines


def findings(old: Template, new: Template) -> list[Finding]:
    """What a deploy from ``old`` to ``new`` does to each endpoint, component and changed
    scalable target, in that order, each sorted by logical id."""
    changes = compare(old, new)
    found = [_endpoint(k, old, new, changes) for k in _ids(old, new, ENDPOINT)]
    found += [_component(k, old, new, changes) for k in _ids(old, new, COMPONENT)]
    found += [f for k in _ids(old, new, TARGET) if (f := _target(k, old, new, changes)) is not None]
    return found


def _ids(old: Template, new: Template, kind: str) -> list[str]:
    return sorted(set(old.of_type(kind)) | set(new.of_type(kind)))


def _deleted(resource: str, kind: str, noun: str) -> Finding:
    """``resource`` (``noun``: "the Endpoint", "the component") leaves the stack."""
    return Finding(
        resource=resource,
        kind=kind,
        verdict=Verdict.DELETED,
        why=f"{noun} leaves the stack: deleted in the cleanup, after every update",
        downtime=f"callers of this {kind} fail once it is deleted",
    )


def _refused(
    resource: str, kind: str, reason: str, refusal: UpdateRule, changes: tuple[str, ...]
) -> Finding:
    """SageMaker refuses the call for ``reason``: the deploy fails and is rolled back."""
    return Finding(
        resource=resource,
        kind=kind,
        verdict=Verdict.REFUSED,
        why=f"{reason}: {refusal.why}",
        rule=refusal,
        changes=changes,
        downtime="nothing changes: CloudFormation rolls the deploy back",
    )


def _in_place(
    resource: str,
    kind: str,
    update: UpdateRule,
    changes: tuple[str, ...],
    *,
    why: str | None = None,
) -> Finding:
    """An update where ``resource`` runs (the rule's ``why``, unless given): nothing stops."""
    return Finding(
        resource=resource,
        kind=kind,
        verdict=Verdict.IN_PLACE,
        why=update.why if why is None else why,
        rule=update,
        changes=changes,
        downtime="none",
    )


# -- endpoints ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Variant:
    name: str
    fleet: tuple[str, ...]  # the instance type, or the pools' types in priority order
    count: int
    props: Mapping[str, Any]

    @property
    def instance_types(self) -> str:
        return " or ".join(self.fleet) if self.fleet else "serverless"


def _variants(template: Template, config: str | None) -> dict[str, _Variant]:
    if config is None or config not in template.resources:
        return {}
    props = template.props(config)
    found = {}
    for v in [*props.get("ProductionVariants", []), *props.get("ShadowProductionVariants", [])]:
        if not isinstance(v, dict):
            continue
        pools = sorted(v.get("InstancePools") or [], key=lambda p: p.get("Priority", 0))
        fleet = (
            tuple(str(p.get("InstanceType")) for p in pools)
            if pools
            else ((str(v["InstanceType"]),) if "InstanceType" in v else ())
        )
        count = v.get("InitialInstanceCount", 1)
        found[str(v.get("VariantName"))] = _Variant(
            name=str(v.get("VariantName")),
            fleet=fleet,
            count=count if isinstance(count, int) else 1,
            props=v,
        )
    return found


def _registered(template: Template, endpoint: str) -> dict[str, int]:
    """The variants of ``endpoint`` registered for autoscaling in ``template``, with their
    targets' MaxCapacity."""
    literal = template.props(endpoint).get("EndpointName")
    found = {}
    for target in template.of_type(TARGET):
        props = template.props(target)
        if props.get("ScalableDimension") != _VARIANT_DIMENSION:
            continue
        resource = props.get("ResourceId")
        parts = _joined(resource)
        names_it = endpoint in references(resource) or (
            isinstance(literal, str) and f"endpoint/{literal}/" in "".join(parts)
        )
        tail = parts[-1] if parts else ""
        if names_it and "/variant/" in tail:
            most = props.get("MaxCapacity")
            found[tail.rsplit("/variant/", 1)[1]] = most if isinstance(most, int) else 1
    return found


def _joined(value: object) -> list[str]:
    """The literal parts of a string or an ``Fn::Join`` of strings and references."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict) and "Fn::Join" in value:
        joined = value["Fn::Join"]
        if isinstance(joined, list) and len(joined) == 2 and isinstance(joined[1], list):
            return [p for p in joined[1] if isinstance(p, str)]
    return []


def _config_of(template: Template, endpoint: str) -> str | None:
    return referenced(template.props(endpoint).get("EndpointConfigName"))


def _most(variant: _Variant, registered: Mapping[str, int]) -> int:
    """The most instances a variant may run: its count, its scalable target's maximum, or its
    managed instance scaling's (an endpoint hosting components)."""
    managed = variant.props.get("ManagedInstanceScaling") or {}
    bound = managed.get("MaxInstanceCount", 0) if isinstance(managed, dict) else 0
    return max(
        variant.count, registered.get(variant.name, 0), bound if isinstance(bound, int) else 0
    )


def _fleet_text(variants: Sequence[_Variant], registered: Mapping[str, int]) -> str:
    parts = []
    for v in variants:
        most = _most(v, registered)
        upto = "up to " if most > v.count else ""
        parts.append(f"{upto}{most} x {v.instance_types} (variant {v.name})")
    return ", ".join(parts) or "no instances"


def _what_changed(
    old: Template, new: Template, changes: Mapping[str, ResourceChange], endpoint: str
) -> tuple[str, ...]:
    """The endpoint's, its config's and its models' changed properties, and each variant
    added, removed or changed."""
    lines = []
    own = changes[endpoint]
    if own.properties:
        lines.append(f"Endpoint {endpoint}: {', '.join(own.properties)}")
    old_config, new_config = _config_of(old, endpoint), _config_of(new, endpoint)
    if new_config is not None and new_config in changes:
        change = changes[new_config]
        if change.change is CfnChange.CREATED:
            lines.append(f"EndpointConfig {new_config}: new")
        elif change.properties:
            lines.append(
                f"EndpointConfig {new_config} ({change.change.value}): "
                f"{', '.join(change.properties)}"
            )
    before, after = _variants(old, old_config), _variants(new, new_config)
    for name in sorted(set(before) | set(after)):
        if name not in after:
            lines.append(f"variant {name}: removed ({before[name].instance_types})")
        elif name not in before:
            lines.append(f"variant {name}: added ({after[name].instance_types})")
        else:
            fields = sorted(
                k
                for k in set(before[name].props) | set(after[name].props)
                if before[name].props.get(k) != after[name].props.get(k)
            )
            if fields:
                lines.append(f"variant {name}: {', '.join(fields)}")
    models = sorted({m for v in after.values() for m in references(v.props) if m in new.resources})
    for model in models:
        made = changes.get(model)
        if new.type_of(model) != MODEL or made is None:
            continue
        if made.change is CfnChange.CREATED:
            lines.append(f"Model {model}: new")
        elif made.properties:
            lines.append(f"Model {model} ({made.change.value}): {', '.join(made.properties)}")
    return tuple(lines)


def _endpoint(
    endpoint: str, old: Template, new: Template, changes: Mapping[str, ResourceChange]
) -> Finding:
    change = changes[endpoint]
    if change.change is CfnChange.CREATED:
        variants = list(_variants(new, _config_of(new, endpoint)).values())
        return Finding(
            resource=endpoint,
            kind="endpoint",
            verdict=Verdict.CREATED,
            why="a new Endpoint in the stack: CreateEndpoint",
            meanwhile=f"{_fleet_text(variants, {})} (its own quota)",
        )
    if change.change is CfnChange.DELETED:
        return _deleted(endpoint, "endpoint", "the Endpoint")
    what = _what_changed(old, new, changes, endpoint)
    new_variants = list(_variants(new, _config_of(new, endpoint)).values())
    registered_new = _registered(new, endpoint)
    if change.change is CfnChange.REPLACED:
        renamed = rule("endpoint-name")
        return Finding(
            resource=endpoint,
            kind="endpoint",
            verdict=Verdict.NEW_ENDPOINT,
            why=f"its name changes (a create-only property): {renamed.why}",
            rule=renamed,
            changes=what,
            meanwhile=(
                f"{_fleet_text(new_variants, {})} beside the old endpoint's fleet until the "
                "cleanup deletes it: the quota must hold both"
            ),
            downtime=(
                "none for what references the endpoint in the stack (invoker, alarms, grants "
                "follow); a caller using the old name fails once the cleanup deletes it"
            ),
        )
    if "EndpointConfigName" not in change.properties:
        if change.change is CfnChange.UNCHANGED:
            return Finding(
                resource=endpoint, kind="endpoint", verdict=Verdict.UNCHANGED, why="no change"
            )
        return _in_place(endpoint, "endpoint", rule("endpoint-settings"), what)
    return _update_endpoint(endpoint, old, new, what, new_variants, registered_new)


def _update_endpoint(
    endpoint: str,
    old: Template,
    new: Template,
    what: tuple[str, ...],
    new_variants: list[_Variant],
    registered_new: Mapping[str, int],
) -> Finding:
    old_config, new_config = _config_of(old, endpoint), _config_of(new, endpoint)
    was_async = old_config is not None and "AsyncInferenceConfig" in old.props(old_config)
    is_async = new_config is not None and "AsyncInferenceConfig" in new.props(new_config)
    if was_async != is_async:
        direction = (
            "off (async to real-time)" if was_async else "on (real-time to async, unverified)"
        )
        reason = f"async inference turned {direction} by UpdateEndpoint"
        return _refused(endpoint, "endpoint", reason, rule("async-toggle"), what)
    before = _variants(old, old_config)
    after = {v.name: v for v in new_variants}
    for name in sorted(_registered(old, endpoint)):
        if name in before and (name not in after or after[name].fleet != before[name].fleet):
            became = (
                f"now {after[name].instance_types}" if name in after else "removed from the config"
            )
            reason = (
                f"variant {name} is registered for autoscaling on "
                f"{before[name].instance_types} and is {became}"
            )
            return _refused(endpoint, "endpoint", reason, rule("autoscaled-variant"), what)
    update = rule("endpoint-config")
    rolling = (new.props(endpoint).get("DeploymentConfig") or {}).get("RollingUpdatePolicy")
    if isinstance(rolling, dict):
        verdict, how = Verdict.ROLLING, "rolling (DeploymentConfig.RollingUpdatePolicy)"
        meanwhile = _batch(rolling, new_variants, registered_new)
        downtime = "none: each batch serves before the old one stops"
    else:
        verdict, how = Verdict.BLUE_GREEN, "blue/green"
        meanwhile = (
            f"the new fleet, {_fleet_text(new_variants, registered_new)}, beside the old one "
            "until traffic has moved: the quota must hold both"
        )
        downtime = "none: the old fleet serves until the new one takes the traffic"
    return Finding(
        resource=endpoint,
        kind="endpoint",
        verdict=verdict,
        why=f"{update.why}; here {how}",
        rule=update,
        changes=what,
        meanwhile=meanwhile,
        downtime=downtime,
    )


def _batch(
    rolling: Mapping[str, Any], variants: list[_Variant], registered: Mapping[str, int]
) -> str:
    size = rolling.get("MaximumBatchSize") or {}
    value = size.get("Value", 1) if isinstance(size, dict) else 1
    parts = []
    for v in variants:
        most = _most(v, registered)
        if isinstance(size, dict) and size.get("Type") == "CAPACITY_PERCENT":
            batch = max(1, math.ceil(most * float(value) / 100))
        else:
            batch = int(value)
        parts.append(f"{batch} x {v.instance_types} (variant {v.name})")
    return f"one batch, {', '.join(parts)}, beside the old fleet at a time: the quota must hold it"


# -- components --------------------------------------------------------------------------------


def _component(
    component: str, old: Template, new: Template, changes: Mapping[str, ResourceChange]
) -> Finding:
    change = changes[component]
    if change.change is CfnChange.CREATED:
        copies = (new.props(component).get("RuntimeConfig") or {}).get("CopyCount", "its")
        return Finding(
            resource=component,
            kind="component",
            verdict=Verdict.CREATED,
            why=f"a new component: CreateInferenceComponent, {copies} copies",
            meanwhile="its copies on the endpoint's instances, beside any component it replaces",
        )
    if change.change is CfnChange.DELETED:
        return _deleted(component, "component", "the component")
    what = tuple(f"InferenceComponent {component}: {p}" for p in change.properties)
    move = rule("component-move")
    moved = [p for p in change.properties if p in move.properties]
    if moved:
        return _refused(
            component, "component", f"its {', '.join(moved)} change in place", move, what
        )
    specified = [p for p in change.properties if p in rule("component-specification").properties]
    if specified:
        spec = rule("component-specification")
        props = new.props(component)
        copies = (props.get("RuntimeConfig") or {}).get("CopyCount", "its")
        rolling = (props.get("DeploymentConfig") or {}).get("RollingUpdatePolicy")
        return Finding(
            resource=component,
            kind="component",
            verdict=Verdict.ROLLING if isinstance(rolling, dict) else Verdict.NEW_COPIES,
            why=spec.why,
            rule=spec,
            changes=what,
            meanwhile=(
                f"new copies ({copies}, or a batch of them when rolling) beside the old on the "
                "endpoint's instances, each with its accelerators and memory"
            ),
            downtime="none: the old copies serve until the new ones do",
        )
    if change.properties:
        return _in_place(component, "component", rule("component-runtime"), what)
    return Finding(resource=component, kind="component", verdict=Verdict.UNCHANGED, why="no change")


# -- scalable targets ------------------------------------------------------------------------


def _target(
    target: str, old: Template, new: Template, changes: Mapping[str, ResourceChange]
) -> Finding | None:
    change = changes[target]
    if change.change is CfnChange.UNCHANGED:
        return None
    template = old if change.change is CfnChange.DELETED else new
    scaled = template.props(target).get("ScalableDimension", "?")
    if change.change in (CfnChange.CREATED, CfnChange.DELETED, CfnChange.REPLACED):
        registered = rule("target-resource")
        verdict = {
            CfnChange.CREATED: Verdict.CREATED,
            CfnChange.DELETED: Verdict.DELETED,
            CfnChange.REPLACED: Verdict.CREATED,
        }[change.change]
        why = {
            CfnChange.CREATED: "registered after what it scales exists",
            CfnChange.DELETED: "deregistered in the cleanup, after every update",
            CfnChange.REPLACED: registered.why,
        }[change.change]
        return Finding(
            resource=target,
            kind="scalable target",
            verdict=verdict,
            why=f"{scaled}: {why}",
            rule=registered,
            changes=tuple(f"ScalableTarget {target}: {p}" for p in change.properties),
        )
    bounds = rule("target-bounds")
    before, after = old.props(target), new.props(target)
    moved = tuple(
        f"ScalableTarget {target}: {p} {before.get(p)!r} -> {after.get(p)!r}"
        for p in change.properties
    )
    return _in_place(target, "scalable target", bounds, moved, why=f"{scaled}: {bounds.why}")
