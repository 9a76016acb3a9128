"""Valid edge cases that must synthesize cleanly (with only the warnings named), and one
builder for each warning users can acknowledge."""

from __future__ import annotations

import pytest
from aws_cdk import Duration, Environment, Size, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager

from constructs_llm import (
    Alarms,
    AsyncInference,
    Deployment,
    Engine,
    FleetChange,
    InferenceComponent,
    InstanceType,
    LlmEndpoint,
    ModelSource,
    ScheduledCapacity,
    StreamingInvoker,
    Variant,
)
from tests.matrix.builders import (
    EBS_ONLY,
    G5,
    G5_4GPU,
    INF2,
    LLAMA3,
    MISTRAL,
    PHI3_MINI,
    QWEN25_AWQ,
    T4,
    TRN1,
    app_of,
    bucket,
    component,
    custom,
    endpoint,
    ic_endpoint,
    in_region,
    invoker,
    model,
    scaling,
    two_components,
    vpc,
)

# (builder, the warning ids it is expected to raise; anything else is a failure)

GUARDED = "constructs-llm:guarded-rollout-hardware"
# Every endpoint hosting components warns under an id naming its fleet (acknowledged once that
# fleet is deployed). An autoscaled LlmEndpoint does not: cdk.json's
# constructs-llm:newEndpointOnFleetChange names it after its fleet, so a new instance type is a
# new endpoint (with FleetChange.TWO_DEPLOYS it warns; see the warnings' table).
NEW_ENDPOINT: set[str] = set()
COMPONENTS_G5_4GPU = "constructs-llm:component-fleet:g5-12xlarge"
NIGHT = appscaling.Schedule.cron(hour="20", minute="0", week_day="MON-FRI")
MORNING = appscaling.Schedule.cron(hour="8", minute="0", week_day="MON-FRI")


def _ab_and_shadow(s: Stack) -> object:
    a, b = model(s, id="A", bound=False), model(s, id="B", bound=False)
    return [
        LlmEndpoint(
            s,
            "AB",
            variants=[
                Variant(model=a, weight=90, autoscaling=scaling(max_capacity=2)),
                Variant(model=b, weight=10, instance_type=G5_4GPU),
            ],
        ),
        LlmEndpoint(s, "Shadowed", variants=[Variant(model=a)], shadow=Variant(model=b)),
    ]


def _gateway(s: Stack) -> object:
    lora = {"OPTION_ENABLE_LORA": "true"}
    base = component(
        s,
        accelerators=1,
        model_props={"engine": Engine.lmi(), "env": lora, "max_total_tokens": 8192},
    )
    adapter = base.add_adapter("support-bot", source=ModelSource.s3_archive(bucket(s), "a.tar.gz"))
    imported = LlmEndpoint.from_endpoint_name(s, "Legacy", "legacy-endpoint")
    # 8,192 tokens from one A10G need about 6 minutes of the invoker's timeout
    return StreamingInvoker(
        s, "Stream", targets=[base, adapter, imported], timeout=Duration.minutes(10)
    )


def _s3_isolated(s: Stack) -> object:
    weights = bucket(s)
    model(
        s,
        source=ModelSource.s3(weights, "llama3-8b/", model_id=LLAMA3),
        vpc=vpc(s, ec2.SubnetType.PRIVATE_ISOLATED),
        vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
    )
    return model(
        s,
        id="Archive",
        source=ModelSource.s3_archive(weights, "llama3/model.tar.gz", model_id=LLAMA3),
    )


def _component_filling_one_instance(s: Stack) -> object:
    return component(
        s,
        endpoint_props={"min_instances": 0, "max_instances": 1},
        model_props={"max_input_tokens": 2048, "max_total_tokens": 4096},
        accelerators=1,
        copies=4,
        min_memory_mib=40 * 1024,
        cpu_cores=12,
        autoscaling=scaling(min_capacity=0, max_capacity=4),
    )


def _invokers_at_both_limits(s: Stack) -> object:
    target = endpoint(s)
    return [
        StreamingInvoker(s, "Longest", target=target, timeout=Duration.minutes(15)),
        StreamingInvoker(s, "Shortest", target=target, timeout=Duration.seconds(30)),
    ]


def _tools_where_served(s: Stack) -> object:
    """Tool calling asked for where it can be served, and env that restates it."""
    weights = ModelSource.s3(bucket(s), "finetune/")  # not in the table: the parser is named
    return [
        model(s, id="Named", source=weights, engine=Engine.vllm(tool_call_parser="hermes")),
        model(s, id="Tgi", engine=Engine.tgi(tool_calls=True)),
        model(s, id="Custom", engine=custom("nvidia", tool_calls=True)),
        model(
            s,
            id="Trt",
            engine=Engine.lmi(backend="trtllm", tool_calls=False),
            max_input_tokens=2048,
            max_total_tokens=4096,
        ),
        model(
            s,
            id="Restated",
            source=ModelSource.hugging_face("meta-llama/Llama-3.1-8B-Instruct"),
            engine=Engine.vllm(tool_calls=True),
            max_total_tokens=8192,
            env={
                "SM_VLLM_ENABLE_AUTO_TOOL_CHOICE": "true",
                "SM_VLLM_TOOL_CALL_PARSER": "llama3_json",
            },
        ),
    ]


def _https_out(s: Stack, network: ec2.IVpc) -> ec2.SecurityGroup:
    """A group allowing only HTTPS out, its rule added before the model reads it."""
    group = ec2.SecurityGroup(s, "HttpsOut", vpc=network, allow_all_outbound=False)
    group.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(443))
    return group


def _components_agreeing_on_the_network(s: Stack) -> object:
    """Two components whose models share isolation, subnets and security group."""
    network = vpc(s, ec2.SubnetType.PRIVATE_ISOLATED)
    group = ec2.SecurityGroup(s, "Models", vpc=network)
    props = {
        "vpc": network,
        "vpc_subnets": ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
        "security_groups": [group],
    }
    weights = bucket(s)
    return two_components(
        s,
        {"source": ModelSource.s3(weights, "chat/", model_id=LLAMA3), **props},
        {"source": ModelSource.s3(weights, "coder/", model_id=LLAMA3), **props},
    )


CONTROLS = [
    pytest.param(
        lambda s: (
            endpoint(in_region(s, "us-east-1"), endpoint_name="chat"),
            endpoint(
                Stack(app_of(s), "West", env=Environment(region="us-west-2")),
                endpoint_name="chat",
            ),
        ),
        set(),
        id="endpoint-name-twice-in-two-regions",
    ),
    pytest.param(
        lambda s: model(
            s,
            instance_type=G5_4GPU,
            engine=Engine.vllm(tensor_parallel_size=2),
            env={
                "SM_VLLM_PIPELINE_PARALLEL_SIZE": "2",
                "SM_VLLM_MAX_LORA_RANK": "320",
                "_PRIVATE_SETTING": "x" * 1024,
            },
        ),
        set(),
        id="model-engine-args-at-their-limits",
    ),
    pytest.param(
        _components_agreeing_on_the_network,
        {COMPONENTS_G5_4GPU},
        id="ic-components-agree-on-network-isolation-and-vpc",
    ),
    pytest.param(
        _tools_where_served,
        {"constructs-llm:unknown-model-size"},  # the S3 weights of a model the table lacks
        id="engine-tool-calls-where-served",
    ),
    pytest.param(
        lambda s: endpoint(
            s, health_check_timeout=Duration.seconds(60), download_timeout=Duration.seconds(3600)
        ),
        set(),
        id="endpoint-timeouts-at-60-and-3600-s",
    ),
    pytest.param(
        lambda s: endpoint(
            s, instance_count=2, autoscaling=scaling(min_capacity=2, max_capacity=2)
        ),
        NEW_ENDPOINT,
        id="endpoint-max-capacity-equals-min-capacity",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            endpoint_name="chat",
            autoscaling=scaling(max_capacity=2),
            fleet_change=FleetChange.TWO_DEPLOYS,
        ),
        {"constructs-llm:autoscaled-fleet:g5-2xlarge"},
        id="endpoint-name-kept-with-two-deploys",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            engine=Engine.vllm(),
            autoscaling=scaling(max_capacity=2),
            alarms=Alarms(
                kv_cache_percent=90,
                requests_waiting=4,
                email=["a@example.com"],
                promql_alarms=True,  # an environment-agnostic stack: asked for, with a rule
            ),
        ),
        NEW_ENDPOINT,
        id="endpoint-engine-alarms-mailed",
    ),
    pytest.param(
        # the default thresholds ask for nothing: no engine alarm, no error
        lambda s: endpoint(s, engine=Engine.vllm(), detailed_observability=False),
        set(),
        id="endpoint-without-detailed-observability",
    ),
    pytest.param(
        lambda s: endpoint(s, alarms=Alarms(kv_cache_percent=None, requests_waiting=None)),
        set(),
        id="endpoint-tgi-without-engine-alarms",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="llama3-" + "x" * 55 + "1"),
        set(),
        id="endpoint-name-63-chars",
    ),
    pytest.param(
        lambda s: endpoint(
            s, instance_type=EBS_ONLY, volume_size=Size.gibibytes(512), kms_key=kms.Key(s, "Key")
        ),
        set(),
        id="endpoint-ebs-volume-512-gib-with-kms",
    ),
    pytest.param(
        lambda s: model(in_region(s, "us-east-1"), max_input_tokens=8191, max_total_tokens=8192),
        set(),
        id="model-max-total-equals-context-in-mapped-region",
    ),
    pytest.param(
        lambda s: model(
            s,
            max_input_tokens=2048,
            max_total_tokens=4096,
            env={"MAX_BATCH_PREFILL_TOKENS": "4096", "HF_MODEL_ID": LLAMA3, "SM_NUM_GPUS": "1"},
        ),
        set(),
        id="model-env-tuning-override-and-restated-values",
    ),
    pytest.param(
        lambda s: [
            model(s, id=name, instance_type=G5_4GPU, engine=engine)
            for name, engine in (
                ("Lmi", Engine.lmi(tensor_parallel_degree=4)),
                ("Vllm", Engine.vllm(tensor_parallel_size=4)),
                ("Sglang", Engine.sglang(tp_size=4)),
                ("Tgi", Engine.tgi(num_shard=4)),
                ("Custom", custom("nvidia")),
            )
        ],
        set(),
        id="engine-gpu-tensor-parallel-equals-gpus",
    ),
    pytest.param(
        lambda s: [
            model(
                s,
                id=f"Cores{cores}",
                source=ModelSource.hugging_face(MISTRAL),
                instance_type=instance,
                engine=Engine.tgi_neuronx(num_cores=cores),
                max_input_tokens=2048,
                max_total_tokens=4096,
            )
            for instance, cores in ((INF2, 2), (TRN1, 8), (TRN1, 32))
        ],
        {"constructs-llm:sizing-estimate"},  # Neuron: the static KV-cache note
        id="engine-tgi-neuronx-cores-it-can-use",
    ),
    pytest.param(
        lambda s: model(
            s,
            vpc=vpc(s, ec2.SubnetType.PUBLIC, ec2.SubnetType.PRIVATE_WITH_EGRESS),
        ),
        set(),
        id="model-hub-in-private-subnets-with-egress",
    ),
    pytest.param(
        lambda s: model(
            s,
            vpc=(network := vpc(s, ec2.SubnetType.PUBLIC, ec2.SubnetType.PRIVATE_WITH_EGRESS)),
            security_groups=[_https_out(s, network)],
        ),
        set(),
        id="model-hub-behind-a-security-group-with-https-egress",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(LLAMA3, needs_token=False),
            env={"HF_ENDPOINT": "https://hub-mirror.example.com"},
        ),
        set(),
        id="model-hub-gated-through-a-mirror-that-needs-no-token",
    ),
    pytest.param(_s3_isolated, set(), id="s3-sources-isolated-and-archive"),
    pytest.param(
        _component_filling_one_instance,
        {
            "constructs-llm:scale-to-zero",
            "constructs-llm:scale-to-zero-metric",
            "constructs-llm:min-instances-zero-region",
            COMPONENTS_G5_4GPU,
        },
        id="ic-four-copies-fill-one-instance-and-scale-to-zero",
    ),
    pytest.param(
        _invokers_at_both_limits,
        set(),
        id="invoker-timeouts-at-30-s-and-15-min",
    ),
    pytest.param(
        lambda s: model(s, instance_type=InstanceType("ml.g5.45xlarge", allow_unknown_size=True)),
        {"constructs-llm:unknown-instance-type"},
        id="instance-type-unknown-size-opted-out",
    ),
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model=model(s, bound=False), instance_type=G5_4GPU),
        set(),
        id="endpoint-on-another-instance-type-than-the-model",
    ),
    pytest.param(
        lambda s: InferenceComponent(
            s, "Chat", endpoint=ic_endpoint(s), model=model(s, bound=False), min_memory_mib=1024
        ),
        {COMPONENTS_G5_4GPU},
        id="ic-model-for-another-instance-type",
    ),
    pytest.param(
        lambda s: [
            LlmEndpoint(s, name, model=served, instance_type=instance)
            for served in [model(s, instance_type=None, bound=False)]
            for name, instance in (("Small", G5), ("Big", G5_4GPU))
        ],
        set(),
        id="model-without-instance-type-on-two-endpoints",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_count=2,
            deployment=Deployment.canary(percent=50, bake=Duration.seconds(0)),
        ),
        {GUARDED},
        id="deployment-canary-half-of-two-instances-no-bake",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_count=2,
            deployment=Deployment.linear(
                step_percent=10, bake=Duration.minutes(45), timeout=Duration.hours(8)
            ),
        ),
        {GUARDED},
        id="deployment-linear-10-percent-45-minute-bakes-within-8-hours",
    ),
    pytest.param(
        lambda s: component(
            s,
            accelerators=1,
            copies=2,
            deployment=Deployment.rolling(batch_percent=5, bake=Duration.minutes(1)),
        ),
        {COMPONENTS_G5_4GPU},
        id="deployment-component-rolling-5-percent",
    ),
    pytest.param(
        lambda s: component(
            s,
            endpoint_props={"min_instances": 0},
            accelerators=1,
            copies=2,
            autoscaling=scaling(
                min_capacity=2,
                max_capacity=4,
                schedule=[
                    ScheduledCapacity(schedule=NIGHT, min_capacity=0, max_capacity=0),
                    ScheduledCapacity(schedule=MORNING, min_capacity=2, max_capacity=4),
                ],
            ),
            deployment=Deployment.rolling(batch_percent=50, bake=Duration.minutes(5)),
        ),
        {"constructs-llm:min-instances-zero-region", COMPONENTS_G5_4GPU},
        id="schedule-component-to-zero-at-night-with-rolling-updates-by-day",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            instance_count=2,
            alarms=Alarms(error_rate=0.5),
            deployment=Deployment.canary(percent=10, bake=Duration.minutes(5)),
        ),
        {GUARDED},  # the canary is one of two instances: half the requests
        id="deployment-canary-of-one-instance-in-two-with-alarms-at-half",
    ),
    pytest.param(
        lambda s: endpoint(s, alarms=Alarms(model_latency=Duration.millis(1), error_rate=1)),
        set(),
        id="alarms-at-their-bounds",
    ),
    pytest.param(
        _ab_and_shadow,
        NEW_ENDPOINT,
        id="variants-ab-with-scaling-and-a-shadow",
    ),
    pytest.param(_gateway, {COMPONENTS_G5_4GPU}, id="invoker-targets-component-adapter-and-import"),
    # The nearest valid input of each class of mistakes that used to pass synth
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(PHI3_MINI),
            instance_type=T4,
            engine=Engine.vllm(dtype="fp16"),
            max_total_tokens=4096,
        ),
        set(),
        id="engine-vllm-fp16-on-a-t4",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(quantization="fp8"), max_total_tokens=8192),
        {"constructs-llm:engine-setting"},  # weight-only on the A10G's compute capability 8.6
        id="engine-vllm-fp8-weight-only-on-an-a10g",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_type=EBS_ONLY, volume_size=Size.gibibytes(17)),
        set(),
        id="endpoint-ebs-volume-holds-the-checkpoint-with-headroom",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            capacity_reservation="arn:aws:sagemaker:us-east-1:123456789012:"
            "training-plan/p4-for-inference-endpoint",
        ),
        set(),
        id="endpoint-capacity-reservation-training-plan",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            autoscaling=scaling(
                max_capacity=2,
                schedule=[
                    ScheduledCapacity(
                        schedule=appscaling.Schedule.expression("cron(0 20 ? * MON-FRI *)"),
                        min_capacity=1,
                        time_zone="America/New_York",
                    )
                ],
            ),
        ),
        NEW_ENDPOINT,
        id="schedule-six-field-cron-in-new-york-time",
    ),
    pytest.param(
        lambda s: endpoint(
            s,
            alarms=Alarms(gpu_memory_percent=1.5, model_latency=Duration.hours(1), error_rate=0.01),
        ),
        set(),
        id="alarms-thresholds-at-the-unit-bounds",
    ),
    pytest.param(
        lambda s: [
            model(
                s,
                id=name,
                source=ModelSource.hugging_face(QWEN25_AWQ),
                engine=engine,
                max_total_tokens=8192,
            )
            for name, engine in (
                ("Read", Engine.vllm()),
                ("Named", Engine.vllm(quantization="awq")),
                ("Tgi", Engine.tgi(quantize="awq")),
            )
        ],
        {"constructs-llm:sizing-estimate"},  # AWQ keeps the embeddings in 16 bits
        id="hub-awq-checkpoint-read-from-its-config-or-named",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("BAAI/bge-small-en-v1.5"),
            engine=Engine.tei(),
            instance_type=G5,
        ),
        {"constructs-llm:unknown-model-size"},
        id="hub-embedding-model-the-table-lacks-on-tei",
    ),
]
# (builder, warning id, what the message says)

IMPORTED_KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"
WARNINGS = [
    pytest.param(
        lambda s: invoker(s, max_concurrency=10),
        "reserved-concurrency",
        r"max_concurrency=10 reserves 10 of the account's Lambda concurrency.*keeps 100 "
        r"unreserved.*at least 110.*aws lambda get-account-settings.*or drop max_concurrency",
        id="invoker-reserved-concurrency",
    ),
    pytest.param(
        lambda s: invoker(
            s,
            log_encryption_key=kms.Key.from_key_arn(s, "LogKey", IMPORTED_KEY_ARN),
        ),
        "imported-log-key",
        r"log_encryption_key of '.*Stream' is imported.*logs\.<region>\.amazonaws\.com.*"
        r"kms:EncryptionContext:aws:logs:arn = arn:<partition>:logs:<region>:<account>:log-group:"
        r"/constructs-llm/Test/.*add that statement to the key's policy",
        id="imported-log-key",
    ),
    pytest.param(
        lambda s: endpoint(s).grant_openai(
            iam.Role(s, "Caller", assumed_by=iam.AccountRootPrincipal())
        ),
        "openai-route-unlisted",
        r"TGI's router serves POST /v1/chat/completions.*AWS has not verified TGI.*staging",
        id="openai-route-unlisted",
    ),
    pytest.param(
        lambda s: endpoint(s, engine=custom()).grant_openai(
            iam.Role(s, "Caller", assumed_by=iam.AccountRootPrincipal())
        ),
        "openai-route-unknown",
        r"does not know whether its container implements the contract.*"
        r"POST /v1/chat/completions.*acknowledge",
        id="openai-route-unknown",
    ),
    pytest.param(
        lambda s: model(s, instance_type=InstanceType("ml.g8.2xlarge", allow_unknown_family=True)),
        "unknown-instance-type",
        r"ml\.g8\.2xlarge is not in the packaged hardware catalog",
        id="unknown-instance-type",
    ),
    pytest.param(
        lambda s: model(s, source=ModelSource.hugging_face("meta-llama/Llama-3-8B-Instruct")),
        "hub-id-typo",
        r"'meta-llama/Llama-3-8B-Instruct' is not in the packaged model table but "
        r"'meta-llama/Meta-Llama-3-8B-Instruct' is: did you mean .*fails at deploy.*"
        r"architecture=ModelArchitecture",
        id="hub-id-typo",
    ),
    pytest.param(
        lambda s: model(
            s,
            instance_type=INF2,
            engine=Engine.tgi_neuronx(),
            source=ModelSource.hugging_face(MISTRAL),
        ),
        "engine-setting",
        r"max_total_tokens is not set, so the Neuron image picks a cached configuration",
        id="engine-setting",
    ),
    pytest.param(
        lambda s: model(
            s,
            instance_type=INF2,
            engine=Engine.tgi_neuronx(),
            source=ModelSource.hugging_face(MISTRAL),
            max_input_tokens=2048,
            max_total_tokens=4096,
        ),
        "sizing-estimate",
        r"Neuron engines allocate the KV cache statically",
        id="sizing-estimate",
    ),
    pytest.param(
        lambda s: model(s, source=ModelSource.hugging_face("acme/private-llm-7b")),
        "unknown-model-size",
        r"the size of 'acme/private-llm-7b' is unknown.*architecture=ModelArchitecture",
        id="unknown-model-size",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(
                LLAMA3, token=secretsmanager.Secret.from_secret_name_v2(s, "Hf", "hf/token")
            ),
        ),
        "hf-token-in-model-env",
        r"sagemaker:DescribeModel can read it",
        id="hf-token-in-model-env",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, min_instances=0),
        "min-instances-zero-region",
        r"min_instances=0 .* is rejected in some regions",
        id="min-instances-zero-region",
    ),
    pytest.param(
        lambda s: component(
            s, accelerators=1, model_props={"env": {f"APP_SETTING_{i}": "1" for i in range(16)}}
        ),
        "component-env-size",
        r"environment has \d+ entries.*at most 16",
        id="component-env-size",
    ),
    pytest.param(
        lambda s: component(
            s,
            endpoint_props={"min_instances": 0},
            accelerators=1,
            autoscaling=scaling(min_capacity=0, max_capacity=2),
        ),
        "scale-to-zero",
        r"scale to zero: the first deploy starts 1 copy",
        id="scale-to-zero",
    ),
    pytest.param(
        lambda s: component(
            s,
            endpoint_props={"min_instances": 0},
            accelerators=1,
            autoscaling=scaling(min_capacity=0, max_capacity=2),
        ),
        "scale-to-zero-metric",
        r"target_invocations_per_instance=1.*verify",
        id="scale-to-zero-metric",
    ),
    pytest.param(
        lambda s: endpoint(
            s, instance_count=2, deployment=Deployment.canary(percent=10, bake=Duration.minutes(5))
        ),
        "guarded-rollout-hardware",
        r"guards updates on ml\.g5\.2xlarge.*Changing instance_type creates a new variant.*"
        r"shifts all traffic to the new fleet at once",
        id="guarded-rollout-hardware",
    ),
    pytest.param(
        lambda s: endpoint(
            s, autoscaling=scaling(max_capacity=2), fleet_change=FleetChange.TWO_DEPLOYS
        ),
        "autoscaled-fleet:g5-2xlarge",
        r"variant g5-2xlarge scales on ml\.g5\.2xlarge.*two deploys: first with "
        r"autoscaling=None",
        id="autoscaled-fleet",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1),
        "component-fleet:g5-12xlarge",
        r"hosts inference components on ml\.g5\.12xlarge.*a new endpoint: an "
        r"InferenceComponentEndpoint and its InferenceComponents under new construct ids",
        id="component-fleet",
    ),
    pytest.param(
        lambda s: StreamingInvoker(
            s, "Stream", target=endpoint(s, model_props={"max_total_tokens": 8192})
        ),
        "invoker-timeout-decode",
        r"max_total_tokens=8,192 at about 22 tokens/s .* takes about 366 s, but the stream may "
        r"read for 290 s; raise timeout \(Duration\.minutes\(7\)\).*acknowledge this warning",
        id="invoker-timeout-decode",
    ),
    pytest.param(
        lambda s: component(
            s, accelerators=1, model_props={"engine": custom("nvidia")}
        ).add_adapter("support-bot", source=ModelSource.s3_archive(bucket(s), "a.tar.gz")),
        "adapter-engine-unverified",
        r"adapter 'support-bot' on a custom engine: verify that its image registers SageMaker "
        r"adapter components",
        id="adapter-engine-unverified",
    ),
    pytest.param(
        lambda s: endpoint(s, async_inference=AsyncInference(output=bucket(s))),
        "async-alarms",
        r"ModelErrors alarm watches InvocationModelErrors, which SageMaker does not publish for "
        r"an asynchronous endpoint",
        id="async-alarms",
    ),
    pytest.param(
        lambda s: model(
            s, source=ModelSource.hugging_face("BAAI/bge-small-en-v1.5"), engine=Engine.vllm()
        ),
        "model-id-guess",
        r"BAAI/bge-small-en-v1\.5 is not in the model table, and its name \('bge'\) suggests an "
        r"embedding model, but Engine\.vllm\(\) serves chat models; serve an embedding model "
        r"with Engine\.tei\(\)",
        id="model-id-guess-embedding-on-a-chat-engine",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("mistralai/Mistral-Nemo-Instruct-2407"),
            engine=Engine.tei(),
        ),
        "model-id-guess",
        r"its name \('mistral'\) suggests a chat model, but Engine\.tei\(\) serves embedding "
        r"models",
        id="model-id-guess-chat-on-tei",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("acme/Llama-3-8B-Instruct-GPTQ"),
            engine=Engine.vllm(quantization="awq"),
        ),
        "model-id-guess",
        r"its name says GPTQ, but Engine\.vllm\(quantization='awq'\) asks for awq; check "
        r"quantization_config\.quant_method",
        id="model-id-guess-quantization",
    ),
]
