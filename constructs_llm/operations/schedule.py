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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from constructs_llm.cdk_values import cdk_kind
from constructs_llm.problems import Problem, Problems
from constructs_llm.values import all_ints, describe, int_type_problem, positive_int_problem

if TYPE_CHECKING:
    from aws_cdk import TimeZone
    from aws_cdk import aws_applicationautoscaling as appscaling

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
        """Values of the wrong type, a schedule expression Application Auto Scaling rejects
        and a time zone that is not an IANA name fail here, naming the schedule; the bounds
        are checked with the target's (``schedule[i] ...``)."""
        has_expression = cdk_kind(self.schedule, "aws_applicationautoscaling", "Schedule")
        named = f"ScheduledCapacity({self.expression})" if has_expression else ""
        problems = Problems(named or "ScheduledCapacity")
        if not has_expression:
            problems.add(
                Problem.of(
                    "schedule",
                    self.schedule,
                    f"schedule must be an appscaling.Schedule, got {describe(self.schedule)};",
                    "use appscaling.Schedule.cron(hour=..., minute=...)",
                )
            )
        else:
            problems.add(_expression_problem(self.expression))
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


def _time_zone(value: object) -> tuple[TimeZone | None, Problem | None]:
    """The ``TimeZone`` that ``time_zone=`` names, or the problem with it."""
    from aws_cdk import TimeZone, Token

    if isinstance(value, TimeZone):
        return value, _abbreviation_problem(value.timezone_name)
    if value is None:
        return value, None
    if not isinstance(value, str):
        return None, Problem.of(
            "time_zone",
            value,
            f"time_zone must be an IANA time zone name such as {_ZONE_EXAMPLE!r} or an "
            f"aws_cdk.TimeZone, got {describe(value)}",
        )
    if Token.is_unresolved(value):
        return TimeZone.of(value), None
    abbreviation = _abbreviation_problem(value)
    if abbreviation:
        return None, abbreviation
    if value in _zone_names():
        return TimeZone.of(value), None
    close = difflib.get_close_matches(value, sorted(_zone_names()), n=2)
    wrong = (
        f"time_zone must be an IANA time zone name such as {_ZONE_EXAMPLE!r} (Python's "
        f"zoneinfo database), got {value!r}"
    )
    if close:
        fix = f"did you mean {' or '.join(repr(c) for c in close)}?"
        return None, Problem.of("time_zone", value, f"{wrong};", fix)
    return None, Problem.of("time_zone", value, wrong)


#: Time-zone abbreviations people write for a zone, and the IANA names they usually mean.
#: Application Auto Scaling takes "the canonical names of the IANA time zones" (botocore
#: ``PutScheduledAction.Timezone``); the tz database keeps a few abbreviations as legacy zones
#: (``EST``, ``MST``, ``HST``, ``CET``, ``EET``, ``WET``, ``MET`` and ``EST5EDT``-style rules),
#: now links to a city's zone, and the fixed ones (``EST`` is UTC-5 all year) ignore the
#: daylight saving time a schedule in "EST" or "CET" means.
_TIME_ZONE_ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("EST", "EDT", "ET", "EST5EDT"), ("America/New_York", "America/Toronto")),
    **dict.fromkeys(("CST", "CDT", "CT", "CST6CDT"), ("America/Chicago", "Asia/Shanghai")),
    **dict.fromkeys(("MST", "MDT", "MT", "MST7MDT"), ("America/Denver", "America/Phoenix")),
    **dict.fromkeys(("PST", "PDT", "PT", "PST8PDT"), ("America/Los_Angeles",)),
    **dict.fromkeys(("AKST", "AKDT"), ("America/Anchorage",)),
    **dict.fromkeys(("HST", "HDT"), ("Pacific/Honolulu",)),
    **dict.fromkeys(("BST",), ("Europe/London",)),
    **dict.fromkeys(("CET", "CEST", "MET", "MEST"), ("Europe/Paris", "Europe/Berlin")),
    **dict.fromkeys(("EET", "EEST"), ("Europe/Athens", "Europe/Helsinki")),
    **dict.fromkeys(("WET", "WEST"), ("Europe/Lisbon",)),
    **dict.fromkeys(("MSK",), ("Europe/Moscow",)),
    **dict.fromkeys(("IST",), ("Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem")),
    **dict.fromkeys(("JST",), ("Asia/Tokyo",)),
    **dict.fromkeys(("KST",), ("Asia/Seoul",)),
    **dict.fromkeys(("SGT",), ("Asia/Singapore",)),
    **dict.fromkeys(("HKT",), ("Asia/Hong_Kong",)),
    **dict.fromkeys(("AEST", "AEDT"), ("Australia/Sydney", "Australia/Melbourne")),
    **dict.fromkeys(("ACST", "ACDT"), ("Australia/Adelaide",)),
    **dict.fromkeys(("AWST",), ("Australia/Perth",)),
    **dict.fromkeys(("NZST", "NZDT"), ("Pacific/Auckland",)),
    **dict.fromkeys(("BRT",), ("America/Sao_Paulo",)),
    **dict.fromkeys(("SAST",), ("Africa/Johannesburg",)),
}


def _abbreviation_problem(name: str) -> Problem | None:
    """A time-zone abbreviation (``EST``, ``PST``, ``CET``, ``IST``...) where an IANA name
    goes, with the IANA names it usually means."""
    meant = _TIME_ZONE_ABBREVIATIONS.get(name.strip().upper()) if isinstance(name, str) else None
    if meant is None:
        return None
    quoted = [repr(zone) for zone in meant]
    choices = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return Problem.of(
        "time_zone",
        name,
        f"time_zone {name!r} is an abbreviation, not the IANA name Application Auto Scaling "
        f"takes; it usually means {choices}:",
        "pass the IANA name of the place you mean (its "
        "daylight saving rules come with it), or 'UTC'",
    )


@functools.cache
def _zone_names() -> frozenset[str]:
    """The IANA names Python's zoneinfo knows; where the system has no time zone database
    (and the ``tzdata`` package is not installed), the names ``aws_cdk.TimeZone`` lists."""
    import zoneinfo  # loaded when a schedule names a time zone, not with the constructs

    names = zoneinfo.available_timezones()
    if names:
        return frozenset(names)
    from aws_cdk import TimeZone

    return frozenset(
        getattr(TimeZone, member).timezone_name for member in dir(TimeZone) if member.isupper()
    )


def schedule_problems(schedule: object) -> list[Problem | None]:
    """The value checks of ``Autoscaling(schedule=...)``; bounds per target are the caller's."""
    if isinstance(schedule, str | bytes) or not isinstance(schedule, Sequence):
        wrong = f"schedule must be a list of ScheduledCapacity, got {schedule!r}"
        return [Problem.of("schedule", schedule, wrong)]
    problems: list[Problem | None] = []
    for index, item in enumerate(schedule):
        label = f"schedule[{index}]"
        if not isinstance(item, ScheduledCapacity):
            problems.append(
                Problem.of(
                    label,
                    item,
                    f"{label} must be a ScheduledCapacity(schedule=appscaling.Schedule.cron(...), "
                    f"min_capacity=..., max_capacity=...), got {item!r}",
                )
            )
            continue
        low, high = item.min_capacity, item.max_capacity
        if low is None and high is None:
            problems.append(
                Problem.of(
                    label, item, f"{label} sets neither min_capacity nor max_capacity;", "set one"
                )
            )
        problems.append(positive_int_problem(f"{label} min_capacity", low, minimum=0))
        problems.append(positive_int_problem(f"{label} max_capacity", high, minimum=0))
        if all_ints(low, high) and low > high:  # type: ignore[operator]
            wrong = f"{label} min_capacity ({low}) is above max_capacity ({high})"
            problems.append(Problem.of(f"{label} min_capacity", low, wrong))
    return problems


# -- the expression Application Auto Scaling takes ------------------------------------------

_AT = re.compile(r"^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$")
_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_CRON_ANY = re.compile(r"^cron\((.*)\)$")
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_UNIX_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")  # crontab: 0 and 7 = Sunday


@dataclass(frozen=True)
class _CronField:
    """One field of Application Auto Scaling's cron (the EventBridge "Cron expressions
    reference" it points to): its range, names and the special characters it takes."""

    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    special: str = ""  # beyond , - * /: "?" and "L", "W", "#" where allowed
    hint: str = ""


_FIELDS = (
    _CronField("minutes", 0, 59),
    _CronField("hours", 0, 23),
    _CronField("day-of-month", 1, 31, special="?LW"),
    _CronField("month", 1, 12, _MONTHS, hint="1-12 or JAN-DEC"),
    _CronField("day-of-week", 1, 7, _DAYS, special="?L#", hint="1-7 or SUN-SAT, where 1 is Sunday"),
    _CronField("year", 1970, 2199),
)
_EXPRESSION_FIX = (
    "build it with appscaling.Schedule.cron(hour=..., minute=..., week_day=...), "
    "Schedule.rate(Duration...) or Schedule.at(datetime)"
)


def _expression_problem(expression: str) -> Problem | None:
    """What Application Auto Scaling would reject in a schedule expression: the forms its
    ``PutScheduledAction`` takes are ``at(yyyy-mm-ddThh:mm:ss)``, ``rate(value unit)`` with a
    positive whole value and a unit of minute(s), hour(s) or day(s), and ``cron(fields)`` with
    six fields (minutes, hours, day of month, month, day of week, year), one of the two day
    fields being ``?`` (botocore application-autoscaling ``PutScheduledActionRequest.Schedule``;
    Application Auto Scaling guide, "Schedule recurring scaling actions using cron
    expressions", and the EventBridge "Cron expressions reference" it points to)."""
    from aws_cdk import Token

    if not isinstance(expression, str) or Token.is_unresolved(expression):
        return None
    text = expression.strip()
    if _AT.match(text):
        return _at_problem(text)
    if text.startswith("rate("):
        if _RATE.match(text) and int(text[5:].split()[0]) > 0:
            return None
        return Problem.of(
            "schedule",
            text,
            f"schedule {text!r}: a rate takes a positive whole number and one of minute, "
            "minutes, hour, hours, day or days, such as rate(30 minutes);",
            _EXPRESSION_FIX,
        )
    cron = _CRON_ANY.match(text)
    if cron is None:
        return Problem.of(
            "schedule",
            expression,
            f"schedule {expression!r} is not an expression Application Auto Scaling takes: "
            "at(yyyy-mm-ddThh:mm:ss), rate(<n> minutes|hours|days) or cron(<six fields>);",
            _EXPRESSION_FIX,
        )
    return _cron_problem(cron.group(1).split())


def _at_problem(text: str) -> Problem | None:
    import datetime

    try:
        datetime.datetime.strptime(text[3:-1], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return Problem.of(
            "schedule",
            text,
            f"schedule {text!r} names no real date and time (at(yyyy-mm-ddThh:mm:ss))",
        )
    return None


def _cron_problem(fields: list[str]) -> Problem | None:
    shown = f"cron({' '.join(fields)})"
    if len(fields) == 5:
        return Problem.of(
            "schedule",
            fields,
            f"schedule {shown} has the 5 fields of a crontab line, but Application Auto Scaling's "
            "cron has six: minutes, hours, day-of-month, month, day-of-week, year, with '?' in "
            f"one of the day fields and 1 = Sunday{_crontab_suggestion(fields)};",
            _EXPRESSION_FIX,
        )
    if len(fields) != 6:
        return Problem.of(
            "schedule",
            fields,
            f"schedule {shown} has {len(fields)} fields; Application Auto Scaling's cron has "
            "six: minutes, hours, day-of-month, month, day-of-week, year (cron(0 20 ? * MON-FRI "
            "*));",
            _EXPRESSION_FIX,
        )
    for field, value in zip(_FIELDS, fields, strict=True):
        if not _field_ok(field, value):
            allowed = field.hint or f"{field.low}-{field.high}"
            return Problem.of(
                "schedule",
                fields,
                f"schedule {shown}: {field.name} {value!r} is not valid ({allowed});",
                _EXPRESSION_FIX,
            )
    day, week_day = fields[2], fields[4]
    if (day == "?") == (week_day == "?"):
        both = "both set" if day != "?" else "both '?'"
        fixed = list(fields)
        fixed[2 if day != "?" else 4] = "?" if day != "?" else "*"
        return Problem.of(
            "schedule",
            fields,
            f"schedule {shown}: day-of-month ({day!r}) and day-of-week ({week_day!r}) are {both}; "
            f"exactly one of them must be '?': cron({' '.join(fixed)})",
        )
    return None


def _field_ok(field: _CronField, value: str) -> bool:
    """Whether ``value`` is a valid cron field: lists of ``*``, values, ranges and steps, plus
    the field's special characters."""
    if value == "?":
        return "?" in field.special
    return all(_part_ok(field, part) for part in value.split(","))


def _part_ok(field: _CronField, part: str) -> bool:
    upper = part.upper()
    if "L" in field.special and field.name == "day-of-month" and upper in ("L", "LW"):
        return True
    if "W" in field.special and upper.endswith("W"):
        return _number(field, upper[:-1]) is not None
    if "L" in field.special and field.name == "day-of-week" and upper.endswith("L"):
        return upper == "L" or _number(field, upper[:-1]) is not None
    if "#" in field.special and "#" in upper:
        day, _, nth = upper.partition("#")
        return _number(field, day) is not None and nth in ("1", "2", "3", "4", "5")
    spread, _, step = upper.partition("/")
    if step and not (step.isdigit() and int(step) > 0):
        return False
    if spread == "*":
        return True
    bounds = spread.split("-")
    return len(bounds) <= 2 and all(_number(field, b) is not None for b in bounds)


def _number(field: _CronField, token: str) -> int | None:
    """The value ``token`` names in ``field`` (a number or a name), or None when outside it."""
    if token in field.names:
        return field.names.index(token) + field.low
    if not token.isdigit():
        return None
    value = int(token)
    return value if field.low <= value <= field.high else None


def _crontab_suggestion(fields: list[str]) -> str:
    """The six-field expression a crontab line means, when its fields translate plainly."""
    minute, hour, day, month, week_day = fields
    names = week_day
    if week_day not in ("*", "?"):
        try:
            names = ",".join(
                "-".join(_UNIX_DAYS[int(n)] if n.isdigit() else n.upper() for n in part.split("-"))
                for part in week_day.split(",")
            )
        except IndexError:
            return ""
    if names not in ("*", "?"):
        six = [minute, hour, "?", month, names, "*"]
    else:
        six = [minute, hour, day, month, "?", "*"]
    if _cron_problem(six) is not None:
        return ""
    return f": cron({' '.join(six)})"


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
