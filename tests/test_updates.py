"""Updates that cannot break: the quota an update needs beside the fleet in service."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import Duration, Stack

from constructs_llm import Autoscaling, Deployment, InferenceComponent, LlmEndpoint, Variant
from constructs_llm.notes import notes_of
from constructs_llm.operations.deployment import update_surge
from tests.matrix.builders import G5, G5_4GPU, app_of, component, endpoint, model

BAKE = Duration.minutes(5)


def _quotas(construct: object) -> list[str]:
    return [n for n in notes_of(construct) if n.startswith("Service Quotas")]  # type: ignore[arg-type]


# -- the quota an update needs ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deployment", "surge"),
    [
        (None, 6),  # SageMaker's default: blue/green, all at once
        (Deployment.canary(percent=10, bake=BAKE), 6),
        (Deployment.linear(step_percent=20, bake=BAKE), 6),
        (Deployment.all_at_once(bake=BAKE), 6),
        (Deployment.rolling(batch_percent=25, bake=BAKE), 2),  # 25 % of 6, rounded up
        (Deployment.rolling(batch_percent=5, bake=BAKE), 1),  # at least one instance
        (Deployment.rolling(batch_percent=50, bake=BAKE), 3),
    ],
)
def test_an_update_runs_a_second_fleet_or_one_rolling_batch_beside_the_first(
    deployment: Deployment | None, surge: int
) -> None:
    assert update_surge(deployment, 6).instances == surge


def test_a_blue_green_endpoint_needs_the_quota_for_two_fleets_at_its_maximum(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an endpoint that may scale to 4 instances, updated blue/green (the default)
    scaled = endpoint(
        new_stack(),
        instance_count=2,
        autoscaling=Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
    )
    # THEN its quota note counts the new fleet beside the old, both at the maximum
    assert _quotas(scaled) == [
        f"Service Quotas: '{G5} for endpoint usage' must allow at least 8 instance(s) in the "
        "target region (new accounts often have 0): 4 in service at most, and 4 more while a "
        "blue/green update runs the new fleet beside the old"
    ]


def test_a_rolling_endpoint_needs_only_one_batch_beside_its_fleet(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN the same endpoint, updated in rolling batches of 25 %
    rolled = endpoint(
        new_stack(),
        instance_count=2,
        autoscaling=Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
        deployment=Deployment.rolling(batch_percent=25, bake=BAKE),
    )
    # THEN a batch of one instance (25 % of 4) comes up beside the four
    assert _quotas(rolled) == [
        f"Service Quotas: '{G5} for endpoint usage' must allow at least 5 instance(s) in the "
        "target region (new accounts often have 0): 4 in service at most, and 1 more while a "
        "rolling update runs a batch (25 % of the fleet) beside them"
    ]


def test_variants_on_one_instance_type_add_up_both_fleets(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN two variants on ml.g5.2xlarge (3 and up to 2 instances) and one on ml.g5.12xlarge
    stack = new_stack()
    a = model(stack, id="A", bound=False)
    b = model(stack, id="B", bound=False)
    ab = LlmEndpoint(
        stack,
        "Endpoint",
        variants=[
            Variant(model=a, instance_count=3),
            Variant(
                model=b,
                autoscaling=Autoscaling(max_capacity=2, target_concurrent_requests=8),
            ),
            Variant(model=b, instance_type=G5_4GPU, name="big"),
        ],
    )
    # THEN UpdateEndpoint replaces every variant's fleet: each type counts its variants twice
    assert _quotas(ab) == [
        f"Service Quotas: '{G5} for endpoint usage' must allow at least 10 instance(s) in the "
        "target region (new accounts often have 0): 5 in service at most, and 5 more while a "
        "blue/green update runs the new fleet beside the old",
        f"Service Quotas: '{G5_4GPU} for endpoint usage' must allow at least 2 instance(s) in "
        "the target region (new accounts often have 0): 1 in service at most, and 1 more while "
        "a blue/green update runs the new fleet beside the old",
    ]


def test_a_component_endpoint_needs_a_second_fleet_for_an_update_of_its_config(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN components on an endpoint of at most 3 instances
    stack = new_stack()
    chat: InferenceComponent = component(stack, endpoint_props={"max_instances": 3}, accelerators=1)
    app_of(stack).synth()
    # THEN its quota counts a new fleet of max_instances beside the old one
    assert _quotas(chat.endpoint) == [
        f"Service Quotas: '{G5_4GPU} for endpoint usage' must allow at least 6 instance(s) in "
        "the target region (new accounts often have 0): 3 in service at most, and 3 more while "
        "an update of the endpoint's config runs a new fleet beside the old"
    ]
