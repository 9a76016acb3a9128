"""The synth hook runs before every other aspect visits a construct, and visits only its own
construct: the stage's first child, whose id is an array index (``constructs_llm/synth_hook.py``).

A tag added to the stack before any construct exists reaches the SageMaker Model the model
renders at synth, with and without aws-cdk-lib's aspect stabilization; the hook's visit is one
callback per synthesis, not one per construct of the app.
"""

from __future__ import annotations

import pytest
from aws_cdk import App, Stack, Tags
from aws_cdk.assertions import Match, Template
from constructs import Construct, IConstruct

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, synth_hook
from constructs_llm.synth_hook import HOOK_ID


def _app(stabilization: bool, *, own_zero: bool = False) -> tuple[App, Stack]:
    app = App(context={"@aws-cdk/core:aspectStabilization": stabilization})
    if own_zero:
        Construct(app, HOOK_ID)  # the user's own construct of that id
    stack = Stack(app, "Tagged")
    Tags.of(stack).add("team", "search")
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", needs_token=False),
        engine=Engine.tgi(),
        instance_type="ml.g5.2xlarge",
    )
    LlmEndpoint(stack, "Endpoint", model=model, alarms=False)
    return app, stack


@pytest.mark.parametrize("stabilization", [False, True])
def test_a_stack_tag_reaches_the_models_rendered_at_synth(
    stabilization: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    visits: list[str] = []
    visit = synth_hook._SynthHook.visit

    def counting(self: synth_hook._SynthHook, node: IConstruct) -> None:
        visits.append(type(node).__name__)
        visit(self, node)

    monkeypatch.setattr(synth_hook._SynthHook, "visit", counting)
    app, stack = _app(stabilization)
    assert app.node.children[0].node.id == HOOK_ID  # listed first, though added after the stack
    template = Template.from_stack(stack)
    tag = Match.array_with([{"Key": "team", "Value": "search"}])
    template.has_resource_properties("AWS::SageMaker::Model", {"Tags": tag})
    template.has_resource_properties("AWS::SageMaker::EndpointConfig", {"Tags": tag})
    assert visits == ["Construct"]  # its own construct, once: not every construct of the app


def test_a_stage_with_a_child_of_the_hooks_id_keeps_the_hook_on_itself() -> None:
    _, stack = _app(False, own_zero=True)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::SageMaker::Model", 1)
    tag = Match.array_with([{"Key": "team", "Value": "search"}])
    template.has_resource_properties("AWS::SageMaker::Model", {"Tags": tag})
