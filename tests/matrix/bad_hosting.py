"""Bad hosting: endpoints, inference-component endpoints and components, streaming invokers,
props of the wrong kind, and Python typing."""

from __future__ import annotations

import pytest
from aws_cdk import Duration, Size, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from constructs_llm import (
    AsyncInference,
    Autoscaling,
    Engine,
    FleetChange,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    ModelSource,
    StreamingInvoker,
    Variant,
)
from constructs_llm.errors import (
    ConfigurationError,
    InstanceTypeError,
    ScalingError,
    SizingError,
)
from tests.matrix.builders import (
    EBS_ONLY,
    G5,
    LLAMA3,
    LLAMA31_405B,
    app_of,
    bucket,
    component,
    custom,
    endpoint,
    ic_endpoint,
    invoker,
    model,
    scaling,
    two_components,
    vpc,
)

RESERVATION = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/g6e-chat"
OTHER_RESERVATION = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/g5-chat"
_ASYNC_GUIDE = r"realtime-endpoints-openai-compatible\.html"


def _with_context(s: Stack, flag: object) -> Stack:
    """``s`` with the fleet-change context set to ``flag`` (as cdk.json or -c would)."""
    s.node.set_context("constructs-llm:newEndpointOnFleetChange", flag)
    return s


def _async_endpoint(s: Stack) -> LlmEndpoint:
    outputs = s3.Bucket.from_bucket_name(s, "Jobs", "jobs")
    return endpoint(
        s, engine=Engine.vllm(), async_inference=AsyncInference(output=outputs), alarms=False
    )


BAD_HOSTING = [
    # Prices (price_per_hour=, sizing/instance_prices.py): the CLI's --price figures
    pytest.param(
        lambda s: ic_endpoint(s, price_per_hour=-7.09),
        ConfigurationError,
        r"InferenceComponentEndpoint 'Test/Shared'.*price_per_hour must be a positive number "
        r"of USD per hour, got -7\.09",
        "price_per_hour",
        id="price-negative",
    ),
    pytest.param(
        lambda s: endpoint(s, price_per_hour="1.21"),
        ConfigurationError,
        r"LlmEndpoint 'Test/Endpoint'.*price_per_hour must be a number of USD per "
        r"instance-hour, or a mapping of instance type to it .*got '1\.21'",
        "price_per_hour",
        id="price-not-a-number",
    ),
    pytest.param(
        lambda s: InferenceComponentEndpoint(
            s,
            "Shared",
            instance_type=["ml.g5.12xlarge", "ml.g6.12xlarge"],
            price_per_hour={"ml.g6e.12xlarge": 10.49},
        ),
        ConfigurationError,
        r"price_per_hour prices 'ml\.g6e\.12xlarge', which is not an instance type of this host "
        r"\(ml\.g5\.12xlarge, ml\.g6\.12xlarge\); price the host's own types",
        "price_per_hour",
        id="price-type-not-in-the-pools",
    ),
    pytest.param(
        lambda s: LlmEndpoint(
            s,
            "Endpoint",
            model=model(s, bound=False),
            instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"],
            price_per_hour=2.24,
        ),
        ConfigurationError,
        r"price_per_hour=2\.24 is one price, but the host has 2 instance types "
        r"\(ml\.g6e\.2xlarge, ml\.g5\.4xlarge\); give one per type: "
        r"price_per_hour=\{'ml\.g6e\.2xlarge': 2\.24, \.\.\.\}",
        "price_per_hour",
        id="price-one-number-for-several-pools",
    ),
    pytest.param(
        lambda s: (
            endpoint(s, endpoint_name="chat"),
            endpoint(Stack(app_of(s), "Other"), endpoint_name="chat"),
        ),
        ConfigurationError,
        r"LlmEndpoint 'Test/Endpoint'.*endpoint_name 'chat' is also the name of "
        r"'Other/Endpoint', and both deploy to an environment-agnostic account and region.*"
        r"give each endpoint its own name",
        "endpoint_name",
        id="endpoint-name-twice-in-one-app",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, min_memory_mib=16),
        ConfigurationError,
        r"min_memory_mib must be an integer >= 128, got 16; min_memory_mib is in MiB: for 16 "
        r"GiB pass min_memory_mib=16 \* 1024 \(16,384\)",
        "min_memory_mib",
        id="component-memory-gib-given-as-mib",
    ),
    pytest.param(
        lambda s: invoker(s, memory_size=2),
        ConfigurationError,
        r"memory_size must be 128-10240 MiB, got 2; memory_size is in MiB: for 2 GiB pass "
        r"memory_size=2 \* 1024 \(2,048\)",
        "memory_size",
        id="invoker-memory-gib-given-as-mib",
    ),
    # Cross-feature rules (hosting/rules.py): each names both features and the fix
    pytest.param(
        lambda s: LlmEndpoint(
            s,
            "Endpoint",
            model=model(s, bound=False),
            instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"],
            capacity_reservation=RESERVATION,
        ),
        ConfigurationError,
        r"instance_type=\['ml\.g6e\.2xlarge', 'ml\.g5\.4xlarge'\] \(instance pools\) with "
        r"capacity_reservation='arn:aws:sagemaker:.*training-plan/g6e-chat': .*give the "
        r"reservation's one instance type as a string, or drop capacity_reservation.*"
        r"use-training-plan-for-inference-endpoints-using-api-cli-sdk\.html",
        "capacity_reservation",
        id="rule-pools-with-capacity-reservation",
    ),
    pytest.param(
        lambda s: InferenceComponentEndpoint(
            s,
            "Shared",
            instance_type=["ml.g5.12xlarge", "ml.g6.12xlarge"],
            capacity_reservation=RESERVATION,
        ),
        ConfigurationError,
        r"InferenceComponentEndpoint .*instance_type=\['ml\.g5\.12xlarge', 'ml\.g6\.12xlarge'\] "
        r"\(instance pools\) with capacity_reservation=",
        "capacity_reservation",
        id="rule-component-pools-with-capacity-reservation",
    ),
    pytest.param(
        lambda s: LlmEndpoint(
            s,
            "AB",
            variants=[
                Variant(model=model(s, id="A", bound=False), capacity_reservation=RESERVATION),
                Variant(
                    model=model(s, id="B", bound=False), capacity_reservation=OTHER_RESERVATION
                ),
            ],
        ),
        ConfigurationError,
        r"variant 'A-g5-2xlarge' capacity_reservation='.*training-plan/g6e-chat' and variant "
        r"'B-g5-2xlarge' capacity_reservation='.*training-plan/g5-chat': SageMaker allows exactly "
        r"one training plan per inference endpoint; give every variant the same reservation",
        "capacity_reservation",
        id="rule-two-reservations-on-one-endpoint",
    ),
    pytest.param(
        lambda s: _async_endpoint(s).openai_base_url,
        ConfigurationError,
        r"openai_base_url and grant_openai\(\) with async_inference=AsyncInference\(\.\.\.\): "
        r"SageMaker's OpenAI route serves real-time endpoints.*" + _ASYNC_GUIDE,
        "async_inference",
        id="rule-openai-base-url-on-async-endpoint",
    ),
    pytest.param(
        lambda s: _async_endpoint(s).grant_openai(
            iam.Role(s, "Caller", assumed_by=iam.AccountRootPrincipal())
        ),
        ConfigurationError,
        r"grant_openai\(\) with async_inference=.*grant_invoke_async\(\).*" + _ASYNC_GUIDE,
        "async_inference",
        id="rule-grant-openai-on-async-endpoint",
    ),
    # SageMaker's OpenAI route: the container must stream server-sent events on its
    # /v1/chat/completions (AWS's guide); LMI streams JSON lines there
    pytest.param(
        lambda s: endpoint(s, engine=Engine.lmi()).grant_openai(
            iam.Role(s, "Caller", assumed_by=iam.AccountRootPrincipal())
        ),
        ConfigurationError,
        r"LlmEndpoint '.*Endpoint'.*SageMaker's OpenAI route cannot serve it.*"
        r"POST /v1/chat/completions.*server-sent events.*LMI.*JSON lines.*Engine\.vllm\(\)",
        "model",
        id="endpoint-openai-route-on-lmi",
    ),
    # LlmEndpoint
    pytest.param(
        lambda s: LlmEndpoint(
            s,
            "Endpoint",
            model=model(s, bound=False),
            instance_type=["ml.g6e.2xlarge", "ml.g6x.4xlarge"],
        ),
        InstanceTypeError,
        r"instance_type\[1\]: Unknown instance family ml\.g6x: got 'ml\.g6x\.4xlarge'\. Did you mean "
        r"'ml\.g6\.4xlarge'",
        "instance_type",
        id="endpoint-instance-pool-unknown-family",
    ),
    pytest.param(
        lambda s: endpoint(s, health_check_timeout=Duration.seconds(59)),
        ConfigurationError,
        r"health_check_timeout must be between 60 and 3600 seconds, got 59 s",
        "health_check_timeout",
        id="endpoint-timeout-too-short",
    ),
    pytest.param(
        lambda s: endpoint(s, download_timeout=Duration.seconds(3601)),
        ConfigurationError,
        r"download_timeout must be between 60 and 3600 seconds, got 3601 s",
        "download_timeout",
        id="endpoint-download-timeout-too-long",
    ),
    pytest.param(
        lambda s: endpoint(s, health_check_timeout=900),
        ConfigurationError,
        r"health_check_timeout must be a Duration, got 900; use Duration\.minutes",
        "health_check_timeout",
        id="endpoint-timeout-not-a-duration",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_count=0),
        ConfigurationError,
        r"instance_count must be an integer >= 1, got 0",
        "instance_count",
        id="endpoint-instance-count-zero",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_count=5, autoscaling=scaling(max_capacity=4)),
        ConfigurationError,
        r"instance_count 5 is outside autoscaling's \[1, 4\]",
        "instance_count",
        id="endpoint-instance-count-outside-autoscaling",
    ),
    pytest.param(
        lambda s: endpoint(s, autoscaling=scaling(min_capacity=0, max_capacity=2)),
        ScalingError,
        r"min_capacity=0.*cannot scale to zero.*InferenceComponent.*asynchronous endpoint",
        "autoscaling",
        id="endpoint-scale-to-zero",
    ),
    pytest.param(
        lambda s: endpoint(s, autoscaling=Autoscaling(max_capacity=2)),
        ScalingError,
        r"autoscaling needs a target here: set target_concurrent_requests=",
        "autoscaling",
        id="endpoint-autoscaling-no-target",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, autoscaling=Autoscaling(max_capacity=2)),
        ScalingError,
        r"autoscaling needs a target here: set target_concurrent_requests=",
        "autoscaling",
        id="component-autoscaling-no-target",
    ),
    pytest.param(
        lambda s: endpoint(s, volume_size=Size.gibibytes(100)),
        ConfigurationError,
        r"volume_size cannot be set on ml\.g5\.2xlarge: it has local NVMe.*drop volume_size",
        "volume_size",
        id="endpoint-volume-size-on-nvme",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_type=EBS_ONLY, volume_size=Size.gibibytes(1024)),
        ConfigurationError,
        r"volume_size must be 1-512 GiB, got 1024 GiB",
        "volume_size",
        id="endpoint-volume-size-too-large",
    ),
    pytest.param(
        lambda s: endpoint(s, kms_key=kms.Key(s, "Key")),
        ConfigurationError,
        r"kms_key cannot be used with ml\.g5\.2xlarge: it has local NVMe.*drop kms_key",
        "kms_key",
        id="endpoint-kms-key-on-nvme",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="chat_llama3"),
        ConfigurationError,
        r"endpoint_name must match .* got 'chat_llama3'",
        "endpoint_name",
        id="endpoint-name-underscore",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="e" * 64),
        ConfigurationError,
        r"at most 63 characters.*got 'e{64}' \(64 characters\)",
        "endpoint_name",
        id="endpoint-name-64-chars",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="chat-"),
        ConfigurationError,
        r"endpoint_name must match .* got 'chat-'",
        "endpoint_name",
        id="endpoint-name-trailing-hyphen",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="chat", autoscaling=scaling(max_capacity=2)),
        ConfigurationError,
        r"endpoint_name='chat' cannot change with the fleet, but the context's "
        r"constructs-llm:newEndpointOnFleetChange names an autoscaled endpoint after its fleet, "
        r"so that an instance-type change replaces it in one deploy; drop endpoint_name .*or "
        r"pass fleet_change=FleetChange\.TWO_DEPLOYS to keep it",
        "endpoint_name",
        id="endpoint-name-with-a-new-endpoint-on-fleet-change",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            endpoint_name="chat",
            autoscaling=scaling(max_capacity=2),
            fleet_change=FleetChange.NEW_ENDPOINT,
        ),
        ConfigurationError,
        r"endpoint_name='chat' cannot change with the fleet, but "
        r"fleet_change=FleetChange\.NEW_ENDPOINT names",
        "endpoint_name",
        id="endpoint-name-with-fleet-change-new-endpoint",
    ),
    pytest.param(
        lambda s: endpoint(s, fleet_change="new_endpoint"),
        ConfigurationError,
        r"fleet_change must be FleetChange\.NEW_ENDPOINT or FleetChange\.TWO_DEPLOYS, got str "
        r"'new_endpoint'",
        "fleet_change",
        id="endpoint-fleet-change-as-a-string",
    ),
    pytest.param(
        lambda s: endpoint(_with_context(s, "yes"), autoscaling=scaling(max_capacity=2)),
        ConfigurationError,
        r"the context value constructs-llm:newEndpointOnFleetChange must be true or false, got "
        r"'yes'; fix it in cdk\.json \(or -c\)",
        "fleet_change",
        id="endpoint-fleet-change-context-not-a-bool",
    ),
    pytest.param(
        lambda s: endpoint(s, detailed_observability="false"),
        ConfigurationError,
        r"detailed_observability must be True or False, got str 'false'; pass the bool False, "
        r"not a string",
        "detailed_observability",
        id="endpoint-detailed-observability-as-a-string",
    ),
    # InferenceComponentEndpoint
    pytest.param(
        lambda s: ic_endpoint(s, instance_type="ml.inf2.4xlarge"),
        InstanceTypeError,
        r"got 'ml\.inf2\.4xlarge'.*Sizes of ml\.inf2: xlarge, 8xlarge",
        "instance_type",
        id="ic-endpoint-unknown-size",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, min_instances=3, max_instances=1),
        ConfigurationError,
        r"min_instances \(3\) is above max_instances \(1\)",
        "min_instances",
        id="ic-endpoint-min-above-max",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, max_instances=0),
        ConfigurationError,
        r"max_instances must be an integer >= 1, got 0",
        "max_instances",
        id="ic-endpoint-max-instances-zero",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, health_check_timeout=Duration.hours(2)),
        ConfigurationError,
        r"health_check_timeout must be between 60 and 3600 seconds, got 7200 s",
        "health_check_timeout",
        id="ic-endpoint-timeout-too-long",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, endpoint_name="shared_llms"),
        ConfigurationError,
        r"endpoint_name must match .* got 'shared_llms'",
        "endpoint_name",
        id="ic-endpoint-name-underscore",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, volume_size=Size.gibibytes(200)),
        ConfigurationError,
        r"volume_size cannot be set on ml\.g5\.12xlarge",
        "volume_size",
        id="ic-endpoint-volume-size-on-nvme",
    ),
    # InferenceComponent
    # network isolation and the VPC are the endpoint config's (CreateEndpointConfig)
    pytest.param(
        lambda s: two_components(
            s, {"source": ModelSource.s3(bucket(s), "chat/", model_id=LLAMA3)}, {}
        ),
        ConfigurationError,
        r"components '.*Chat' \(network_isolation=True\) and '.*Coder' \(False\) must agree on "
        r"network isolation: SageMaker applies network isolation and the VPC to the whole "
        r"endpoint \(CreateEndpointConfig.*separate endpoints",
        "model",
        id="ic-components-disagree-on-network-isolation",
    ),
    pytest.param(
        lambda s: two_components(
            s,
            {"vpc": vpc(s, ec2.SubnetType.PUBLIC, ec2.SubnetType.PRIVATE_WITH_EGRESS)},
            {},
        ),
        ConfigurationError,
        r"components '.*Chat' \(in a VPC\) and '.*Coder' \(in no VPC\) must agree on the VPC "
        r"\(subnets and security groups: pass the same vpc, vpc_subnets and security_groups",
        "model",
        id="ic-components-disagree-on-vpc",
    ),
    pytest.param(
        lambda s: component(s, accelerators=8),
        ConfigurationError,
        r"accelerators=8 per copy but ml\.g5\.12xlarge has 4.*lower accelerators",
        "accelerators",
        id="ic-accelerators-above-instance",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, min_memory_mib=300 * 1024),
        ConfigurationError,
        r"min_memory_mib=307200 per copy but ml\.g5\.12xlarge has 196608 MiB",
        "min_memory_mib",
        id="ic-memory-above-instance",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, cpu_cores=64),
        ConfigurationError,
        r"cpu_cores=64 per copy but ml\.g5\.12xlarge has 48 vCPUs",
        "cpu_cores",
        id="ic-cpu-cores-above-instance",
    ),
    pytest.param(
        lambda s: component(
            s,
            instance_type="ml.m5.xlarge",
            model_props={"engine": custom()},
            accelerators=1,
            min_memory_mib=1024,
        ),
        ConfigurationError,
        r"accelerators=1 but ml\.m5\.xlarge has no accelerators \(CPU only\)",
        "accelerators",
        id="ic-accelerators-on-cpu-instance",
    ),
    pytest.param(
        lambda s: component(
            s,
            instance_type="ml.m5.xlarge",
            model_props={"engine": custom()},
            accelerators=0,
            min_memory_mib=1024,
        ),
        ConfigurationError,
        r"accelerators=0 but ml\.m5\.xlarge has no accelerators \(CPU only\)",
        "accelerators",
        id="ic-zero-accelerators-on-cpu-instance",
    ),
    pytest.param(
        lambda s: component(s, instance_type="ml.g5.xlarge", accelerators=True),
        ConfigurationError,
        r"accelerators must be an integer >= 1, got True",
        "accelerators",
        id="ic-accelerators-a-bool",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, copies=0),
        ConfigurationError,
        r"copies must be an integer >= 1, got 0",
        "copies",
        id="ic-zero-copies",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, copies=5),
        ConfigurationError,
        r"copies=5 copies need 2 instances of ml\.g5\.12xlarge.*max_instances is 1",
        "copies",
        id="ic-copies-above-fleet",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, min_memory_mib=64),
        ConfigurationError,
        r"min_memory_mib must be an integer >= 128, got 64",
        "min_memory_mib",
        id="ic-memory-below-minimum",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, cpu_cores=0.1),
        ConfigurationError,
        r"cpu_cores must be at least 0\.25 .*got 0\.1",
        "cpu_cores",
        id="ic-cpu-cores-below-minimum",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, download_timeout=Duration.seconds(30)),
        ConfigurationError,
        r"download_timeout must be between 60 and 3600 seconds, got 30 s",
        "download_timeout",
        id="ic-download-timeout-too-short",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, inference_component_name="chat_llama3"),
        ConfigurationError,
        r"inference_component_name must match .* got 'chat_llama3'",
        "inference_component_name",
        id="ic-name-underscore",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, autoscaling=scaling(min_capacity=0, max_capacity=4)),
        ScalingError,
        r"min_capacity=0 \(scale to zero\).*min_instances=1; create the InferenceComponentEndpoint with min_instances=0",
        "autoscaling",
        id="ic-scale-to-zero-with-min-instances",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, copies=3, autoscaling=scaling(max_capacity=2)),
        ScalingError,
        r"copies 3 is outside autoscaling's \[1, 2\]",
        "copies",
        id="ic-copies-outside-autoscaling",
    ),
    pytest.param(
        lambda s: InferenceComponent(
            s,
            "Chat",
            endpoint=endpoint(s),  # type: ignore[arg-type]
            model=model(s, id="Other"),
            min_memory_mib=1024,
        ),
        ConfigurationError,
        r"endpoint must be an InferenceComponentEndpoint, got LlmEndpoint 'Test/Endpoint'; create one with InferenceComponentEndpoint",
        "endpoint",
        id="ic-on-an-llm-endpoint",
    ),
    pytest.param(
        lambda s: component(s, instance_type="ml.p3.8xlarge", accelerators=1),
        SizingError,
        r"(?s)InferenceComponent 'Test/Chat': LlmModel 'Test/Model' does not fit on the 1 accelerator\(s\) each copy gets on ml\.p3\.8xlarge: .*weights need 15\.0 GiB .* 1 x 15\.5 GiB .* leave 13\.0 GiB.*choose an instance with more accelerator memory",
        "instance_type",
        id="ic-model-does-not-fit-one-v100",
    ),
    # StreamingInvoker
    pytest.param(
        lambda s: invoker(s, timeout=Duration.minutes(16)),
        ConfigurationError,
        r"timeout must be between 30 s and 15 minutes, got 960 s; Lambda stops a function after 15 minutes",
        "timeout",
        id="invoker-timeout-above-15-min",
    ),
    pytest.param(
        lambda s: invoker(s, timeout=Duration.seconds(10)),
        ConfigurationError,
        r"timeout must be between 30 s and 15 minutes, got 10 s",
        "timeout",
        id="invoker-timeout-too-short",
    ),
    pytest.param(
        lambda s: invoker(s, timeout=300),
        ConfigurationError,
        r"timeout must be a Duration, got 300",
        "timeout",
        id="invoker-timeout-not-a-duration",
    ),
    pytest.param(
        lambda s: invoker(s, memory_size=64),
        ConfigurationError,
        r"memory_size must be 128-10240 MiB, got 64",
        "memory_size",
        id="invoker-memory-too-small",
    ),
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", target=model(s)),  # type: ignore[arg-type]
        ConfigurationError,
        r"target must be an LlmEndpoint, an InferenceComponent or an adapter, got LlmModel 'Test/Model'",
        "target",
        id="invoker-target-is-a-model",
    ),
    # Props of the wrong kind: the library's error, naming the value and how to build the right one
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model="Model"),  # type: ignore[arg-type]
        ConfigurationError,
        r"model must be an LlmModel, got str 'Model'; create it with LlmModel\(",
        "model",
        id="endpoint-model-is-a-string",
    ),
    pytest.param(
        lambda s: endpoint(s, autoscaling={"max_capacity": 2}),
        ConfigurationError,
        r"autoscaling must be an Autoscaling, got dict \{'max_capacity': 2\}; use Autoscaling\(max_capacity=",
        "autoscaling",
        id="endpoint-autoscaling-is-a-dict",
    ),
    pytest.param(
        lambda s: InferenceComponent(
            s,
            "Chat",
            endpoint=ic_endpoint(s),
            model="Model",  # type: ignore[arg-type]
            min_memory_mib=1024,
        ),
        ConfigurationError,
        r"model must be an LlmModel, got str 'Model'",
        "model",
        id="ic-model-is-a-string",
    ),
    # Python typing: the constructs take keyword arguments only
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model(s)),  # type: ignore[call-arg]
        TypeError,
        r"takes 3 positional arguments but 4 were given",
        None,
        id="endpoint-props-positional",
    ),
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model=model(s), instance_typ=G5),  # type: ignore[call-arg]
        TypeError,
        r"unexpected keyword argument 'instance_typ'",
        None,
        id="endpoint-misspelt-prop",
    ),
    # Bindings, and several problems of one construct named together
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model=model(s, instance_type=None, bound=False)),
        ConfigurationError,
        r"instance_type is required: model 'Test/Model' has no default instance type; pass LlmEndpoint\(instance_type=\.\.\.\) or LlmModel\(instance_type=\.\.\.\)",
        "instance_type",
        id="endpoint-instance-type-required",
    ),
    pytest.param(
        lambda s: LlmEndpoint(
            s, "Endpoint", model=model(s, bound=False), instance_type="ml.inf2.xlarge"
        ),
        ConfigurationError,
        r"LlmEndpoint 'Test/Endpoint': LlmModel 'Test/Model' on ml\.inf2\.xlarge: Engine\.tgi\(\) serves NVIDIA GPUs",
        "engine",
        id="endpoint-binds-the-model-to-hardware-it-cannot-use",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_count=0, endpoint_name="bad_name"),
        ConfigurationError,
        r"(?s)LlmEndpoint 'Test/Endpoint' has 2 problems:.*instance_count must be an integer >= 1, got 0.*endpoint_name must match .* got 'bad_name'",
        "instance_count",
        id="endpoint-count-and-name-named-together",
    ),
    pytest.param(
        lambda s: ic_endpoint(
            s,
            endpoint_name="bad_name",
            health_check_timeout=Duration.hours(2),
            volume_size=Size.gibibytes(100),
        ),
        ConfigurationError,
        r"(?s)has 3 problems:.*got 7200 s.*got 'bad_name'.*volume_size cannot be set on ml\.g5\.12xlarge",
        "health_check_timeout",
        id="ic-endpoint-timeout-name-and-volume-named-together",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, copies=9, endpoint_props={"max_instances": 2}),
        ConfigurationError,
        r"copies=9 copies need 3 instances of ml\.g5\.12xlarge \(4 copies of 1 accelerator\(s\) \+ 16384 MiB fit on one\) but the endpoint's max_instances is 2; raise max_instances or lower copies",
        "copies",
        id="ic-copies-above-fleet-names-the-packing",
    ),
    pytest.param(
        lambda s: component(
            s,
            accelerators=1,
            endpoint_props={"max_instances": 2},
            autoscaling=scaling(max_capacity=9),
        ),
        ScalingError,
        r"autoscaling max_capacity=9 copies at most need 3 instances .* max_instances is 2",
        "autoscaling max_capacity",
        id="ic-autoscaling-max-above-fleet",
    ),
    pytest.param(
        lambda s: component(s, model_props={"engine": Engine.tgi(num_shard=2)}, accelerators=1),
        ConfigurationError,
        r"LlmModel 'Test/Model' on the 1 accelerator\(s\) each copy gets on ml\.g5\.12xlarge: Engine\.tgi\(num_shard\)=2 exceeds the 1 GPU\(s\) this copy gets on ml\.g5\.12xlarge",
        "Engine.tgi(num_shard)",
        id="ic-engine-num-shard-above-copy-gpus",
    ),
    pytest.param(
        lambda s: component(
            s, instance_type=EBS_ONLY, accelerators=1, copies=4, autoscaling=scaling(max_capacity=3)
        ),
        ConfigurationError,  # sizing and scaling: their nearest common type
        r"(?s)InferenceComponent 'Test/Chat' has 2 problems:.*copies 4 is outside autoscaling's \[1, 3\].*does not fit on the 1 accelerator",
        "copies",
        id="ic-sizing-and-scaling-named-together",
    ),
    # Storage smaller than the checkpoint it must hold (10 % headroom)
    pytest.param(
        lambda s: endpoint(s, instance_type=EBS_ONLY, volume_size=Size.gibibytes(10)),
        ConfigurationError,
        r"LlmEndpoint 'Test/Endpoint': volume_size 10 GiB cannot hold the checkpoint of "
        r"meta-llama/Meta-Llama-3-8B-Instruct \(16\.1 GB as downloaded\) with 10% headroom "
        r"\(16\.5 GiB\); set volume_size=Size\.gibibytes\(17\) or more",
        "volume_size",
        id="endpoint-volume-smaller-than-the-checkpoint",
    ),
    pytest.param(
        lambda s: LlmEndpoint(
            s,
            "Endpoint",
            model=model(
                s,
                instance_type=None,
                source=ModelSource.hugging_face(LLAMA31_405B, needs_token=False),
                bound=False,
            ),
            instance_type="ml.g5.xlarge",
        ),
        ConfigurationError,  # the checkpoint does not fit the disk, nor the weights the GPU
        r"(?s)LlmEndpoint 'Test/Endpoint' has 2 problems:.*ml\.g5\.xlarge stores the model on "
        r"its 250 GB of local NVMe, less than the checkpoint of meta-llama/Llama-3\.1-405B-Instruct "
        r"\(811\.7 GB as downloaded\) with 10% headroom.*weights need 756\.0 GiB",
        "instance_type",
        id="endpoint-local-nvme-smaller-than-the-checkpoint",
    ),
    pytest.param(
        lambda s: component(
            s,
            instance_type=EBS_ONLY,
            endpoint_props={"volume_size": Size.gibibytes(8)},
            accelerators=4,
        ),
        ConfigurationError,
        r"InferenceComponent 'Test/Chat': .*volume_size 8 GiB cannot hold the checkpoint of "
        r"meta-llama/Meta-Llama-3-8B-Instruct",
        "volume_size",
        id="ic-endpoint-volume-smaller-than-the-checkpoint",
    ),
    # Capacity reservations are training plans
    pytest.param(
        lambda s: endpoint(
            s,
            capacity_reservation="arn:aws:sagemaker:us-east-1:123456789012:ml-reservation/g5",
        ),
        ConfigurationError,
        r"capacity_reservation must be a training plan's ARN \(…:training-plan/<name>\), got a "
        r"'ml-reservation' ARN .*such as 'arn:aws:sagemaker:us-east-1:123456789012:"
        r"training-plan/p4-for-inference-endpoint'",
        "capacity_reservation",
        id="endpoint-capacity-reservation-not-a-training-plan",
    ),
    pytest.param(
        lambda s: ic_endpoint(
            s,
            capacity_reservation="arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-0a1b",
        ),
        ConfigurationError,
        r"capacity_reservation must be a training plan's ARN, got 'arn:aws:ec2:",
        "capacity_reservation",
        id="ic-endpoint-capacity-reservation-an-ec2-reservation",
    ),
]
