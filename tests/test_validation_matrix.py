"""Catch it at synth: a table of bad inputs across every construct, each failing while the app
is built with an error users can catch (a ``constructs_llm.errors`` type) and a message that
names the bad value and, where practical, the fix. A second table of valid edge cases must
synthesize cleanly, and an instance type of an unknown family only warns."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import (
    Acknowledgment,
    App,
    Duration,
    Environment,
    Size,
    Stack,
    Validations,
    cx_api,
)
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.assertions import Annotations, Match
from constructs import Construct
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_llm import (
    Autoscaling,
    ContainerImage,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    InstanceType,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamFormat,
    StreamingInvoker,
    catalogs,
)
from constructs_llm._validation import SAGEMAKER_NAME
from constructs_llm.endpoint import variant_name_for
from constructs_llm.errors import (
    ConfigurationError,
    ConstructsLlmError,
    ImageError,
    InstanceTypeError,
    ScalingError,
    SizingError,
)
from constructs_llm.instance_type import sizes_of
from tests.conftest import cdk_context

Build = Callable[[Stack], object]

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"  # 8.0B, 8,192-token context
MISTRAL = "mistralai/Mistral-7B-Instruct-v0.2"
G5 = "ml.g5.2xlarge"  # 1 x A10G, local NVMe
G5_4GPU = "ml.g5.12xlarge"  # 4 x A10G, 48 vCPU, 192 GiB
INF2 = "ml.inf2.xlarge"  # 1 Inferentia2 chip, 2 NeuronCores
TRN1 = "ml.trn1.32xlarge"  # 16 Trainium chips, 32 NeuronCores
EBS_ONLY = "ml.p3.8xlarge"  # 4 x V100, no local NVMe: volume size and KMS allowed
TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWx"  # shaped like a token, not one
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/my-llm:1.0"


# -- builders ----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _default_model_ungated(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows build gated Llama 3 without a token to exercise other checks; only the
    gated-model row keeps the packaged gated flags (its warning is tested there)."""
    if "gated-model-no-token" not in request.node.name:
        monkeypatch.setattr(catalogs, "is_gated", lambda model_id: False)


def model(
    stack: Stack,
    *,
    instance_type: str | InstanceType = G5,
    engine: Engine | None = None,
    source: ModelSource | None = None,
    id: str = "Model",
    **props: Any,
) -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=source or ModelSource.hugging_face(LLAMA3),
        engine=engine or Engine.tgi(),
        instance_type=instance_type,
        **props,
    )


def endpoint(
    stack: Stack,
    *,
    instance_type: str = G5,
    engine: Engine | None = None,
    model_props: dict[str, Any] | None = None,
    **props: Any,
) -> LlmEndpoint:
    served = model(stack, instance_type=instance_type, engine=engine, **(model_props or {}))
    return LlmEndpoint(stack, "Endpoint", model=served, **props)


def ic_endpoint(
    stack: Stack, *, instance_type: str = G5_4GPU, **props: Any
) -> InferenceComponentEndpoint:
    return InferenceComponentEndpoint(stack, "Shared", instance_type=instance_type, **props)


def component(
    stack: Stack,
    *,
    instance_type: str = G5_4GPU,
    endpoint_props: dict[str, Any] | None = None,
    model_props: dict[str, Any] | None = None,
    **props: Any,
) -> InferenceComponent:
    shared = ic_endpoint(stack, instance_type=instance_type, **(endpoint_props or {}))
    served = model(stack, instance_type=instance_type, **(model_props or {}))
    props.setdefault("min_memory_mib", 16 * 1024)
    return InferenceComponent(stack, "Chat", endpoint=shared, model=served, **props)


def custom(accelerator: Any = None) -> Engine:
    return Engine.custom(
        image=ContainerImage.from_uri(IMAGE),
        stream_format=StreamFormat.OPENAI,
        accelerator=accelerator,
    )


def bucket(stack: Stack) -> s3.IBucket:
    return s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")


def vpc(stack: Stack, *subnet_types: ec2.SubnetType) -> ec2.Vpc:
    return ec2.Vpc(
        stack,
        "Vpc",
        max_azs=2,
        nat_gateways=1 if ec2.SubnetType.PRIVATE_WITH_EGRESS in subnet_types else 0,
        subnet_configuration=[
            ec2.SubnetConfiguration(name=t.value, subnet_type=t) for t in subnet_types
        ],
    )


def in_region(stack: Stack, region: str) -> Stack:
    """Replaces the fresh ``stack`` with one deployed to a concrete region."""
    app = _app(stack)
    app.node.try_remove_child(stack.node.id)  # an empty stack would fail synth
    return Stack(app, stack.node.id, env=Environment(region=region))


def invoker(stack: Stack, **props: Any) -> StreamingInvoker:
    return StreamingInvoker(stack, "Stream", target=endpoint(stack), **props)


def scaling(**props: Any) -> Autoscaling:
    props.setdefault("target_concurrent_requests", 4)
    return Autoscaling(**props)


# -- bad inputs --------------------------------------------------------------------------------
# (builder, error type, regex: the bad value and, where practical, the fix)

BAD = [
    # InstanceType
    pytest.param(
        lambda s: InstanceType("g5.2xlarge"),
        InstanceTypeError,
        r"got 'g5\.2xlarge'.*use 'ml\.g5\.2xlarge'",
        id="instance-type-missing-ml-prefix",
    ),
    pytest.param(
        lambda s: InstanceType("ML.G5.2XLARGE"),
        InstanceTypeError,
        r"got 'ML\.G5\.2XLARGE'.*lower case: use 'ml\.g5\.2xlarge'",
        id="instance-type-upper-case",
    ),
    pytest.param(
        lambda s: InstanceType("ml.g5"),
        InstanceTypeError,
        r"got 'ml\.g5'.*size is missing.*2xlarge",
        id="instance-type-missing-size",
    ),
    pytest.param(
        lambda s: InstanceType(5),  # type: ignore[arg-type]
        InstanceTypeError,
        r"got int 5",
        id="instance-type-not-a-string",
    ),
    pytest.param(
        lambda s: model(s, instance_type="ml.g5.45xlarge"),
        InstanceTypeError,
        r"got 'ml\.g5\.45xlarge'.*Sizes of ml\.g5: xlarge, 2xlarge, .*48xlarge.*allow_unknown_size=True",
        id="model-seed-typo-g5-45xlarge",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, instance_type="ml.inf2.4xlarge"),
        InstanceTypeError,
        r"got 'ml\.inf2\.4xlarge'.*Sizes of ml\.inf2: xlarge, 8xlarge",
        id="ic-endpoint-unknown-size",
    ),
    # LlmEndpoint
    pytest.param(
        lambda s: endpoint(s, health_check_timeout=Duration.seconds(59)),
        ConfigurationError,
        r"health_check_timeout must be between 60 and 3600 seconds, got 59 s",
        id="endpoint-timeout-too-short",
    ),
    pytest.param(
        lambda s: endpoint(s, download_timeout=Duration.seconds(3601)),
        ConfigurationError,
        r"download_timeout must be between 60 and 3600 seconds, got 3601 s",
        id="endpoint-download-timeout-too-long",
    ),
    pytest.param(
        lambda s: endpoint(s, health_check_timeout=900),
        ConfigurationError,
        r"health_check_timeout must be a Duration, got 900; use Duration\.minutes",
        id="endpoint-timeout-not-a-duration",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_count=0),
        ConfigurationError,
        r"instance_count must be an integer >= 1, got 0",
        id="endpoint-instance-count-zero",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_count=5, autoscaling=scaling(max_capacity=4)),
        ConfigurationError,
        r"instance_count 5 is outside autoscaling's \[1, 4\]",
        id="endpoint-instance-count-outside-autoscaling",
    ),
    pytest.param(
        lambda s: endpoint(s, autoscaling=scaling(min_capacity=0, max_capacity=2)),
        ScalingError,
        r"min_capacity=0.*cannot scale to zero.*InferenceComponent",
        id="endpoint-scale-to-zero",
    ),
    pytest.param(
        lambda s: endpoint(s, volume_size=Size.gibibytes(100)),
        ConfigurationError,
        r"volume_size cannot be set on ml\.g5\.2xlarge: it has local NVMe.*drop volume_size",
        id="endpoint-volume-size-on-nvme",
    ),
    pytest.param(
        lambda s: endpoint(s, instance_type=EBS_ONLY, volume_size=Size.gibibytes(1024)),
        ConfigurationError,
        r"volume_size must be 1-512 GiB, got 1024 GiB",
        id="endpoint-volume-size-too-large",
    ),
    pytest.param(
        lambda s: endpoint(s, kms_key=kms.Key(s, "Key")),
        ConfigurationError,
        r"kms_key cannot be used with ml\.g5\.2xlarge: it has local NVMe.*drop kms_key",
        id="endpoint-kms-key-on-nvme",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="chat_llama3"),
        ConfigurationError,
        r"endpoint_name must match .* got 'chat_llama3'",
        id="endpoint-name-underscore",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="e" * 64),
        ConfigurationError,
        r"at most 63 characters.*got 'e{64}' \(64 characters\)",
        id="endpoint-name-64-chars",
    ),
    pytest.param(
        lambda s: endpoint(s, endpoint_name="chat-"),
        ConfigurationError,
        r"endpoint_name must match .* got 'chat-'",
        id="endpoint-name-trailing-hyphen",
    ),
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model=model(s), instance_type="ml.g5.4xlarge"),
        ConfigurationError,
        r"instance_type ml\.g5\.4xlarge differs from the model's ml\.g5\.2xlarge.*pass instance_type to the LlmModel",
        id="endpoint-instance-type-differs-from-model",
    ),
    # Autoscaling
    pytest.param(
        lambda s: scaling(min_capacity=5, max_capacity=2),
        ScalingError,
        r"min_capacity \(5\) is above max_capacity \(2\)",
        id="autoscaling-min-above-max",
    ),
    pytest.param(
        lambda s: Autoscaling(
            max_capacity=2, target_concurrent_requests=4, target_invocations_per_instance=20
        ),
        ScalingError,
        r"exactly one of target_concurrent_requests or target_invocations_per_instance, got both",
        id="autoscaling-both-targets",
    ),
    pytest.param(
        lambda s: Autoscaling(max_capacity=2),
        ScalingError,
        r"exactly one of target_concurrent_requests or target_invocations_per_instance, got neither",
        id="autoscaling-no-target",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=0),
        ScalingError,
        r"max_capacity must be an integer >= 1, got 0",
        id="autoscaling-max-capacity-zero",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=2, target_concurrent_requests=0),
        ScalingError,
        r"target_concurrent_requests must be a number > 0, got 0",
        id="autoscaling-target-zero",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=2, scale_in_cooldown=600),
        ScalingError,
        r"scale_in_cooldown must be a Duration, got 600",
        id="autoscaling-cooldown-not-a-duration",
    ),
    # Engines on the wrong hardware
    pytest.param(
        lambda s: model(s, instance_type=INF2, engine=Engine.tgi()),
        ConfigurationError,
        r"Engine\.tgi\(\) serves NVIDIA GPUs but ml\.inf2\.xlarge has AWS Neuron.*Engine\.tgi_neuronx\(\)",
        id="engine-tgi-on-neuron",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.tgi_neuronx()),
        ConfigurationError,
        r"Engine\.tgi_neuronx\(\) serves AWS Neuron.* but ml\.g5\.2xlarge has NVIDIA GPUs",
        id="engine-tgi-neuronx-on-gpu",
    ),
    pytest.param(
        lambda s: model(s, instance_type=INF2, engine=Engine.lmi()),
        ConfigurationError,
        r"Engine\.lmi\(\) serves NVIDIA GPUs but ml\.inf2\.xlarge",
        id="engine-lmi-on-neuron",
    ),
    pytest.param(
        lambda s: model(s, instance_type="ml.m5.xlarge", engine=Engine.vllm()),
        ConfigurationError,
        r"Engine\.vllm\(\) serves NVIDIA GPUs but ml\.m5\.xlarge has no accelerator",
        id="engine-vllm-on-cpu",
    ),
    pytest.param(
        lambda s: model(s, instance_type=TRN1, engine=Engine.sglang()),
        ConfigurationError,
        r"Engine\.sglang\(\) serves NVIDIA GPUs but ml\.trn1\.32xlarge",
        id="engine-sglang-on-neuron",
    ),
    pytest.param(
        lambda s: model(s, engine=custom(accelerator="neuron")),
        ConfigurationError,
        r"Engine\.custom\(\) serves AWS Neuron.* but ml\.g5\.2xlarge",
        id="engine-custom-neuron-on-gpu",
    ),
    pytest.param(
        lambda s: model(s, instance_type="ml.inf1.xlarge", engine=Engine.tgi_neuronx()),
        ConfigurationError,
        r"ml\.inf1\.xlarge is Inferentia1.*ml\.inf2",
        id="engine-tgi-neuronx-on-inferentia1",
    ),
    # Parallelism beyond the hardware, or that the engine cannot use
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.tgi(num_shard=8)),
        ConfigurationError,
        r"num_shard\)=8 exceeds the 4 GPU\(s\) of ml\.g5\.12xlarge; use .* <= 4",
        id="engine-tgi-num-shard-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.lmi(tensor_parallel_degree=8)),
        ConfigurationError,
        r"tensor_parallel_degree\)=8 exceeds the 4 GPU\(s\) of ml\.g5\.12xlarge",
        id="engine-lmi-tensor-parallel-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.vllm(tensor_parallel_size=8)),
        ConfigurationError,
        r"tensor_parallel_size\)=8 exceeds the 4 GPU\(s\)",
        id="engine-vllm-tensor-parallel-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.sglang(tp_size=8)),
        ConfigurationError,
        r"tp_size\)=8 exceeds the 4 GPU\(s\)",
        id="engine-sglang-tp-size-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, env={"SM_NUM_GPUS": "8"}),
        ConfigurationError,
        r"env SM_NUM_GPUS=8 exceeds the 4 GPUs of ml\.g5\.12xlarge; use at most 4",
        id="model-env-gpu-count-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.lmi(tensor_parallel_degree=3)),
        SizingError,
        r"tensor parallel degree 3 does not split .*heads.*use a degree among \[1, 2, 4\]",
        id="engine-lmi-tensor-parallel-does-not-split-heads",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=INF2,
            engine=Engine.tgi_neuronx(num_cores=4),
        ),
        ConfigurationError,
        r"num_cores=4\) exceeds the 2 NeuronCores of ml\.inf2\.xlarge; use num_cores <= 2",
        id="engine-tgi-neuronx-cores-above-instance",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=TRN1,
            engine=Engine.tgi_neuronx(num_cores=4),
        ),
        ConfigurationError,
        r"num_cores=4\) is not a topology .* ml\.trn1\.32xlarge \(1, 2, 8, 16 or a multiple of 32",
        id="engine-tgi-neuronx-trn1-4-cores",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=TRN1,
            engine=Engine.tgi_neuronx(),
            env={"HF_NUM_CORES": "4"},
        ),
        ConfigurationError,
        r"HF_NUM_CORES=4 is not a topology .* ml\.trn1\.32xlarge",
        id="model-env-neuron-cores-trn1-4",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=INF2,
            engine=Engine.tgi_neuronx(),
            env={"HF_NUM_CORES": "4"},
        ),
        ConfigurationError,
        r"env HF_NUM_CORES=4 exceeds the 2 NeuronCores of ml\.inf2\.xlarge",
        id="model-env-neuron-cores-above-instance",
    ),
    # Engine settings
    pytest.param(
        lambda s: Engine.tgi(num_shard=0),
        ConfigurationError,
        r"Engine\.tgi\(\): num_shard must be an integer >= 1, got 0",
        id="engine-tgi-num-shard-zero",
    ),
    pytest.param(
        lambda s: Engine.tgi(quantize="int3"),
        ConfigurationError,
        r"quantize must be one of .*awq.*, got 'int3'",
        id="engine-tgi-unknown-quantization",
    ),
    pytest.param(
        lambda s: Engine.lmi(backend="lmi-dist"),
        ConfigurationError,
        r"LMI backend 'lmi-dist' was removed.*Engine\.lmi\(backend='vllm'\)",
        id="engine-lmi-removed-backend",
    ),
    pytest.param(
        lambda s: Engine.vllm(gpu_memory_utilization=1.5),
        ConfigurationError,
        r"gpu_memory_utilization must be in \(0, 1\], got 1\.5",
        id="engine-vllm-memory-fraction-above-one",
    ),
    pytest.param(
        lambda s: Engine.sglang(dtype="fp12"),
        ConfigurationError,
        r"dtype must be fp16, bf16 or fp32, got 'fp12'",
        id="engine-sglang-unknown-dtype",
    ),
    pytest.param(
        lambda s: Engine.tgi_neuronx(auto_cast_type="fp8"),
        ConfigurationError,
        r"auto_cast_type must be one of bf16, fp16, got 'fp8'",
        id="engine-tgi-neuronx-unknown-cast-type",
    ),
    pytest.param(
        lambda s: Engine.custom(image=ContainerImage.from_uri(IMAGE), stream_format="sse"),
        ConfigurationError,
        r"stream_format must be one of .*openai.*, got 'sse'",
        id="engine-custom-unknown-stream-format",
    ),
    # Environment
    pytest.param(
        lambda s: model(s, env={"HF_TOKEN": TOKEN}),
        ConfigurationError,
        r"env HF_TOKEN holds 'hf_Ab…'.*Secrets Manager.*token=secret",
        id="model-env-literal-hf-token",
    ),
    pytest.param(
        lambda s: model(s, env={"MY_SETTING": f"--token {TOKEN}"}),
        ConfigurationError,
        r"env MY_SETTING holds a value that looks like a Hugging Face token",
        id="model-env-hf-token-under-another-name",
    ),
    pytest.param(
        lambda s: model(s, env={"HF_MODEL_ID": MISTRAL}),
        ConfigurationError,
        r"env HF_MODEL_ID='mistralai/Mistral-7B-Instruct-v0\.2' contradicts the model source 'meta-llama/Meta-Llama-3-8B-Instruct'.*ModelSource\.hugging_face",
        id="model-env-contradicts-model-source",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(), env={"SM_VLLM_MODEL": "/opt/ml/other"}),
        ConfigurationError,
        r"env SM_VLLM_MODEL='/opt/ml/other' contradicts the model source",
        id="model-env-vllm-contradicts-model-source",
    ),
    pytest.param(
        lambda s: model(s, max_total_tokens=4096, env={"MAX_TOTAL_TOKENS": "8192"}),
        ConfigurationError,
        r"env MAX_TOTAL_TOKENS='8192' contradicts max_total_tokens=4096.*set max_total_tokens=8192 on the model",
        id="model-env-contradicts-token-limit",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"OPTION_ROLLING_BATCH": "lmi-dist"}),
        ConfigurationError,
        r"env OPTION_ROLLING_BATCH='lmi-dist'.*removed",
        id="model-env-lmi-removed-backend",
    ),
    pytest.param(
        lambda s: model(s, env={"CONTAINER_HEALTH_CHECK_TIMEOUT": "1800"}),
        ConfigurationError,
        r"env CONTAINER_HEALTH_CHECK_TIMEOUT looks like a SageMaker startup timeout.*health_check_timeout=Duration",
        id="model-env-timeout-instead-of-prop",
    ),
    pytest.param(
        lambda s: model(s, env={"MAX_BATCH_SIZE": 8}),
        ConfigurationError,
        r"env\['MAX_BATCH_SIZE'\] must map a string to a string, got int 8; write it as '8'",
        id="model-env-value-not-a-string",
    ),
    # Token limits and memory fit
    pytest.param(
        lambda s: model(s, max_input_tokens=4096, max_total_tokens=4096),
        ConfigurationError,
        r"max_input_tokens \(4096\) must be less than max_total_tokens \(4096\)",
        id="model-max-input-not-below-max-total",
    ),
    pytest.param(
        lambda s: model(s, max_input_tokens=0),
        ConfigurationError,
        r"max_input_tokens must be an integer >= 1, got 0",
        id="model-max-input-tokens-zero",
    ),
    pytest.param(
        lambda s: model(s, max_total_tokens=16384),
        SizingError,
        r"max_total_tokens 16,384 exceeds the 8,192-token context of meta-llama/Meta-Llama-3-8B-Instruct; set max_total_tokens <= 8,192",
        id="model-max-total-above-model-context",
    ),
    pytest.param(
        lambda s: model(
            s, source=ModelSource.hugging_face("tiiuae/falcon-40b"), engine=Engine.lmi()
        ),
        SizingError,
        r"tiiuae/falcon-40b weights need 77\.9 GiB .*ml\.g5\.2xlarge.*more accelerator memory",
        id="model-falcon-40b-on-g5-2xlarge",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-70B-Instruct"),
            instance_type=G5_4GPU,
        ),
        SizingError,
        r"Meta-Llama-3-70B-Instruct weights need 131\.\d GiB .*4 x 22\.\d GiB \(ml\.g5\.12xlarge\)",
        id="model-llama-3-70b-on-g5-12xlarge",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("microsoft/Phi-3-mini-128k-instruct"),
            instance_type="ml.g4dn.xlarge",
            max_total_tokens=131072,
        ),
        SizingError,
        r"KV cache left on 1 x 16\.0 GiB \(ml\.g4dn\.xlarge\) holds [\d,]+ tokens .* less than one 131,072-token sequence; lower max_total_tokens to <= [\d,]+",
        id="model-kv-cache-below-one-sequence",
    ),
    # Model source and network
    pytest.param(
        lambda s: ModelSource.hugging_face("gpt2"),
        ConfigurationError,
        r"got 'gpt2'.*names the organisation or user too",
        id="hub-id-without-organisation",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("https://huggingface.co/meta-llama/Llama-2-7b"),
        ConfigurationError,
        r"got 'https://huggingface\.co/meta-llama/Llama-2-7b'; pass the id, not the URL: 'meta-llama/Llama-2-7b'",
        id="hub-id-is-a-url",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("meta-llama/Llama--2"),
        ConfigurationError,
        r"got 'meta-llama/Llama--2'.*without '--'",
        id="hub-id-double-hyphen",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face(LLAMA3, revision="main..x"),
        ConfigurationError,
        r"revision must be a branch, tag or commit hash, got 'main\.\.x'",
        id="hub-revision-malformed",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face(LLAMA3, token=TOKEN),  # type: ignore[arg-type]
        ConfigurationError,
        r"token must be a Secrets Manager secret, got 'hf_Ab…'.*from_secret_name_v2",
        id="hub-token-plain-string",
    ),
    pytest.param(
        lambda s: model(s, network_isolation=True),
        ConfigurationError,
        r"network_isolation=True blocks the download of Hub model 'meta-llama/Meta-Llama-3-8B-Instruct'.*ModelSource\.s3",
        id="model-hub-with-network-isolation",
    ),
    pytest.param(
        lambda s: model(
            s,
            vpc=vpc(s, ec2.SubnetType.PRIVATE_ISOLATED),
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
        ),
        ConfigurationError,
        r"Hub model 'meta-llama/Meta-Llama-3-8B-Instruct' cannot download from isolated subnets",
        id="model-hub-in-isolated-subnets",
    ),
    pytest.param(
        lambda s: model(s, vpc=vpc(s, ec2.SubnetType.PRIVATE_ISOLATED)),
        ConfigurationError,
        r"Hub model 'meta-llama/Meta-Llama-3-8B-Instruct'.*no subnets with egress",
        id="model-hub-in-vpc-without-egress",
    ),
    pytest.param(
        lambda s: model(
            s,
            vpc=vpc(s, ec2.SubnetType.PUBLIC),
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC),
        ),
        ConfigurationError,
        r"Hub model 'meta-llama/Meta-Llama-3-8B-Instruct' cannot download from public subnets",
        id="model-hub-in-public-subnets",
    ),
    pytest.param(
        lambda s: model(s, vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC)),
        ConfigurationError,
        r"vpc_subnets was given without vpc",
        id="model-subnets-without-vpc",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), "llama3-8b"),
        ConfigurationError,
        r"prefix must end with '/', got 'llama3-8b'; use 'llama3-8b/'",
        id="s3-prefix-without-trailing-slash",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), "s3://my-weights/llama3-8b/"),
        ConfigurationError,
        r"got the URI 's3://my-weights/llama3-8b/'",
        id="s3-prefix-is-a-uri",
    ),
    pytest.param(
        lambda s: ModelSource.s3_archive(bucket(s), "models/llama3.zip"),
        ConfigurationError,
        r"key must name a \.tar\.gz archive, got 'models/llama3\.zip'",
        id="s3-archive-not-tar-gz",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), "llama3/", model_id="llama3"),
        ConfigurationError,
        r"got 'llama3'",
        id="s3-declared-model-id-malformed",
    ),
    # Container images
    pytest.param(
        lambda s: model(in_region(s, "ap-southeast-9")),
        ImageError,
        r"region 'ap-southeast-9'.*ContainerImage\.from_uri",
        id="dlc-unmapped-concrete-region",
    ),
    pytest.param(
        lambda s: ContainerImage.dlc(IMAGE, "1.0"),
        ImageError,
        r"got the image URI '123456789012\.dkr\.ecr.*'; use ContainerImage\.from_uri",
        id="dlc-given-a-uri",
    ),
    pytest.param(
        lambda s: ContainerImage.dlc("huggingface-pytorch-tgi-inference", "latest tag"),
        ImageError,
        r"Invalid image tag: got 'latest tag'",
        id="dlc-tag-with-space",
    ),
    pytest.param(
        lambda s: ContainerImage.from_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/my-llm"),
        ImageError,
        r"got '123456789012\.dkr\.ecr\.us-east-1\.amazonaws\.com/my-llm'.*no tag or digest",
        id="image-uri-without-tag",
    ),
    pytest.param(
        lambda s: model(in_region(s, "eu-west-1"), engine=custom()),
        ImageError,
        r"is in 'us-east-1' but stack .* deploys to 'eu-west-1'.*Replicate the image",
        id="image-ecr-in-another-region",
    ),
    # InferenceComponentEndpoint
    pytest.param(
        lambda s: ic_endpoint(s, min_instances=3, max_instances=1),
        ConfigurationError,
        r"min_instances \(3\) is above max_instances \(1\)",
        id="ic-endpoint-min-above-max",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, max_instances=0),
        ConfigurationError,
        r"max_instances must be an integer >= 1, got 0",
        id="ic-endpoint-max-instances-zero",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, health_check_timeout=Duration.hours(2)),
        ConfigurationError,
        r"health_check_timeout must be between 60 and 3600 seconds, got 7200 s",
        id="ic-endpoint-timeout-too-long",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, endpoint_name="shared_llms"),
        ConfigurationError,
        r"endpoint_name must match .* got 'shared_llms'",
        id="ic-endpoint-name-underscore",
    ),
    pytest.param(
        lambda s: ic_endpoint(s, volume_size=Size.gibibytes(200)),
        ConfigurationError,
        r"volume_size cannot be set on ml\.g5\.12xlarge",
        id="ic-endpoint-volume-size-on-nvme",
    ),
    # InferenceComponent
    pytest.param(
        lambda s: component(s, accelerators=8),
        ConfigurationError,
        r"accelerators=8 per copy but ml\.g5\.12xlarge has 4.*lower accelerators",
        id="ic-accelerators-above-instance",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, min_memory_mib=300 * 1024),
        ConfigurationError,
        r"min_memory_mib=307200 per copy but ml\.g5\.12xlarge has 196608 MiB",
        id="ic-memory-above-instance",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, cpu_cores=64),
        ConfigurationError,
        r"cpu_cores=64 per copy but ml\.g5\.12xlarge has 48 vCPUs",
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
        id="ic-accelerators-on-cpu-instance",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, copies=0),
        ConfigurationError,
        r"copies must be an integer >= 1, got 0",
        id="ic-zero-copies",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, copies=5),
        ConfigurationError,
        r"copies=5 copies need 2 instances of ml\.g5\.12xlarge.*max_instances is 1",
        id="ic-copies-above-fleet",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, min_memory_mib=64),
        ConfigurationError,
        r"min_memory_mib must be an integer >= 128, got 64",
        id="ic-memory-below-minimum",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, cpu_cores=0.1),
        ConfigurationError,
        r"cpu_cores must be at least 0\.25 .*got 0\.1",
        id="ic-cpu-cores-below-minimum",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, download_timeout=Duration.seconds(30)),
        ConfigurationError,
        r"download_timeout must be between 60 and 3600 seconds, got 30 s",
        id="ic-download-timeout-too-short",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, inference_component_name="chat_llama3"),
        ConfigurationError,
        r"inference_component_name must match .* got 'chat_llama3'",
        id="ic-name-underscore",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, autoscaling=scaling(min_capacity=0, max_capacity=4)),
        ScalingError,
        r"min_capacity=0 \(scale to zero\).*min_instances=1; create the InferenceComponentEndpoint with min_instances=0",
        id="ic-scale-to-zero-with-min-instances",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, copies=3, autoscaling=scaling(max_capacity=2)),
        ScalingError,
        r"copies 3 is outside autoscaling's \[1, 2\]",
        id="ic-copies-outside-autoscaling",
    ),
    pytest.param(
        lambda s: InferenceComponent(
            s, "Chat", endpoint=ic_endpoint(s), model=model(s), min_memory_mib=1024
        ),
        ConfigurationError,
        r"the model's instance_type ml\.g5\.2xlarge differs from the endpoint's ml\.g5\.12xlarge",
        id="ic-model-for-another-instance-type",
    ),
    pytest.param(
        lambda s: component(s, instance_type="ml.p3.8xlarge", accelerators=1),
        SizingError,
        r"does not fit on the 1 accelerator\(s\) each copy gets on ml\.p3\.8xlarge",
        id="ic-model-does-not-fit-one-v100",
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
        id="ic-on-an-llm-endpoint",
    ),
    # StreamingInvoker
    pytest.param(
        lambda s: invoker(s, timeout=Duration.minutes(16)),
        ConfigurationError,
        r"timeout must be between 30 s and 15 minutes, got 960 s; Lambda stops a function after 15 minutes",
        id="invoker-timeout-above-15-min",
    ),
    pytest.param(
        lambda s: invoker(s, timeout=Duration.seconds(10)),
        ConfigurationError,
        r"timeout must be between 30 s and 15 minutes, got 10 s",
        id="invoker-timeout-too-short",
    ),
    pytest.param(
        lambda s: invoker(s, timeout=300),
        ConfigurationError,
        r"timeout must be a Duration, got 300",
        id="invoker-timeout-not-a-duration",
    ),
    pytest.param(
        lambda s: invoker(s, memory_size=64),
        ConfigurationError,
        r"memory_size must be 128-10240 MiB, got 64",
        id="invoker-memory-too-small",
    ),
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", target=model(s)),  # type: ignore[arg-type]
        ConfigurationError,
        r"target must be an LlmEndpoint or an InferenceComponent, got LlmModel 'Test/Model'",
        id="invoker-target-is-a-model",
    ),
    # Props of the wrong kind: the library's error, naming the value and how to build the right one
    pytest.param(
        lambda s: model(s, source=LLAMA3),  # type: ignore[arg-type]
        ConfigurationError,
        r"source must be a ModelSource, got str 'meta-llama/Meta-Llama-3-8B-Instruct'; use ModelSource\.hugging_face\('meta-llama/Meta-Llama-3-8B-Instruct'\)",
        id="model-source-is-a-model-id-string",
    ),
    pytest.param(
        lambda s: model(s, engine="tgi"),  # type: ignore[arg-type]
        ConfigurationError,
        r"engine must be an Engine, got str 'tgi'; use Engine\.tgi\(\)",
        id="model-engine-is-a-string",
    ),
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model="Model"),  # type: ignore[arg-type]
        ConfigurationError,
        r"model must be an LlmModel, got str 'Model'; create it with LlmModel\(",
        id="endpoint-model-is-a-string",
    ),
    pytest.param(
        lambda s: endpoint(s, autoscaling={"max_capacity": 2}),
        ConfigurationError,
        r"autoscaling must be an Autoscaling, got dict \{'max_capacity': 2\}; use Autoscaling\(max_capacity=",
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
        id="ic-model-is-a-string",
    ),
    # Python typing: the constructs take keyword arguments only
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model(s)),  # type: ignore[call-arg]
        TypeError,
        r"takes 3 positional arguments but 4 were given",
        id="endpoint-props-positional",
    ),
    pytest.param(
        lambda s: LlmEndpoint(s, "Endpoint", model=model(s), instance_typ=G5),  # type: ignore[call-arg]
        TypeError,
        r"unexpected keyword argument 'instance_typ'",
        id="endpoint-misspelt-prop",
    ),
]


@pytest.mark.parametrize(("build", "error", "message"), BAD)
def test_bad_input_fails_at_synth_naming_the_value(
    new_stack: Callable[..., Stack], build: Build, error: type[Exception], message: str
) -> None:
    # GIVEN an error users can catch: the library's own types, or TypeError for Python typing
    assert issubclass(error, ConstructsLlmError) or error is TypeError
    stack = new_stack()
    # WHEN the app is built (and, should building pass, synthesized) THEN it fails with it
    with pytest.raises(error, match=message):
        build(stack)
        _synth(stack)


def test_the_tables_span_every_construct() -> None:
    ids = [str(p.id) for p in BAD]
    assert len(ids) >= 45
    assert len(CONTROLS) >= 8
    assert len(set(ids)) == len(ids)
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
        "ic-endpoint-",
        "ic-",
        "invoker-",
    ):
        assert any(i.startswith(prefix) for i in ids), prefix


# -- controls: valid edge cases synthesize cleanly ---------------------------------------------
# (builder, the warning ids it is expected to raise; anything else is a failure)


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


CONTROLS = [
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
        set(),
        id="endpoint-max-capacity-equals-min-capacity",
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
    pytest.param(_s3_isolated, set(), id="s3-sources-isolated-and-archive"),
    pytest.param(
        _component_filling_one_instance,
        {
            "constructs-llm:scale-to-zero",
            "constructs-llm:scale-to-zero-metric",
            "constructs-llm:min-instances-zero-region",
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
]


@pytest.mark.parametrize(("build", "warnings"), CONTROLS)
def test_valid_edge_cases_synthesize_cleanly(
    new_stack: Callable[..., Stack], build: Build, warnings: set[str]
) -> None:
    stack = new_stack()
    build(stack)
    assert _warning_ids(_synth(stack)) == warnings


# -- an unknown, well-formed instance type only warns ------------------------------------------


def test_an_unknown_instance_family_only_warns(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a family launched after the catalog (ml.g8), on a model, an endpoint and components
    stack = new_stack()
    endpoint(stack, instance_type="ml.g8.2xlarge")
    shared = ic_endpoint(stack, instance_type="ml.g8.12xlarge")
    served = model(stack, id="SharedModel", instance_type="ml.g8.12xlarge")
    InferenceComponent(
        stack, "Chat", endpoint=shared, model=served, accelerators=1, min_memory_mib=1024
    )

    # WHEN synthesized THEN it succeeds, with a warning that says what was not checked
    assembly = _synth(stack)
    assert _warning_ids(assembly) == {"constructs-llm:unknown-instance-type"}
    annotations = Annotations.from_stack(stack)
    for path in ("/Test/Model", "/Test/Shared"):
        annotations.has_warning(
            path,
            Match.string_like_regexp(
                r"ml\.g8\.\d+xlarge is not in the packaged hardware catalog.*verify"
            ),
        )
    annotations.has_no_error("*", Match.any_value())


# -- warnings: each has an id users can acknowledge --------------------------------------------


WARNINGS = [
    pytest.param(
        lambda s: model(s),
        "gated-model-no-token",
        r"meta-llama/Meta-Llama-3-8B-Instruct is a gated Hugging Face repository.*token=",
        id="gated-model-no-token",
    ),
    pytest.param(
        lambda s: model(s, instance_type="ml.g8.2xlarge"),
        "unknown-instance-type",
        r"ml\.g8\.2xlarge is not in the packaged hardware catalog",
        id="unknown-instance-type",
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
        lambda s: model(
            in_region(s, "ap-east-2"),
            engine=Engine.lmi(backend="trtllm"),
            instance_type=G5_4GPU,
            max_input_tokens=2048,
            max_total_tokens=4096,
        ),
        "dlc-region-not-listed",
        r"does not list lmi-trtllm images .* in ap-east-2.*aws ecr describe-images",
        id="dlc-region-not-listed",
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
]


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
    app = App(context={**cdk_context(), STRICT: strict})
    stack = Stack(app, "Test")
    model(stack, instance_type="ml.g8.2xlarge")
    if acknowledged:
        Validations.of(stack).acknowledge(
            Acknowledgment(id=ACK_ID, reason="ml.g8 launched after the catalog; sized by hand")
        )
    return app


def test_warnings_appear_in_the_validation_report_under_their_acknowledgment_id() -> None:
    # GIVEN cdk.json's @aws-cdk/core:annotationsInValidationReport (on)
    assert cdk_context()["@aws-cdk/core:annotationsInValidationReport"] is True
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
    stack = Stack(_app(new_stack()), "Named", stack_name=stack_name)
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
    instance = InstanceType(f"ml.{family}.{size}", allow_unknown_size=True)
    name = variant_name_for(instance)
    assert SAGEMAKER_NAME.match(name) and len(name) <= 63, name


def test_every_catalog_instance_type_gives_a_valid_variant_name() -> None:
    for family in ("g5", "g6e", "p4d", "p5en", "inf2", "trn1n", "c7i", "p6-b200", "p6e-gb200"):
        for size in sizes_of(family) or ["48xlarge"]:
            name = variant_name_for(InstanceType(f"ml.{family}.{size}"))
            assert SAGEMAKER_NAME.match(name) and len(name) <= 63, name


def test_a_variant_name_too_long_for_sagemaker_fails_naming_the_instance_type() -> None:
    too_long = InstanceType("ml.g" + "9" * 40 + ".x" + "l" * 30, allow_unknown_size=True)
    with pytest.raises(ConfigurationError, match=r"instance type 'ml\.g9{40}\.xl{30}'.*at most 63"):
        variant_name_for(too_long)


# -- helpers -----------------------------------------------------------------------------------


def _app(stack: Stack) -> App:
    app = stack.node.root
    assert isinstance(app, App)
    return app


def _synth(stack: Stack) -> cx_api.CloudAssembly:
    return _app(stack).synth()


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
