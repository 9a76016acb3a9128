"""Detailed observability and the engine's own signals: ``MetricsConfig`` always states the
choice, SGLang serves its metrics, and vLLM and SGLang targets get PromQL alarms on a full KV
cache and a queue (per variant, over every pool, per component), listed on the dashboard with
the queries for CloudWatch's Query Studio."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import botocore.session
import pytest
from aws_cdk import Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template

from constructs_llm import (
    Alarms,
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Placement,
)
from constructs_llm.engines.signals import SGLANG_SIGNALS, VLLM_SIGNALS
from constructs_llm.operations.engine_signals import spellings
from tests.support.dlc_entrypoint import flag_args

QWEN = "Qwen/Qwen2.5-7B-Instruct"
#: A region CloudWatch's PromQL page lists: the engine alarms are on there by default (an
#: environment-agnostic stack gets them only when asked for: tests/test_region_availability.py).
PROMQL_REGION = "us-east-1"
CHAT = '{"aws.sagemaker.endpoint.name"="chat","aws.sagemaker.variant.name"="g5-2xlarge"}'


def _model(stack: Stack, engine: Engine, id: str = "Model", **props: Any) -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(QWEN),
        engine=engine,
        instance_type=props.pop("instance_type", "ml.g5.2xlarge"),
        max_total_tokens=8192,
        **props,
    )


def _promql(template: Template) -> dict[str, dict[str, Any]]:
    """The PromQL alarms by logical id."""
    return {
        k: a["Properties"]
        for k, a in template.find_resources("AWS::CloudWatch::Alarm").items()
        if "EvaluationCriteria" in a["Properties"]
    }


def _query(props: dict[str, Any]) -> str:
    query: str = props["EvaluationCriteria"]["PromQLCriteria"]["Query"]
    return query


def _served(
    new_stack: Callable[..., Stack], engine: Engine, **endpoint: Any
) -> tuple[LlmEndpoint, Template]:
    stack = new_stack(PROMQL_REGION)
    served = LlmEndpoint(stack, "Endpoint", model=_model(stack, engine), **endpoint)
    return served, Template.from_stack(stack)


# -- detailed observability ------------------------------------------------------------------


@pytest.mark.parametrize("detailed", [True, False])
def test_detailed_observability_is_always_rendered_as_chosen(
    new_stack: Callable[..., Stack], detailed: bool
) -> None:
    stack = new_stack()
    LlmEndpoint(
        stack, "Endpoint", model=_model(stack, Engine.vllm()), detailed_observability=detailed
    )
    InferenceComponentEndpoint(
        stack, "Hosts", instance_type="ml.g5.12xlarge", detailed_observability=detailed
    )
    configs = Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig")
    assert [c["Properties"]["MetricsConfig"] for c in configs.values()] == [
        {"EnableDetailedObservability": detailed}
    ] * 2


def test_detailed_observability_is_left_out_where_the_guide_does_not_describe_it(
    new_stack: Callable[..., Stack],
) -> None:
    # "a next-generation metrics experience for Amazon SageMaker AI real-time inference
    # endpoints" (monitoring-cloudwatch-detailed-observability), on DCGM's GPU metrics: an
    # asynchronous endpoint and Neuron instances are not described, so their configs leave
    # the field to SageMaker, and no engine alarm watches metrics nothing documents
    from aws_cdk import aws_s3 as s3

    from constructs_llm import AsyncInference

    stack = new_stack()
    queued = LlmEndpoint(
        stack,
        "Batch",
        model=_model(stack, Engine.vllm(), "BatchModel"),
        async_inference=AsyncInference(output=s3.Bucket(stack, "Out")),
    )
    neuron = InferenceComponentEndpoint(stack, "Neuron", instance_type="ml.inf2.24xlarge")
    gpu = InferenceComponentEndpoint(stack, "Gpu", instance_type="ml.g5.12xlarge")
    template = Template.from_stack(stack)
    configs = {
        k.split("Config")[0]: c["Properties"].get("MetricsConfig", {})
        for k, c in template.find_resources("AWS::SageMaker::EndpointConfig").items()
    }
    assert sorted((k[:5], v.get("EnableDetailedObservability")) for k, v in configs.items()) == [
        ("Batch", None),
        ("Gpu", True),
        ("Neuro", None),
    ]
    assert (queued.detailed_observability, neuron.plan.metrics.engine_metrics) == (False, False)
    assert gpu.plan.metrics.engine_metrics
    assert queued.alarms is not None and queued.alarms.kv_cache is None
    assert _promql(template) == {}


def test_an_engine_threshold_on_an_asynchronous_endpoint_is_refused(
    new_stack: Callable[..., Stack],
) -> None:
    from aws_cdk import aws_s3 as s3

    from constructs_llm import AsyncInference, ConfigurationError

    stack = new_stack()
    with pytest.raises(ConfigurationError, match=r"kv_cache_percent=80.*asynchronous endpoints"):
        LlmEndpoint(
            stack,
            "Batch",
            model=_model(stack, Engine.vllm()),
            async_inference=AsyncInference(output=s3.Bucket(stack, "Out")),
            alarms=Alarms(kv_cache_percent=80),
        )


def test_sglang_serves_its_metrics_as_the_dlc_starts_it(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    env = _model(stack, Engine.sglang()).bind(Placement("ml.g5.2xlarge")).environment
    assert env["SM_SGLANG_ENABLE_METRICS"] == "true"
    # the DLC's entrypoint makes the bare flag of it, which SGLang needs to serve /metrics
    assert "--enable-metrics" in flag_args(env, prefix="SM_SGLANG_")
    args = flag_args(env, prefix="SM_SGLANG_")
    assert args[args.index("--enable-metrics") + 1].startswith("--")


@pytest.mark.parametrize(
    ("engine", "signals"),
    [(Engine.vllm(), VLLM_SIGNALS), (Engine.sglang(), SGLANG_SIGNALS), (Engine.tgi(), None)],
)
def test_the_engines_that_publish_signals_say_so(engine: Engine, signals: object) -> None:
    assert engine.signals == signals
    assert Engine.vllm(embedding=True).signals is None  # no KV cache, no token stream


def test_each_name_is_queried_in_both_spellings() -> None:
    assert spellings("vllm:kv_cache_usage_perc") == (
        "vllm:kv_cache_usage_perc",
        "vllm_kv_cache_usage_perc",
    )


# -- the engine alarms -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm(new_stack: Callable[..., Stack]) -> tuple[LlmEndpoint, Template]:
    return _served(new_stack, Engine.vllm(), endpoint_name="chat")


def test_a_vllm_variant_alarms_on_a_full_kv_cache_and_a_queue(
    vllm: tuple[LlmEndpoint, Template],
) -> None:
    endpoint, template = vllm
    alarms = _promql(template)
    assert endpoint.alarms is not None
    assert endpoint.alarms.kv_cache is not None and endpoint.alarms.queue is not None
    kv = alarms[Stack.of(endpoint).get_logical_id(endpoint.alarms.kv_cache.node.default_child)]  # type: ignore[arg-type]
    queue = alarms[Stack.of(endpoint).get_logical_id(endpoint.alarms.queue.node.default_child)]  # type: ignore[arg-type]
    # every series of either spelling, of the old name too, compared on the engine's fraction
    assert _query(kv) == " or ".join(
        f"{name}{CHAT} > 0.95"
        for name in (
            "vllm:kv_cache_usage_perc",
            "vllm_kv_cache_usage_perc",
            "vllm:gpu_cache_usage_perc",
            "vllm_gpu_cache_usage_perc",
        )
    )
    assert _query(queue) == (
        f"vllm:num_requests_waiting{CHAT} >= 1 or vllm_num_requests_waiting{CHAT} >= 1"
    )
    # evaluated every minute; sustained for 10 (KV cache) or 5 minutes (queue)
    assert kv["EvaluationInterval"] == queue["EvaluationInterval"] == 60
    assert kv["EvaluationCriteria"]["PromQLCriteria"]["PendingPeriod"] == 600
    assert queue["EvaluationCriteria"]["PromQLCriteria"]["PendingPeriod"] == 300
    # each says what to do
    assert (
        "Scale out (raise max_capacity, lower target_concurrent_requests)"
        in (kv["AlarmDescription"])
    )
    assert "the endpoint is saturated. Scale out" in queue["AlarmDescription"]
    # AND they are not among the alarms that roll a guarded update back
    assert not {id(a) for a in (endpoint.alarms.kv_cache, endpoint.alarms.queue)} & {
        id(a) for a in endpoint.alarms.rollback
    }


def test_thresholds_come_from_alarms_and_none_turns_one_off(
    new_stack: Callable[..., Stack],
) -> None:
    _, template = _served(
        new_stack,
        Engine.vllm(),
        endpoint_name="chat",
        alarms=Alarms(kv_cache_percent=80, requests_waiting=None),
    )
    (alarm,) = _promql(template).values()
    assert _query(alarm).startswith(f"vllm:kv_cache_usage_perc{CHAT} > 0.8 or ")


def test_an_sglang_variant_queries_sglang_s_names(new_stack: Callable[..., Stack]) -> None:
    _, template = _served(new_stack, Engine.sglang(), endpoint_name="chat")
    queries = sorted(_query(a) for a in _promql(template).values())
    assert queries == [
        f"sglang:num_queue_reqs{CHAT} >= 1 or sglang_num_queue_reqs{CHAT} >= 1",
        f"sglang:token_usage{CHAT} > 0.95 or sglang_token_usage{CHAT} > 0.95",
    ]


@pytest.mark.parametrize(
    ("engine", "endpoint"),
    [
        (Engine.tgi(), {}),  # TGI: no signals SageMaker is documented to scrape
        (Engine.vllm(), {"detailed_observability": False}),  # nothing published
        (Engine.vllm(), {"alarms": Alarms(kv_cache_percent=None, requests_waiting=None)}),
    ],
)
def test_no_engine_alarm_where_nothing_would_feed_it(
    new_stack: Callable[..., Stack], engine: Engine, endpoint: dict[str, Any]
) -> None:
    served, template = _served(new_stack, engine, **endpoint)
    assert _promql(template) == {}
    assert served.alarms is not None and served.alarms.kv_cache is served.alarms.queue is None


def test_pools_share_one_alarm_whose_contributors_name_their_instance_type(
    new_stack: Callable[..., Stack],
) -> None:
    # the KV cache is a fraction and the queue a count on every pool's type, so one alarm per
    # signal covers the variant; each series it returns carries @resource.host.type
    _, template = _served(
        new_stack,
        Engine.vllm(),
        instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"],
        endpoint_name="chat",
    )
    queries = [_query(a) for a in _promql(template).values()]
    assert len(queries) == 2
    assert all('"aws.sagemaker.variant.name"="pools"' in q for q in queries)


def test_a_component_alarms_on_its_copies(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(PROMQL_REGION)
    hosts = InferenceComponentEndpoint(stack, "Hosts", instance_type="ml.g5.12xlarge")
    chat = InferenceComponent(
        stack,
        "Chat",
        endpoint=hosts,
        model=_model(stack, Engine.vllm(), instance_type="ml.g5.12xlarge"),
        accelerators=1,
        min_memory_mib=16 * 1024,
        inference_component_name="chat-qwen",
    )
    queries = sorted(_query(a) for a in _promql(Template.from_stack(stack)).values())
    selector = '{"aws.sagemaker.inference_component.name"="chat-qwen"}'
    assert queries[1] == (
        f"vllm:num_requests_waiting{selector} >= 1 or vllm_num_requests_waiting{selector} >= 1"
    )
    assert chat.alarms is not None and chat.alarms.kv_cache is not None


def test_engine_alarms_notify_the_topic_through_its_key(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(PROMQL_REGION)
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    topic = sns.Topic(stack, "Oncall", master_key=key, enforce_ssl=True)
    LlmEndpoint(stack, "Endpoint", model=_model(stack, Engine.vllm()), alarms=Alarms(topic=topic))
    template = Template.from_stack(stack)
    (topic_id,) = template.find_resources("AWS::SNS::Topic")
    for alarm in _promql(template).values():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}]


# -- the dashboard -----------------------------------------------------------------------------


def test_the_dashboard_lists_the_engine_queries_and_shows_the_engine_alarms(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(PROMQL_REGION)
    endpoint = LlmEndpoint(
        stack, "Endpoint", model=_model(stack, Engine.vllm()), endpoint_name="chat"
    )
    LlmDashboard(stack, "Dashboard", endpoints=[endpoint])
    template = Template.from_stack(stack)
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    body = json.loads(_joined(dashboard["Properties"]["DashboardBody"]))
    texts = [w["properties"]["markdown"] for w in body["widgets"] if w["type"] == "text"]
    (engine,) = [t for t in texts if "vLLM's own metrics" in t]
    assert "Alarms on them: KvCache, Queue." in engine
    assert f"max(vllm:kv_cache_usage_perc{CHAT}) or max(vllm_kv_cache_usage_perc{CHAT})" in engine
    assert (
        f"histogram_quantile(0.9, sum(rate(vllm:time_to_first_token_seconds{CHAT}[5m])))" in engine
    )
    assert "vllm:inter_token_latency_seconds" in engine
    (status,) = [w for w in body["widgets"] if w["type"] == "alarm"]
    assert len(status["properties"]["alarms"]) == len(list(endpoint.alarms or ()))


def _joined(value: Any) -> str:
    if isinstance(value, str):
        return value
    parts = value["Fn::Join"][1]
    return "".join(p if isinstance(p, str) else "REF" for p in parts)


# -- autoscaling ---------------------------------------------------------------------------------


def test_target_tracking_reads_cloudwatch_metrics_not_promql() -> None:
    """Why Autoscaling offers no KV-cache or queue target: Application Auto Scaling's target
    tracking takes a CloudWatch metric (name, namespace, dimensions) or metric math over
    ``MetricStat``s, and the engine signals are OpenTelemetry metrics read with PromQL."""
    model = botocore.session.get_session().get_service_model("application-autoscaling")
    custom = model.shape_for("CustomizedMetricSpecification").members
    assert set(custom) == {"MetricName", "Namespace", "Dimensions", "Statistic", "Unit", "Metrics"}
    query = model.shape_for("TargetTrackingMetricDataQuery").members
    assert set(query) == {"Expression", "Id", "Label", "MetricStat", "ReturnData"}
    documented = json.dumps([m.documentation for shape in (custom, query) for m in shape.values()])
    assert "PromQL" not in documented
    # SageMaker's predefined metrics: invocations and concurrency (what Autoscaling tracks)
    sagemaker = [m for m in model.shape_for("MetricType").enum if m.startswith("SageMaker")]
    assert "SageMakerVariantConcurrentRequestsPerModelHighResolution" in sagemaker
    assert not [m for m in sagemaker if "Cache" in m or "Queue" in m or "Waiting" in m]
    # and Autoscaling has no option that would pretend otherwise
    with pytest.raises(TypeError, match="target_kv_cache_percent"):
        Autoscaling(max_capacity=2, target_kv_cache_percent=80)  # type: ignore[call-arg]
