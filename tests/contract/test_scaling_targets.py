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

import copy
from typing import Any

import pytest

from tests.support.contract_templates import COMBINATIONS, every_template, example_templates
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


@pytest.mark.parametrize("name", [*example_templates(), COMBINATIONS])
def test_every_scalable_target_scales_a_resource_of_its_template(name: str) -> None:
    walk = walk_scaling(name, every_template()[name])
    assert not walk.problems, "\n".join(walk.problems)


def test_the_walk_finds_variants_and_components() -> None:
    templates = example_templates()
    assert walk_scaling("Production", templates["Production"]).walked
    assert len(walk_scaling("SharedEndpoint", templates["SharedEndpoint"]).walked) == 2


# -- mutants --------------------------------------------------------------------------------


def _fails(template: dict[str, Any], *fragments: str) -> None:
    walk = walk_scaling("mutant", template)
    assert walk.walked
    assert any(all(f in p for f in fragments) for p in walk.problems), walk.problems


def _target(template: dict[str, Any]) -> dict[str, Any]:
    first = next(iter(of_type(template, "AWS::ApplicationAutoScaling::ScalableTarget")))
    properties: dict[str, Any] = template["Resources"][first]["Properties"]
    return properties


def test_a_target_on_another_variant_fails() -> None:
    template = copy.deepcopy(example_templates()["Production"])
    _target(template)["ResourceId"]["Fn::Join"][1][2] = "/variant/AllTraffic"
    _fails(template, "EndpointScalableTarget", "names variant AllTraffic")


def test_a_target_on_another_endpoint_fails() -> None:
    template = copy.deepcopy(example_templates()["Production"])
    _target(template)["ResourceId"] = "endpoint/other/variant/g5-12xlarge"
    _fails(template, "names endpoint other")


def test_a_target_on_another_component_fails() -> None:
    template = copy.deepcopy(example_templates()["Llama3Components"])
    _target(template)["ResourceId"] = "inference-component/Llama3Components-Other"
    _fails(template, "Llama3ScalableTarget", "names component Llama3Components-Other")


@pytest.mark.parametrize(("name", "wrong"), [("Production", COPIES), ("SharedEndpoint", VARIANT)])
def test_a_target_on_the_wrong_dimension_fails(name: str, wrong: str) -> None:
    template = copy.deepcopy(example_templates()[name])
    _target(template)["ScalableDimension"] = wrong
    _fails(template, f"scales {wrong}")


def test_a_component_target_that_does_not_wait_for_its_component_fails() -> None:
    template = copy.deepcopy(example_templates()["Llama3Components"])
    target = template["Resources"]["Llama3ScalableTarget59461F4B"]
    target.pop("DependsOn")
    _fails(template, "does not wait for Llama3E19721A2")


def test_a_target_with_another_role_fails() -> None:
    template = copy.deepcopy(example_templates()["OvernightBatch"])
    _target(template)["RoleARN"] = {"Fn::GetAtt": ["ModelRole3E65CE92", "Arn"]}
    _fails(template, "uses role", "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint")


def test_a_policy_on_no_target_of_the_template_fails() -> None:
    template = copy.deepcopy(example_templates()["SharedEndpoint"])
    for policy in of_type(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values():
        policy["Properties"]["ScalingTargetId"] = "sagemaker|inference-component/x|dim"
    _fails(template, "scales none of")
