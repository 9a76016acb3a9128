"""Instance prices a host is given (``price_per_hour=``): the same figures as the sizing
command's ``--price`` (``fit_instances(prices=...)``), checked against the host's instance
types, and turned into dollars in its capacity note (``operations/capacity_notes.py``).

No price table ships with the library: SageMaker's hosting prices differ by region and change,
and no maintained package carries them offline, so the user states what they pay (on-demand,
a savings plan's rate, ...). One number prices a host of one instance type; a mapping prices
each instance pool by type (``{"ml.g6e.2xlarge": 2.24, "ml.g5.4xlarge": 2.03}``), and a type
left out is simply not priced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from constructs_llm.problems import Problem

if TYPE_CHECKING:
    from constructs_llm.hardware.instance_type import InstanceType

#: What ``price_per_hour=`` takes: USD per instance-hour, one number or one per instance type.
PricePerHour = float | Mapping[str, float]

_PROP = "price_per_hour"


def usd_per_hour_problem(what: str, price: object, prop: str = _PROP) -> Problem | None:
    """``price`` must be a positive, finite number of USD per instance-hour."""
    if (
        isinstance(price, bool)
        or not isinstance(price, int | float)
        or not (math.isfinite(price) and price > 0)
    ):
        return Problem.of(
            prop, price, f"{what} must be a positive number of USD per hour, got {price!r}"
        )
    return None


def price_problems(value: object, instance_types: Sequence[InstanceType]) -> list[Problem]:
    """What is wrong with ``price_per_hour=value`` on a host of ``instance_types`` (its
    instance pools, or every variant's types, in order)."""
    if value is None:
        return []
    names = list(dict.fromkeys(t.name for t in instance_types))
    if not isinstance(value, Mapping):
        if not isinstance(value, int | float) or isinstance(value, bool):
            return [
                Problem.of(
                    _PROP,
                    value,
                    f"{_PROP} must be a number of USD per instance-hour, or a mapping of instance "
                    f"type to it (as `python -m constructs_llm.sizing --price TYPE=USD`), got "
                    f"{value!r}",
                )
            ]
        problem = usd_per_hour_problem(_PROP, value)
        if problem is not None:
            return [problem]
        if len(names) > 1:
            return [
                Problem.of(
                    _PROP,
                    value,
                    f"{_PROP}={value!r} is one price, but the host has {len(names)} instance types "
                    f"({', '.join(names)});",
                    f"give one per type: {_PROP}={{{names[0]!r}: {value!r}, ...}}",
                )
            ]
        return []
    found: list[Problem | None] = []
    for name, price in value.items():
        if name not in names:
            found.append(
                Problem.of(
                    _PROP,
                    name,
                    f"{_PROP} prices {name!r}, which is not an instance type of this host "
                    f"({', '.join(names)});",
                    "price the host's own types",
                )
            )
            continue
        found.append(usd_per_hour_problem(f"{_PROP}[{name!r}]", price))
    return [p for p in found if p]


def prices_of(
    value: PricePerHour | None, instance_types: Sequence[InstanceType]
) -> dict[str, float]:
    """The checked ``price_per_hour`` by instance type name (``price_problems`` found none)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {name: float(price) for name, price in value.items()}
    return {instance_types[0].name: float(value)}


def cost_text(prices: Mapping[str, float], low: int, high: int, floor_hours: float | None) -> str:
    """The capacity note's dollars: for each priced type, the month at the minimum count (and
    at the schedule's floor, when counted) and at the maximum."""
    hours = 730  # an average month: 365 days x 24 hours / 12, as the note's instance-hours
    parts = []
    for name, price in prices.items():
        text = (
            f"{name} at ${price:,.2f}/h: ${low * hours * price:,.0f} a month at minimum, "
            f"${high * hours * price:,.0f} at most"
        )
        if floor_hours is not None:
            text += f", ${floor_hours * price:,.0f} with its schedule"
        parts.append(text)
    return "; ".join(parts)
