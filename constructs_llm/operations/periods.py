"""The periods metrics and alarms share (one minute, five minutes), made on first use.

A ``Duration`` is a jsii object: making one at import would be the package's first jsii call,
which loads aws-cdk-lib's JavaScript in Node.js and jsii's type checks before any construct
exists.
"""

from __future__ import annotations

from functools import cache

from aws_cdk import Duration


@cache
def one_minute() -> Duration:
    """One minute, one ``Duration`` for every metric and alarm: one jsii call, not one each."""
    return Duration.minutes(1)


@cache
def five_minutes() -> Duration:
    """Five minutes, one ``Duration`` for every alarm that reads five-minute periods."""
    return Duration.minutes(5)
