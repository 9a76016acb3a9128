"""CloudFormation's 500 resources per stack, said in the library's terms before aws-cdk-lib's
generic error. The limit is lowered for the test (the message's arithmetic is the same at 500),
so three endpoints cross it instead of 42."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource
from constructs_llm.hosting import stack_size

PHI3 = "microsoft/Phi-3-mini-4k-instruct"


def _endpoints(stack: Stack, count: int) -> None:
    for index in range(count):
        model = LlmModel(
            stack,
            f"Model{index}",
            source=ModelSource.hugging_face(PHI3),
            engine=Engine.vllm(),
            instance_type="ml.g5.2xlarge",
        )
        LlmEndpoint(stack, f"Endpoint{index}", model=model)


def test_above_the_limit_the_synth_says_what_each_endpoint_brings_and_the_ways_out(
    new_stack: Callable[..., Stack], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN CloudFormation's limit as 30 (aws-cdk-lib's own check set to the same), and three
    # endpoints of 11 resources each: their role, three policies, Model, config, endpoint and
    # four default alarms (an environment-agnostic stack gets no PromQL alarms)
    monkeypatch.setattr(stack_size, "MAX_RESOURCES", 30)
    stack = new_stack(**{"@aws-cdk/core:stackResourceLimit": 30})
    _endpoints(stack, 3)
    # WHEN the app synthesizes, THEN the library's message comes first, not aws-cdk-lib's
    with pytest.raises(RuntimeError) as caught:
        Template.from_stack(stack)
    message = str(caught.value)
    assert "TooManyResourcesInStack" not in message
    assert (
        "stack 'Test' holds 33 CloudFormation resources, above the 30 CloudFormation allows in "
        "one stack; its 3 endpoints bring 11.0 each on average (4.0 of them default alarms), "
        "so about 2 fit."
    ) in message
    for way_out in ("InferenceComponents on a shared", "alarms=False", "several stacks"):
        assert way_out in message


def test_at_the_limit_the_stack_synthesizes(
    new_stack: Callable[..., Stack], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stack_size, "MAX_RESOURCES", 33)
    stack = new_stack()
    _endpoints(stack, 3)
    assert len(Template.from_stack(stack).to_json()["Resources"]) == 33
