"""StreamingInvoker.metric_*(): the metrics its runtime writes, by the dimensions the runtime
is configured with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import (
    LlmEndpoint,
    StreamingInvoker,
)
from constructs_llm.contract import ERROR_KINDS, NAMESPACE
from constructs_llm.errors import ConfigurationError
from constructs_llm.streaming.runtime.metrics import METRIC_UNITS
from tests.matrix.builders import component
from tests.matrix.builders import model as llama3

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"


def _resolved(stack: Stack, metric: Any) -> dict[str, Any]:
    config = metric.to_metric_config().metric_stat
    return {
        "namespace": config.namespace,
        "name": config.metric_name,
        "statistic": config.statistic,
        "period": config.period.to_seconds(),
        "dimensions": {d.name: stack.resolve(d.value) for d in config.dimensions},
    }


def _env(template: Template) -> dict[str, Any]:
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    env: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return env


@pytest.fixture(scope="module")
def endpoint_invoker(new_stack: Callable[..., Stack]) -> tuple[StreamingInvoker, Template]:
    stack = new_stack()
    model = llama3(stack, instance_type="ml.g5.2xlarge", bound=False)
    invoker = StreamingInvoker(stack, "Api", target=LlmEndpoint(stack, "Endpoint", model=model))
    return invoker, Template.from_stack(stack)


@pytest.mark.parametrize(
    ("helper", "name", "statistic"),
    [
        ("metric_requests", "Requests", "Sum"),
        ("metric_time_to_first_token", "TimeToFirstToken", "p90"),
        ("metric_duration", "Duration", "p90"),
        ("metric_output_tokens", "OutputTokens", "Sum"),
        ("metric_tokens_per_second", "TokensPerSecond", "p50"),
        ("metric_overhead_latency", "OverheadLatency", "p90"),
        ("metric_errors", "Errors", "Sum"),
        ("metric_client_disconnects", "ClientDisconnects", "Sum"),
        ("metric_held_requests", "HeldRequests", "Sum"),
        ("metric_held_time", "HeldTime", "p90"),
    ],
)
def test_each_helper_reads_a_metric_the_runtime_writes_by_target_and_model(
    endpoint_invoker: tuple[StreamingInvoker, Template], helper: str, name: str, statistic: str
) -> None:
    invoker, template = endpoint_invoker
    assert name in METRIC_UNITS  # the runtime defines it
    metric = _resolved(Stack.of(invoker), getattr(invoker, helper)())
    env = _env(template)
    # the runtime's namespace and dimensions are the ones the function is configured with
    assert env["METRICS_NAMESPACE"] == NAMESPACE == metric["namespace"]
    assert metric["dimensions"] == {"Target": env["ENDPOINT_NAME"], "Model": env["MODEL_NAME"]}
    assert (metric["name"], metric["statistic"], metric["period"]) == (name, statistic, 60)


def test_errors_of_one_kind_add_the_kind_dimension(
    endpoint_invoker: tuple[StreamingInvoker, Template],
) -> None:
    invoker, _ = endpoint_invoker
    for kind in ERROR_KINDS:
        metric = _resolved(Stack.of(invoker), invoker.metric_errors(kind))
        assert metric["dimensions"]["ErrorKind"] == kind
    with pytest.raises(ConfigurationError, match=r"kind must be one of auth, .* got 'oom'"):
        invoker.metric_errors("oom")


def test_options_override_the_defaults(endpoint_invoker: tuple[StreamingInvoker, Template]) -> None:
    invoker, _ = endpoint_invoker
    metric = _resolved(Stack.of(invoker), invoker.metric_time_to_first_token(statistic="p99"))
    assert metric["statistic"] == "p99"


def test_a_component_s_invoker_names_the_component_as_its_target(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    chat = component(
        stack,
        accelerators=1,
        min_memory_mib=16 * 1024,
        inference_component_name="chat",
    )
    invoker = StreamingInvoker(stack, "Api", target=chat)
    env = _env(Template.from_stack(stack))
    metric = _resolved(stack, invoker.metric_tokens_per_second())
    assert metric["dimensions"] == {"Target": "chat", "Model": LLAMA3}
    assert (env["INFERENCE_COMPONENT_NAME"], env["MODEL_NAME"]) == ("chat", LLAMA3)


def test_an_invoker_of_several_targets_has_metrics_for_each(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    small = LlmEndpoint(
        stack, "Small", model=llama3(stack, instance_type="ml.g5.2xlarge", bound=False)
    )
    legacy = LlmEndpoint.from_endpoint_name(stack, "Legacy", "legacy-endpoint")
    other = LlmEndpoint.from_endpoint_name(stack, "Other", "other-endpoint")
    invoker = StreamingInvoker(stack, "Gateway", targets=[small, legacy])
    first = _resolved(stack, invoker.metric_requests())
    second = _resolved(stack, invoker.metric_requests(target=legacy))
    assert first["dimensions"]["Model"] == LLAMA3  # the first target by default
    assert second["dimensions"] == {"Target": "legacy-endpoint", "Model": "legacy-endpoint"}
    with pytest.raises(ConfigurationError, match=r"'other-endpoint' is not one of this invoker"):
        invoker.metric_errors(target=other)
