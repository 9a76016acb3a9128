"""Scheduled capacity: Application Auto Scaling scheduled actions that move a variant's (or a
component's) scaling bounds at set times, and the weekly floor those bounds commit to.

Each scheduled action sets the scalable target's ``MinCapacity``/``MaxCapacity`` when it fires,
and they hold until the next action changes them. A schedule that repeats every week (cron
with ``*`` or ``?`` for day of month, month and year) is evaluated minute by minute over a
week to tell how many instance-hours the floor commits to; cron fields follow the format
CDK's ``Schedule.cron`` writes (https://docs.aws.amazon.com/AmazonCloudWatch/latest/events/
ScheduledEvents.html#CronExpressions: minutes, hours, day of month, month, day of week 1-7 or
SUN-SAT with 1 = Sunday, year).
"""

from __future__ import annotations

import difflib
import functools
import re
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from constructs_llm.cdk_values import cdk_kind
from constructs_llm.problems import Problems
from constructs_llm.values import all_ints, describe, int_type_problem, positive_int_problem

if TYPE_CHECKING:
    from aws_cdk import TimeZone
    from aws_cdk import aws_applicationautoscaling as appscaling

__all__ = [
    "MINUTES_PER_WEEK",
    "ScheduledCapacity",
    "hours_per_month",
    "schedule_problems",
    "weekly_floor",
]

MINUTES_PER_WEEK = 7 * 24 * 60
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_CRON = re.compile(r"^cron\((\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\)$")


@dataclass(frozen=True, kw_only=True)
class ScheduledCapacity:
    """New scaling bounds from a point in time, e.g. none at night, more on weekday mornings.

    :param schedule: when the bounds change, e.g. ``appscaling.Schedule.cron(hour="20",
        minute="0", week_day="MON-FRI")`` (UTC unless ``time_zone`` is given).
    :param min_capacity: the new lower bound (instances, or copies of a component; 0 releases
        a component's copies). @default unchanged
    :param max_capacity: the new upper bound. @default unchanged
    :param time_zone: the schedule's time zone: an IANA name such as ``"Europe/Paris"``
        (checked against Python's ``zoneinfo`` database) or an ``aws_cdk.TimeZone``; a name
        becomes ``TimeZone.of(name)``. @default UTC
    """

    schedule: appscaling.Schedule
    min_capacity: int | None = None
    max_capacity: int | None = None
    time_zone: TimeZone | str | None = None

    def __post_init__(self) -> None:
        """Values of the wrong type fail here; the bounds are checked with the target's
        (``schedule[i] ...``)."""
        problems = Problems("ScheduledCapacity")
        if not cdk_kind(self.schedule, "aws_applicationautoscaling", "Schedule"):
            problems.add(
                f"schedule must be an appscaling.Schedule, got {describe(self.schedule)}; use "
                "appscaling.Schedule.cron(hour=..., minute=...)"
            )
        problems.add(int_type_problem("min_capacity", self.min_capacity, minimum=0))
        problems.add(int_type_problem("max_capacity", self.max_capacity, minimum=0))
        zone, problem = _time_zone(self.time_zone)
        problems.add(problem)
        problems.raise_if_any()
        object.__setattr__(self, "time_zone", zone)

    @property
    def expression(self) -> str:
        return str(self.schedule.expression_string)

    @property
    def zone(self) -> TimeZone | None:
        """``time_zone`` as a ``TimeZone`` (a name given is converted); None = UTC."""
        from aws_cdk import TimeZone

        zone = self.time_zone
        return zone if isinstance(zone, TimeZone) else None  # a name is converted when built

    @property
    def zone_name(self) -> str:
        """The time zone's IANA name; ``"UTC"`` by default."""
        zone = self.zone
        return zone.timezone_name if zone is not None else "UTC"


_ZONE_EXAMPLE = "Europe/Paris"


def _time_zone(value: object) -> tuple[TimeZone | None, str | None]:
    """The ``TimeZone`` that ``time_zone=`` names, or the problem with it."""
    from aws_cdk import TimeZone, Token

    if value is None or isinstance(value, TimeZone):
        return value, None
    if not isinstance(value, str):
        return None, (
            f"time_zone must be an IANA time zone name such as {_ZONE_EXAMPLE!r} or an "
            f"aws_cdk.TimeZone, got {describe(value)}"
        )
    if Token.is_unresolved(value) or value in _zone_names():
        return TimeZone.of(value), None
    close = difflib.get_close_matches(value, sorted(_zone_names()), n=2)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return None, (
        f"time_zone must be an IANA time zone name such as {_ZONE_EXAMPLE!r} (Python's "
        f"zoneinfo database), got {value!r}{hint}"
    )


@functools.cache
def _zone_names() -> frozenset[str]:
    """The IANA names Python's zoneinfo knows; where the system has no time zone database
    (and the ``tzdata`` package is not installed), the names ``aws_cdk.TimeZone`` lists."""
    names = zoneinfo.available_timezones()
    if names:
        return frozenset(names)
    from aws_cdk import TimeZone

    return frozenset(
        getattr(TimeZone, member).timezone_name for member in dir(TimeZone) if member.isupper()
    )


def schedule_problems(schedule: object) -> list[str | None]:
    """The value checks of ``Autoscaling(schedule=...)``; bounds per target are the caller's."""
    if isinstance(schedule, str | bytes) or not isinstance(schedule, Sequence):
        return [f"schedule must be a list of ScheduledCapacity, got {schedule!r}"]
    problems: list[str | None] = []
    for index, item in enumerate(schedule):
        label = f"schedule[{index}]"
        if not isinstance(item, ScheduledCapacity):
            problems.append(
                f"{label} must be a ScheduledCapacity(schedule=appscaling.Schedule.cron(...), "
                f"min_capacity=..., max_capacity=...), got {item!r}"
            )
            continue
        low, high = item.min_capacity, item.max_capacity
        if low is None and high is None:
            problems.append(f"{label} sets neither min_capacity nor max_capacity; set one")
        problems.append(positive_int_problem(f"{label} min_capacity", low, minimum=0))
        problems.append(positive_int_problem(f"{label} max_capacity", high, minimum=0))
        if all_ints(low, high) and low > high:  # type: ignore[operator]
            problems.append(f"{label} min_capacity ({low}) is above max_capacity ({high})")
    return problems


def weekly_floor(initial: int, schedule: Sequence[ScheduledCapacity]) -> list[int] | None:
    """The lower bound in force at each minute of a week (Sunday 00:00 first), once the
    schedule has cycled; None when an action does not repeat weekly, or when the actions that
    set the minimum use different time zones (their offsets move with daylight saving). In one
    zone the week's total is the same as in UTC."""
    fires: list[tuple[int, int]] = []  # (minute of the week, new min)
    setting_min = [item for item in schedule if item.min_capacity is not None]
    if len({item.zone_name for item in setting_min}) > 1:
        return None
    for item in schedule:
        if item.min_capacity is None:
            continue
        minutes = _weekly_minutes(item.expression)
        if minutes is None:
            return None
        fires.extend((m, item.min_capacity) for m in minutes)
    if not fires:
        return [initial] * MINUTES_PER_WEEK
    fires.sort()
    floor = [0] * MINUTES_PER_WEEK
    current = fires[-1][1]  # the last action of the previous week still holds
    changes = dict(fires)
    for minute in range(MINUTES_PER_WEEK):
        current = changes.get(minute, current)
        floor[minute] = current
    return floor


def hours_per_month(floor: Sequence[int]) -> float:
    """Instance-hours per average month (730 h) of a weekly floor given per minute."""
    return sum(floor) / 60 / (MINUTES_PER_WEEK / 60) * 730


def _weekly_minutes(expression: str) -> list[int] | None:
    match = _CRON.match(expression)
    if match is None:
        return None
    minute, hour, day, month, week_day, year = match.groups()
    if day not in ("*", "?") or month != "*" or year != "*":
        return None
    minutes, hours = _field(minute, 0, 59), _field(hour, 0, 23)
    days = _field(week_day, 1, 7, names=_DAYS) if week_day not in ("*", "?") else range(1, 8)
    if minutes is None or hours is None or days is None:
        return None
    return sorted(((d - 1) * 24 + h) * 60 + m for d in days for h in hours for m in minutes)


def _field(text: str, low: int, high: int, *, names: Sequence[str] = ()) -> Sequence[int] | None:
    """A cron field's values: ``*``, numbers, names, ``a-b``, ``a,b`` and ``/step``."""

    def number(token: str) -> int:
        upper = token.upper()
        return names.index(upper) + low if upper in names else int(token)

    values: set[int] = set()
    try:
        for part in text.split(","):
            spread, _, step = part.partition("/")
            if spread == "*":
                start, end = low, high
            elif "-" in spread:
                start, end = (number(p) for p in spread.split("-", 1))
            else:  # "5/10" starts at 5 and repeats to the end of the range
                start = number(spread)
                end = high if step else start
            values.update(range(start, end + 1, int(step) if step else 1))
    except (ValueError, IndexError):
        return None
    if not values or min(values) < low or max(values) > high:
        return None
    return sorted(values)
