"""Prices on the hosting constructs (``price_per_hour=``): the sizing command's ``--price``
figures, checked against the host's instance types and turned into dollars in its capacity
note. (Bad prices are rows of the bad-input matrix, tests/matrix/bad_hosting.py.)"""

from __future__ import annotations

import re

import pytest
from aws_cdk import Stack

from constructs_llm import Autoscaling, InferenceComponentEndpoint, LlmEndpoint, ScheduledCapacity
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.notes import notes_of
from constructs_llm.sizing.instance_prices import cost_text, price_problems, prices_of
from tests.matrix.builders import app_of, component
from tests.matrix.builders import model as llama3
from tests.test_schedule import EVENING, MORNING

POOLS = [InstanceType("ml.g6e.2xlarge"), InstanceType("ml.g5.4xlarge")]


@pytest.fixture(scope="module")
def priced(new_stack: object) -> Stack:
    """One app: an autoscaled endpoint over two pools, one of them priced; an endpoint of one
    type priced with one number, on a weekday schedule; and a component endpoint priced with
    one number, whose floor its component sets."""
    stack: Stack = new_stack()  # type: ignore[operator]
    pools = llama3(stack, id="PoolsModel", instance_type=None, bound=False)
    LlmEndpoint(
        stack,
        "Pools",
        model=pools,
        instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"],
        autoscaling=Autoscaling(min_capacity=1, max_capacity=3, target_concurrent_requests=4),
        price_per_hour={"ml.g6e.2xlarge": 2.24},
        alarms=False,
    )
    daily = llama3(stack, id="DailyModel", instance_type="ml.g5.2xlarge", bound=False)
    LlmEndpoint(
        stack,
        "Daily",
        model=daily,
        autoscaling=Autoscaling(
            min_capacity=1,
            max_capacity=4,
            target_concurrent_requests=4,
            schedule=[
                ScheduledCapacity(schedule=MORNING, min_capacity=2),
                ScheduledCapacity(schedule=EVENING, min_capacity=1),
            ],
        ),
        price_per_hour=1.5,
        alarms=False,
    )
    component(stack, accelerators=1, endpoint_props={"max_instances": 2, "price_per_hour": 7.09})
    app_of(stack).synth()
    return stack


def _capacity(stack: Stack, child: str) -> str:
    (note,) = [n for n in notes_of(stack.node.find_child(child)) if n.startswith("Capacity")]
    return note


def test_a_priced_pool_gets_dollars_at_the_minimum_and_the_maximum(priced: Stack) -> None:
    note = _capacity(priced, "Pools")
    # 730 h x $2.24 = $1,635.20 at one instance, x 3 at most; the fallback pool is not priced
    assert note.endswith(
        "at most 3 = 2,190; ml.g6e.2xlarge at $2.24/h: $1,635 a month at minimum, $4,906 at most"
    ), note
    assert "ml.g5.4xlarge at" not in note


def test_one_number_prices_the_one_type_and_the_schedule_s_floor(priced: Stack) -> None:
    note = _capacity(priced, "Daily")
    # the floor: 2 instances 60 weekday hours, 1 the other 108: 228 instance-hours a week
    hours = 228 * 730 / 168
    assert re.search(
        rf"ml\.g5\.2xlarge at \$1\.50/h: \$1,095 a month at minimum, \$4,380 at most, "
        rf"\${hours * 1.5:,.0f} with its schedule$",
        note,
    ), note


def test_a_component_endpoint_prices_its_fleet(priced: Stack) -> None:
    note = _capacity(priced, "Shared")
    assert note.endswith(
        "at most 2 = 1,460; ml.g5.12xlarge at $7.09/h: $5,176 a month at minimum, $10,351 at most"
    ), note


def test_without_prices_the_note_keeps_to_instance_hours(new_stack: object) -> None:
    stack: Stack = new_stack()  # type: ignore[operator]
    InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")
    app_of(stack).synth()
    assert "$" not in _capacity(stack, "Shared")


def test_the_checks_name_the_value_and_the_host_s_types() -> None:
    assert price_problems(None, POOLS) == []
    assert price_problems({"ml.g5.4xlarge": 2}, POOLS) == []
    assert price_problems(2.24, POOLS[:1]) == []
    (several,) = map(str, price_problems(2.24, POOLS))
    assert "2 instance types (ml.g6e.2xlarge, ml.g5.4xlarge)" in several
    (other,) = map(str, price_problems({"ml.p5.48xlarge": 98.0}, POOLS))
    assert "prices 'ml.p5.48xlarge', which is not an instance type of this host" in other
    for bad in (0, -1, float("inf"), float("nan")):
        assert [str(p) for p in price_problems({"ml.g5.4xlarge": bad}, POOLS)] == [
            f"price_per_hour['ml.g5.4xlarge'] must be a positive number of USD per hour, "
            f"got {bad!r}"
        ]
    for wrong in ("2.24", True, [2.24]):
        (problem,) = price_problems(wrong, POOLS[:1])
        assert problem.property == "price_per_hour" and str(problem).endswith(f"got {wrong!r}")


def test_prices_and_dollars_are_pure_arithmetic() -> None:
    assert prices_of(3, POOLS[:1]) == {"ml.g6e.2xlarge": 3.0}
    assert prices_of({"ml.g5.4xlarge": 2}, POOLS) == {"ml.g5.4xlarge": 2.0}
    assert cost_text({"ml.g5.4xlarge": 2.0, "ml.g6e.2xlarge": 3.0}, 1, 2, None) == (
        "ml.g5.4xlarge at $2.00/h: $1,460 a month at minimum, $2,920 at most; "
        "ml.g6e.2xlarge at $3.00/h: $2,190 a month at minimum, $4,380 at most"
    )
