"""Every scalable target scales a variant or component of its template (the walk and its AWS
facts: ``tests/support/walks/scaling_targets.py``); each wrong name, dimension, role or
ordering fails the walk, naming the target."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.contract_templates import example_templates
from tests.support.contract_walk import of_type
from tests.support.walks.scaling_targets import COPIES, VARIANT, walk_scaling


@pytest.mark.parametrize("name", list(example_templates()))
def test_every_scalable_target_scales_a_resource_of_its_template(name: str) -> None:
    walk = walk_scaling(name, example_templates()[name])
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
