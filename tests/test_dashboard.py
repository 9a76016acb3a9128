"""LlmDashboard: one row per target, with SageMaker's metrics and the invokers' next to them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import (
    Autoscaling,
    FleetChange,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmEndpoint,
    StreamingInvoker,
    Variant,
)
from constructs_llm.errors import ConfigurationError
from tests.matrix.builders import model as llama3

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"


def _body(stack: Stack) -> dict[str, Any]:
    """The dashboard's JSON, with each token replaced by a readable placeholder."""
    (dashboard,) = Template.from_stack(stack).find_resources("AWS::CloudWatch::Dashboard").values()
    parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    text = "".join(p if isinstance(p, str) else _placeholder(p) for p in parts)
    body: dict[str, Any] = json.loads(text)
    return body


def _placeholder(token: dict[str, Any]) -> str:
    if "Fn::GetAtt" in token:
        return f"<{token['Fn::GetAtt'][0]}.{token['Fn::GetAtt'][1]}>"
    return f"<{token.get('Ref')}>"


def _widgets(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The widgets by title; the first row's where rows repeat a title."""
    found: dict[str, dict[str, Any]] = {}
    for w in body["widgets"]:
        title = w["properties"].get("title") or w["properties"]["markdown"].splitlines()[0]
        found.setdefault(title, w)
    return found


def _metrics(widget: dict[str, Any]) -> list[list[Any]]:
    return [m for m in widget["properties"]["metrics"] if isinstance(m[0], str)]


@pytest.fixture(scope="module")
def dashboard(new_stack: Callable[..., Stack]) -> dict[str, Any]:
    stack = new_stack()
    model = llama3(stack, instance_type="ml.g5.12xlarge", bound=False)
    big = LlmEndpoint(
        stack,
        "Big",
        model=model,
        endpoint_name="big",
        autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8),
        fleet_change=FleetChange.TWO_DEPLOYS,  # keeps the name given
    )
    shared = InferenceComponentEndpoint(
        stack, "Shared", instance_type="ml.g5.12xlarge", max_instances=2
    )
    chat = InferenceComponent(
        stack,
        "Chat",
        endpoint=shared,
        model=model,
        accelerators=1,
        min_memory_mib=16 * 1024,
        copies=2,
        inference_component_name="chat",
    )
    api = StreamingInvoker(stack, "Api", target=big)
    other = StreamingInvoker(
        stack, "Other", target=LlmEndpoint.from_endpoint_name(stack, "Old", "old")
    )
    LlmDashboard(stack, "Dashboard", endpoints=[big], components=[chat], invokers=[api, other])
    return _body(stack)


def test_one_row_per_target_each_under_its_title(dashboard: dict[str, Any]) -> None:
    titles = [
        w["properties"]["markdown"].splitlines()[0]
        for w in dashboard["widgets"]
        if w["type"] == "text"
    ]
    assert titles == [
        "### Test/Big (endpoint, ml.g5.12xlarge)",
        "### Test/Chat (inference component on Test/Shared)",
        "### Test/Old (endpoint deployed elsewhere)",  # from the invoker Other
    ]
    # an endpoint's row: its widgets side by side, four a line
    rows = [w for w in dashboard["widgets"] if w["type"] != "text" and w["y"] in (2, 8)]
    assert [w["properties"].get("title") for w in rows] == [
        "Requests per minute",
        "Model latency and the invoker's own time (ms)",
        "Errors per minute",
        "Requests in flight per instance (max)",
        "Instances running, against the scaling bounds",
        "GPU use and memory (% of each of 4 GPUs)",
        "Time to first token (ms) and tokens per second",
        "Alarms",
    ]


def test_model_latency_sits_next_to_the_invoker_s_own_time(dashboard: dict[str, Any]) -> None:
    widget = _widgets(dashboard)["Model latency and the invoker's own time (ms)"]
    metrics = widget["properties"]["metrics"]
    assert metrics[0] == [
        {"label": "ModelLatency p90 (ms)", "expression": "latency / 1000", "period": 60}
    ]
    sagemaker, overhead, duration = _metrics(widget)[:3]
    assert sagemaker[:6] == [
        "AWS/SageMaker",
        "ModelLatency",
        "EndpointName",
        "big",
        "VariantName",
        "g5-12xlarge",
    ]
    assert sagemaker[6]["stat"] == "p90"
    for metric, name in ((overhead, "OverheadLatency"), (duration, "Duration")):
        assert metric[:2] == ["ConstructsLlm/Invoker", name]
        assert metric[2:4] == ["Model", LLAMA3]
        assert metric[4] == "Target"


def test_instances_are_drawn_against_the_autoscaling_bounds(dashboard: dict[str, Any]) -> None:
    widget = _widgets(dashboard)["Instances running, against the scaling bounds"]
    (metric,) = _metrics(widget)
    assert metric[:2] == ["/aws/sagemaker/Endpoints", "CPUUtilization"]
    assert metric[-1]["stat"] == "SampleCount"
    annotations = widget["properties"]["annotations"]["horizontal"]
    assert [(a["label"], a["value"]) for a in annotations] == [("min", 1), ("max", 4)]


def test_gpu_use_is_shown_per_gpu_and_ttft_with_tokens_per_second(
    dashboard: dict[str, Any],
) -> None:
    widgets = _widgets(dashboard)
    gpu = widgets["GPU use and memory (% of each of 4 GPUs)"]["properties"]["metrics"]
    assert [m[0]["expression"] for m in gpu if isinstance(m[0], dict)] == [
        "gpu / 4",
        "memory / 4",
    ]
    tokens = widgets["Time to first token (ms) and tokens per second"]
    names = [(m[1], m[-1]["stat"], m[-1].get("yAxis", "left")) for m in _metrics(tokens)]
    assert ("TimeToFirstToken", "p90", "left") in names
    assert ("TimeToFirstToken", "p50", "left") in names
    assert ("TokensPerSecond", "p50", "right") in names


def test_a_component_row_uses_the_component_metrics(dashboard: dict[str, Any]) -> None:
    widgets = [w for w in dashboard["widgets"] if w["type"] == "metric"]
    copies = next(
        w
        for w in widgets
        if w["properties"]["title"] == "Copies running, against the scaling bounds"
    )
    (metric,) = _metrics(copies)
    assert metric[:4] == [
        "/aws/sagemaker/InferenceComponents",
        "CPUUtilizationNormalized",
        "InferenceComponentName",
        "chat",
    ]
    assert [a["value"] for a in copies["properties"]["annotations"]["horizontal"]] == [2, 2]
    errors = [w for w in widgets if w["properties"]["title"] == "Errors per minute"][1]
    assert "NoCapacityInvocationFailures" in [m[1] for m in _metrics(errors)]
    gpu = next(
        w
        for w in widgets
        if w["properties"]["title"] == "GPU use and memory of the copies (% of their GPUs)"
    )
    assert [m[1] for m in _metrics(gpu)] == [
        "GPUUtilizationNormalized",
        "GPUMemoryUtilizationNormalized",
    ]


def test_bad_input_names_the_value(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    with pytest.raises(ConfigurationError, match=r"nothing to show"):
        LlmDashboard(stack, "Empty")
    with pytest.raises(
        ConfigurationError, match=r"endpoints\[0\] must be an LlmEndpoint, got str 'my-endpoint'"
    ):
        LlmDashboard(stack, "Wrong", endpoints=["my-endpoint"])  # type: ignore[list-item]


def test_an_a_b_endpoint_gets_the_invokers_row_then_one_row_per_variant(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN two weighted variants behind one invoker, and a candidate in its shadow
    stack = new_stack()
    current = llama3(stack, instance_type="ml.g5.2xlarge", bound=False)
    ab = LlmEndpoint(
        stack,
        "AB",
        variants=[Variant(model=current, weight=90), Variant(model=current, weight=10, name="b")],
    )
    shadowed = LlmEndpoint(
        stack,
        "Shadowed",
        variants=[Variant(model=current)],
        shadow=Variant(model=current, instance_type="ml.g5.12xlarge", weight=0.5),
    )
    api = StreamingInvoker(stack, "Api", target=ab)
    LlmDashboard(stack, "Dashboard", endpoints=[ab, shadowed], invokers=[api])
    widgets = _body(stack)["widgets"]
    # THEN the endpoint's title, the invoker's metrics, then a title and a row per variant
    texts = [w["properties"]["markdown"].splitlines()[0] for w in widgets if w["type"] == "text"]
    assert texts == [
        "### Test/AB (endpoint, ml.g5.2xlarge)",
        "#### variant Model-g5-2xlarge (ml.g5.2xlarge, weight 90)",
        "#### variant b (ml.g5.2xlarge, weight 10)",
        "### Test/Shadowed (endpoint, ml.g5.2xlarge)",
        "#### variant Model-g5-2xlarge (ml.g5.2xlarge, weight 1)",
        "#### variant Model-g5-12xlarge (ml.g5.12xlarge, shadow)",
    ]
    errors = [w for w in widgets if w["properties"].get("title") == "Errors per minute"]
    variants = [{m[5] for m in _metrics(w) if m[1] == "Invocation5XXErrors"} for w in errors]
    assert variants == [
        {"Model-g5-2xlarge"},
        {"b"},
        {"Model-g5-2xlarge"},
        {"Model-g5-12xlarge"},
    ]
    # each production variant's own alarms; the shadow has none
    alarms = [w for w in widgets if w["properties"].get("title") == "Alarms"]
    assert len(alarms) == 3
    tokens = [w for w in widgets if w["properties"].get("title", "").startswith("Time to first")]
    assert len(tokens) == 1  # the invoker measures the endpoint, once
