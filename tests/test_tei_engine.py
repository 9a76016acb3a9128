"""Engine.tei(): an embedding model on Hugging Face Text Embeddings Inference, on a GPU or on
CPUs, with the TEI images of their own registries; the embedding rows of the model table and
their memory plans; and what the invoker is told of an embedding target."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    ContainerImage,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    InstanceType,
    LlmEndpoint,
    LlmModel,
    ModelArchitecture,
    ModelKind,
    ModelSource,
    Placement,
    RequestFormat,
    StreamingInvoker,
    catalogs,
)
from constructs_llm.engines.context import EngineContext
from constructs_llm.errors import ConfigurationError, ImageError
from constructs_llm.hosting.openai_route import openai_route_support
from constructs_llm.images.dlc_registry import dlc_family, dlc_regions
from constructs_llm.sizing.memory import plan_memory

BGE = "BAAI/bge-large-en-v1.5"
QWEN8B = "Qwen/Qwen3-Embedding-8B"
GPU_TAG = "2.0.1-tei1.8.2-gpu-py310-cu122-ubuntu22.04"
CPU_TAG = "2.0.1-tei1.8.2-cpu-py310-ubuntu22.04"


def _ctx(instance: str, model_id: str = BGE, **kwargs: Any) -> EngineContext:
    devices = kwargs.pop("accelerators", None)
    placement = Placement(InstanceType(instance), devices)
    return EngineContext(placement=placement, model_location=model_id, **kwargs)


def _container(template: Template) -> dict[str, Any]:
    (model,) = template.find_resources("AWS::SageMaker::Model").values()
    container: dict[str, Any] = model["Properties"]["PrimaryContainer"]
    return container


def _embedder(stack: Stack, instance: str, engine: Engine | None = None, **props: Any) -> LlmModel:
    return LlmModel(
        stack,
        "Embedder",
        source=ModelSource.hugging_face(props.pop("model_id", BGE)),
        engine=engine or Engine.tei(),
        instance_type=instance,
        **props,
    )


# -- images and env ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance", "repository", "tag"),
    [
        ("ml.g5.xlarge", "tei", GPU_TAG),
        ("ml.g4dn.xlarge", "tei", GPU_TAG),
        ("ml.c6i.2xlarge", "tei-cpu", CPU_TAG),
        ("ml.m5.xlarge", "tei-cpu", CPU_TAG),
        ("ml.r6i.large", "tei-cpu", CPU_TAG),
    ],
)
def test_the_image_follows_the_hardware(
    new_stack: Callable[..., Stack], instance: str, repository: str, tag: str
) -> None:
    # GIVEN an embedding model on a GPU or a CPU instance (CPUs are accepted for TEI)
    stack = new_stack(region="us-east-1")
    LlmEndpoint(stack, "Endpoint", model=_embedder(stack, instance))
    # THEN the model runs TEI's image for that hardware, from TEI's own registry account
    container = _container(Template.from_stack(stack))
    account = catalogs.dlc_images().registries["tei"]["us-east-1"].account
    assert account == "683313688378"  # aws.github.io/deep-learning-containers/tei
    assert container["Image"] == f"{account}.dkr.ecr.us-east-1.amazonaws.com/{repository}:{tag}"
    assert container["Environment"] == {"HF_MODEL_ID": BGE}


def test_an_agnostic_stack_maps_teis_registries_and_admits_only_their_regions(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    LlmEndpoint(stack, "Endpoint", model=_embedder(stack, "ml.g5.xlarge"))
    template = Template.from_stack(stack).to_json()
    # its own mapping, not the shared DLC one (other accounts)
    assert list(template["Mappings"]) == ["ConstructsLlmDlcRegistryTei"]
    mapping = template["Mappings"]["ConstructsLlmDlcRegistryTei"]
    assert mapping == dlc_regions("tei")
    assert mapping["eu-west-1"] == {"account": "141502667606", "domain": "amazonaws.com"}
    assert mapping["cn-north-1"]["domain"] == "amazonaws.com.cn"
    # and a rule that stops a deploy to a region without TEI images before anything is made
    rule = template["Rules"]["ConstructsLlmDlcRegistryTeiRegion"]
    regions, _ = rule["Assertions"][0]["Assert"]["Fn::Contains"]
    assert set(regions) == set(dlc_family("tei").regions or ()) == set(mapping)
    assert (
        "me-west-1" not in regions
        and "tei image registry" in (rule["Assertions"][0]["AssertDescription"])
    )


def test_the_role_may_pull_the_tei_repository_of_teis_account(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(region="eu-west-1")
    LlmEndpoint(stack, "Endpoint", model=_embedder(stack, "ml.c6i.2xlarge"))
    policies = json.dumps(Template.from_stack(stack).find_resources("AWS::IAM::Policy"))
    assert "arn:aws:ecr:eu-west-1:141502667606:repository/tei-cpu" in policies
    assert 'repository/tei"' not in policies  # the CPU image's repository only


def test_a_region_without_tei_images_fails_at_synth(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(region="me-west-1")  # a DLC region, but not one of TEI's
    with pytest.raises(ImageError, match="me-west-1"):
        LlmEndpoint(stack, "Endpoint", model=_embedder(stack, "ml.g5.xlarge"))


def test_settings_become_the_routers_env() -> None:
    engine = Engine.tei(
        max_batch_tokens=32768,
        max_client_batch_size=64,
        max_concurrent_requests=128,
        max_batch_requests=16,
        auto_truncate=True,
        pooling="mean",
        dtype="float32",
    )
    ctx = _ctx("ml.g5.xlarge", revision="abc123")
    assert engine.derive_env(ctx) == {
        "HF_MODEL_ID": BGE,
        "HF_MODEL_REVISION": "abc123",
        "MAX_BATCH_TOKENS": "32768",
        "MAX_CLIENT_BATCH_SIZE": "64",
        "MAX_CONCURRENT_REQUESTS": "128",
        "MAX_BATCH_REQUESTS": "16",
        "AUTO_TRUNCATE": "true",
        "POOLING": "mean",
        "DTYPE": "float32",
    }
    assert (engine.batch_tokens, engine.max_inputs_per_call) == (32768, 64)
    assert engine.weight_dtype == "fp32"
    defaults = Engine.tei()
    assert (defaults.batch_tokens, defaults.max_inputs_per_call) == (16384, 32)  # TEI's


def test_the_contract_an_embedding_engine_states() -> None:
    engine = Engine.tei()
    assert (engine.name, engine.model_kind) == ("tei", ModelKind.EMBEDDING)
    assert engine.request_format is RequestFormat.EMBED
    assert engine.accelerator is None  # GPUs or CPUs
    assert engine.token_env_names == ("HF_TOKEN",)  # HF_API_TOKEN beside it stops the router
    assert engine.devices_used(InstanceType("ml.g5.12xlarge")) == 1
    assert not engine.tool_calling().served
    assert Engine.vllm().model_kind is ModelKind.CHAT


def test_a_hub_token_goes_to_hf_token_only(new_stack: Callable[..., Stack]) -> None:
    from aws_cdk import aws_secretsmanager as secretsmanager

    stack = new_stack(region="us-east-1")
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Token", "hf/token")
    model = LlmModel(
        stack,
        "Embedder",
        source=ModelSource.hugging_face(BGE, token=secret),
        engine=Engine.tei(),
        instance_type="ml.g5.xlarge",
    )
    LlmEndpoint(stack, "Endpoint", model=model)
    env = _container(Template.from_stack(stack))["Environment"]
    assert set(env) == {"HF_MODEL_ID", "HF_TOKEN"}


# -- what is refused, naming the value and the fix -------------------------------------------


@pytest.mark.parametrize(
    ("instance", "needle"),
    [
        ("ml.inf2.xlarge", r"Engine\.tei\(\) serves NVIDIA GPUs and CPUs, and ml\.inf2"),
        ("ml.dl1.24xlarge", r"Engine\.tei\(\) serves NVIDIA GPUs and CPUs, and ml\.dl1"),
        ("ml.p3.2xlarge", r"NVIDIA V100 GPUs \(CUDA compute capability 7\.0\)"),
        ("ml.g7e.2xlarge", r"compute capability 12\.0\), on which the TEI GPU image"),
        ("ml.p6-b200.48xlarge", r"compute capability 10\.0"),
    ],
)
def test_hardware_the_tei_images_cannot_run_on_fails_at_synth(
    new_stack: Callable[..., Stack], instance: str, needle: str
) -> None:
    with pytest.raises(ConfigurationError, match=needle):
        _embedder(new_stack(), instance)


def test_a_tei_image_of_your_own_may_run_on_newer_gpus(new_stack: Callable[..., Stack]) -> None:
    image = ContainerImage.from_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/tei:blackwell")
    model = _embedder(new_stack(region="us-east-1"), "ml.g7e.2xlarge", Engine.tei(image=image))
    assert model.default_placement is not None


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"POOLING": "splade"}, "sparse embeddings"),
        ({"TASK": "sentence-similarity"}, "sentence similarities"),
        ({"MAX_CLIENT_BATCH_SIZE": "8"}, r"max_client_batch_size=\.\.\."),
        ({"MODEL_ID": "intfloat/e5-large-v2"}, "read by the container as HF_MODEL_ID"),
        ({"HF_MODEL_ID": "intfloat/e5-large-v2"}, "contradicts the model source"),
        ({"MAX_BATCH_TOKENS": "lots"}, "MAX_BATCH_TOKENS='lots' must be a positive integer"),
    ],
)
def test_env_that_changes_the_answer_or_the_model_is_refused(
    env: dict[str, str], needle: str
) -> None:
    found = "\n".join(map(str, Engine.tei().validate(_ctx("ml.g5.xlarge"), env)))
    assert re.search(needle, found), found


def test_tuning_env_may_be_added() -> None:
    assert Engine.tei().validate(_ctx("ml.g5.xlarge"), {"MAX_BATCH_TOKENS": "8192"}) == []


def test_token_limits_are_refused_naming_auto_truncate(new_stack: Callable[..., Stack]) -> None:
    with pytest.raises(ConfigurationError, match=r"max_total_tokens=512: TEI .*auto_truncate"):
        _embedder(new_stack(), "ml.g5.xlarge", max_total_tokens=512)


@pytest.mark.parametrize(
    ("model_id", "engine", "needle"),
    [
        (
            BGE,
            Engine.vllm(embedding=False),
            r"BAAI/bge-large-en-v1\.5 is an embedding model.*Engine\.tei\(\).*embedding=False",
        ),
        (BGE, Engine.tgi(), r"BAAI/bge-large-en-v1\.5 is an embedding model.*Engine\.tgi\(\)"),
        ("Qwen/Qwen2.5-7B-Instruct", Engine.tei(), r"is a chat model, but Engine\.tei\(\)"),
    ],
)
def test_a_model_of_the_other_kind_is_refused(
    new_stack: Callable[..., Stack], model_id: str, engine: Engine, needle: str
) -> None:
    with pytest.raises(ConfigurationError, match=needle):
        _embedder(new_stack(), "ml.g5.2xlarge", engine, model_id=model_id)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"pooling": "splade"}, "pooling must be one of cls, mean, last-token"),
        ({"dtype": "bf16"}, "dtype must be fp16 or fp32"),
        ({"max_client_batch_size": 0}, "max_client_batch_size must be an integer >= 1"),
        ({"auto_truncate": "true"}, "pass the bool True"),
        ({"image": "tei:latest"}, "use ContainerImage.from_uri('tei:latest')"),
    ],
)
def test_bad_settings_are_named(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(needle)):
        Engine.tei(**kwargs)


def test_warnings_say_what_to_verify(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    LlmEndpoint(stack, "Endpoint", model=_embedder(stack, "ml.g5.12xlarge"))
    found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("idle"))
    assert any("3 of the 4 GPUs of ml.g5.12xlarge stay idle" in str(w.entry.data) for w in found)
    unknown = Engine.tei().warnings(
        EngineContext(
            placement=Placement(InstanceType("ml.g8.xlarge", allow_unknown_family=True)),
            model_location=BGE,
        ),
        {},
    )
    assert any("uses the TEI CPU image" in w for w in unknown)


def test_sagemakers_openai_route_does_not_serve_an_embedding_model(
    new_stack: Callable[..., Stack],
) -> None:
    support = openai_route_support(RequestFormat.EMBED, Engine.tei().chat_completions_path)
    assert support.served is False and "POST /v1/embeddings" in (support.message or "")
    stack = new_stack()
    endpoint = LlmEndpoint(stack, "Endpoint", model=_embedder(stack, "ml.g5.xlarge"))
    with pytest.raises(ConfigurationError, match="routes Chat Completions only"):
        _ = endpoint.openai_base_url


# -- the model table's embedding rows, and their memory plans ----------------------------------


EMBEDDERS = {
    "BAAI/bge-large-en-v1.5": (0.335, 1024, None, 512),
    "BAAI/bge-base-en-v1.5": (0.109, 768, None, 512),
    "BAAI/bge-m3": (0.568, 1024, None, 8192),
    "intfloat/e5-large-v2": (0.335, 1024, None, 512),
    "intfloat/multilingual-e5-large": (0.560, 1024, None, 512),
    "thenlper/gte-large": (0.335, 1024, None, 512),
    "Alibaba-NLP/gte-large-en-v1.5": (0.434, 1024, None, 8192),
    "nomic-ai/nomic-embed-text-v1.5": (0.137, 768, 64, 8192),
    "Qwen/Qwen3-Embedding-0.6B": (0.596, 1024, 32, 32768),
    "Qwen/Qwen3-Embedding-4B": (4.02, 2560, 32, 32768),
    "Qwen/Qwen3-Embedding-8B": (7.57, 4096, 32, 32768),
}


def test_the_popular_embedders_are_in_the_table_with_their_sources() -> None:
    rows = {r.id: r for r in catalogs.models().models if r.kind == "embedding"}
    assert set(rows) == set(EMBEDDERS)
    for model_id, (params, dims, shortest, context) in EMBEDDERS.items():
        row, arch = rows[model_id], ModelArchitecture.lookup(model_id)
        assert arch is not None and arch.kind is ModelKind.EMBEDDING
        assert (row.params_billion, row.embedding_dimensions) == (params, dims)
        assert (row.matryoshka_min_dimensions, row.context_length) == (shortest, context)
        assert row.family is None and not row.gated
        assert f"config.json of {model_id}" in row.source
        # encoders pool hidden_size-long vectors; heads split the hidden size evenly
        assert dims == row.hidden_size == row.attention_heads * row.head_dim or (
            model_id.startswith("Qwen/")
        )
    chat = [r for r in catalogs.models().models if r.kind == "chat"]
    assert all(r.family and r.embedding_dimensions is None for r in chat)


@pytest.mark.parametrize(
    ("model_id", "instance", "fits"),
    [
        (BGE, "ml.g4dn.xlarge", True),
        (QWEN8B, "ml.g5.xlarge", True),
        (QWEN8B, "ml.g4dn.xlarge", False),  # 14.1 GiB of weights, 13.4 GiB usable on a T4
        ("Qwen/Qwen3-Embedding-4B", "ml.g4dn.xlarge", True),
    ],
)
def test_an_embedding_plan_is_weights_and_one_batch_no_kv_cache(
    model_id: str, instance: str, fits: bool
) -> None:
    arch = ModelArchitecture.lookup(model_id)
    assert arch is not None
    plan = plan_memory(arch, instance=instance, engine=Engine.tei(), strict=False)
    assert plan.fits is fits
    assert (plan.devices, plan.kv_bytes_per_token, plan.max_batch_total_tokens) == (1, 0, 16384)
    # activations: 12 tensors of batch tokens x hidden size, in the weights' 16-bit dtype
    expected = 16384 * arch.hidden_size * 2 * 12 / 2**30
    assert plan.activations_gib == round(expected, 2)
    assert "no KV cache" in plan.summary()


def test_a_model_that_does_not_fit_fails_the_synth_naming_the_gpu(
    new_stack: Callable[..., Stack],
) -> None:
    with pytest.raises(ConfigurationError, match=r"Qwen3-Embedding-8B weights need 14\.1 GiB"):
        _embedder(new_stack(), "ml.g4dn.xlarge", model_id=QWEN8B)


def test_a_bigger_batch_needs_more_activation_memory(new_stack: Callable[..., Stack]) -> None:
    with pytest.raises(ConfigurationError, match=r"lower Engine\.tei\(max_batch_tokens=\.\.\.\)"):
        _embedder(
            new_stack(), "ml.g5.xlarge", Engine.tei(max_batch_tokens=200_000), model_id=QWEN8B
        )


def test_an_architecture_of_your_own_for_an_embedding_model() -> None:
    arch = ModelArchitecture(
        params_billion=0.3,
        layers=24,
        kv_heads=16,
        head_dim=64,
        hidden_size=1024,
        context_length=512,
        kind=ModelKind.EMBEDDING,
        embedding_dimensions=1024,
        matryoshka_min_dimensions=64,
    )
    assert plan_memory(arch, instance="ml.g5.xlarge").fits
    with pytest.raises(ConfigurationError, match="matryoshka_min_dimensions .2048. cannot"):
        ModelArchitecture(
            params_billion=0.3, layers=24, kv_heads=16, head_dim=64, hidden_size=1024,
            context_length=512, kind=ModelKind.EMBEDDING, embedding_dimensions=1024,
            matryoshka_min_dimensions=2048,
        )  # fmt: skip
    with pytest.raises(ConfigurationError, match="pass kind=ModelKind.EMBEDDING"):
        ModelArchitecture(
            params_billion=0.3, layers=24, kv_heads=16, head_dim=64, hidden_size=1024,
            context_length=512, embedding_dimensions=1024,
        )  # fmt: skip


# -- what the invoker is told ----------------------------------------------------------------


def _routes(template: Template) -> list[dict[str, Any]]:
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    env = function["Properties"]["Environment"]["Variables"]
    assert "ENDPOINT_NAME" not in env and "STREAM_FORMAT" not in env
    raw = env["ROUTES"]
    text = (
        raw
        if isinstance(raw, str)
        else "".join(part if isinstance(part, str) else "<name>" for part in raw["Fn::Join"][1])
    )
    routes: list[dict[str, Any]] = json.loads(text)
    return routes


def test_an_embedding_target_alone_is_written_as_a_route_with_its_figures(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint = LlmEndpoint(
        stack,
        "Endpoint",
        model=_embedder(stack, "ml.g5.xlarge", Engine.tei(max_client_batch_size=16),
                        model_id="Qwen/Qwen3-Embedding-0.6B"),
    )  # fmt: skip
    assert endpoint.model_kind is ModelKind.EMBEDDING
    StreamingInvoker(stack, "Api", target=endpoint)
    (route,) = _routes(Template.from_stack(stack))
    assert route == {
        "model": "Qwen/Qwen3-Embedding-0.6B",
        "endpoint": "<name>",
        "request_format": "embed",
        "engine": "tei",
        "variants": ["g5-xlarge"],
        "dimensions": 1024,
        "min_dimensions": 32,
        "max_inputs": 16,
    }


def test_a_chat_and_an_embedding_component_share_one_invoker(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    shared = InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")
    chat_model = LlmModel(
        stack,
        "Chat",
        source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
        engine=Engine.vllm(),
        max_total_tokens=8192,
    )
    chat = InferenceComponent(
        stack, "ChatIc", endpoint=shared, model=chat_model, accelerators=1,
        min_memory_mib=32 * 1024, served_model_name="chat",
    )  # fmt: skip
    embedder = InferenceComponent(
        stack, "EmbedIc", endpoint=shared, accelerators=1, min_memory_mib=4 * 1024,
        model=LlmModel(stack, "Embedder", source=ModelSource.hugging_face(BGE),
                       engine=Engine.tei()),
        served_model_name="embed",
    )  # fmt: skip
    assert (chat.model_kind, embedder.model_kind) == (ModelKind.CHAT, ModelKind.EMBEDDING)
    assert chat.embedding_traits is None
    StreamingInvoker(stack, "Api", targets=[chat, embedder])
    routes = {r["model"]: r for r in _routes(Template.from_stack(stack))}
    assert routes["chat"]["request_format"] == "messages" and routes["chat"]["tools"] is True
    assert routes["embed"] == {
        "model": "embed",
        "endpoint": "<name>",
        "request_format": "embed",
        "engine": "tei",
        "component": embedder.inference_component_name,
        "dimensions": 1024,
        "max_inputs": 32,
    }


def test_an_imported_tei_endpoint_is_an_embedding_target(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    imported = LlmEndpoint.from_endpoint_attributes(
        stack, "Elsewhere", endpoint_name="embedder", engine=Engine.tei()
    )
    assert imported.model_kind is ModelKind.EMBEDDING
    traits = imported.embedding_traits
    assert traits is not None and (traits.dimensions, traits.max_inputs_per_call) == (None, 32)
    StreamingInvoker(stack, "Api", target=imported)
    (route,) = _routes(Template.from_stack(stack))
    assert route == {
        "model": "embedder",
        "endpoint": "embedder",
        "request_format": "embed",
        "engine": "tei",  # the engine it was imported with: TEI's body
        "max_inputs": 32,
    }
    role = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    imported.grant_invoke(role)  # InvokeEndpoint is in the grant
