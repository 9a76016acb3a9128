"""Builders the matrix rows share: each makes one construct (and what it needs) in a stack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk import App, Environment, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3

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
)

Build = Callable[[Stack], object]

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"  # 8.0B, 8,192-token context
LLAMA31 = "meta-llama/Llama-3.1-8B-Instruct"  # 8.0B, 131,072-token context
LLAMA31_405B = "meta-llama/Llama-3.1-405B-Instruct"  # an 812 GB checkpoint in bf16
MISTRAL = "mistralai/Mistral-7B-Instruct-v0.2"
QWEN3 = "Qwen/Qwen3-8B"  # a reasoning model (Qwen3's thinking)
BGE = "BAAI/bge-large-en-v1.5"  # an embedding model
G5 = "ml.g5.2xlarge"  # 1 x A10G, local NVMe
G5_4GPU = "ml.g5.12xlarge"  # 4 x A10G, 48 vCPU, 192 GiB
INF2 = "ml.inf2.xlarge"  # 1 Inferentia2 chip, 2 NeuronCores
TRN1 = "ml.trn1.32xlarge"  # 16 Trainium chips, 32 NeuronCores
EBS_ONLY = "ml.p3.8xlarge"  # 4 x V100, no local NVMe: volume size and KMS allowed
V100_4GPU = EBS_ONLY  # compute capability 7.0: no bf16
T4 = "ml.g4dn.xlarge"  # 1 x T4 (compute capability 7.5: no bf16), 125 GB of local NVMe
PHI3_MINI = "microsoft/Phi-3-mini-4k-instruct"  # 3.8B: fits one T4
QWEN25_AWQ = "Qwen/Qwen2.5-7B-Instruct-AWQ"  # an AWQ checkpoint in the model table
TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWx"  # shaped like a token, not one
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/my-llm:1.0"


def model(
    stack: Stack,
    *,
    instance_type: str | InstanceType | None = G5,
    engine: Engine | None = None,
    source: ModelSource | None = None,
    id: str = "Model",
    bound: bool = True,
    **props: Any,
) -> LlmModel:
    """A Llama-3-8B TGI model (its weights from a mirror that needs no Hub token); served on
    its default placement by an endpoint of its own (``<id>Host``, no alarms) unless
    ``bound=False``, so its SageMaker Model and warnings are in the template."""
    served = LlmModel(
        stack,
        id,
        source=source or ModelSource.hugging_face(LLAMA3, needs_token=False),
        engine=engine or Engine.tgi(),
        instance_type=instance_type,
        **props,
    )
    if bound:
        LlmEndpoint(stack, f"{id}Host", model=served, alarms=False)
    return served


def endpoint(
    stack: Stack,
    *,
    instance_type: str | InstanceType = G5,
    engine: Engine | None = None,
    model_props: dict[str, Any] | None = None,
    **props: Any,
) -> LlmEndpoint:
    served = model(
        stack, instance_type=instance_type, engine=engine, bound=False, **(model_props or {})
    )
    return LlmEndpoint(stack, "Endpoint", model=served, **props)


def ic_endpoint(
    stack: Stack, *, instance_type: str | InstanceType = G5_4GPU, **props: Any
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
    served = model(stack, instance_type=instance_type, bound=False, **(model_props or {}))
    props.setdefault("min_memory_mib", 16 * 1024)
    return InferenceComponent(stack, "Chat", endpoint=shared, model=served, **props)


def two_components(
    stack: Stack, first: dict[str, Any], second: dict[str, Any]
) -> list[InferenceComponent]:
    """Two components on one endpoint, 'Chat' and 'Coder', with these model props each."""
    shared = ic_endpoint(stack)
    return [
        InferenceComponent(
            stack,
            id,
            endpoint=shared,
            model=model(stack, id=f"{id}Model", instance_type=G5_4GPU, bound=False, **props),
            accelerators=1,
            min_memory_mib=16 * 1024,
        )
        for id, props in (("Chat", first), ("Coder", second))
    ]


def custom(accelerator: Any = None, **props: Any) -> Engine:
    return Engine.custom(
        image=ContainerImage.from_uri(IMAGE),
        stream_format=StreamFormat.OPENAI,
        accelerator=accelerator,
        **props,
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


def app_of(stack: Stack) -> App:
    app = stack.node.root
    assert isinstance(app, App)
    return app


def in_region(stack: Stack, region: str) -> Stack:
    """Replaces the fresh ``stack`` with one deployed to a concrete region."""
    app = app_of(stack)
    app.node.try_remove_child(stack.node.id)  # an empty stack would fail synth
    return Stack(app, stack.node.id, env=Environment(region=region))


def invoker(stack: Stack, **props: Any) -> StreamingInvoker:
    return StreamingInvoker(stack, "Stream", target=endpoint(stack), **props)


def scaling(**props: Any) -> Autoscaling:
    props.setdefault("target_concurrent_requests", 4)
    return Autoscaling(**props)
