"""The public API contract, written as a user would (names and keyword arguments must stay)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.assertions import Template

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
    Placement,
    StreamFormat,
    StreamingInvoker,
)
from constructs_llm.streaming import DoneEvent, ErrorEvent, TokenEvent, parse_stream


def test_the_documented_composition_synthesizes(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Token", "hf/token")
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", token=secret),
        engine=Engine.tgi(),
        instance_type="ml.g5.2xlarge",
        max_input_tokens=2048,
        max_total_tokens=4096,
        env={"MAX_BATCH_PREFILL_TOKENS": "4096"},
    )
    endpoint = LlmEndpoint(
        stack,
        "Endpoint",
        model=model,
        instance_count=1,
        health_check_timeout=Duration.minutes(15),
        download_timeout=Duration.minutes(15),
        autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8),
    )
    endpoint.grant_invoke(iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal()))

    shared_model = LlmModel(
        stack,
        "SharedModel",
        source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", token=secret),
        engine=Engine.tgi(),
        instance_type="ml.g5.12xlarge",
    )
    ic_endpoint = InferenceComponentEndpoint(
        stack, "Shared", instance_type="ml.g5.12xlarge", min_instances=0, max_instances=2
    )
    chat = InferenceComponent(
        stack,
        "Chat",
        endpoint=ic_endpoint,
        model=shared_model,
        accelerators=1,
        min_memory_mib=24 * 1024,
        copies=1,
        autoscaling=Autoscaling(min_capacity=0, max_capacity=4, target_concurrent_requests=4),
    )
    invoker = StreamingInvoker(stack, "Stream", target=endpoint)
    StreamingInvoker(stack, "ChatStream", target=chat)
    assert invoker.url and invoker.function
    template = Template.from_stack(stack)
    kinds = Counter(r["Type"] for r in template.to_json()["Resources"].values())
    assert {k: n for k, n in kinds.items() if k.startswith("AWS::SageMaker::")} == {
        "AWS::SageMaker::Model": 2,  # the endpoint's (ml.g5.2xlarge) and one GPU of the copy's
        "AWS::SageMaker::EndpointConfig": 2,
        "AWS::SageMaker::Endpoint": 2,
        "AWS::SageMaker::InferenceComponent": 1,
    }
    assert (kinds["AWS::Lambda::Function"], kinds["AWS::Lambda::Url"]) == (2, 2)


def test_the_production_additions_for_placements(new_stack: Callable[..., Stack]) -> None:
    # a model is a definition; hosting binds it to a placement
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Token", "hf/token")
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", token=secret),
        engine=Engine.vllm(),
        max_total_tokens=8192,
    )
    small = LlmEndpoint(stack, "Small", model=model, instance_type="ml.g5.2xlarge")
    big = LlmEndpoint(stack, "Big", model=model, instance_type="ml.g5.12xlarge")
    existing = LlmEndpoint.from_endpoint_name(stack, "Existing", "my-endpoint")
    StreamingInvoker(stack, "Api", target=existing)
    models = Template.from_stack(stack).find_resources("AWS::SageMaker::Model")
    assert len(models) == 2
    bindings = [e.variants[0].binding for e in (small, big)]
    assert bindings[0].resource is not bindings[1].resource
    assert {b.placement for b in bindings} == {
        Placement("ml.g5.2xlarge"),
        Placement("ml.g5.12xlarge"),
    }


def test_the_documented_values() -> None:
    g5 = InstanceType("ml.g5.12xlarge")
    assert (g5.accelerator, g5.accelerator_count, g5.known, g5.local_nvme) == (
        "nvidia",
        4,
        True,
        True,
    )
    assert g5.accelerator_memory_gib and g5.vcpus and g5.memory_gib and g5.neuron_cores is None
    assert InstanceType("ml.inf2.48xlarge").neuron_cores == 24
    assert {f.name for f in StreamFormat} == {"TGI", "LMI_JSONLINES", "OPENAI", "AUTO"}
    for engine in (
        Engine.lmi(backend="vllm"),
        Engine.tgi_neuronx(),
        Engine.vllm(),
        Engine.sglang(),
        Engine.custom(
            image=ContainerImage.from_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"),
            stream_format="auto",
        ),
    ):
        assert isinstance(engine.stream_format, StreamFormat)
    chunks = [
        b'data:{"token":{"id":1,"text":"Hi","logprob":-0.5,"special":false}}\n\n',
        b'data:{"token":{"id":2,"text":"</s>","logprob":-0.1,"special":true},'
        b'"generated_text":"Hi","details":{"finish_reason":"eos_token"}}\n\n',
    ]
    events = list(parse_stream(chunks, StreamFormat.TGI))
    done = DoneEvent(finish_reason="eos_token", generated_text="Hi")
    assert events == [TokenEvent("Hi", 1, -0.5), done]
    # a stream cut before its final event is an error, never a clean stop
    assert list(parse_stream(chunks[:1], StreamFormat.TGI))[-1].__class__ is ErrorEvent
    assert ErrorEvent("x").message == "x"
