"""Every Application Auto Scaling target of every template scales something the template
creates, and every scaling policy scales one of those targets:

- ``ResourceId`` is ``endpoint/<endpoint name>/variant/<variant name>`` with the dimension
  ``sagemaker:variant:DesiredInstanceCount``, or ``inference-component/<component name>``
  with ``sagemaker:inference-component:DesiredCopyCount`` (botocore's
  application-autoscaling model, RegisterScalableTarget, ``ResourceId`` and
  ``ScalableDimension``); the names resolve to an endpoint of the template and a variant of
  its endpoint config, or to an inference component of the template;
- the target waits for the resource it names (CloudFormation registers it after the resource
  exists: RegisterScalableTarget fails on a resource that does not);
- ``RoleARN`` is the service-linked role Application Auto Scaling uses for SageMaker,
  ``AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint`` ("Amazon SageMaker AI and
  Application Auto Scaling", https://docs.aws.amazon.com/autoscaling/application/userguide/
  services-that-can-integrate-sagemaker.html);
- each ``AWS::ApplicationAutoScaling::ScalingPolicy`` names one of these targets by
  ``ScalingTargetId``.

What only a deploy proves: that the metric a policy tracks is published for that variant or
component, and the account's quota allows the maximum.
"""

from __future__ import annotations

from typing import Any

from tests.support.contract_walk import Walk, of_type
from tests.support.symbolic import (
    ACCOUNT,
    PARTITION,
    Resolver,
    Text,
    is_literal,
    literal,
    references,
    render,
    split,
    text,
)

__all__ = ["COPIES", "SERVICE_ROLE", "VARIANT", "walk_scaling"]

VARIANT = "sagemaker:variant:DesiredInstanceCount"
COPIES = "sagemaker:inference-component:DesiredCopyCount"
SERVICE_ROLE = text(
    "arn:", PARTITION, ":iam::", ACCOUNT,
    ":role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
    "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint",
)  # fmt: skip


def _waits_for(template: dict[str, Any], later: str, earlier: str) -> bool:
    resources = template["Resources"]
    seen: set[str] = set()
    todo = [later]
    while todo:
        resource = resources[todo.pop()]
        depends = resource.get("DependsOn", [])
        named = set(references(resource.get("Properties", {})))
        named |= {depends} if isinstance(depends, str) else set(depends)
        for logical_id in named & set(resources) - seen:
            if logical_id == earlier:
                return True
            seen.add(logical_id)
            todo.append(logical_id)
    return False


def _named(resolve: Resolver, kind: str, name: Text) -> str | None:
    for logical_id, resource in resolve.resources.items():
        if resource["Type"] == kind and resolve.name(logical_id) == name:
            return logical_id
    return None


def walk_scaling(name: str, template: dict[str, Any]) -> Walk:
    walk = Walk(name)
    resolve = Resolver(template)
    targets = of_type(template, "AWS::ApplicationAutoScaling::ScalableTarget")
    for target_id, target in targets.items():
        props = target["Properties"]
        if props["ServiceNamespace"] != "sagemaker":
            continue
        resource_id = resolve(props["ResourceId"])
        dimension = props["ScalableDimension"]
        parts = split(resource_id, "/")
        problem = None
        scaled = None
        if parts[0] == ("endpoint",) and len(parts) == 4 and parts[2] == ("variant",):
            scaled = _named(resolve, "AWS::SageMaker::Endpoint", parts[1])
            variants = _variants(template, scaled) if scaled else []
            if scaled is None:
                problem = f"names endpoint {render(parts[1])}, not one of the template's"
            elif not is_literal(parts[3]) or literal(parts[3]) not in variants:
                problem = f"names variant {render(parts[3])}; {scaled} has {variants}"
            elif dimension != VARIANT:
                problem = f"scales {dimension} of a variant, not {VARIANT}"
        elif parts[0] == ("inference-component",) and len(parts) == 2:
            scaled = _named(resolve, "AWS::SageMaker::InferenceComponent", parts[1])
            if scaled is None:
                problem = f"names component {render(parts[1])}, not one of the template's"
            elif dimension != COPIES:
                problem = f"scales {dimension} of a component, not {COPIES}"
        else:
            problem = f"has ResourceId {render(resource_id)}, not a variant or a component"
        if problem is None and scaled is not None and not _waits_for(template, target_id, scaled):
            problem = f"does not wait for {scaled}, which it names"
        if render(resolve(props["RoleARN"])) != render(SERVICE_ROLE):
            problem = f"uses role {render(resolve(props['RoleARN']))}, not {render(SERVICE_ROLE)}"
        if problem is not None:
            walk.problems.append(f"{name}: scalable target {target_id} {problem}")
        walk.walked.append(target_id)
    for policy_id, policy in of_type(
        template, "AWS::ApplicationAutoScaling::ScalingPolicy"
    ).items():
        named = set(references(policy["Properties"].get("ScalingTargetId", {})))
        if not named & set(targets):
            walk.problems.append(
                f"{name}: scaling policy {policy_id} scales none of {sorted(targets)}"
            )
    return walk


def _variants(template: dict[str, Any], endpoint_id: str) -> list[str]:
    endpoint = template["Resources"][endpoint_id]["Properties"]
    (config_id,) = set(references(endpoint["EndpointConfigName"]))
    variants = template["Resources"][config_id]["Properties"]["ProductionVariants"]
    return [v["VariantName"] for v in variants]
