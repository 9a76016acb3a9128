"""The `fleet` example: sixty models across four stacks of one app, each stack under
CloudFormation's 500 resources, read from the committed templates (tests/test_examples.py
proves they equal a fresh synth of the example)."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from constructs_llm.hosting.stack_size import MAX_RESOURCES
from stacks import stack_ids
from stacks.fleet import MODELS_PER_TEAM, TEAMS
from tests.support.templates import fixture

#: What one model brings: its Model and component, its execution role and five policies (the
#: role's own, the ECR token, the container writes, and its weights prefix read by its role
#: and by the endpoint's), the copies' scalable target, target tracking and
#: scale-out-from-zero policies, and that step policy's alarm.
PER_MODEL = {
    "AWS::SageMaker::Model": 1,
    "AWS::SageMaker::InferenceComponent": 1,
    "AWS::IAM::Role": 1,
    "AWS::IAM::Policy": 5,
    "AWS::ApplicationAutoScaling::ScalableTarget": 1,
    "AWS::ApplicationAutoScaling::ScalingPolicy": 2,
    "AWS::CloudWatch::Alarm": 1,
}


@pytest.fixture(scope="module")
def templates() -> dict[str, dict[str, Any]]:
    return {name: json.loads(fixture(name)) for name in stack_ids("fleet")}


def _brought(resources: dict[str, Any], index: int) -> Counter[str]:
    """The resources of model ``index`` (its model's and its component's logical ids)."""
    own = re.compile(rf"^(Model|Component){index:02d}")  # two digits: no prefix of another
    return Counter(r["Type"] for k, r in resources.items() if own.match(k))


def test_sixty_models_in_four_stacks_each_under_the_limit(
    templates: dict[str, dict[str, Any]],
) -> None:
    assert list(templates) == [f"Fleet{team}" for team in TEAMS]
    components = 0
    for name, template in templates.items():
        resources = template["Resources"]
        kinds = Counter(r["Type"] for r in resources.values())
        components += kinds["AWS::SageMaker::InferenceComponent"]
        # one shared endpoint per stack, hosting every model of the team
        assert kinds["AWS::SageMaker::Endpoint"] == 1, name
        counted = sum(n for kind, n in kinds.items() if kind != "AWS::CDK::Metadata")
        assert counted == 187 <= MAX_RESOURCES, (name, counted)
    assert components == len(TEAMS) * MODELS_PER_TEAM == 60


def test_each_model_brings_twelve_resources_and_no_alarm_of_its_own(
    templates: dict[str, dict[str, Any]],
) -> None:
    for name, template in templates.items():
        resources = template["Resources"]
        for index in range(1, MODELS_PER_TEAM + 1):
            assert _brought(resources, index) == Counter(PER_MODEL), (name, index)
        alarms = [
            r["Properties"] for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"
        ]
        # the only alarms are the scale-out-from-zero step policies' (the group is watched on
        # its dashboard): each acts on its component's scaling policy
        assert len(alarms) == MODELS_PER_TEAM
        assert all(a["MetricName"] == "NoCapacityInvocationFailures" for a in alarms), name
        assert all(
            resources[a["AlarmActions"][0]["Ref"]]["Type"]
            == "AWS::ApplicationAutoScaling::ScalingPolicy"
            for a in alarms
        ), name


def test_one_dashboard_per_team_shows_every_model(templates: dict[str, dict[str, Any]]) -> None:
    for name, template in templates.items():
        resources = template["Resources"]
        (board,) = [r for r in resources.values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
        body = json.dumps(board["Properties"]["DashboardBody"])
        names = [
            r["Properties"]["InferenceComponentName"]
            for r in resources.values()
            if r["Type"] == "AWS::SageMaker::InferenceComponent"
        ]
        assert len(names) == MODELS_PER_TEAM
        assert all(n in body for n in names), name


def test_one_stack_of_sixty_would_not_fit(templates: dict[str, dict[str, Any]]) -> None:
    """Why the app splits: sixty models at twelve resources each, in one stack, are above
    CloudFormation's limit before any endpoint is counted."""
    per_model = sum(PER_MODEL.values())
    assert per_model * len(TEAMS) * MODELS_PER_TEAM > MAX_RESOURCES
    assert per_model * MODELS_PER_TEAM < MAX_RESOURCES


def test_the_four_stacks_have_the_same_resources(templates: dict[str, dict[str, Any]]) -> None:
    """The same resources, by type and logical id, in every team's stack (only names differ,
    and the ids and hashes derived from them): the examples' cfn-lint and checkov scans read
    the first alone."""
    shapes = [
        sorted(
            (re.sub(r"[0-9A-F]{8}", "", k.replace(name, "")), r["Type"])
            for k, r in t["Resources"].items()
            if r["Type"] != "AWS::CDK::Metadata"
        )
        for name, t in templates.items()
    ]
    assert len(shapes[0]) == 187
    assert all(shape == shapes[0] for shape in shapes[1:])
