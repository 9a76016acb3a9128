"""A value of the wrong Python type, for every public construct, value class and keyword
argument, fails with the library's own error naming the argument and what it got: never a
jsii ``TypeError`` from deep inside the CDK.

One row per keyword argument (an int where a str goes, a str where a Duration goes, a dict
where a Variant goes, ...); each row builds what it needs in a fresh stack and synthesizes it,
so a value that slipped through to the CDK fails the row too.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk.assertions import Match, Template

from constructs_llm import (
    AdapterComponent,
    Alarms,
    AsyncInference,
    Autoscaling,
    ContainerImage,
    CopyPlacement,
    Cors,
    Deployment,
    EndpointLogs,
    Engine,
    ImportedEndpoint,
    InferenceComponent,
    InferenceComponentEndpoint,
    InstanceType,
    InvokerAuth,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelArchitecture,
    ModelSource,
    Placement,
    Routing,
    ScheduledCapacity,
    StreamFormat,
    StreamingInvoker,
    Variant,
)
from constructs_llm.errors import ConstructsLlmError
from tests.matrix.builders import (
    G5,
    G5_4GPU,
    IMAGE,
    LLAMA3,
    app_of,
    bucket,
    component,
    endpoint,
    ic_endpoint,
    invoker,
    model,
    scaling,
)

NIGHT = appscaling.Schedule.cron(hour="20", minute="0", week_day="MON-FRI")
ARCHITECTURE: dict[str, Any] = {
    "params_billion": 7,
    "layers": 32,
    "kv_heads": 8,
    "head_dim": 128,
    "hidden_size": 4096,
    "context_length": 8192,
}
ROLE_ARN = "arn:aws:iam::123456789012:role/llm"
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

Builder = Callable[[Stack, dict[str, Any]], object]


#: (subject, argument) of every row, for the coverage test.
COVERED: set[tuple[str, str]] = set()


def _case(subject: str, arg: str, bad: object, build: Builder, names: str | None = None) -> Any:
    """A row: ``build`` with ``arg=bad`` must raise, naming ``names`` (@default ``arg``)."""
    COVERED.add((subject, arg))
    return pytest.param(
        lambda s: build(s, {arg: bad}), names or arg, id=f"{subject}-{arg}-{type(bad).__name__}"
    )


def _cases(subject: str, build: Builder, bad: dict[str, object], **names: str) -> list[Any]:
    return [_case(subject, arg, value, build, names.get(arg)) for arg, value in bad.items()]


# -- builders: one construct or value with the given keyword arguments --------------------------


def _model(s: Stack, kw: dict[str, Any]) -> object:
    return model(s, bound=False, **kw)


def _async_inference(s: Stack, kw: dict[str, Any]) -> object:
    from aws_cdk import aws_s3 as s3

    return AsyncInference(**{"output": s3.Bucket(s, "Answers"), **kw})


def _endpoint(s: Stack, kw: dict[str, Any]) -> object:
    return LlmEndpoint(s, "Endpoint", **{"model": model(s, bound=False), **kw})


def _endpoint_variants(s: Stack, kw: dict[str, Any]) -> object:
    return LlmEndpoint(s, "AB", **{"variants": [Variant(model=model(s, bound=False))], **kw})


def _ic_endpoint(s: Stack, kw: dict[str, Any]) -> object:
    return ic_endpoint(s, **kw)


def _component(s: Stack, kw: dict[str, Any]) -> object:
    if "endpoint" in kw or "model" in kw:  # the builder makes both otherwise
        given = {
            "endpoint": ic_endpoint(s),
            "model": model(s, instance_type=G5_4GPU, bound=False),
            "min_memory_mib": 1024,
            **kw,
        }
        return InferenceComponent(s, "Chat", **given)
    return component(s, **{"accelerators": 1, **kw})


def _adapter(s: Stack, kw: dict[str, Any]) -> object:
    base = component(
        s,
        accelerators=1,
        model_props={
            "engine": Engine.lmi(),
            "env": {"OPTION_ENABLE_LORA": "true"},
            "max_total_tokens": 8192,
        },
    )
    props = {"name": "support-bot", "source": ModelSource.s3_archive(bucket(s), "a.tar.gz"), **kw}
    name = props.pop("name")
    return base.add_adapter(name, **props)


def _imported(s: Stack, kw: dict[str, Any]) -> object:
    return LlmEndpoint.from_endpoint_attributes(s, "Legacy", **{"endpoint_name": "legacy", **kw})


def _invoker(s: Stack, kw: dict[str, Any]) -> object:
    return invoker(s, **kw)


def _invoker_targets(s: Stack, kw: dict[str, Any]) -> object:
    return StreamingInvoker(s, "Stream", **kw)


def _distribution(s: Stack, kw: dict[str, Any]) -> object:
    return invoker(s).add_distribution(**{"public": True, **kw})


def _batch_api(s: Stack, kw: dict[str, Any]) -> object:
    return invoker(s).add_batch_api(**kw)


def _dashboard(s: Stack, kw: dict[str, Any]) -> object:
    return LlmDashboard(s, "Dashboard", **{"endpoints": [endpoint(s)], **kw})


def _autoscaling(s: Stack, kw: dict[str, Any]) -> object:
    return Autoscaling(**{"max_capacity": 2, "target_concurrent_requests": 4, **kw})


def _scheduled(s: Stack, kw: dict[str, Any]) -> object:
    return ScheduledCapacity(**{"schedule": NIGHT, "min_capacity": 0, **kw})


def _deployment(factory: str) -> Builder:
    required: dict[str, dict[str, Any]] = {
        "canary": {"percent": 10},
        "linear": {"step_percent": 10},
        "rolling": {"batch_percent": 25},
        "all_at_once": {},
    }

    def build(s: Stack, kw: dict[str, Any]) -> object:
        props = {**required[factory], "bake": Duration.minutes(5), **kw}
        return getattr(Deployment, factory)(**props)

    return build


def _deployment_class(s: Stack, kw: dict[str, Any]) -> object:
    return Deployment(**{"kind": "canary", "bake": Duration.minutes(5), "percent": 10, **kw})


def _alarms(s: Stack, kw: dict[str, Any]) -> object:
    return Alarms(**kw)


def _variant(s: Stack, kw: dict[str, Any]) -> object:
    return Variant(**{"model": model(s, bound=False), **kw})


def _hugging_face(s: Stack, kw: dict[str, Any]) -> object:
    props = {"model_id": LLAMA3, **kw}
    return ModelSource.hugging_face(props.pop("model_id"), **props)


def _s3(factory: str, path_arg: str, path: str) -> Builder:
    def build(s: Stack, kw: dict[str, Any]) -> object:
        props = {"bucket": bucket(s), path_arg: path, **kw}
        return getattr(ModelSource, factory)(props.pop("bucket"), props.pop(path_arg), **props)

    return build


def _dlc(s: Stack, kw: dict[str, Any]) -> object:
    props = {"repository": "huggingface-pytorch-tgi-inference", "tag": "2.4.0", **kw}
    return ContainerImage.dlc(props.pop("repository"), props.pop("tag"), **props)


def _dlc_default(s: Stack, kw: dict[str, Any]) -> object:
    return ContainerImage.dlc_default(**kw)


def _from_uri(s: Stack, kw: dict[str, Any]) -> object:
    return ContainerImage.from_uri(**kw)


def _from_ecr(s: Stack, kw: dict[str, Any]) -> object:
    from aws_cdk import aws_ecr as ecr

    props = {"repository": ecr.Repository.from_repository_name(s, "Repo", "my-llm"), **kw}
    return ContainerImage.from_ecr_repository(props.pop("repository"), **props)


def _api_keys(s: Stack, kw: dict[str, Any]) -> object:
    from aws_cdk import aws_secretsmanager as secretsmanager

    props = {"secret": secretsmanager.Secret.from_secret_name_v2(s, "Keys", "llm/keys"), **kw}
    return InvokerAuth.api_keys(props.pop("secret"), **props)


def _engine(factory: str) -> Builder:
    def build(s: Stack, kw: dict[str, Any]) -> object:
        return getattr(Engine, factory)(**kw)

    return build


def _custom(s: Stack, kw: dict[str, Any]) -> object:
    image = ContainerImage.from_uri(IMAGE)
    return Engine.custom(**{"image": image, "stream_format": StreamFormat.OPENAI, **kw})


def _instance_type(s: Stack, kw: dict[str, Any]) -> object:
    return InstanceType(**{"name": G5, **kw})


def _copy_placement(s: Stack, kw: dict[str, Any]) -> object:
    return CopyPlacement(**{"strategy": "SPREAD", **kw})


def _placement(s: Stack, kw: dict[str, Any]) -> object:
    return Placement(**{"instance_type": G5, **kw})


def _architecture(s: Stack, kw: dict[str, Any]) -> object:
    return ModelArchitecture(**{**ARCHITECTURE, **kw})


def _role(s: Stack) -> object:
    from aws_cdk import aws_iam as iam

    return iam.Role(s, "Caller", assumed_by=iam.AccountRootPrincipal())


def _bind(s: Stack, kw: dict[str, Any]) -> object:
    return model(s, bound=False).bind(**kw)


def _grant_invoke(target: Callable[[Stack], Any]) -> Builder:
    def build(s: Stack, kw: dict[str, Any]) -> object:
        return target(s).grant_invoke(**kw)

    return build


def _metric(s: Stack, kw: dict[str, Any]) -> object:
    return endpoint(s).metric_model_latency(**kw)


def _invoker_metric(s: Stack, kw: dict[str, Any]) -> object:
    return invoker(s).metric_time_to_first_token(**kw)


# -- the table ------------------------------------------------------------------------------------

_ENGINE_COMMON: dict[str, object] = {
    "image": IMAGE,  # a URI string where a ContainerImage goes
    "dtype": 16,
    "trust_remote_code": "true",
    "tool_calls": "yes",
}

WRONG_TYPES = [
    # LlmModel
    *_cases(
        "model",
        _model,
        {
            "source": LLAMA3,
            "engine": "tgi",
            "instance_type": 5,
            "max_input_tokens": "2048",
            "max_total_tokens": 4096.0,
            "env": "MAX_BATCH_SIZE=8",
            "role": ROLE_ARN,
            "vpc": "vpc-0123456789abcdef0",
            "vpc_subnets": ["subnet-0123"],
            "security_groups": "sg-0123",
            "network_isolation": "true",
            "architecture": ARCHITECTURE,
        },
    ),
    _case("model", "env", {"MAX_BATCH_SIZE": 8}, _model),
    _case("model", "bind", "ml.g5.2xlarge", lambda s, kw: _bind(s, {"placement": kw["bind"]})),
    *_cases(
        "model-grant-read",
        lambda s, kw: model(s).grant_read(**{"grantee": _role(s), **kw}),
        {"grantee": ROLE_ARN, "placement": "ml.g5.2xlarge"},
    ),
    # LlmEndpoint
    *_cases(
        "endpoint",
        _endpoint,
        {
            "model": "Model",
            "instance_type": 5,
            "instance_count": "1",
            "health_check_timeout": "15m",
            "download_timeout": 900,
            "volume_size": 100,
            "kms_key": KEY_ARN,
            "endpoint_name": 5,
            "autoscaling": {"max_capacity": 2},
            "served_model_name": 5,
            "deployment": "canary",
            "alarms": "yes",
            "provision_timeout": 300,
            "enhanced_metrics": "true",
            "metric_publish_frequency": 60,
            "detailed_observability": 1,
            "capacity_reservation": 5,
            "async_inference": "s3://answers/",
            "fleet_change": "new_endpoint",
            "logs": "yes",
            "routing": "PREFIX_AWARE",
        },
    ),
    _case("endpoint", "instance_type", ["ml.g5.2xlarge", 5], _endpoint),
    _case("endpoint", "price_per_hour", [2.24], _endpoint),
    *_cases(
        "endpoint",
        _endpoint_variants,
        {"variants": Variant, "shadow": {"model": "Model"}},
    ),
    _case("endpoint", "variants", [{"model": "Model"}], lambda s, kw: LlmEndpoint(s, "AB", **kw)),
    _case("endpoint", "grantee", ROLE_ARN, _grant_invoke(endpoint)),
    _case("endpoint-openai", "grantee", ROLE_ARN, lambda s, kw: endpoint(s).grant_openai(**kw)),
    _case(
        "endpoint-dimensions",
        "instance_type",
        5,
        lambda s, kw: endpoint(s).instance_type_dimensions(**kw),
    ),
    _case("endpoint", "period", 60, _metric),
    *_cases(
        "endpoint-metric",
        lambda s, kw: endpoint(s).metric(**{"metric_name": "ModelLatency", **kw}),
        {"metric_name": 5, "namespace": 5},
    ),
    # InferenceComponentEndpoint
    *_cases(
        "ic-endpoint",
        _ic_endpoint,
        {
            "instance_type": 5,
            "min_instances": "0",
            "max_instances": 2.0,
            "health_check_timeout": 900,
            "endpoint_name": 5,
            "role": ROLE_ARN,
            "volume_size": "100GiB",
            "kms_key": KEY_ARN,
            "provision_timeout": "5m",
            "enhanced_metrics": 1,
            "metric_publish_frequency": "60s",
            "detailed_observability": "yes",
            "capacity_reservation": ["my-reservation"],
            "logs": 30,
            "routing": {"RoutingStrategy": "RANDOM"},
        },
    ),
    _case("ic-endpoint", "instance_type", ["ml.g5.12xlarge", 5], _ic_endpoint),
    _case("ic-endpoint", "price_per_hour", "7.09", _ic_endpoint),
    # InferenceComponent
    *_cases(
        "ic",
        _component,
        {
            "endpoint": "Shared",
            "model": "Model",
            "min_memory_mib": "1024",
            "accelerators": "1",
            "cpu_cores": "2",
            "copies": "1",
            "autoscaling": {"max_capacity": 2},
            "health_check_timeout": "15m",
            "download_timeout": 900,
            "inference_component_name": 5,
            "served_model_name": 5,
            "deployment": "rolling",
            "alarms": "yes",
            "data_cache": "yes",
            "copy_placement": "SPREAD",
        },
    ),
    _case("ic", "grantee", ROLE_ARN, _grant_invoke(lambda s: _component(s, {}))),
    _case("ic-openai", "grantee", ROLE_ARN, lambda s, kw: component(s).grant_openai(**kw)),
    # InferenceComponent.add_adapter
    *_cases(
        "adapter",
        _adapter,
        {"name": 5, "source": "s3://my-weights/a.tar.gz", "inference_component_name": 5},
    ),
    # AdapterComponent, built directly
    *_cases(
        "adapter-class",
        lambda s, kw: AdapterComponent(
            s,
            **{
                "base": component(s, accelerators=1),
                "name": "bot",
                "source": ModelSource.s3_archive(bucket(s), "a.tar.gz"),
                **kw,
            },
        ),
        {"base": 5, "name": 5, "source": "a.tar.gz", "inference_component_name": 5},
    ),
    # LlmEndpoint.from_endpoint_attributes / from_endpoint_name
    *_cases(
        "imported",
        _imported,
        {
            "endpoint_name": 5,
            "engine": "tgi",
            "stream_format": 5,
            "request_format": 5,
            "variant_name": 5,
            "served_model_name": 5,
            "tool_calls": "yes",
        },
    ),
    _case(
        "imported",
        "endpoint_name",
        5,
        lambda s, kw: LlmEndpoint.from_endpoint_name(s, "Legacy", **kw),
    ),
    # StreamingInvoker
    *_cases(
        "invoker",
        _invoker,
        {
            "timeout": 300,
            "memory_size": "512",
            "adapter_layer": "arn:aws:lambda:us-east-1:753240598075:layer:LambdaAdapterLayerArm64:25",
            "architecture": "arm64",
            "log_retention": 30,
            "log_encryption_key": KEY_ARN,
            "heartbeat": "15s",
            "auth": "iam",
            "max_concurrency": "10",
            "max_request_bytes": "5MB",
            "reasoning_field": 5,
            "cors": {"allowed_origins": ["https://app.example.com"]},
            "capacity_wait": "8m",
        },
    ),
    *_cases("invoker", _invoker_targets, {"target": "my-endpoint", "targets": "my-endpoint"}),
    _case("invoker", "period", "1m", _invoker_metric),
    _case("invoker-url", "grantee", ROLE_ARN, lambda s, kw: invoker(s).grant_invoke_url(**kw)),
    _case("invoker-metric", "target", 5, lambda s, kw: invoker(s).metric_requests(**kw)),
    _case("invoker-metric", "metric_name", 5, lambda s, kw: invoker(s).metric(**kw)),
    _case("invoker-metric", "kind", 5, lambda s, kw: invoker(s).metric_errors(**kw)),
    # StreamingInvoker.add_distribution
    *_cases(
        "distribution",
        _distribution,
        {
            "origin_access_control": "yes",
            "read_timeout": 60,
            "rate_limit": "100",
            "rate_limit_window": 300,
            "web_acl_arn": 5,
            "certificate": "arn:aws:acm:us-east-1:123456789012:certificate/abc",
            "domain_names": "llm.example.com",
            "public": "yes",
        },
    ),
    # StreamingInvoker.add_batch_api
    *_cases(
        "batch-api",
        _batch_api,
        {
            "bucket": "my-bucket",
            "retention": 30,
            "max_concurrency": "16",
            "completion_window": 24,
            "access_logs": "my-logs",
            "async_targets": "Overnight",
        },
    ),
    # LlmDashboard
    *_cases(
        "dashboard",
        _dashboard,
        {"endpoints": "Endpoint", "components": [5], "invokers": 5, "dashboard_name": 5},
    ),
    # Autoscaling
    *_cases(
        "autoscaling",
        _autoscaling,
        {
            "max_capacity": "4",
            "min_capacity": "1",
            "target_concurrent_requests": "8",
            "target_invocations_per_instance": "20",
            "scale_in_cooldown": 600,
            "scale_out_cooldown": "2m",
            "schedule": {"min_capacity": 0},
            "target_backlog_per_instance": "5",
        },
    ),
    # ScheduledCapacity
    *_cases(
        "schedule",
        _scheduled,
        {
            "schedule": "cron(0 20 ? * MON-FRI *)",
            "min_capacity": "0",
            "max_capacity": 2.5,
            "time_zone": 1,
        },
    ),
    # Deployment
    *_cases(
        "deployment-canary",
        _deployment("canary"),
        {"percent": "10", "bake": 600, "timeout": "1h", "rollback_alarms": "alarm"},
    ),
    *_cases(
        "deployment-linear",
        _deployment("linear"),
        {"step_percent": 10.0, "bake": "5m", "timeout": 7200, "rollback_alarms": {"a": 1}},
    ),
    *_cases(
        "deployment-rolling",
        _deployment("rolling"),
        {"batch_percent": "25", "bake": 300, "timeout": "2h", "rollback_alarms": 5},
    ),
    *_cases(
        "deployment-all-at-once",
        _deployment("all_at_once"),
        {"bake": 300, "timeout": 3600, "rollback_alarms": [5]},
    ),
    *_cases(
        "deployment",
        _deployment_class,
        {"kind": 5, "bake": 60, "percent": "10", "timeout": 3600, "rollback_alarms": "alarm"},
    ),
    # EndpointLogs
    *_cases(
        "endpoint-logs",
        lambda s, kw: EndpointLogs(**kw),
        {"retention": 30, "encryption_key": KEY_ARN, "removal_policy": "destroy"},
    ),
    # Alarms
    *_cases(
        "alarms",
        _alarms,
        {
            "error_rate": "5%",
            "model_latency": 2000,
            "gpu_memory_percent": "98",
            "disk_percent": "90",
            "kv_cache_percent": "95",
            "requests_waiting": "1",
            "topic": "arn:aws:sns:us-east-1:123456789012:alerts",
            "email": 5,
            "promql_alarms": "true",
        },
    ),
    # Routing
    *_cases(
        "routing-prefix-aware",
        lambda s, kw: Routing.prefix_aware(
            **{"prefix_length": 4096, "concurrency_threshold": 8, **kw}
        ),
        {"prefix_length": "4096", "concurrency_threshold": 8.0},
    ),
    # Variant
    *_cases(
        "variant",
        _variant,
        {
            "model": "Model",
            "weight": "90",
            "instance_type": 5,
            "instance_count": "1",
            "autoscaling": {"max_capacity": 2},
            "name": 5,
            "health_check_timeout": "15m",
            "download_timeout": 900,
            "volume_size": 100,
            "provision_timeout": 600,
            "capacity_reservation": 5,
        },
    ),
    _case("variant", "instance_type", [5], _variant),
    # ModelSource
    *_cases(
        "hugging-face",
        _hugging_face,
        {"model_id": 5, "revision": 5, "token": 5, "token_json_field": 5, "needs_token": "no"},
    ),
    *_cases(
        "s3",
        _s3("s3", "prefix", "llama3/"),
        {"bucket": "my-weights", "prefix": 5, "model_id": 5},
    ),
    *_cases(
        "s3-archive",
        _s3("s3_archive", "key", "a.tar.gz"),
        {"bucket": "my-weights", "key": 5, "model_id": 5},
    ),
    # ContainerImage
    *_cases("image-dlc", _dlc, {"repository": 5, "tag": 5, "family": 5}),
    _case("image-dlc-default", "family", 5, _dlc_default),
    _case("image-uri", "uri", 5, _from_uri, names="Image URI"),
    *_cases("image-ecr", _from_ecr, {"repository": "my-llm", "tag": 5}),
    # InvokerAuth
    *_cases("auth-api-keys", _api_keys, {"secret": 5, "cache_ttl": 60}),
    *_cases(
        "cors",
        lambda s, kw: Cors(**{"allowed_origins": ["https://app.example.com"], **kw}),
        {
            "allowed_origins": "https://app.example.com",
            "allowed_headers": "authorization",
            "max_age": 600,
        },
    ),
    # Engines
    *_cases(
        "engine-tgi",
        _engine("tgi"),
        {
            **_ENGINE_COMMON,
            "num_shard": "2",
            "max_batch_prefill_tokens": "4096",
            "max_batch_total_tokens": 8192.0,
            "quantize": 4,
        },
    ),
    *_cases(
        "engine-tgi-neuronx",
        _engine("tgi_neuronx"),
        {
            "image": IMAGE,
            "num_cores": "2",
            "batch_size": "4",
            "auto_cast_type": 16,
            "max_batch_prefill_tokens": "1024",
            "tool_calls": "yes",
        },
    ),
    *_cases(
        "engine-lmi",
        _engine("lmi"),
        {
            **_ENGINE_COMMON,
            "backend": 5,
            "tensor_parallel_degree": "8",
            "max_rolling_batch_size": "32",
            "max_rolling_batch_prefill_tokens": 1024.0,
            "quantize": 4,
            "tool_call_parser": 5,
            "reasoning": "yes",
            "reasoning_parser": 5,
        },
    ),
    *_cases(
        "engine-vllm",
        _engine("vllm"),
        {
            **_ENGINE_COMMON,
            "tensor_parallel_size": "2",
            "max_num_seqs": "8",
            "max_num_batched_tokens": "8192",
            "gpu_memory_utilization": "0.9",
            "quantization": 4,
            "tool_call_parser": 5,
            "reasoning": "yes",
            "reasoning_parser": 5,
            "embedding": "yes",
        },
    ),
    *_cases(
        "engine-sglang",
        _engine("sglang"),
        {
            **_ENGINE_COMMON,
            "tp_size": "2",
            "max_running_requests": "8",
            "mem_fraction_static": "0.8",
            "quantization": 4,
            "tool_call_parser": 5,
            "reasoning": "yes",
            "reasoning_parser": 5,
        },
    ),
    *_cases(
        "engine-custom",
        _custom,
        {
            "image": IMAGE,
            "stream_format": 5,
            "request_format": 5,
            "accelerator": 5,
            "env": "KEY=value",
            "model_env_name": 5,
            "token_env_names": "HF_TOKEN",
            "weight_dtype": 16,
            "tool_calls": "yes",
        },
    ),
    # AsyncInference
    *_cases(
        "async-inference",
        _async_inference,
        {
            "output": "s3://answers/",
            "failure": "s3://failures/",
            "input": 5,
            "notify": "arn:aws:sns:us-east-1:123456789012:done",
            "notify_with_response": "yes",
            "max_concurrent_per_instance": "4",
            "kms_key": KEY_ARN,
        },
    ),
    # CopyPlacement
    *_cases("copy-placement", _copy_placement, {"strategy": 5, "max_az_imbalance": "2"}),
    _case(
        "copy-placement-spread",
        "max_az_imbalance",
        2.0,
        lambda s, kw: CopyPlacement.spread(**kw),
    ),
    _case(
        "copy-placement-binpack",
        "max_az_imbalance",
        "1",
        lambda s, kw: CopyPlacement.binpack(**kw),
    ),
    # InstanceType, Placement, ModelArchitecture
    _case("instance-type", "name", 5, _instance_type, names="Instance type"),
    _case("instance-type", "allow_unknown_size", "yes", _instance_type),
    _case("instance-type", "allow_unknown_family", "yes", _instance_type),
    *_cases("placement", _placement, {"instance_type": 5, "accelerators": "1"}),
    *_cases(
        "architecture",
        _architecture,
        {
            "params_billion": "7",
            "layers": "32",
            "kv_heads": 8.0,
            "head_dim": "128",
            "hidden_size": "4096",
            "context_length": "8192",
            "attention_heads": "32",
            "default_dtype": 16,
            "model_id": 5,
            "source": 5,
            "notes": "sliding window",
            "kind": "embedding",
            "embedding_dimensions": "1024",
            "matryoshka_min_dimensions": "64",
            "active_params_billion": "13",
        },
    ),
]


@pytest.mark.parametrize(("build", "names"), WRONG_TYPES)
def test_a_wrong_type_fails_naming_the_argument(
    new_stack: Callable[..., Stack], build: Callable[[Stack], object], names: str
) -> None:
    stack = new_stack()
    with pytest.raises(ConstructsLlmError) as caught:
        build(stack)
        app_of(stack).synth()  # a value that slipped through must not pass the CDK either
    message = str(caught.value)
    assert names in message, message
    assert re.search(r"\bgot\b \S", message), message


#: Each subject of the table and the callable whose keyword arguments it must cover.
SIGNATURES: dict[str, Callable[..., object]] = {
    "model": LlmModel.__init__,
    "endpoint": LlmEndpoint.__init__,
    "async-inference": AsyncInference.__init__,
    "ic-endpoint": InferenceComponentEndpoint.__init__,
    "ic": InferenceComponent.__init__,
    "adapter": InferenceComponent.add_adapter,
    "adapter-class": AdapterComponent.__init__,
    "imported": ImportedEndpoint.__init__,
    "invoker": StreamingInvoker.__init__,
    "distribution": StreamingInvoker.add_distribution,
    "batch-api": StreamingInvoker.add_batch_api,
    "dashboard": LlmDashboard.__init__,
    "autoscaling": Autoscaling,
    "schedule": ScheduledCapacity,
    "deployment": Deployment,
    "deployment-canary": Deployment.canary,
    "deployment-linear": Deployment.linear,
    "deployment-rolling": Deployment.rolling,
    "deployment-all-at-once": Deployment.all_at_once,
    "alarms": Alarms,
    "endpoint-logs": EndpointLogs,
    "routing-prefix-aware": Routing.prefix_aware,
    "variant": Variant,
    "hugging-face": ModelSource.hugging_face,
    "s3": ModelSource.s3,
    "s3-archive": ModelSource.s3_archive,
    "image-dlc": ContainerImage.dlc,
    "image-dlc-default": ContainerImage.dlc_default,
    "image-uri": ContainerImage.from_uri,
    "image-ecr": ContainerImage.from_ecr_repository,
    "auth-api-keys": InvokerAuth.api_keys,
    "cors": Cors,
    "engine-tgi": Engine.tgi,
    "engine-tgi-neuronx": Engine.tgi_neuronx,
    "engine-lmi": Engine.lmi,
    "engine-vllm": Engine.vllm,
    "engine-sglang": Engine.sglang,
    "engine-custom": Engine.custom,
    "instance-type": InstanceType,
    "placement": Placement,
    "copy-placement": CopyPlacement,
    "copy-placement-spread": CopyPlacement.spread,
    "copy-placement-binpack": CopyPlacement.binpack,
    "architecture": ModelArchitecture,
    "model-grant-read": LlmModel.grant_read,
    "endpoint-metric": LlmEndpoint.metric,
    "endpoint-openai": LlmEndpoint.grant_openai,
    "endpoint-dimensions": LlmEndpoint.instance_type_dimensions,
    "ic-openai": InferenceComponent.grant_openai,
    "invoker-metric": StreamingInvoker.metric,
}


@pytest.mark.parametrize("subject", sorted(SIGNATURES))
def test_the_table_covers_every_keyword_argument(subject: str) -> None:
    # every parameter but the scope and id (and **options, whose keys have their own rows)
    parameters = inspect.signature(SIGNATURES[subject]).parameters.values()
    wanted = {
        p.name
        for p in parameters
        if p.name not in ("self", "scope", "id") and p.kind is not p.VAR_KEYWORD
    }
    assert wanted, subject
    assert wanted <= {arg for s, arg in COVERED if s == subject}, subject


# -- time zones --------------------------------------------------------------------------------


def test_a_time_zone_name_is_accepted_and_rendered(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a schedule in Paris time, given by its name
    stack = new_stack()
    night = ScheduledCapacity(schedule=NIGHT, min_capacity=1, time_zone="Europe/Paris")
    endpoint(stack, autoscaling=scaling(max_capacity=2, schedule=[night]))
    # THEN the scheduled action names the zone
    assert night.zone_name == "Europe/Paris"
    Template.from_stack(stack).has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget",
        {
            "ScheduledActions": [
                Match.object_like({"Schedule": night.expression, "Timezone": "Europe/Paris"})
            ]
        },
    )


def test_an_unknown_time_zone_fails_naming_it() -> None:
    with pytest.raises(ConstructsLlmError, match=r"time_zone must be an IANA .*got 'Mars/Base'"):
        ScheduledCapacity(schedule=NIGHT, min_capacity=1, time_zone="Mars/Base")
    with pytest.raises(ConstructsLlmError, match=r"got 'Europe/Pari'; did you mean 'Europe/Paris'"):
        ScheduledCapacity(schedule=NIGHT, min_capacity=1, time_zone="Europe/Pari")


def test_is_unresolved_answers_as_aws_cdk_lib_does(monkeypatch: pytest.MonkeyPatch) -> None:
    # Plain ints and strings (tokens or not) are answered without a jsii call; every value
    # gets aws-cdk-lib's own answer.
    from aws_cdk import Aws, Fn, Token

    from constructs_llm import values as checks
    from constructs_llm.values import is_unresolved

    region = Aws.REGION
    number = Token.as_string(Token.as_number(Aws.ACCOUNT_ID))  # -1.8...e+289
    strings = [
        region,
        f"arn:{Aws.PARTITION}:logs:{region}:x",
        number,
        f"Token[ {number}",
        "${Token[bad key]}",
        "${Token[]}",
        "x${Token[A-b:c_d.12]}y",
        "#{Token[LIST.1]}",
        "${Token[A.1]",
    ]
    asked: list[object] = []

    class Counting:
        @staticmethod
        def is_unresolved(value: object) -> bool:
            asked.append(value)
            return bool(Token.is_unresolved(value))

    monkeypatch.setattr(checks, "Token", Counting)
    assert [is_unresolved(s) for s in strings] == [bool(Token.is_unresolved(s)) for s in strings]
    assert [is_unresolved(s) for s in strings[:4]] == [True] * 4
    assert asked == []
    monkeypatch.undo()
    values: list[object] = [
        region,
        f"prefix-{region}",
        Token.as_number(Aws.ACCOUNT_ID),
        Fn.split(",", region),
        None,
        True,
        0,
        5,
        -3,
        2**60,
        2.5,
        "",
        "ml.g5.2xlarge",
        "Token[",
        "${Token[TOKEN.1]}",
    ]
    assert [is_unresolved(v) for v in values] == [bool(Token.is_unresolved(v)) for v in values]
    assert [is_unresolved(v) for v in values[:4]] == [True] * 4


def test_an_imported_construct_satisfies_its_interface_without_a_property_read(
    new_stack: Callable[..., Stack],
) -> None:
    # jsii hands back an imported secret as a proxy of the interfaces it implements (its
    # class is unknown to Python): its members are found on those proxies' classes, so none
    # of its properties is read through jsii (a round trip each), and a value lacking them is
    # still refused.
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_secretsmanager as secretsmanager
    from jsii._kernel.providers import process

    from constructs_llm.values import is_a

    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Token", "hf-token")
    sent: list[str] = []
    send = process._NodeProcess.send

    def counting(self: object, request: object, response_type: object) -> object:
        sent.append(type(request).__name__)
        return send(self, request, response_type)  # type: ignore[arg-type]

    process._NodeProcess.send = counting  # type: ignore[method-assign,assignment]
    try:
        assert is_a(secret, secretsmanager.ISecret)
        assert not is_a(secret, iam.IRole)
    finally:
        process._NodeProcess.send = send  # type: ignore[method-assign]
    assert sent == []
