"""Every CloudFront origin that is a function URL can reach it (the walk and its AWS facts:
``tests/support/walks/distribution_origin.py``); each missing permission or signature fails
the walk, naming the function and the action."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.contract_templates import (
    SIGNED_DISTRIBUTION,
    example_templates,
    signed_distribution,
)
from tests.support.contract_walk import of_type
from tests.support.walks.distribution_origin import ACTIONS, walk_origins


@pytest.mark.parametrize("name", [*example_templates(), SIGNED_DISTRIBUTION])
def test_every_function_url_origin_is_reachable(name: str) -> None:
    template = signed_distribution() if name == SIGNED_DISTRIBUTION else example_templates()[name]
    walk = walk_origins(name, template)
    assert not walk.problems, "\n".join(walk.problems)


def test_the_walk_finds_both_kinds_of_origin() -> None:
    walked = walk_origins("FrontDoors", example_templates()["FrontDoors"]).walked
    walked += walk_origins(SIGNED_DISTRIBUTION, signed_distribution()).walked
    assert any("AWS_IAM" in w for w in walked) and any("NONE" in w for w in walked), walked


# -- mutants --------------------------------------------------------------------------------


def _front_doors() -> dict[str, Any]:
    return copy.deepcopy(example_templates()["FrontDoors"])


def _signed() -> dict[str, Any]:
    return copy.deepcopy(signed_distribution())


def _fails(template: dict[str, Any], *fragments: str) -> None:
    walk = walk_origins("mutant", template)
    assert walk.walked
    assert any(all(f in p for f in fragments) for p in walk.problems), walk.problems


def _without_permission(template: dict[str, Any], principal: str, action: str) -> None:
    resources = template["Resources"]
    (permission,) = [
        k
        for k, r in resources.items()
        if r["Type"] == "AWS::Lambda::Permission"
        and r["Properties"]["Principal"] == principal
        and r["Properties"]["Action"] == action
    ]
    del resources[permission]


@pytest.mark.parametrize("action", ACTIONS)
def test_a_signed_origin_without_cloudfronts_permission_fails(action: str) -> None:
    template = _signed()
    _without_permission(template, "cloudfront.amazonaws.com", action)
    _fails(template, action, "SignedFunction3F069B31", "SignedDistribution")


def test_a_permission_for_another_distribution_fails() -> None:
    template = _signed()
    for resource in of_type(template, "AWS::Lambda::Permission").values():
        if resource["Properties"]["Principal"] == "cloudfront.amazonaws.com":
            resource["Properties"]["SourceArn"] = {
                "Fn::Sub": "arn:${AWS::Partition}:cloudfront::${AWS::AccountId}:distribution/EOTHER"
            }
    _fails(template, "lambda:InvokeFunctionUrl", "needs ArnLike AWS:SourceArn", "EOTHER")


def test_a_signed_origin_without_its_access_control_fails() -> None:
    template = _signed()
    for origin in template["Resources"]["SignedDistributionE3AF7717"]["Properties"][
        "DistributionConfig"
    ]["Origins"]:
        origin.pop("OriginAccessControlId")
    _fails(template, "no origin access control signs it")


def test_an_access_control_that_does_not_always_sign_fails() -> None:
    template = _signed()
    for control in of_type(template, "AWS::CloudFront::OriginAccessControl").values():
        control["Properties"]["OriginAccessControlConfig"]["SigningBehavior"] = "no-override"
    _fails(template, "SigningBehavior")


@pytest.mark.parametrize("action", ACTIONS)
def test_a_public_url_without_public_permission_fails(action: str) -> None:
    template = _front_doors()
    _without_permission(template, "*", action)
    _fails(template, action, "KeysFunction3485B6FE", "NONE")
