"""Where CloudWatch's PromQL alarms can be created, and so whether the default engine alarms
(``operations/engine_signals.py``) are rendered.

PromQL querying, which a PromQL alarm evaluates, is a public preview with a region list of its
own (Amazon CloudWatch User Guide, "Query metrics with PromQL", Supported AWS Regions:
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch-PromQL.html#CloudWatch-PromQL-Regions;
"PromQL alarms": .../monitoring/alarm-promql.html), kept with its source and the date it was
read in ``data/regions.json`` (``promql_alarms``). CloudFormation's schema declares the alarm's
``EvaluationCriteria`` in every region, so nothing stops a template from asking for one where
CloudWatch cannot evaluate it: the deploy would fail after the endpoint (20 minutes and more)
was created, and roll it back.

``Alarms(promql_alarms=...)`` decides:

- ``None`` (the default): on in a stack whose region is concrete and listed; off where the
  region is unknown (an environment-agnostic stack) or not listed, since nothing else can
  make the deploy safe there. A threshold set by hand (``kv_cache_percent``,
  ``requests_waiting``) in such a stack is refused rather than dropped: choose True or False.
- ``True``: on. A concrete region the page does not list fails at synth, naming the nearest
  listed regions; an environment-agnostic stack gets a rule that stops a deploy to an unlisted
  region in seconds, before any resource is created.
- ``False``: off everywhere.
"""

from __future__ import annotations

from typing import Protocol

from aws_cdk import Aws, Fn, Token
from constructs import Construct

from constructs_llm import catalogs
from constructs_llm.errors import RegionError
from constructs_llm.operations.engine_signals import EngineThresholds, thresholds_asked
from constructs_llm.problems import Problem
from constructs_llm.region_availability import nearest_regions
from constructs_llm.scope_facts import region_of, stack_of
from constructs_llm.stack_rules import assert_before_deploy

RULE_ID = "ConstructsLlmRegionPromqlAlarms"
"""Construct id (and logical id) of the rule on the regions that have PromQL alarms."""


class PromqlChoice(EngineThresholds, Protocol):
    """What is read of ``Alarms``: the choice and the engine alarms' thresholds."""

    @property
    def promql_alarms(self) -> bool | None: ...


def promql_regions() -> tuple[str, ...]:
    """The regions CloudWatch's page lists for PromQL querying."""
    return catalogs.regions().promql_alarms.regions


def promql_alarms_on(region: str, choice: bool | None, *, concrete: bool | None = None) -> bool:
    """Whether engine alarms are rendered in a stack of ``region`` (a token when unknown;
    ``concrete``: whether it is not, when the caller knows already)."""
    if choice is None:
        known = not Token.is_unresolved(region) if concrete is None else concrete
        return known and region in promql_regions()
    return choice


def promql_region_problem(region: str, settings: PromqlChoice | None) -> Problem | None:
    """PromQL alarms asked for where they cannot be had: ``promql_alarms=True`` in a concrete
    region the page does not list, or a threshold set by hand where the default leaves them
    off. Asked of a target that could have engine alarms (``engine_alarm_problem`` speaks for
    the others)."""
    if settings is None or settings.promql_alarms is False:
        return None
    known = not Token.is_unresolved(region)
    if settings.promql_alarms is True:
        if not known or region in promql_regions():
            return None
        nearest = ", ".join(nearest_regions(region, promql_regions())) or "none in its partition"
        return Problem.of(
            "alarms.promql_alarms",
            True,
            f"promql_alarms=True: CloudWatch's PromQL alarms are not available in region "
            f"{region!r} (its PromQL page lists {len(promql_regions())} regions, read "
            f"{catalogs.regions().promql_alarms.read}; "
            "docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch-PromQL.html);",
            f"deploy to a listed region, nearest first: {nearest}; or pass "
            "Alarms(promql_alarms=False)",
            RegionError,
        )
    if promql_alarms_on(region, None):
        return None
    asked = thresholds_asked(settings)
    if not asked:
        return None
    where = f"region {region!r}, which" if known else "an environment-agnostic stack, whose region"
    return Problem.of(
        "alarms.promql_alarms",
        settings.promql_alarms,
        f"{' and '.join(asked)} asks for a PromQL alarm, and PromQL alarms are off by default "
        f"in {where} CloudWatch's PromQL page does not list:",
        "pass Alarms(promql_alarms=True) to have them (an environment-agnostic stack then "
        "refuses a deploy to an unlisted region before creating anything), or "
        "promql_alarms=False",
        RegionError,
    )


def assert_promql_region(scope: Construct) -> None:
    """In an environment-agnostic stack with PromQL alarms, a rule that stops a deploy to a
    region CloudWatch's page does not list, in seconds, before any resource is created."""
    if region_of(scope)[1]:
        return
    assert_before_deploy(
        stack_of(scope),
        RULE_ID,
        Fn.condition_contains(list(promql_regions()), Aws.REGION),
        "constructs_llm: CloudWatch's PromQL alarms (a public preview) are not available in "
        "this region (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/"
        "CloudWatch-PromQL.html#CloudWatch-PromQL-Regions); deploy to a listed region or "
        "pass Alarms(promql_alarms=False)",
    )
