"""Enhanced metrics in the dashboard and alarms: with ``enhanced_metrics=True`` a variant's row
graphs each GPU and each instance, a component's row each copy, and a variant on GPUs gets an
alarm on its fullest single GPU; without it, nothing of this is rendered."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk.assertions import Template

from constructs_llm import (
    Alarms,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
)

LLAMA = "meta-llama/Meta-Llama-3-8B-Instruct"


def _model(stack: Stack, id: str, instance_type: str = "ml.g5.12xlarge") -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(LLAMA, needs_token=False),
        engine=Engine.vllm(),
        instance_type=instance_type,
    )


@dataclass
class Built:
    template: Template
    endpoint: LlmEndpoint
    component: InferenceComponent

    def resources(self, kind: str) -> dict[str, Any]:
        return dict(self.template.find_resources(kind))

    def dashboard(self) -> str:
        (dashboard,) = self.resources("AWS::CloudWatch::Dashboard").values()
        return json.dumps(dashboard["Properties"]["DashboardBody"])

    def alarm_ids(self) -> set[str]:
        return set(self.resources("AWS::CloudWatch::Alarm"))


def _build(stack: Stack, *, enhanced: bool, frequency: Duration | None = None) -> Built:
    options: dict[str, Any] = {"enhanced_metrics": enhanced}
    if frequency is not None:
        options["metric_publish_frequency"] = frequency
    endpoint = LlmEndpoint(
        stack, "Endpoint", model=_model(stack, "Model"), alarms=Alarms(), **options
    )
    hosts = InferenceComponentEndpoint(
        stack, "Hosts", instance_type="ml.g5.12xlarge", max_instances=2, **options
    )
    component = InferenceComponent(
        stack,
        "Chat",
        endpoint=hosts,
        model=_model(stack, "ChatModel"),
        accelerators=1,
        min_memory_mib=16 * 1024,
        alarms=True,
    )
    LlmDashboard(stack, "Dashboard", endpoints=[endpoint], components=[component])
    return Built(Template.from_stack(stack), endpoint, component)


@pytest.fixture(scope="module")
def enhanced(new_stack: Callable[..., Stack]) -> Built:
    return _build(new_stack(), enhanced=True)


@pytest.fixture(scope="module")
def standard(new_stack: Callable[..., Stack]) -> Built:
    return _build(new_stack(), enhanced=False)


def _searches(body: str) -> list[str]:
    return re.findall(r"SEARCH\('.*?\)", body.replace('\\\\\\"', '"'))


def test_the_variant_row_graphs_each_gpu_and_each_instance(enhanced: Built) -> None:
    searches = _searches(enhanced.dashboard())
    gpu = '{"/aws/sagemaker/Endpoints",AcceleratorId,EndpointName,InstanceId,VariantName}'
    assert any(
        s.startswith(f'SEARCH(\'{gpu} MetricName="GPUMemoryUtilization" EndpointName=')
        and s.endswith("', 'Maximum', 60)")
        for s in searches
    ), searches
    assert any(f'{gpu} MetricName="GPUUtilization"' in s for s in searches)
    instance = '{"AWS/SageMaker",EndpointName,InstanceId,VariantName} MetricName="Invocations"'
    assert any(instance in s and s.endswith("'Sum', 60)") for s in searches)


def test_the_component_row_graphs_each_copy(enhanced: Built) -> None:
    searches = _searches(enhanced.dashboard())
    copy = '{"/aws/sagemaker/InferenceComponents",ContainerId,InferenceComponentName}'
    assert any(f'{copy} MetricName="GPUMemoryUtilizationNormalized"' in s for s in searches)
    requests = '{"AWS/SageMaker",ContainerId,InferenceComponentName} MetricName="Invocations"'
    assert any(requests in s for s in searches)


def test_each_search_names_its_target_s_own_dimension_values(enhanced: Built) -> None:
    endpoint = enhanced.endpoint
    endpoint_id = Stack.of(endpoint).get_logical_id(endpoint.resource)
    name = f'EndpointName="", {{"Fn::GetAtt": ["{endpoint_id}", "EndpointName"]}}, ""'
    searches = _searches(enhanced.dashboard())
    variant = [s for s in searches if "VariantName" in s]
    assert len(variant) == 3
    assert all(f'{name} VariantName="{endpoint.variant_plan.name}"' in s for s in variant), variant
    component = Stack.of(enhanced.component).resolve(enhanced.component.inference_component_name)
    copies = [s for s in searches if "InferenceComponentName" in s]
    assert len(copies) == 2
    assert all(f'InferenceComponentName="{component}"' in s for s in copies), copies


def test_the_fullest_gpu_alarm_reads_the_per_gpu_metrics(enhanced: Built) -> None:
    alarms = enhanced.resources("AWS::CloudWatch::Alarm")
    (per_gpu,) = [a for name, a in alarms.items() if "GpuMemoryPerGpu" in name]
    properties = per_gpu["Properties"]
    (query,) = properties["Metrics"]
    assert query["Period"] == 60 and query["ReturnData"] is True
    expression = json.dumps(query["Expression"])
    assert (
        'SELECT MAX(GPUMemoryUtilization) FROM SCHEMA(\\"/aws/sagemaker/Endpoints\\", '
        "AcceleratorId, EndpointName, InstanceId, VariantName) WHERE EndpointName = '"
    ) in expression
    # a percent of one GPU: the threshold is the setting itself, not scaled by the GPU count
    assert properties["Threshold"] == 98
    assert (properties["EvaluationPeriods"], properties["DatapointsToAlarm"]) == (5, 5)
    assert properties["TreatMissingData"] == "notBreaching"
    assert enhanced.endpoint.alarms is not None
    assert enhanced.endpoint.alarms.gpu_memory_per_gpu in list(enhanced.endpoint.alarms)
    # the instance-level alarm stays: it needs no enhanced metrics
    assert enhanced.endpoint.alarms.gpu_memory is not None


def test_a_fullest_gpu_alarm_is_not_a_rollback_alarm(enhanced: Built) -> None:
    assert enhanced.endpoint.alarms is not None
    assert enhanced.endpoint.alarms.gpu_memory_per_gpu not in enhanced.endpoint.alarms.rollback


def test_without_enhanced_metrics_nothing_of_this_is_rendered(standard: Built) -> None:
    assert _searches(standard.dashboard()) == []
    assert not [name for name in standard.alarm_ids() if "GpuMemoryPerGpu" in name]
    assert standard.endpoint.enhanced_period is None
    assert standard.component.enhanced_period is None


def test_the_searches_follow_the_publish_frequency(new_stack: Callable[..., Stack]) -> None:
    built = _build(new_stack(), enhanced=True, frequency=Duration.seconds(10))
    searches = _searches(built.dashboard())
    assert searches and all(s.endswith(", 10)") for s in searches)
    assert built.endpoint.enhanced_period is not None
    assert built.endpoint.enhanced_period.to_seconds() == 10


def test_a_cpu_endpoint_graphs_its_instances_and_has_no_gpu_alarm(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("BAAI/bge-small-en-v1.5", needs_token=False),
        engine=Engine.tei(),
        instance_type="ml.c6i.xlarge",
    )
    endpoint = LlmEndpoint(stack, "Endpoint", model=model, alarms=True, enhanced_metrics=True)
    LlmDashboard(stack, "Dashboard", endpoints=[endpoint])
    template = Template.from_stack(stack)
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    searches = _searches(json.dumps(dashboard["Properties"]["DashboardBody"]))
    assert len(searches) == 1 and 'MetricName="Invocations"' in searches[0]
    assert endpoint.alarms is not None and endpoint.alarms.gpu_memory_per_gpu is None


def _text(value: Any) -> str:
    """A string, or an ``Fn::Join`` of strings and references (each as ``<ref>``)."""
    if isinstance(value, str):
        return value
    parts = value["Fn::Join"][1]
    return "".join(p if isinstance(p, str) else "<ref>" for p in parts)


def _insights_queries(template: Template) -> list[str]:
    queries = [
        _text(q["Expression"])
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
        for q in a["Properties"].get("Metrics", [])
        if "Expression" in q
    ]
    return [q for q in queries if q.startswith("SELECT")]


def test_an_unpooled_variant_s_fullest_gpu_query_names_its_dimension_set(enhanced: Built) -> None:
    (query,) = [q for q in _insights_queries(enhanced.template) if "/aws/sagemaker/Endpoints" in q]
    assert query.startswith(
        'SELECT MAX(GPUMemoryUtilization) FROM SCHEMA("/aws/sagemaker/Endpoints", '
        "AcceleratorId, EndpointName, InstanceId, VariantName) WHERE EndpointName = "
    )
    assert enhanced.endpoint.alarms is not None
    assert enhanced.endpoint.alarms.gpu_memory_per_gpu is not None


def test_instance_pools_watch_the_fullest_gpu_in_the_documented_dimension_set_only(
    new_stack: Callable[..., Stack],
) -> None:
    # a percent of one GPU reads the same on every pool's type, so one query covers them all;
    # the pools guide keeps the existing metrics ("continue to work the same way") and adds
    # EndpointName, VariantName, InstanceType; no guide describes per-GPU series that carry
    # InstanceType, and SCHEMA matches exactly one set: an alarm on a set never published
    # stays OK forever, so there is one alarm, on the enhanced-metrics guide's set
    stack = new_stack()
    pools = ["ml.g6e.2xlarge", "ml.g5.4xlarge"]
    model = _model(stack, "Model", pools[0])
    endpoint = LlmEndpoint(
        stack, "Endpoint", model=model, instance_type=pools, alarms=True, enhanced_metrics=True
    )
    LlmDashboard(stack, "Dashboard", endpoints=[endpoint])
    template = Template.from_stack(stack)
    assert endpoint.alarms is not None
    assert endpoint.alarms.gpu_memory_per_gpu is not None
    assert not hasattr(endpoint.alarms, "gpu_memory_per_gpu_by_pool")
    assert set(endpoint.alarms.gpu_memory_by_instance_type) == set(pools)
    schemas = sorted(
        re.search(r"SCHEMA\(([^)]*)\)", q).group(1)  # type: ignore[union-attr]
        for q in _insights_queries(template)
    )
    assert schemas == [
        '"/aws/sagemaker/Endpoints", AcceleratorId, EndpointName, InstanceId, VariantName',
    ]
    # AND the dashboard searches that set for its line per GPU
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    gpu_searches = [s for s in _searches(body) if 'MetricName="GPUMemoryUtilization"' in s]
    assert [s.split("}")[0] for s in gpu_searches] == [
        'SEARCH(\'{"/aws/sagemaker/Endpoints",AcceleratorId,EndpointName,InstanceId,VariantName',
    ]
