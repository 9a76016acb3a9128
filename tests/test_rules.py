"""The cross-feature rules (``hosting/rules.py``): each rule of the table has a build that
breaks it, which fails at synth naming both features, the fix and the AWS page, and a build
with the same features that keeps it, which is built (rendering is tested with the
constructs)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import Stack
from aws_cdk import aws_s3 as s3

from constructs_llm import (
    AsyncInference,
    Engine,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Variant,
)
from constructs_llm.errors import ConfigurationError
from constructs_llm.hosting.rules import RULES, Rule, When

PLAN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/chat"
OTHER_PLAN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/batch"
Build = Callable[[Stack], object]


def _model(stack: Stack, id: str = "Model") -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
        engine=Engine.vllm(),
        max_total_tokens=8192,
    )


def _async(stack: Stack) -> AsyncInference:
    return AsyncInference(output=s3.Bucket.from_bucket_name(stack, "Jobs", "jobs"))


def _variants(stack: Stack, *plans: str | None, **props: object) -> LlmEndpoint:
    return LlmEndpoint(
        stack,
        "AB",
        variants=[
            Variant(
                model=_model(stack, f"M{i}"),
                instance_type="ml.g5.2xlarge",
                capacity_reservation=plan,
            )
            for i, plan in enumerate(plans)
        ],
        **props,  # type: ignore[arg-type]
    )


def _one(stack: Stack, **props: object) -> LlmEndpoint:
    props.setdefault("instance_type", "ml.g5.2xlarge")
    return LlmEndpoint(
        stack,
        "Endpoint",
        model=_model(stack),
        alarms=False,
        **props,  # type: ignore[arg-type]
    )


#: Each rule (by its check's name): a build that breaks it, one that keeps it, and what the
#: message must say of both features and the fix.
CASES: dict[str, tuple[Build, Build, str]] = {
    "_pools_with_reservation": (
        lambda s: _one(
            s, instance_type=["ml.g6e.2xlarge", "ml.g5.2xlarge"], capacity_reservation=PLAN
        ),
        lambda s: _one(s, instance_type="ml.g6e.2xlarge", capacity_reservation=PLAN),
        r"instance_type=\['ml\.g6e\.2xlarge', 'ml\.g5\.2xlarge'\] \(instance pools\) with "
        r"capacity_reservation='.*training-plan/chat'.*give the reservation's one instance type",
    ),
    "_two_reservations": (
        lambda s: _variants(s, PLAN, OTHER_PLAN),
        lambda s: _variants(s, PLAN, PLAN),
        r"variant 'M0-g5-2xlarge' capacity_reservation='.*/chat' and variant 'M1-g5-2xlarge' "
        r"capacity_reservation='.*/batch': .*exactly one training plan per inference endpoint",
    ),
    "_async_variants": (
        lambda s: _variants(s, None, None, async_inference=_async(s), alarms=False),
        lambda s: _variants(s, None, async_inference=_async(s), alarms=False),
        r"async_inference= takes one production variant, got 2 variants.*give each model an "
        r"asynchronous LlmEndpoint of its own",
    ),
    "_async_shadow": (
        lambda s: _variants(
            s,
            None,
            shadow=Variant(model=_model(s, "Candidate"), instance_type="ml.g5.2xlarge"),
            async_inference=_async(s),
            alarms=False,
        ),
        lambda s: _variants(
            s, None, shadow=Variant(model=_model(s, "Candidate"), instance_type="ml.g5.2xlarge")
        ),
        r"async_inference= cannot take a shadow variant.*drop shadow=",
    ),
    "_async_openai_route": (
        lambda s: _one(s, async_inference=_async(s)).openai_base_url,
        lambda s: _one(s).openai_base_url,
        r"openai_base_url and grant_openai\(\) with async_inference=AsyncInference\(\.\.\.\): "
        r".*grant_invoke_async\(\)",
    ),
}


def _rule(name: str) -> Rule:
    (rule,) = [r for r in RULES if r.check.__name__ == name]
    return rule


def test_every_rule_has_its_cases() -> None:
    assert sorted(r.check.__name__ for r in RULES) == sorted(CASES)
    # each rule ties two features, cites an AWS page, and says when it applies
    for rule in RULES:
        assert len(rule.features) == 2 and all(rule.features)
        assert rule.guide.startswith("https://docs.aws.amazon.com/sagemaker/")
        assert isinstance(rule.when, When)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_build_that_breaks_a_rule_fails_naming_both_features_and_the_page(
    new_stack: Callable[..., Stack], name: str
) -> None:
    breaks, _, message = CASES[name]
    with pytest.raises(ConfigurationError, match=message) as error:
        breaks(new_stack())
    assert f"({_rule(name).guide})" in str(error.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_features_that_keep_the_rule_are_built(
    new_stack: Callable[..., Stack], name: str
) -> None:
    # the rules are checked when the construct is built (or the route asked for): building
    # passes, and the plan holds both features
    stack = new_stack()
    CASES[name][1](stack)
    (endpoint,) = [c for c in stack.node.children if isinstance(c, LlmEndpoint)]
    assert endpoint.plan.hosted


def test_a_component_endpoint_keeps_the_pools_rule_too(new_stack: Callable[..., Stack]) -> None:
    with pytest.raises(ConfigurationError, match=r"\(instance pools\) with capacity_reservation"):
        InferenceComponentEndpoint(
            new_stack(),
            "Shared",
            instance_type=["ml.g5.12xlarge", "ml.g6.12xlarge"],
            capacity_reservation=PLAN,
        )
