"""How an instance-type change reaches an autoscaled endpoint (``LlmEndpoint(fleet_change=...)``).

SageMaker refuses an UpdateEndpoint that changes the instance type of, or removes, a variant
registered with Application Auto Scaling ("If the update would change the instance type for
any model that is a target for auto scaling, the update fails", guide "Update endpoints that
use auto scaling", ``endpoint-scaling-update``), and CloudFormation updates the endpoint
before it deletes the old scalable target. Two ways through:

- ``FleetChange.NEW_ENDPOINT``: the Endpoint takes a physical name derived from its path and
  its fleet (:func:`fleet_endpoint_name`). ``EndpointName`` is the Endpoint's one create-only
  property (its CloudFormation schema), so a new fleet is a new name, and CloudFormation
  replaces the Endpoint: it creates the new one (and its scalable target and policy, which
  name it), points the alarms, invokers and grants at it, and deletes the old ones in the
  cleanup ("creates the replacement resource first, changes references from other dependent
  resources to point to the replacement resource, and then deletes the old resource", guide
  "Update behaviors of stack resources"). UpdateEndpoint never runs for that change, so
  SageMaker has nothing to refuse; every logical id stays. A change that keeps the fleet (a
  model, image or env) keeps the name and updates in place. The old endpoint's
  containers keep logging until the cleanup deletes it, so its models' roles may write the log
  group of every name :func:`fleet_endpoint_prefix` covers (``container_writes.py``).
- ``FleetChange.TWO_DEPLOYS``: no derived name; the change goes in two deploys (first
  ``autoscaling=None``), and each autoscaled variant warns under an id naming its fleet
  (``constructs-llm:autoscaled-fleet:<fleet>``) until acknowledged.

The default comes from the app's context, ``"constructs-llm:newEndpointOnFleetChange": true``
(in ``cdk.json``) choosing ``NEW_ENDPOINT``, as CDK's own feature flags do: an endpoint
deployed without a name would be replaced once by turning it on, so upgrading the library never
does it; new apps set it. An endpoint without autoscaling takes no derived name in either mode
(its instance type changes in place), unless it is asynchronous.

Async inference, turned on or off, is refused by UpdateEndpoint too ("The AsyncInferenceConfig
parameter cannot be removed from this endpoint", rule ``async-toggle`` in
``constructs_llm/updates/rules.py``). With ``NEW_ENDPOINT`` the mode is part of the name: an
asynchronous endpoint's ends in ``-async`` (``<path>-g5-2xlarge-async``; ``<path>-async`` when
it does not autoscale, so its instance type still changes in place), a real-time endpoint's is
what it was, and the toggle replaces the endpoint in one deploy. With ``TWO_DEPLOYS`` or a name
of the user's, an asynchronous endpoint warns (``constructs-llm:async-toggle``) with the way
through: a new construct id or name in the deploy that changes the mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from constructs import Construct

from constructs_llm.hosting.names import SAGEMAKER_NAME, generated_name, generated_prefix
from constructs_llm.problems import Problem
from constructs_llm.reporting import SynthWarning, WarningId
from constructs_llm.scope_facts import context_of
from constructs_llm.updates.rules import rule
from constructs_llm.values import describe

#: The context key whose ``true`` makes ``NEW_ENDPOINT`` the default.
CONTEXT_KEY = "constructs-llm:newEndpointOnFleetChange"

#: What ends the fleet of an asynchronous endpoint's name (:func:`fleet_endpoint_name`).
ASYNC_MARK = "async"
#: The longest fleet key kept as it is in the name; longer ones are hashed.
_READABLE_FLEET = 20
#: The hex digits of a hashed fleet key.
_HASHED_FLEET = 8


class FleetChange(str, Enum):
    """How an instance-type change reaches an autoscaled ``LlmEndpoint``.

    - ``NEW_ENDPOINT``: the Endpoint is named after its path and fleet, so a new instance type
      (or new pools) replaces it in one deploy: CloudFormation creates the new endpoint and
      scalable target, then deletes the old ones.
    - ``TWO_DEPLOYS``: the Endpoint keeps a name CloudFormation generates (or yours); the change
      takes two deploys, the first with ``autoscaling=None``, and each autoscaled variant warns
      under an id naming its fleet.
    """

    NEW_ENDPOINT = "new_endpoint"
    TWO_DEPLOYS = "two_deploys"


def fleet_change_of(scope: Construct, given: object) -> tuple[FleetChange | None, Problem | None]:
    """The mode ``fleet_change=`` asks for, else the one the app's context chooses, and what
    is wrong with either (naming the value and the fix)."""
    if given is not None:
        if isinstance(given, FleetChange):
            return given, None
        return None, Problem.of(
            "fleet_change",
            given,
            "fleet_change must be FleetChange.NEW_ENDPOINT or FleetChange.TWO_DEPLOYS, got "
            f"{describe(given)}",
        )
    flag = context_of(scope, CONTEXT_KEY)
    if flag is None:
        return FleetChange.TWO_DEPLOYS, None
    if isinstance(flag, str) and flag.strip().lower() in ("true", "false"):
        flag = flag.strip().lower() == "true"  # from the command line: -c key=true
    if not isinstance(flag, bool):
        return None, Problem.of(
            "fleet_change",
            flag,
            f"the context value {CONTEXT_KEY} must be true or false, got {flag!r};",
            "fix it in cdk.json (or -c), or pass fleet_change=FleetChange...",
        )
    return (FleetChange.NEW_ENDPOINT if flag else FleetChange.TWO_DEPLOYS), None


def named_endpoint_problem(
    endpoint_name: str | None, given: FleetChange | None, chosen: FleetChange
) -> Problem | None:
    """A name of the user's cannot follow a fleet: with ``NEW_ENDPOINT`` (given, or the
    context's) on an autoscaled endpoint, ``endpoint_name`` is refused, naming both fixes."""
    if endpoint_name is None or chosen is not FleetChange.NEW_ENDPOINT:
        return None
    source = "fleet_change=FleetChange.NEW_ENDPOINT" if given else f"the context's {CONTEXT_KEY}"
    return Problem.of(
        "endpoint_name",
        endpoint_name,
        f"endpoint_name={endpoint_name!r} cannot change with the fleet, but {source} names an "
        "autoscaled endpoint after its fleet, so that an instance-type change replaces it in "
        "one deploy;",
        "drop endpoint_name (read the name from endpoint.endpoint_name or a stack "
        "output), or pass fleet_change=FleetChange.TWO_DEPLOYS to keep it (an instance-type "
        "change then takes two deploys)",
    )


def fleet_endpoint_name(
    scope: Construct, fleet_keys: Sequence[str], *, asynchronous: bool = False
) -> str:
    """``<name derived from scope's path>-<fleet>``, 63 characters at most: the fleet is the
    one variant's key when it is short and a valid name part (``g5-2xlarge``), else the first
    8 hex digits of the SHA-256 of every variant's key (pools, several variants).

    An asynchronous endpoint's fleet ends in ``-async`` (``g5-2xlarge-async``; ``async`` alone
    when no variant autoscales, ``fleet_keys`` empty), so turning async inference on or off is
    a new name, and CloudFormation replaces the Endpoint: UpdateEndpoint, which SageMaker
    refuses for that change (rule ``async-toggle``, ``constructs_llm/updates/rules.py``),
    never runs. A real-time endpoint's name is the fleet's alone, as before."""
    fleet = ",".join(fleet_keys)
    if asynchronous:
        fleet = f"{fleet}-{ASYNC_MARK}" if fleet else ASYNC_MARK
    readable = len(fleet) <= _READABLE_FLEET and SAGEMAKER_NAME.match(fleet)
    import hashlib  # OpenSSL's bindings load when a fleet name needs a hash

    suffix = fleet if readable else hashlib.sha256(fleet.encode()).hexdigest()[:_HASHED_FLEET]
    return generated_name(scope, "endpoint_name", suffix=suffix)


def fleet_endpoint_prefix(scope: Construct) -> str:
    """What every name :func:`fleet_endpoint_name` gives ``scope`` starts with, whatever the
    fleet (a suffix of at most 20 characters: a readable key, or 8 hex digits)."""
    return generated_prefix(scope, max(_READABLE_FLEET, _HASHED_FLEET))


def async_toggle_warning(path: str, endpoint_name: str | None) -> SynthWarning:
    """An asynchronous endpoint whose name does not follow its mode (``TWO_DEPLOYS``, or a name
    of the user's): turning async inference off, or on for an endpoint deployed real-time,
    would update it in place, which SageMaker refuses (rule ``async-toggle``); the warning says
    how to make the change a new endpoint instead."""
    toggle = rule("async-toggle")
    keeps = (
        f"endpoint_name={endpoint_name!r}"
        if endpoint_name is not None
        else "FleetChange.TWO_DEPLOYS: CloudFormation generates its name once"
    )
    fix = (
        "give it a new endpoint_name (or a new construct id) in the deploy that changes the mode"
        if endpoint_name is not None
        else "give it a new construct id in the deploy that changes the mode, or set "
        "fleet_change=FleetChange.NEW_ENDPOINT, which names an asynchronous endpoint after its "
        "mode (replacing it once)"
    )
    return SynthWarning(
        WarningId.ASYNC_TOGGLE,
        f"{path} is asynchronous and keeps its name if made real-time ({keeps}). Turning async "
        "inference off, or on for an endpoint deployed real-time, updates the endpoint in "
        f"place, which SageMaker refuses ({toggle.citation}; the real-time to async direction "
        f"is unverified), and CloudFormation rolls the deploy back. To change the mode, {fix}. "
        "python -m constructs_llm.check_update OLD NEW says what a deploy will do. Acknowledge "
        f"Annotation::{WarningId.ASYNC_TOGGLE.value} once the endpoint is deployed asynchronous",
    )
