"""Cross-feature rules: combinations of hosting features that AWS refuses, or that cannot
work, checked over the plan (``hosting/plan.py``) before anything is created.

Each rule is one row of :data:`RULES`: the two features it ties, a check over the plan that
returns what is wrong (naming both values and the fix) or None, the AWS page it rests on, and
when it applies: when the hosting construct is built, or when SageMaker's own OpenAI route is
asked for (``openai_base_url``, ``grant_openai``). A rule checks what its features' own
checks cannot see: each value alone is checked beside its concept.

- Instance pools with a capacity reservation (a training plan): "The ``InstanceType`` field
  set in the ``ProductionVariants`` section of the ``CreateEndpointConfig`` request must match
  the ``InstanceType`` of your training plan" (guide "Deploy an inference endpoint using the API,
  AWS CLI"); a variant with ``InstancePools`` has no ``InstanceType``, and under
  ``capacity-reservations-only`` its fallback pools could never launch.
- Two reservations on one endpoint: "You can use exactly one plan per inference endpoint"
  (same guide).
- The OpenAI route of an asynchronous endpoint: the route serves real-time endpoints, and
  "the presence of an asynchronous inference configuration (AsyncInferenceConfig) object in
  the endpoint configuration implies that the endpoint can only receive asynchronous
  invocations" (guide "Asynchronous inference").
- An asynchronous endpoint with several production variants, or with a shadow: SageMaker's
  features table lists both for real-time inference only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from aws_cdk import Token

from constructs_llm.problems import Problem

if TYPE_CHECKING:
    from constructs_llm.hosting.async_inference import AsyncInference
    from constructs_llm.hosting.plan import VariantPlan

_TRAINING_PLANS_GUIDE = (
    "https://docs.aws.amazon.com/sagemaker/latest/dg/"
    "use-training-plan-for-inference-endpoints-using-api-cli-sdk.html"
)
_OPENAI_ROUTE_GUIDE = (
    "https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-openai-compatible.html"
)
_ASYNC_GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference.html"
_FEATURES_TABLE = "https://docs.aws.amazon.com/sagemaker/latest/dg/model-deploy-feature-matrix.html"


class HostingPlan(Protocol):
    """What the rules read of a hosting construct's plan (an ``LlmEndpoint``'s, or an
    ``InferenceComponentEndpoint``'s)."""

    @property
    def variants(self) -> tuple[VariantPlan, ...]:
        """The production variants."""
        ...

    @property
    def shadow(self) -> VariantPlan | None: ...

    @property
    def hosted(self) -> tuple[VariantPlan, ...]:
        """Every variant of the config."""
        ...

    @property
    def async_inference(self) -> AsyncInference | None: ...


class When(str, Enum):
    """When a rule applies."""

    BUILT = "built"  # when the hosting construct is built
    OPENAI_ROUTE = "openai_route"  # when SageMaker's OpenAI route is asked for


@dataclass(frozen=True)
class Rule:
    """One cross-feature rule.

    :param features: the two features it ties (for the docs and the tests).
    :param check: what is wrong with the plan (naming both values and the fix), or None.
    :param guide: the AWS page the rule rests on, cited in the message.
    :param when: when it applies. @default when the construct is built
    """

    features: tuple[str, str]
    check: Callable[[HostingPlan], Problem | None]
    guide: str
    when: When = When.BUILT


def rule_problems(plan: HostingPlan, when: When = When.BUILT) -> list[Problem]:
    """The message of every rule that applies ``when`` and that ``plan`` breaks, each with the
    AWS page it cites."""
    found = []
    for rule in RULES:
        if rule.when is when:
            problem = rule.check(plan)
            if problem is not None:
                found.append(replace(problem, fix=f"{problem.fix} ({rule.guide})".lstrip()))
    return found


def _labelled(plan: HostingPlan) -> list[tuple[str, VariantPlan]]:
    """Each variant with how a message names it: nothing for a lone variant, else its name."""
    hosted = plan.hosted
    if len(hosted) == 1:
        return [("", hosted[0])]
    return [(f"variant '{v.name}' ", v) for v in hosted]


def _pools_with_reservation(plan: HostingPlan) -> Problem | None:
    for label, variant in _labelled(plan):
        if variant.listed and variant.capacity_reservation is not None:
            types = ", ".join(repr(t.name) for t in variant.instance_types)
            return Problem.of(
                "capacity_reservation",
                variant.capacity_reservation,
                f"{label}instance_type=[{types}] (instance pools) with "
                f"capacity_reservation={variant.capacity_reservation!r}: a variant launching into "
                "a training plan must name the plan's InstanceType, and instance pools name "
                "none (under capacity-reservations-only the fallback pools could never "
                "launch);",
                "give the reservation's one instance type as a string, or drop "
                "capacity_reservation to fall back across the pools on demand",
            )
    return None


def _two_reservations(plan: HostingPlan) -> Problem | None:
    reserved = [
        (label.strip() or "the variant", v.capacity_reservation)
        for label, v in _labelled(plan)
        if v.capacity_reservation is not None
    ]
    known = {arn for _, arn in reserved if not Token.is_unresolved(arn)}
    if len(known) < 2:
        return None
    listed = " and ".join(f"{label} capacity_reservation={arn!r}" for label, arn in reserved)
    return Problem.of(
        "capacity_reservation",
        None,
        f"{listed}: SageMaker allows exactly one training plan per inference endpoint;",
        "give "
        "every variant the same reservation (or none), or serve the variants on separate "
        "endpoints",
    )


def _async_openai_route(plan: HostingPlan) -> Problem | None:
    if plan.async_inference is None:
        return None
    return Problem.of(
        "async_inference",
        None,
        "openai_base_url and grant_openai() with async_inference=AsyncInference(...): "
        "SageMaker's OpenAI route serves real-time endpoints, and an endpoint with an "
        "asynchronous inference configuration only receives asynchronous invocations;",
        "call it "
        "with grant_invoke_async() (constructs_llm.streaming.submit_chat), or serve the model "
        f"on a real-time LlmEndpoint for the route ({_ASYNC_GUIDE})",
    )


def _async_variants(plan: HostingPlan) -> Problem | None:
    count = len(plan.variants)
    if plan.async_inference is None or count < 2:
        return None
    return Problem.of(
        "async_inference",
        None,
        f"async_inference= takes one production variant, got {count} variants: SageMaker's "
        "features table lists multiple production variants for real-time inference only;",
        "give each model an asynchronous LlmEndpoint of its own",
    )


def _async_shadow(plan: HostingPlan) -> Problem | None:
    if plan.async_inference is None or plan.shadow is None:
        return None
    return Problem.of(
        "shadow",
        None,
        "async_inference= cannot take a shadow variant: SageMaker's features table lists "
        "shadow testing for real-time inference only;",
        "drop shadow=, or test the candidate on an asynchronous LlmEndpoint of its own",
    )


#: Every cross-feature rule.
RULES: Sequence[Rule] = (
    Rule(
        ("instance pools", "capacity_reservation"), _pools_with_reservation, _TRAINING_PLANS_GUIDE
    ),
    Rule(
        ("capacity_reservation", "capacity_reservation"), _two_reservations, _TRAINING_PLANS_GUIDE
    ),
    Rule(("async_inference", "variants"), _async_variants, _FEATURES_TABLE),
    Rule(("async_inference", "shadow"), _async_shadow, _FEATURES_TABLE),
    Rule(
        ("async_inference", "openai_base_url / grant_openai"),
        _async_openai_route,
        _OPENAI_ROUTE_GUIDE,
        When.OPENAI_ROUTE,
    ),
)
