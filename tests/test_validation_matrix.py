"""Catch it at synth: the one table of bad inputs across every construct and value, each
failing while the app is built with an error users can catch (a ``constructs_llm.errors`` type)
and a message that names the bad value and, where practical, the fix. Each row names the
property it expects the error to blame (``Problem.property``), or None for Python's own
``TypeError``. A second table of valid
edge cases must synthesize cleanly, and each warning has an id users can acknowledge.

The rows live in ``tests/matrix/`` by what they build (values, models, hosting, operations:
rollouts, alarms, schedules, dashboards); their ids are
``bad[<id>]`` and ``ok[<id>]`` in docs/verification.md."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from aws_cdk import Acknowledgment, App, Stack, Validations, cx_api
from aws_cdk.assertions import Annotations, Match
from constructs import Construct
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_llm import InferenceComponent, InstanceType, catalogs
from constructs_llm.errors import ConfigurationError, ConstructsLlmError
from constructs_llm.hardware.instance_type import sizes_of
from constructs_llm.hosting.names import SAGEMAKER_NAME, variant_name_for
from tests.conftest import REPORT_ANNOTATIONS, ROOT, cdk_context
from tests.matrix.bad_gateway import BAD_GATEWAY
from tests.matrix.bad_hosting import BAD_HOSTING
from tests.matrix.bad_models import BAD_MODELS
from tests.matrix.bad_operations import BAD_OPERATIONS
from tests.matrix.bad_values import BAD_VALUES
from tests.matrix.builders import G5_4GPU, TOKEN, Build, app_of, endpoint, ic_endpoint, model
from tests.matrix.controls import CONTROLS, WARNINGS
from tests.support.synth_errors import synthesize

BAD = [*BAD_VALUES, *BAD_MODELS, *BAD_HOSTING, *BAD_GATEWAY, *BAD_OPERATIONS]


@pytest.fixture(autouse=True)
def _default_model_ungated(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows build gated Llama 3 without a token to exercise other checks; only the
    gated-model rows keep the packaged gated flags (their error is tested there)."""
    if "gated" not in request.node.name:
        monkeypatch.setattr(catalogs, "is_gated", lambda model_id: False)


# -- bad inputs --------------------------------------------------------------------------------


@pytest.mark.parametrize(("build", "error", "message", "prop"), BAD)
def test_bad_input_fails_at_synth_naming_the_value(
    new_stack: Callable[..., Stack],
    build: Build,
    error: type[Exception] | tuple[type[Exception], ...],
    message: str,
    prop: str | None,
) -> None:
    # GIVEN an error users can catch: the library's own types (the nearest common one, for
    # problems of several kinds), or TypeError for Python typing
    kinds = error if isinstance(error, tuple) else (error,)
    assert all(issubclass(k, ConstructsLlmError) or k is TypeError for k in kinds)
    stack = new_stack()
    # WHEN the app is built (and, should building pass, synthesized) THEN it fails with it
    with pytest.raises(kinds[0]) as caught:
        build(stack)
        _synth(stack)
    assert all(isinstance(caught.value, k) for k in kinds), type(caught.value).__mro__
    assert re.search(message, str(caught.value)), str(caught.value)
    # AND a problem of the error blames the property the row names (Python's own TypeError
    # holds no problems)
    found = [(p.property, str(p)) for p in getattr(caught.value, "problems", ())]
    assert (prop is None) == (kinds == (TypeError,)) and (prop is None) == (not found)
    assert prop is None or prop in [p for p, _ in found], found


def test_the_tables_span_every_construct_and_match_the_docs() -> None:
    ids = [str(p.id) for p in BAD]
    assert len(set(ids)) == len(ids)
    # every row names the property it blames: a string, or None for Python's TypeError
    for row in BAD:
        _build, error, _message, prop = row.values
        assert prop is None if error is TypeError else isinstance(prop, str) and prop, row.id
    controls = [str(p.id) for p in CONTROLS]
    assert len(set(controls)) == len(controls)
    # docs/verification.md states the tables' sizes and cites their rows: each citation (a
    # `*` pattern included) names at least one row
    page = " ".join((ROOT / "docs" / "verification.md").read_text().split())
    assert f"::test_bad_input_fails_at_synth_naming_the_value` ({len(BAD)} rows)" in page
    assert f"synthesize cleanly, {len(CONTROLS)} rows)" in page
    rows = {"bad": ids, "ok": controls}
    cited = re.findall(r"`(bad|ok)\[([a-z0-9*-]+)\]`", page)
    assert len(cited) > 60
    for table, pattern in cited:
        assert fnmatch.filter(rows[table], pattern), f"{table}[{pattern}] names no row"
    for prefix in (
        "instance-type-",
        "model-",
        "endpoint-",
        "autoscaling-",
        "engine-tgi-",
        "engine-tgi-neuronx-",
        "engine-lmi-",
        "engine-vllm-",
        "engine-sglang-",
        "engine-custom-",
        "hub-",
        "s3-",
        "dlc-",
        "image-",
        "sizing-",
        "ic-endpoint-",
        "ic-",
        "invoker-",
        "deployment-",
        "alarms-",
        "schedule-",
        "dashboard-",
        "invoker-targets-",
        "adapter-",
        "variants-",
    ):
        assert any(i.startswith(prefix) for i in ids), prefix


def test_a_secret_is_never_echoed_in_full(new_stack: Callable[..., Stack]) -> None:
    with pytest.raises(ConfigurationError) as caught:
        model(new_stack(), env={"HF_TOKEN": TOKEN})
    assert TOKEN not in str(caught.value) and "hf_Ab…" in str(caught.value)
    # nor kept in the problem values, whose repr may reach a log
    assert TOKEN not in repr(caught.value.problems)
    assert [p.property for p in caught.value.problems] == ["env['HF_TOKEN']"]


# -- controls: valid edge cases synthesize cleanly ---------------------------------------------


@pytest.mark.parametrize(("build", "warnings"), CONTROLS)
def test_valid_edge_cases_synthesize_cleanly(
    new_stack: Callable[..., Stack], build: Build, warnings: set[str]
) -> None:
    stack = new_stack()
    build(stack)
    assert _warning_ids(_synth(stack)) == warnings


# -- an unknown family, opted in, only warns ----------------------------------------------------

G8 = InstanceType("ml.g8.2xlarge", allow_unknown_family=True)
G8_4GPU = InstanceType("ml.g8.12xlarge", allow_unknown_family=True)


def test_an_opted_in_unknown_instance_family_only_warns(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a family launched after the catalog (ml.g8), opted in with allow_unknown_family, on
    # a model, an endpoint and components
    stack = new_stack()
    endpoint(stack, instance_type=G8)
    shared = ic_endpoint(stack, instance_type=G8_4GPU)
    served = model(stack, id="SharedModel", instance_type=G8_4GPU, bound=False)
    chat = InferenceComponent(
        stack, "Chat", endpoint=shared, model=served, accelerators=1, min_memory_mib=1024
    )

    # WHEN synthesized THEN it succeeds, with a warning that says what was not checked, on the
    # endpoint's Model, the component's Model and the shared endpoint (which also names its fleet,
    # as every endpoint hosting components does)
    assembly = _synth(stack)
    assert _warning_ids(assembly) == {
        "constructs-llm:unknown-instance-type",
        "constructs-llm:component-fleet:g8-12xlarge",
    }
    annotations = Annotations.from_stack(stack)
    for path in ("/Test/Model/Resource", f"/{chat.binding.resource.node.path}", "/Test/Shared"):
        annotations.has_warning(
            path,
            Match.string_like_regexp(
                r"ml\.g8\.\d+xlarge is not in the packaged hardware catalog.*verify"
            ),
        )
    annotations.has_no_error("*", Match.any_value())


# -- warnings: each has an id users can acknowledge --------------------------------------------


@pytest.mark.parametrize(("build", "warning", "message"), WARNINGS)
def test_each_warning_synthesizes_and_names_what_to_verify(
    new_stack: Callable[..., Stack], build: Build, warning: str, message: str
) -> None:
    stack = new_stack()
    build(stack)
    assembly = _synth(stack)
    found = _warnings(assembly)
    assert f"constructs-llm:{warning}" in found
    assert any(re.search(message, m) for m in found[f"constructs-llm:{warning}"])


# -- acknowledging a warning -------------------------------------------------------------------

ACK_ID = "Annotation::constructs-llm:unknown-instance-type"
STRICT = "@aws-cdk/core:strictCfnValidateErrors"


def _unknown_instance_app(*, strict: bool, acknowledged: bool) -> App:
    app = App(context={**cdk_context(annotations_in_report=True), STRICT: strict})
    stack = Stack(app, "Test")
    model(stack, instance_type=G8)  # served by an endpoint of its own, which renders its Model
    if acknowledged:
        Validations.of(stack).acknowledge(
            Acknowledgment(id=ACK_ID, reason="ml.g8 launched after the catalog; sized by hand"),
            Acknowledgment(
                id="CloudFormation-Validate::W3030",
                reason="ml.g8 launched after this aws-cdk-lib's CloudFormation schema",
            ),
        )
    return app


def test_warnings_appear_in_the_validation_report_under_their_acknowledgment_id() -> None:
    # GIVEN cdk.json's @aws-cdk/core:annotationsInValidationReport (on)
    assert cdk_context(annotations_in_report=True)[REPORT_ANNOTATIONS] is True
    # WHEN an app with a warning synthesizes THEN it succeeds and reports the warning by its id
    assembly = _unknown_instance_app(strict=False, acknowledged=False).synth()
    report = json.loads((Path(assembly.directory) / "validation-report.json").read_text())
    (annotations,) = [
        r for r in report["pluginReports"] if r["pluginName"] == "Construct Annotations"
    ]
    assert annotations["conclusion"] == "success"  # a warning alone does not fail synth
    assert [(v["ruleName"], v["severity"]) for v in annotations["violations"]] == [
        (ACK_ID, "warning")
    ]


def test_in_strict_mode_a_warning_fails_synth_until_acknowledged() -> None:
    # GIVEN @aws-cdk/core:strictCfnValidateErrors, which turns report warnings into failures
    with pytest.raises(RuntimeError, match=f"(?s)ValidationFailed.*Acknowledge with '{ACK_ID}'"):
        _unknown_instance_app(strict=True, acknowledged=False).synth()
    # WHEN the warning is acknowledged with a reason THEN the same app synthesizes
    _unknown_instance_app(strict=True, acknowledged=True).synth()


# -- generated names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack_name", "path"),
    [
        ("Test", ["Chat"]),
        ("Test", ["_", "-"]),
        (
            "my-stack-" + "z" * 100,
            [f"Level_{i}.with spaces & ünïcode " + "q" * 30 for i in range(6)],
        ),
        ("Test", ["Chat_" + "c" * 300]),
        ("Test", ["1"]),
    ],
    ids=["short", "only-punctuation", "deep-and-long", "long-id", "digit-id"],
)
def test_generated_component_names_fit_sagemaker(
    new_stack: Callable[..., Stack], stack_name: str, path: list[str]
) -> None:
    stack = Stack(app_of(new_stack()), "Named", stack_name=stack_name)
    scope: Construct = stack
    for part in path[:-1]:
        scope = Construct(scope, part)
    shared = ic_endpoint(stack)
    served = model(stack, instance_type=G5_4GPU)
    chat = InferenceComponent(
        scope, path[-1], endpoint=shared, model=served, accelerators=1, min_memory_mib=1024
    )
    name = chat.inference_component_name
    assert SAGEMAKER_NAME.match(name) and len(name) <= 63, name


def test_generated_component_names_differ_per_path(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    shared = ic_endpoint(stack)
    served = model(stack, instance_type=G5_4GPU)
    long = "c" * 300
    names = {
        InferenceComponent(
            Construct(stack, f"Team{i}"),
            long,
            endpoint=shared,
            model=served,
            accelerators=1,
            min_memory_mib=1024,
        ).inference_component_name
        for i in range(3)
    }
    assert len(names) == 3


@given(
    family=st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,6}){0,2}", fullmatch=True),
    size=st.from_regex(r"[0-9]{0,3}[a-z]{1,10}", fullmatch=True),
)
@settings(max_examples=200, deadline=None)
def test_variant_names_follow_the_sagemaker_pattern(family: str, size: str) -> None:
    instance = InstanceType(
        f"ml.{family}.{size}", allow_unknown_size=True, allow_unknown_family=True
    )
    name = variant_name_for(instance)
    assert SAGEMAKER_NAME.match(name) and len(name) <= 63, name


def test_every_catalog_instance_type_gives_a_valid_variant_name() -> None:
    for family in ("g5", "g6e", "p4d", "p5en", "inf2", "trn1n", "c7i", "p6-b200", "p6e-gb200"):
        for size in sizes_of(family) or ["48xlarge"]:
            name = variant_name_for(InstanceType(f"ml.{family}.{size}"))
            assert SAGEMAKER_NAME.match(name) and len(name) <= 63, name


def test_a_variant_name_too_long_for_sagemaker_fails_naming_the_instance_type() -> None:
    too_long = InstanceType("ml.g" + "9" * 40 + ".x" + "l" * 30, allow_unknown_family=True)
    with pytest.raises(
        ConfigurationError, match=r"instance type 'ml\.g9{40}\.xl{30}'.*at most 63"
    ) as caught:
        variant_name_for(too_long)
    assert [p.property for p in caught.value.problems] == ["instance_type"]


# -- helpers -----------------------------------------------------------------------------------


def _synth(stack: Stack) -> cx_api.CloudAssembly:
    return synthesize(app_of(stack))


def _warnings(assembly: cx_api.CloudAssembly) -> dict[str, list[str]]:
    """Warning messages by acknowledgment id, across every stack of the assembly."""
    found: dict[str, list[str]] = {}
    for artifact in assembly.stacks:
        for message in artifact.messages:
            if message.level != cx_api.SynthesisMessageLevel.WARNING:
                continue
            text = str(message.entry.data)
            ack = re.search(r"\[ack: ([^\]]+)\]", text)
            found.setdefault(ack.group(1) if ack else text, []).append(text)
    return found


def _warning_ids(assembly: cx_api.CloudAssembly) -> set[str]:
    return set(_warnings(assembly))
