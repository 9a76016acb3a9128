"""Autoscaling settings: validated when built, so mistakes never reach a deploy."""

from __future__ import annotations

import pytest
from aws_cdk import Duration

from constructs_llm import Autoscaling
from constructs_llm.errors import ScalingError


def test_concurrency_target_is_the_default_choice() -> None:
    s = Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8)
    assert s.uses_concurrency
    assert s.target_value == 8
    assert s.in_cooldown.to_seconds() == 600
    assert s.out_cooldown.to_seconds() == 120


def test_invocations_target_and_cooldowns() -> None:
    s = Autoscaling(
        max_capacity=2,
        target_invocations_per_instance=20,
        scale_in_cooldown=Duration.minutes(3),
        scale_out_cooldown=Duration.seconds(30),
    )
    assert not s.uses_concurrency
    assert s.min_capacity == 1
    assert s.in_cooldown.to_seconds() == 180
    assert s.out_cooldown.to_seconds() == 30


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"min_capacity": 3, "max_capacity": 2, "target_concurrent_requests": 4},
            r"min_capacity \(3\) is above max_capacity \(2\)",
        ),
        ({"max_capacity": 2}, "exactly one of .* got neither"),
        (
            {
                "max_capacity": 2,
                "target_concurrent_requests": 4,
                "target_invocations_per_instance": 9,
            },
            "exactly one of .* got both",
        ),
        ({"max_capacity": 0, "target_concurrent_requests": 4}, "max_capacity must be .* got 0"),
        (
            {"min_capacity": -1, "max_capacity": 2, "target_concurrent_requests": 4},
            "min_capacity must be .* got -1",
        ),
        ({"max_capacity": 2, "target_concurrent_requests": 0}, "must be a number > 0, got 0"),
        (
            {"max_capacity": 2, "target_concurrent_requests": 1, "scale_in_cooldown": 300},
            "scale_in_cooldown must be a Duration, got 300",
        ),
    ],
)
def test_bad_settings_fail_naming_the_value(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ScalingError, match=message):
        Autoscaling(**kwargs)  # type: ignore[arg-type]
