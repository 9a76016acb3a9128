"""What the library reads of a construct's place once (``constructs_llm/scope_facts.py``): its
stack (known from the scope it is created in), path, region and context flags."""

from __future__ import annotations

import pytest
from aws_cdk import App, ArnFormat, Environment, Stack
from constructs import Construct

from constructs_llm.scope_facts import (
    arn_in_stack,
    context_of,
    known_stack,
    path_of,
    place,
    region_of,
    stack_of,
)


def test_a_construct_placed_in_a_stack_knows_it_without_asking() -> None:
    app = App()
    stack = Stack(app, "Agnostic")
    group = Construct(stack, "Group")
    place(group, stack)
    leaf = Construct(group, "Leaf")
    place(leaf, group)
    assert known_stack(group) is stack
    assert known_stack(leaf) is stack  # through its scope, known here already
    assert stack_of(leaf) is stack
    assert path_of(leaf) == "Agnostic/Group/Leaf"
    region, concrete = region_of(leaf)
    assert not concrete
    assert region == stack.region


def test_a_concrete_region_is_concrete() -> None:
    stack = Stack(App(), "Concrete", env=Environment(region="eu-west-1"))
    assert region_of(Construct(stack, "Any")) == ("eu-west-1", True)


def test_a_placed_construct_reads_its_scope_s_context_which_cannot_change_after() -> None:
    app = App(context={"constructs-llm:flag": True})
    stack = Stack(app, "Flags")
    first = Construct(stack, "First")
    place(first, stack)
    assert context_of(first, "constructs-llm:flag") is True
    assert context_of(first, "constructs-llm:other") is None
    # Why one answer per scope holds: a scope with a child takes no new context.
    with pytest.raises(RuntimeError, match="children"):
        stack.node.set_context("constructs-llm:flag", False)


@pytest.mark.parametrize(
    ("scope_path", "id"),
    [
        ("", "TopLevel"),
        ("Stack", "Model"),
        ("Stack/Group", "a/b\nc"),  # constructs writes each separator as "--"
    ],
)
def test_a_placed_construct_s_path_is_derived_as_constructs_derives_it(
    scope_path: str, id: str
) -> None:
    app = App()
    scope: Construct = app
    for part in [p for p in scope_path.split("/") if p]:
        scope = Stack(scope, part) if scope is app else Construct(scope, part)
    child = Construct(scope, id)
    place(child, scope, id)
    derived = path_of(child)
    assert derived == child.node.path  # the path constructs gives it


@pytest.mark.parametrize(
    "env",
    [
        None,
        Environment(region="eu-west-1", account="123456789012"),
        Environment(region="cn-north-1", account="123456789012"),
        Environment(region="us-gov-west-1"),
    ],
)
def test_an_arn_joined_here_is_the_one_the_stack_formats(env: Environment | None) -> None:
    stack = Stack(App(), "Arns", env=env)
    group = Construct(stack, "Group")
    for name in ("/aws/sagemaker/Endpoints/*", "/aws/sagemaker/Endpoints/chat"):
        formatted = stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name=name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        joined = arn_in_stack(group, "logs", "log-group", name)
        assert stack.resolve(joined) == stack.resolve(formatted)
