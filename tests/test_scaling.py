"""Autoscaling settings: validated when built, so mistakes never reach a deploy."""

from __future__ import annotations

import pytest
from aws_cdk import Duration

from constructs_llm import Autoscaling
from constructs_llm.errors import ScalingError


def test_concurrency_target_is_the_default_choice() -> None:
    s = Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8)
    assert s.uses_concurrency
    assert s.target_concurrent_requests == 8
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


def test_a_backlog_target_or_none_at_all_is_a_valid_value() -> None:
    # The construct decides whether the target suits it: an asynchronous endpoint holds its
    # backlog (5 requests per instance unless given), a real-time one needs another target.
    assert Autoscaling(min_capacity=0, max_capacity=2).backlog_target == 5
    chosen = Autoscaling(min_capacity=0, max_capacity=2, target_backlog_per_instance=12)
    assert chosen.backlog_target == 12
    assert not chosen.uses_concurrency


def test_two_targets_are_refused_naming_both() -> None:
    with pytest.raises(
        ScalingError,
        match=r"set one target, got 2 \(target_concurrent_requests, "
        r"target_backlog_per_instance\)",
    ):
        Autoscaling(max_capacity=2, target_concurrent_requests=4, target_backlog_per_instance=5)
    with pytest.raises(ScalingError, match=r"target_backlog_per_instance must be a number > 0"):
        Autoscaling(max_capacity=2, target_backlog_per_instance=0)
