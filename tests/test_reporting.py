"""One way to report: problems raise one declared error naming each; warnings carry a listed id."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import FrozenInstanceError

import pytest
from aws_cdk import Stack

from constructs_llm import InstanceType, errors, reporting
from constructs_llm.errors import (
    ConfigurationError,
    ConstructsLlmError,
    ImageError,
    InstanceTypeError,
    ScalingError,
    SizingError,
)
from constructs_llm.hardware.placement import placement_problems
from constructs_llm.problems import Problem, Problems, common_kind, fail
from tests.conftest import ROOT
from tests.matrix.builders import app_of, model

PACKAGE = ROOT / "constructs_llm"
DECLARED = {
    value
    for value in vars(errors).values()
    if isinstance(value, type) and issubclass(value, Exception)
}


@pytest.mark.parametrize(
    ("kinds", "raised"),
    [
        ([SizingError], SizingError),
        ([SizingError, SizingError], SizingError),
        ([SizingError, ScalingError], ConfigurationError),
        ([InstanceTypeError, ConfigurationError], ConfigurationError),
        ([ImageError, SizingError, ScalingError], ConfigurationError),
    ],
)
def test_one_error_of_the_nearest_declared_type(
    kinds: list[type[ConfigurationError]], raised: type[ConfigurationError]
) -> None:
    problems = Problems("LlmModel 'Test/Model'")
    for index, kind in enumerate(kinds):
        problems.add(Problem.of(f"prop_{index}", index, f"problem {index}", kind=kind))
    with pytest.raises(ConfigurationError) as caught:
        problems.raise_if_any()
    assert type(caught.value) is raised and type(caught.value) in DECLARED
    assert common_kind(kinds) is raised
    assert [(p.property, p.value, str(p)) for p in caught.value.problems] == [
        (f"prop_{i}", i, f"problem {i}") for i in range(len(kinds))
    ]
    if len(kinds) > 1:
        assert str(caught.value).startswith(f"LlmModel 'Test/Model' has {len(kinds)} problems:")


def test_a_nested_value_s_problems_join_the_construct_s() -> None:
    # GIVEN a construct's own problem, and the problems of a placement it builds, which the
    # placement states without raising (each of its own kind)
    outer = Problems("LlmEndpoint 'Test/Endpoint'")
    outer.add(Problem.of("endpoint_name", 5, "endpoint_name must be a string, got 5"))
    nested = placement_problems("ml.gg5.2xlarge", accelerators="1")
    assert {p.kind for p in nested} == {ConfigurationError, InstanceTypeError}
    # WHEN they are gathered THEN one error names them all, the construct's first
    outer.extend(nested)
    with pytest.raises(ConfigurationError) as caught:
        outer.raise_if_any()
    first, accelerators, instance_type = caught.value.problems
    assert str(first) == "endpoint_name must be a string, got 5"
    assert (accelerators.property, accelerators.value) == ("accelerators", "1")
    assert str(accelerators).startswith("accelerators must be an integer")
    assert (instance_type.property, instance_type.value) == ("instance_type", "ml.gg5.2xlarge")
    assert instance_type.where == "instance_type: "
    assert str(instance_type).startswith("instance_type: Unknown instance family ml.gg5")


def test_fail_raises_one_problem_of_its_kind() -> None:
    with pytest.raises(ImageError, match=r"^ContainerImage\.dlc: bad tag; use 1\.0$") as caught:
        fail("ContainerImage.dlc", Problem.of("tag", "x y", "bad tag;", "use 1.0"), ImageError)
    (problem,) = caught.value.problems
    assert (problem.property, problem.value, problem.kind) == ("tag", "x y", ImageError)


def test_a_problem_is_a_frozen_value_rendered_from_its_fields() -> None:
    # GIVEN a problem with its fields, found on a pool
    problem = Problem.of(
        "instance_count", 0, "instance_count must be an integer >= 1, got 0;", "use 1 or more"
    ).at("pool 2: ")
    # THEN its text is built from them, in one place, and the fields stay readable
    assert str(problem) == "pool 2: instance_count must be an integer >= 1, got 0; use 1 or more"
    assert (problem.property, problem.value, problem.fix) == ("instance_count", 0, "use 1 or more")
    assert str(Problem.of("name", 5, "name must be a string, got 5")) == (
        "name must be a string, got 5"
    )
    with pytest.raises(FrozenInstanceError):
        problem.property = "copies"  # type: ignore[misc]


def test_a_bare_message_is_refused() -> None:
    # every problem names its property: a string is a check that forgot to
    with pytest.raises(TypeError, match="Problems.add takes a Problem"):
        Problems("LlmModel 'Test/Model'").add("instance_count must be >= 1")  # type: ignore[arg-type]


def test_no_error_type_is_built_at_run_time() -> None:
    # no call of type(name, bases, namespace) anywhere in the library
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "type":
                assert len(node.args) < 3, f"{path}:{node.lineno}"
    assert all(issubclass(k, ConstructsLlmError) for k in DECLARED - {ValueError})


# -- warnings ------------------------------------------------------------------------------------


def test_every_warning_id_is_prefixed_and_in_the_docstring_table() -> None:
    doc = reporting.__doc__ or ""
    rows = re.findall(r"^\| ``([^`]+?)(?::<fleet>)?`` \| (.+) \|$", doc, re.MULTILINE)
    assert dict(rows) == dict(reporting.WARNINGS)
    assert all(i.startswith("constructs-llm:") for i in reporting.WARNINGS)


def test_the_docs_list_every_warning_id() -> None:
    page = (ROOT / "docs" / "synth-time-checks.md").read_text()
    section = page.split("## Warnings", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(constructs-llm:[a-z0-9-]+)(?::<fleet>)?` \|", section, re.MULTILINE)
    assert sorted(listed) == sorted(reporting.WARNINGS)


def test_warnings_are_raised_through_warn_only() -> None:
    # every literal id in the library is in the table, and only reporting.py annotates
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if path.name != "reporting.py":
            assert "add_warning" not in text, path
        for found in re.findall(r'"(constructs-llm:[a-z0-9-]+)"', text):
            assert found in reporting.WARNINGS or found == "constructs-llm:note", (path, found)


def test_a_warning_carries_a_listed_id_and_what_was_checked(
    new_stack: Callable[..., Stack],
) -> None:
    # an id outside the table cannot be made
    with pytest.raises(ValueError, match="constructs-llm:made-up"):
        reporting.WarningId("constructs-llm:made-up")
    # what was checked follows the id, so acknowledging one fleet leaves another warning
    warning = reporting.SynthWarning(
        reporting.WarningId.AUTOSCALED_FLEET, "check the fleet", detail="g5-2xlarge"
    )
    assert warning.acknowledgment_id == "constructs-llm:autoscaled-fleet:g5-2xlarge"
    stack = new_stack()
    from aws_cdk import aws_sns as sns
    from aws_cdk.assertions import Annotations, Match

    reporting.warn(sns.Topic(stack, "Topic"), warning)
    Annotations.from_stack(stack).has_warning(
        "/Test/Topic", Match.string_like_regexp("check the fleet")
    )


def test_a_warning_can_be_acknowledged_by_its_id(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a model on an instance family the catalog lacks (it warns)
    stack = new_stack()
    served = model(stack, instance_type=InstanceType("ml.g8.2xlarge", allow_unknown_family=True))
    # WHEN its warning is acknowledged on the construct that carries it
    from aws_cdk import Annotations

    Annotations.of(served).acknowledge_warning(
        "constructs-llm:unknown-instance-type", "ml.g8 sized by hand"
    )
    # THEN the synthesized app no longer carries it
    assembly = app_of(stack).synth()
    texts = [str(m.entry.data) for a in assembly.stacks for m in a.messages]
    assert not any("constructs-llm:unknown-instance-type" in t for t in texts), texts
