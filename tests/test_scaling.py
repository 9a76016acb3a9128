"""Autoscaling settings: validated when built, so mistakes never reach a deploy."""

from __future__ import annotations

from aws_cdk import Duration

from constructs_llm import Autoscaling


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
