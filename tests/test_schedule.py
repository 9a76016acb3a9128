"""Scheduled capacity: scheduled actions on a variant's instances and a component's copies,
the weekly floor they commit to, and each endpoint's capacity note."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import pytest
from aws_cdk import Duration, Stack, TimeZone
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk.assertions import Match, Template

from constructs_llm import (
    Autoscaling,
    LlmEndpoint,
    ScheduledCapacity,
)
from constructs_llm.notes import notes_of
from constructs_llm.operations.schedule import MINUTES_PER_WEEK, hours_per_month, weekly_floor
from tests.matrix.builders import app_of, component
from tests.matrix.builders import model as llama3

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"
EVENING = appscaling.Schedule.cron(hour="20", minute="0", week_day="MON-FRI")
MORNING = appscaling.Schedule.cron(hour="8", minute="0", week_day="MON-FRI")


def _has_note(stack: Stack, child: str, pattern: str) -> None:
    """``stack``'s construct ``child`` carries a note matching ``pattern``, once the app is
    synthesized (an inference-component endpoint writes its note then)."""
    app_of(stack).synth()
    notes = notes_of(stack.node.find_child(child))
    assert any(re.search(pattern, note) for note in notes), notes


def _hours(floor: list[int] | None) -> float:
    assert floor is not None
    return sum(floor) / 60


# -- the weekly floor ------------------------------------------------------------------------


def test_a_weekday_schedule_holds_twelve_hours_a_day_five_days_a_week() -> None:
    floor = weekly_floor(
        1,
        [
            ScheduledCapacity(schedule=EVENING, min_capacity=0),
            ScheduledCapacity(schedule=MORNING, min_capacity=2),
        ],
    )
    assert floor is not None and len(floor) == MINUTES_PER_WEEK
    assert _hours(floor) == 2 * 12 * 5
    # Monday 07:59 is still Friday night's floor; Monday 08:00 is the morning's
    monday = 1 * 24 * 60
    assert (floor[monday + 8 * 60 - 1], floor[monday + 8 * 60]) == (0, 2)
    assert hours_per_month(floor) == pytest.approx(120 * 730 / 168)


@pytest.mark.parametrize(
    ("schedule", "hours"),
    [
        (appscaling.Schedule.cron(hour="*/6", minute="0"), 7 * 24),  # every 6 h: always on
        (appscaling.Schedule.cron(hour="9", minute="30", week_day="2-6"), 7 * 24),
        (appscaling.Schedule.cron(hour="22", minute="0", week_day="SAT,SUN"), 7 * 24),
    ],
)
def test_cron_fields_in_every_form_cron_takes(schedule: appscaling.Schedule, hours: int) -> None:
    floor = weekly_floor(3, [ScheduledCapacity(schedule=schedule, min_capacity=1)])
    assert _hours(floor) == hours  # one action only: its floor holds all week


@pytest.mark.parametrize(
    "schedule",
    [
        appscaling.Schedule.rate(Duration.hours(1)),
        appscaling.Schedule.cron(day="1", hour="0", minute="0"),  # monthly
        appscaling.Schedule.expression("at(2030-01-01T00:00:00)"),
    ],
    ids=["rate", "day-of-month", "at"],
)
def test_schedules_that_do_not_repeat_weekly_are_not_counted(
    schedule: appscaling.Schedule,
) -> None:
    assert weekly_floor(1, [ScheduledCapacity(schedule=schedule, min_capacity=2)]) is None


def test_actions_in_different_time_zones_are_not_counted() -> None:
    # 20:00 UTC and 08:00 Berlin are 11 or 12 hours apart, by the season: no one weekly floor
    mixed = [
        ScheduledCapacity(schedule=EVENING, min_capacity=1),
        ScheduledCapacity(schedule=MORNING, min_capacity=2, time_zone=TimeZone.EUROPE_BERLIN),
    ]
    assert weekly_floor(2, mixed) is None
    same = [replace(item, time_zone=TimeZone.EUROPE_BERLIN) for item in mixed]
    assert _hours(weekly_floor(2, same)) == 2 * 12 * 5 + 1 * (168 - 60)


def test_actions_that_set_only_the_maximum_leave_the_floor() -> None:
    floor = weekly_floor(2, [ScheduledCapacity(schedule=EVENING, max_capacity=3)])
    assert _hours(floor) == 2 * 7 * 24


# -- endpoints: scheduled instances ------------------------------------------------------------


@pytest.fixture(scope="module")
def scheduled_endpoint(new_stack: Callable[..., Stack]) -> tuple[Stack, Template]:
    stack = new_stack()
    model = llama3(stack, instance_type="ml.g5.2xlarge", bound=False)
    LlmEndpoint(
        stack,
        "Endpoint",
        model=model,
        instance_count=2,
        autoscaling=Autoscaling(
            min_capacity=2,
            max_capacity=6,
            target_concurrent_requests=8,
            schedule=[
                ScheduledCapacity(
                    schedule=EVENING,
                    min_capacity=1,
                    max_capacity=2,
                    time_zone=TimeZone.EUROPE_BERLIN,
                ),
                ScheduledCapacity(
                    schedule=MORNING,
                    min_capacity=2,
                    max_capacity=8,
                    time_zone=TimeZone.EUROPE_BERLIN,
                ),
            ],
        ),
    )
    return stack, Template.from_stack(stack)


def test_schedules_become_scheduled_actions_on_the_variant_s_target(
    scheduled_endpoint: tuple[Stack, Template],
) -> None:
    _, template = scheduled_endpoint
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget",
        {
            "ScalableDimension": "sagemaker:variant:DesiredInstanceCount",
            "ScheduledActions": [
                {
                    "ScheduledActionName": "Schedule0",
                    "Schedule": "cron(0 20 ? * MON-FRI *)",
                    "ScalableTargetAction": {"MinCapacity": 1, "MaxCapacity": 2},
                    "Timezone": "Europe/Berlin",
                },
                {
                    "ScheduledActionName": "Schedule1",
                    "Schedule": "cron(0 8 ? * MON-FRI *)",
                    "ScalableTargetAction": {"MinCapacity": 2, "MaxCapacity": 8},
                    "Timezone": "Europe/Berlin",
                },
            ],
        },
    )


def test_the_capacity_note_counts_the_schedule_s_floor_and_ceiling(
    scheduled_endpoint: tuple[Stack, Template],
) -> None:
    stack, _ = scheduled_endpoint
    # floor: 2 instances for 60 weekday hours, 1 for the other 108: 228 instance-hours a week;
    # the quota note names the scheduled maximum (8), doubled while a blue/green update runs
    monthly = round(228 * 730 / 168)
    _has_note(
        stack,
        "Endpoint",
        r"Capacity: at minimum 1 x ml\.g5\.2xlarge = 730 instance-hours per month \(730 h\), "
        rf"at most 8 = 5,840; with its schedule the floor holds {monthly:,} instance-hours "
        r"a month$",
    )
    _has_note(stack, "Endpoint", r"must allow at least 16 .*: 8 in service at most")


def test_an_endpoint_without_scaling_notes_its_fixed_fleet(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    model = llama3(stack, instance_type="ml.g5.2xlarge", bound=False)
    LlmEndpoint(stack, "Endpoint", model=model, instance_count=3)
    _has_note(stack, "Endpoint", r"at minimum 3 x ml\.g5\.2xlarge = 2,190 .* at most 3 = 2,190$")


# -- components: scheduled copies, and instances released at night -----------------------------


def _two_copies_on_a_releasing_endpoint(stack: Stack, autoscaling: Autoscaling) -> None:
    """The example of docs/sizing.md: two one-GPU copies on an endpoint that may release every
    instance."""
    component(
        stack,
        endpoint_props={"min_instances": 0, "max_instances": 2},
        accelerators=1,
        min_memory_mib=24 * 1024,
        copies=2,
        autoscaling=autoscaling,
    )


def test_a_night_schedule_to_zero_copies_releases_the_instances(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a component whose copies go to zero on weekday evenings and weekends, on an
    # endpoint that may release every instance
    stack = new_stack()
    _two_copies_on_a_releasing_endpoint(
        stack,
        Autoscaling(
            min_capacity=2,
            max_capacity=4,
            target_concurrent_requests=4,
            schedule=[
                ScheduledCapacity(schedule=EVENING, min_capacity=0, max_capacity=0),
                ScheduledCapacity(schedule=MORNING, min_capacity=2, max_capacity=4),
            ],
        ),
    )
    template = Template.from_stack(stack)
    # THEN the copies' target carries the actions
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget",
        {
            "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount",
            "ScheduledActions": [
                Match.object_like({"ScalableTargetAction": {"MinCapacity": 0, "MaxCapacity": 0}}),
                Match.object_like({"ScalableTargetAction": {"MinCapacity": 2, "MaxCapacity": 4}}),
            ],
        },
    )
    # AND the endpoint's note: no instance at night; by day the two one-GPU copies fit one
    # 4-GPU instance: 60 instance-hours a week
    _has_note(
        stack,
        "Shared",
        r"at minimum 0 x ml\.g5\.12xlarge = 0 instance-hours per month \(730 h\), at most 2 "
        rf"= 1,460; with its schedule the floor holds {round(60 * 730 / 168):,} instance-hours",
    )


def test_a_scheduled_zero_gets_the_step_policy_that_brings_the_first_copy_back(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN copies that may reach zero only through a scheduled action (the maximum stays 4)
    stack = new_stack()
    _two_copies_on_a_releasing_endpoint(
        stack,
        Autoscaling(
            min_capacity=2,
            max_capacity=4,
            target_invocations_per_instance=10,
            schedule=[ScheduledCapacity(schedule=EVENING, min_capacity=0)],
        ),
    )
    # THEN target tracking and the step policy on NoCapacityInvocationFailures: target
    # tracking alone never leaves zero copies
    policies = Template.from_stack(stack).find_resources(
        "AWS::ApplicationAutoScaling::ScalingPolicy"
    )
    kinds = sorted(p["Properties"]["PolicyType"] for p in policies.values())
    assert kinds == ["StepScaling", "TargetTrackingScaling"]


def test_components_without_schedules_keep_the_instances_their_copies_need(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    component(
        stack,
        endpoint_props={"min_instances": 0, "max_instances": 3},
        accelerators=2,
        min_memory_mib=16 * 1024,
        copies=3,  # 6 GPUs: two 4-GPU instances
    )
    _has_note(stack, "Shared", r"at minimum 2 x ml\.g5\.12xlarge = 1,460 .* at most 3 = 2,190$")
