"""Bad values, built without a construct: instance types, autoscaling, engine settings, model
sources, images, and the memory planner's inputs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import aws_secretsmanager as secretsmanager

from constructs_llm import (
    Autoscaling,
    ContainerImage,
    Engine,
    InstanceType,
    ModelSource,
)
from constructs_llm.errors import (
    ConfigurationError,
    ImageError,
    InstanceTypeError,
    ScalingError,
    SizingError,
)
from constructs_llm.sizing.memory import ModelArchitecture, plan_memory
from tests.matrix.builders import (
    G5,
    G5_4GPU,
    IMAGE,
    LLAMA3,
    TOKEN,
    bucket,
    custom,
    in_region,
    model,
    scaling,
)

_PHI3 = ModelArchitecture.lookup("microsoft/Phi-3-mini-4k-instruct")
assert _PHI3 is not None
PHI3: ModelArchitecture = _PHI3


def architecture(**figures: Any) -> ModelArchitecture:
    """A user-stated architecture with a 7B model's figures, changed by ``figures``."""
    props: dict[str, Any] = {
        "params_billion": 7,
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "hidden_size": 4096,
        "context_length": 8192,
        **figures,
    }
    return ModelArchitecture(**props)


BAD_VALUES = [
    # InstanceType
    pytest.param(
        lambda s: InstanceType("g5.2xlarge"),
        InstanceTypeError,
        r"got 'g5\.2xlarge'.*use 'ml\.g5\.2xlarge'",
        "instance_type",
        id="instance-type-missing-ml-prefix",
    ),
    pytest.param(
        lambda s: InstanceType("ML.G5.2XLARGE"),
        InstanceTypeError,
        r"got 'ML\.G5\.2XLARGE'.*lower case: use 'ml\.g5\.2xlarge'",
        "instance_type",
        id="instance-type-upper-case",
    ),
    pytest.param(
        lambda s: InstanceType("ml.g5"),
        InstanceTypeError,
        r"got 'ml\.g5'.*size is missing.*2xlarge",
        "instance_type",
        id="instance-type-missing-size",
    ),
    pytest.param(
        lambda s: InstanceType(5),  # type: ignore[arg-type]
        InstanceTypeError,
        r"got int 5",
        "instance_type",
        id="instance-type-not-a-string",
    ),
    # Autoscaling
    pytest.param(
        lambda s: scaling(min_capacity=5, max_capacity=2),
        ScalingError,
        r"min_capacity \(5\) is above max_capacity \(2\)",
        "min_capacity",
        id="autoscaling-min-above-max",
    ),
    pytest.param(
        lambda s: Autoscaling(
            max_capacity=2, target_concurrent_requests=4, target_invocations_per_instance=20
        ),
        ScalingError,
        r"set one target, got 2 \(target_concurrent_requests, target_invocations_per_instance\)",
        "target_invocations_per_instance",
        id="autoscaling-both-targets",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=0),
        ScalingError,
        r"max_capacity must be an integer >= 1, got 0",
        "max_capacity",
        id="autoscaling-max-capacity-zero",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=2, target_concurrent_requests=0),
        ScalingError,
        r"target_concurrent_requests must be a number > 0, got 0",
        "target_concurrent_requests",
        id="autoscaling-target-zero",
    ),
    pytest.param(
        lambda s: scaling(max_capacity=2, scale_in_cooldown=600),
        ScalingError,
        r"scale_in_cooldown must be a Duration, got 600",
        "scale_in_cooldown",
        id="autoscaling-cooldown-not-a-duration",
    ),
    pytest.param(
        lambda s: scaling(min_capacity=-1, max_capacity=2),
        ScalingError,
        r"min_capacity must be an integer >= 0, got -1",
        "min_capacity",
        id="autoscaling-min-capacity-negative",
    ),
    # Engine settings
    pytest.param(
        lambda s: Engine.tgi(num_shard=0),
        ConfigurationError,
        r"Engine\.tgi\(\): num_shard must be an integer >= 1, got 0",
        "num_shard",
        id="engine-tgi-num-shard-zero",
    ),
    pytest.param(
        lambda s: Engine.tgi(quantize="int3"),
        ConfigurationError,
        r"quantize must be one of .*awq.*, got 'int3'",
        "quantize",
        id="engine-tgi-unknown-quantization",
    ),
    pytest.param(
        lambda s: Engine.lmi(backend="lmi-dist"),
        ConfigurationError,
        r"LMI backend 'lmi-dist' was removed.*Engine\.lmi\(backend='vllm'\)",
        "backend",
        id="engine-lmi-removed-backend",
    ),
    pytest.param(
        lambda s: Engine.vllm(gpu_memory_utilization=1.5),
        ConfigurationError,
        r"gpu_memory_utilization must be in \(0, 1\], got 1\.5",
        "gpu_memory_utilization",
        id="engine-vllm-memory-fraction-above-one",
    ),
    pytest.param(
        lambda s: Engine.sglang(dtype="fp12"),
        ConfigurationError,
        r"dtype must be fp16, bf16 or fp32, got 'fp12'",
        "dtype",
        id="engine-sglang-unknown-dtype",
    ),
    pytest.param(
        lambda s: Engine.tgi_neuronx(auto_cast_type="fp8"),
        ConfigurationError,
        r"auto_cast_type must be one of bf16, fp16, got 'fp8'",
        "auto_cast_type",
        id="engine-tgi-neuronx-unknown-cast-type",
    ),
    pytest.param(
        lambda s: Engine.custom(image=ContainerImage.from_uri(IMAGE), stream_format="sse"),
        ConfigurationError,
        r"stream_format must be one of .*openai.*, got 'sse'",
        "stream_format",
        id="engine-custom-unknown-stream-format",
    ),
    pytest.param(
        lambda s: Engine.lmi(backend="scheduler"),
        ConfigurationError,
        r"LMI backend 'scheduler' was removed in LMI v15",
        "backend",
        id="engine-lmi-scheduler-removed",
    ),
    pytest.param(
        lambda s: Engine.lmi(backend="tensorrt"),  # type: ignore[arg-type]
        ConfigurationError,
        r"LMI backend must be 'vllm' or 'trtllm', got 'tensorrt'",
        "backend",
        id="engine-lmi-unknown-backend",
    ),
    pytest.param(
        lambda s: Engine.lmi(dtype="fp64"),
        ConfigurationError,
        r"dtype must be fp16, bf16 or fp32, got 'fp64'",
        "dtype",
        id="engine-lmi-unknown-dtype",
    ),
    pytest.param(
        lambda s: Engine.tgi_neuronx(batch_size=-1),
        ConfigurationError,
        r"Engine\.tgi_neuronx\(\): batch_size must be an integer >= 1, got -1",
        "batch_size",
        id="engine-tgi-neuronx-batch-size-negative",
    ),
    pytest.param(
        lambda s: Engine.custom(image=None, stream_format="sse"),  # type: ignore[arg-type]
        ConfigurationError,
        r"(?s)Engine\.custom\(\) has 2 problems.*image is required.*stream_format must be one of tgi, lmi_jsonlines, openai, auto, got 'sse'",
        "image",
        id="engine-custom-without-image-and-format",
    ),
    pytest.param(
        lambda s: Engine.vllm(tool_call_parser="llama3"),
        ConfigurationError,
        r"Engine\.vllm\(\): tool_call_parser must be a parser the engine registers, got 'llama3'; known: .*llama3_json",
        "tool_call_parser",
        id="engine-vllm-unknown-tool-parser",
    ),
    pytest.param(
        lambda s: Engine.sglang(tool_call_parser="hermes"),
        ConfigurationError,
        r"Engine\.sglang\(\): tool_call_parser must be a parser the engine registers, got 'hermes'; known: .*qwen25",
        "tool_call_parser",
        id="engine-sglang-unknown-tool-parser",
    ),
    pytest.param(
        lambda s: Engine.vllm(reasoning_parser="deepseek-r1"),
        ConfigurationError,
        r"Engine\.vllm\(\): reasoning_parser must be a parser the engine registers, got 'deepseek-r1'; known: .*deepseek_r1",
        "reasoning_parser",
        id="engine-vllm-unknown-reasoning-parser",
    ),
    pytest.param(
        lambda s: Engine.sglang(reasoning_parser="deepseek_r1"),
        ConfigurationError,
        r"Engine\.sglang\(\): reasoning_parser must be a parser the engine registers, got 'deepseek_r1'; known: .*deepseek-r1",
        "reasoning_parser",
        id="engine-sglang-unknown-reasoning-parser",
    ),
    pytest.param(
        lambda s: Engine.vllm(reasoning=False, reasoning_parser="qwen3"),
        ConfigurationError,
        r"Engine\.vllm\(\): reasoning_parser='qwen3' was given with reasoning=False; drop one of them",
        "reasoning_parser",
        id="engine-vllm-reasoning-parser-with-reasoning-off",
    ),
    pytest.param(
        lambda s: Engine.lmi(backend="trtllm", reasoning_parser="qwen3"),
        ConfigurationError,
        r"Engine\.lmi\(\): LMI parses reasoning through its vLLM backend only.*Engine\.lmi\(backend='vllm'\)",
        "reasoning",
        id="engine-lmi-trtllm-reasoning",
    ),
    pytest.param(
        lambda s: Engine.vllm(embedding="yes"),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.vllm\(\): embedding must be True, False or None, got 'yes'",
        "embedding",
        id="engine-vllm-embedding-not-a-bool",
    ),
    pytest.param(
        lambda s: Engine.vllm(embedding=True, tool_calls=True, reasoning_parser="qwen3"),
        ConfigurationError,
        r"Engine\.vllm\(\): embedding=True serves an embedding model, which calls no tools and writes no reasoning, but tool_calls=True, reasoning_parser='qwen3' was given",
        "embedding",
        id="engine-vllm-embedding-with-chat-settings",
    ),
    pytest.param(
        lambda s: Engine.lmi(backend="trtllm", tool_calls=True),
        ConfigurationError,
        r"Engine\.lmi\(\): LMI serves tool calls through its vLLM backend only.*Engine\.lmi\(backend='vllm'\)",
        "tool_calls",
        id="engine-lmi-trtllm-tool-calls",
    ),
    pytest.param(
        lambda s: Engine.tgi_neuronx(tool_calls=True),
        ConfigurationError,
        r"Engine\.tgi_neuronx\(\): tool_calls=True: TGI NeuronX does not serve tool calls.*Engine\.tgi\(\)",
        "tool_calls",
        id="engine-tgi-neuronx-tool-calls",
    ),
    pytest.param(
        lambda s: Engine.custom(
            image=ContainerImage.from_uri(IMAGE),
            stream_format="tgi",
            request_format="generate",
            tool_calls=True,
        ),
        ConfigurationError,
        r"Engine\.custom\(\): tool_calls=True needs request_format=RequestFormat\.MESSAGES",
        "tool_calls",
        id="engine-custom-generate-tool-calls",
    ),
    pytest.param(
        lambda s: Engine.vllm(tool_calls="auto"),  # type: ignore[arg-type]
        ConfigurationError,
        r"tool_calls must be True, False or None, got 'auto'",
        "tool_calls",
        id="engine-vllm-tool-calls-not-a-bool",
    ),
    pytest.param(
        lambda s: Engine.sglang(tool_calls=False, tool_call_parser="qwen25"),
        ConfigurationError,
        r"tool_call_parser='qwen25' was given with tool_calls=False",
        "tool_call_parser",
        id="engine-sglang-parser-with-tools-off",
    ),
    pytest.param(
        lambda s: Engine.vllm(trust_remote_code="false"),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.vllm\(\): trust_remote_code must be True, False or None, got 'false'; pass the bool False, not a string",
        "trust_remote_code",
        id="engine-vllm-trust-remote-code-string",
    ),
    pytest.param(
        lambda s: Engine.sglang(trust_remote_code="true"),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.sglang\(\): trust_remote_code must be True, False or None, got 'true'; pass the bool True",
        "trust_remote_code",
        id="engine-sglang-trust-remote-code-string",
    ),
    pytest.param(
        lambda s: Engine.lmi(trust_remote_code="False"),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.lmi\(\): trust_remote_code must be True, False or None, got 'False'; pass the bool False",
        "trust_remote_code",
        id="engine-lmi-trust-remote-code-string",
    ),
    pytest.param(
        lambda s: Engine.tgi(trust_remote_code=1),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.tgi\(\): trust_remote_code must be True, False or None, got 1",
        "trust_remote_code",
        id="engine-tgi-trust-remote-code-not-a-bool",
    ),
    pytest.param(
        lambda s: Engine.sglang(mem_fraction_static=True),
        ConfigurationError,
        r"Engine\.sglang\(\): mem_fraction_static must be in \(0, 1\], got True",
        "mem_fraction_static",
        id="engine-sglang-memory-fraction-bool",
    ),
    pytest.param(
        lambda s: Engine.tgi(dtype="fp32"),
        ConfigurationError,
        r"Engine\.tgi\(\): dtype must be fp16 or bf16, got 'fp32' \(also spelt float16, half, bfloat16\)",
        "dtype",
        id="engine-tgi-dtype-fp32",
    ),
    pytest.param(
        lambda s: Engine.tgi(dtype="float"),
        ConfigurationError,
        r"Engine\.tgi\(\): dtype must be fp16 or bf16, got 'float'",
        "dtype",
        id="engine-tgi-dtype-float",
    ),
    pytest.param(
        lambda s: Engine.vllm(image=IMAGE),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.vllm\(\): image must be a ContainerImage, got str '123456789012\.dkr[^']*'; use ContainerImage\.from_uri\('123456789012\.dkr",
        "image",
        id="engine-vllm-image-uri-string",
    ),
    pytest.param(
        lambda s: Engine.tgi_neuronx(image={"uri": IMAGE}),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.tgi_neuronx\(\): image must be a ContainerImage, got dict .*; use ContainerImage\.from_uri\(\.\.\.\)",
        "image",
        id="engine-tgi-neuronx-image-not-an-image",
    ),
    pytest.param(
        lambda s: Engine.custom(image=IMAGE, stream_format="openai"),  # type: ignore[arg-type]
        ConfigurationError,
        r"Engine\.custom\(\): image must be a ContainerImage, got str '[^']*'; use ContainerImage\.from_uri\(",
        "image",
        id="engine-custom-image-uri-string",
    ),
    # Model sources
    pytest.param(
        lambda s: model(s, source=ModelSource.hugging_face(LLAMA3)),
        ConfigurationError,
        r"meta-llama/Meta-Llama-3-8B-Instruct is a gated Hugging Face repository and no token is "
        r"given.*fails at deploy.*token=secretsmanager\.Secret\.from_secret_name_v2\(.*"
        r"needs_token=False",
        "token",
        id="hub-gated-model-without-token",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("acme/private-llm", needs_token=True),
        ConfigurationError,
        r"acme/private-llm needs a token \(needs_token=True\) and no token is given",
        "token",
        id="hub-gated-needs-token-stated-without-token",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("gpt2"),
        ConfigurationError,
        r"got 'gpt2'.*names the organisation or user too",
        "model_id",
        id="hub-id-without-organisation",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("https://huggingface.co/meta-llama/Llama-2-7b"),
        ConfigurationError,
        r"got 'https://huggingface\.co/meta-llama/Llama-2-7b'; pass the id, not the URL: 'meta-llama/Llama-2-7b'",
        "model_id",
        id="hub-id-is-a-url",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("meta-llama/Llama--2"),
        ConfigurationError,
        r"got 'meta-llama/Llama--2'.*without '--'",
        "model_id",
        id="hub-id-double-hyphen",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face(LLAMA3, revision="main..x"),
        ConfigurationError,
        r"revision must be a branch, tag or commit hash, got 'main\.\.x'",
        "revision",
        id="hub-revision-malformed",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face(LLAMA3, token=TOKEN),  # type: ignore[arg-type]
        ConfigurationError,
        r"token must be a Secrets Manager secret, got 'hf_Ab…'.*from_secret_name_v2",
        "token",
        id="hub-token-plain-string",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("s3://bucket/llama/"),
        ConfigurationError,
        r"got 's3://bucket/llama/'; for weights in S3 use ModelSource\.s3",
        "model_id",
        id="hub-id-is-an-s3-uri",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("meta-llama/Llama 2"),
        ConfigurationError,
        r"got 'meta-llama/Llama 2'; remove the whitespace: 'meta-llama/Llama2'",
        "model_id",
        id="hub-id-with-whitespace",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("meta-llama/Llama-2/7b"),
        ConfigurationError,
        r"exactly one '/'",
        "model_id",
        id="hub-id-two-slashes",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("meta-llama/-llama"),
        ConfigurationError,
        r"'-llama' may use only letters, digits",
        "model_id",
        id="hub-id-leading-hyphen",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("org/model."),
        ConfigurationError,
        r"'model\.' may use only",
        "model_id",
        id="hub-id-trailing-dot",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face("org/" + "m" * 97),
        ConfigurationError,
        r"the name part has 97 characters; the Hub allows 96",
        "model_id",
        id="hub-id-name-too-long",
    ),
    pytest.param(
        lambda s: ModelSource.hugging_face(""),
        ConfigurationError,
        r"model_id must be a Hub id 'org/name', got ''",
        "model_id",
        id="hub-id-empty",
    ),
    *(
        pytest.param(
            lambda s, r=revision: ModelSource.hugging_face("org/model", revision=r),
            ConfigurationError,
            f"revision must be a branch, tag or commit hash, got '{re.escape(revision)}'",
            "revision",
            id=f"hub-revision-{name}",
        )
        for name, revision in (
            ("parent", "../main"),
            ("trailing-slash", "main/"),
            ("space", "has space"),
            ("lock", "v1.lock"),
        )
    ),
    pytest.param(
        lambda s: model(
            s,
            engine=custom(token_env_names=()),
            source=ModelSource.hugging_face(
                LLAMA3, token=secretsmanager.Secret.from_secret_name_v2(s, "Hf", "hf/token")
            ),
        ),
        ConfigurationError,
        r"has a token but the engine reads none; give Engine\.custom\(token_env_names=\.\.\.\)",
        "token",
        id="hub-token-for-an-engine-that-reads-none",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), "llama3-8b"),
        ConfigurationError,
        r"prefix must end with '/', got 'llama3-8b'; use 'llama3-8b/'",
        "prefix",
        id="s3-prefix-without-trailing-slash",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), "s3://my-weights/llama3-8b/"),
        ConfigurationError,
        r"got the URI 's3://my-weights/llama3-8b/'",
        "prefix",
        id="s3-prefix-is-a-uri",
    ),
    pytest.param(
        lambda s: ModelSource.s3_archive(bucket(s), "models/llama3.zip"),
        ConfigurationError,
        r"key must name a \.tar\.gz archive, got 'models/llama3\.zip'",
        "key",
        id="s3-archive-not-tar-gz",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), "llama3/", model_id="llama3"),
        ConfigurationError,
        r"got 'llama3'",
        "model_id",
        id="s3-declared-model-id-malformed",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), "/llama3/"),
        ConfigurationError,
        r"prefix must not start with '/', got '/llama3/'; use 'llama3/'",
        "prefix",
        id="s3-prefix-leading-slash",
    ),
    pytest.param(
        lambda s: ModelSource.s3(bucket(s), ""),
        ConfigurationError,
        r"prefix must name the folder holding the weights",
        "prefix",
        id="s3-prefix-empty",
    ),
    pytest.param(
        lambda s: ModelSource.s3_archive(bucket(s), "phi3/"),
        ConfigurationError,
        r"got 'phi3/'; use ModelSource\.s3\(bucket, prefix\) for uncompressed weights",
        "key",
        id="s3-archive-key-is-a-prefix",
    ),
    pytest.param(
        lambda s: ModelSource.s3_archive(bucket(s), "/phi3/model.tar.gz"),
        ConfigurationError,
        r"key must not start with '/'",
        "key",
        id="s3-archive-key-leading-slash",
    ),
    pytest.param(
        lambda s: ModelSource.s3("my-weights", "llama/"),  # type: ignore[arg-type]
        ConfigurationError,
        r"bucket must be an s3\.IBucket, got str 'my-weights'",
        "bucket",
        id="s3-bucket-is-a-string",
    ),
    # Container images
    pytest.param(
        lambda s: model(in_region(s, "ap-southeast-9")),
        ImageError,
        r"region 'ap-southeast-9'.*ContainerImage\.from_uri",
        "region",
        id="dlc-unmapped-concrete-region",
    ),
    pytest.param(
        lambda s: model(
            in_region(s, "ap-east-2"),
            engine=Engine.lmi(backend="trtllm"),
            instance_type=G5_4GPU,
            max_input_tokens=2048,
            max_total_tokens=4096,
        ),
        ImageError,
        r"does not list lmi-trtllm images .* in ap-east-2.*aws ecr describe-images",
        "region",
        id="dlc-region-not-listed",
    ),
    pytest.param(
        lambda s: ContainerImage.dlc(IMAGE, "1.0"),
        ImageError,
        r"got the image URI '123456789012\.dkr\.ecr.*'; use ContainerImage\.from_uri",
        "repository",
        id="dlc-given-a-uri",
    ),
    pytest.param(
        lambda s: ContainerImage.dlc("huggingface-pytorch-tgi-inference", "latest tag"),
        ImageError,
        r"Invalid image tag: got 'latest tag'",
        "tag",
        id="dlc-tag-with-space",
    ),
    pytest.param(
        lambda s: ContainerImage.from_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/my-llm"),
        ImageError,
        r"got '123456789012\.dkr\.ecr\.us-east-1\.amazonaws\.com/my-llm'.*no tag or digest",
        "uri",
        id="image-uri-without-tag",
    ),
    pytest.param(
        lambda s: model(in_region(s, "eu-west-1"), engine=custom()),
        ImageError,
        r"is in 'us-east-1' but stack .* deploys to 'eu-west-1'.*Replicate the image",
        "image",
        id="image-ecr-in-another-region",
    ),
    # Registries SageMaker does not pull from (only ECR, or another registry through a VPC)
    pytest.param(
        lambda s: ContainerImage.from_uri("ghcr.io/huggingface/text-generation-inference:3.3.6"),
        ImageError,
        r"'ghcr\.io/huggingface/text-generation-inference:3\.3\.6' is on ghcr\.io, which "
        r"SageMaker does not pull from: a model's image must be in a private Amazon ECR "
        r"repository.*RepositoryAccessMode=Vpc.*docker push.*ContainerImage\.from_ecr_repository",
        "uri",
        id="image-uri-on-ghcr",
    ),
    pytest.param(
        lambda s: ContainerImage.from_uri("docker.io/vllm/vllm-openai:v0.11.0"),
        ImageError,
        r"is on docker\.io, which SageMaker does not pull from",
        "uri",
        id="image-uri-on-docker-hub",
    ),
    pytest.param(
        lambda s: ContainerImage.from_uri("public.ecr.aws/example/llm-server:1.0"),
        ImageError,
        r"is on public\.ecr\.aws, which SageMaker does not pull from: a model's image must be in "
        r"a private Amazon ECR repository",
        "uri",
        id="image-uri-on-ecr-public",
    ),
    # The memory planner and model figures, used directly
    pytest.param(
        lambda s: plan_memory(PHI3, instance="ml.m5.xlarge"),
        SizingError,
        r"ml\.m5\.xlarge has no accelerators",
        "instance_type",
        id="sizing-plan-on-a-cpu-instance",
    ),
    pytest.param(
        lambda s: plan_memory(PHI3, instance=G5_4GPU, accelerators=5),
        SizingError,
        r"between 1 and the 4 of ml\.g5\.12xlarge, got 5",
        "accelerators",
        id="sizing-plan-accelerators-above-instance",
    ),
    pytest.param(
        lambda s: plan_memory(PHI3, instance=G5, dtype="int3"),
        SizingError,
        r"unknown dtype or quantization 'int3'",
        "dtype",
        id="sizing-plan-unknown-dtype",
    ),
    pytest.param(
        lambda s: plan_memory(PHI3, instance=G5, max_total_tokens=0),
        SizingError,
        r"max_total_tokens must be >= 1, got 0",
        "max_total_tokens",
        id="sizing-plan-max-total-tokens-zero",
    ),
    pytest.param(
        lambda s: plan_memory(PHI3, instance=G5_4GPU, engine=Engine.tgi(num_shard=8)),
        SizingError,
        r"shards over 8 devices but ml\.g5\.12xlarge has 4",
        "engine",
        id="sizing-plan-engine-shards-beyond-instance",
    ),
    pytest.param(
        lambda s: architecture(kv_heads=0),
        ConfigurationError,
        r"ModelArchitecture: kv_heads must be a positive integer, got 0",
        "kv_heads",
        id="sizing-architecture-kv-heads-zero",
    ),
    pytest.param(
        lambda s: architecture(kv_heads=16, attention_heads=8),
        ConfigurationError,
        r"kv_heads \(16\) cannot exceed attention_heads \(8\)",
        "kv_heads",
        id="sizing-architecture-more-kv-heads-than-heads",
    ),
]
