"""The capacity note each endpoint gets: the instance-hours per month it commits to at its
minimum and can reach at its maximum, with its schedules counted over a week, and, for the
instance types the host was given a price for (``price_per_hour=``,
``sizing/instance_prices.py``), what those hours cost.

An inference-component endpoint's floor depends on every component it hosts, so the endpoint
adds its note when it renders, once every component has registered."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from constructs_llm.operations.schedule import MINUTES_PER_WEEK, hours_per_month, weekly_floor
from constructs_llm.sizing.copy_demand import CopyDemand
from constructs_llm.sizing.instance_prices import cost_text

if TYPE_CHECKING:
    from constructs_llm.operations.autoscaling import Autoscaling


def variant_capacity_note(
    instance: str,
    scaling: Autoscaling | None,
    count: int,
    prices: Mapping[str, float] | None = None,
) -> str:
    """The note of a variant whose instances are its own (``LlmEndpoint``); ``prices``: USD
    per instance-hour of the variant's priced types."""
    if scaling is None:
        return _capacity_note(instance, count, count, None, prices, None)
    floor = weekly_floor(scaling.min_capacity, scaling.schedule) if scaling.schedule else None
    return _capacity_note(
        instance,
        min(floor) if floor else scaling.lowest_min,
        scaling.highest_max,
        _scheduled(floor, bool(scaling.schedule)),
        prices,
        hours_per_month(floor) if floor else None,
    )


#: Instance-hours in an average month: 365 days x 24 hours / 12.
_HOURS_PER_MONTH = 730


def _capacity_note(
    instance: str,
    low: int,
    high: int,
    scheduled: str | None,
    prices: Mapping[str, float] | None,
    floor_hours: float | None,
) -> str:
    text = (
        f"Capacity: at minimum {low} x {instance} = {low * _HOURS_PER_MONTH:,} instance-hours "
        f"per month (730 h), at most {high} = {high * _HOURS_PER_MONTH:,}"
    )
    if scheduled:
        text = f"{text}; {scheduled}"
    # No price ships (prices vary by region and change): only those the host was given.
    return f"{text}; {cost_text(prices, low, high, floor_hours)}" if prices else text


class HostedCopies(Protocol):
    """What the note needs of a component: what one copy reserves, and its copy bounds."""

    @property
    def demand(self) -> CopyDemand: ...

    @property
    def copies(self) -> int: ...

    @property
    def autoscaling(self) -> Autoscaling | None: ...


def fleet_capacity_note(
    fleet_name: str,
    *,
    min_instances: int,
    max_instances: int,
    capacity: CopyDemand | None,
    components: Sequence[HostedCopies],
    prices: Mapping[str, float] | None = None,
) -> str:
    """The note of an endpoint whose instances its components' copies fill
    (``InferenceComponentEndpoint``); ``prices``: USD per instance-hour of its priced types."""
    floor = _fleet_floor(min_instances, capacity, components)
    scheduled = any(c.autoscaling and c.autoscaling.schedule for c in components)
    low = min(floor) if floor else min_instances
    return _capacity_note(
        fleet_name,
        low,
        max_instances,
        _scheduled(floor, scheduled),
        prices,
        hours_per_month(floor) if floor and scheduled else None,
    )


def _fleet_floor(
    min_instances: int, capacity: CopyDemand | None, components: Sequence[HostedCopies]
) -> list[int] | None:
    """Instances the fleet keeps at each minute of a week: what the components' floors need,
    and at least ``min_instances``; None when the hardware or a schedule is not known."""
    floors = []
    for component in components:
        scaling = component.autoscaling
        if scaling is None:
            floors.append((component.demand, [component.copies] * MINUTES_PER_WEEK))
            continue
        floor = weekly_floor(scaling.min_capacity, scaling.schedule)
        if floor is None:
            return None
        floors.append((component.demand, floor))
    if capacity is None or not floors:
        return None
    fleet: list[int] = []
    for minute in range(MINUTES_PER_WEEK):  # floors are steps: recompute only where one moves
        if minute and all(f[minute] == f[minute - 1] for _, f in floors):
            fleet.append(fleet[-1])
            continue
        need = functools.reduce(CopyDemand.plus, (d.times(f[minute]) for d, f in floors))
        fleet.append(max(min_instances, _instances(need, capacity)))
    return fleet


def _instances(need: CopyDemand, capacity: CopyDemand) -> int:
    return max(
        math.ceil(need.accelerators / capacity.accelerators) if capacity.accelerators else 0,
        math.ceil(need.cpu_cores / capacity.cpu_cores) if capacity.cpu_cores else 0,
        math.ceil(need.memory_mib / capacity.memory_mib) if capacity.memory_mib else 0,
    )


def _scheduled(floor: list[int] | None, scheduled: bool) -> str | None:
    if not scheduled:
        return None
    if floor is None:
        return "the schedule does not repeat weekly in one time zone, so its hours were not counted"
    return f"with its schedule the floor holds {hours_per_month(floor):,.0f} instance-hours a month"
