"""Engines: the env each seed scenario gets, formats, images, and every bad input named."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.engines.context import EngineContext
from constructs_llm.engines.custom import CustomEngine
from constructs_llm.engines.dlc import SglangEngine, VllmEngine
from constructs_llm.engines.engine import Engine
from constructs_llm.engines.lmi import LmiEngine
from constructs_llm.engines.settings import SettingCheck
from constructs_llm.engines.tgi import TgiEngine, TgiNeuronxEngine
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement
from constructs_llm.images.dlc_registry import dlc_family
from constructs_llm.sizing.memory import ModelArchitecture, plan_memory

SECRETISH = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3"


def context(
    engine: Engine,
    instance: str | InstanceType,
    model_id: str = "meta-llama/Meta-Llama-3-8B-Instruct",
    *,
    planned: bool = True,
    **kwargs: Any,
) -> EngineContext:
    """The context LlmModel builds: the memory plan is made for the engine's devices."""
    inst = InstanceType.of(instance)
    arch = ModelArchitecture.lookup(model_id)
    plan = None
    if planned and arch is not None and inst.known and inst.accelerator:
        plan = plan_memory(
            arch,
            instance=inst,
            accelerators=kwargs.get("accelerators"),
            engine=engine,
            max_total_tokens=kwargs.get("max_total_tokens"),
            strict=False,
        )
    devices = kwargs.pop("accelerators", None)
    placement = Placement(inst, devices)
    return EngineContext(placement=placement, model_location=model_id, plan=plan, **kwargs)


def problems(engine: Engine, ctx: EngineContext, env: Mapping[str, Any] | None = None) -> str:
    return "\n".join(map(str, engine.validate(ctx, env or {})))


# -- the seed scenarios ---------------------------------------------------------------------


def test_phi3_lmi_vllm_rolling_batch_on_g5_4xlarge() -> None:
    engine = Engine.lmi()
    ctx = context(
        engine, "ml.g5.4xlarge", "microsoft/Phi-3-mini-4k-instruct", max_total_tokens=4096
    )
    assert engine.derive_env(ctx) == {
        "HF_MODEL_ID": "microsoft/Phi-3-mini-4k-instruct",
        "OPTION_ROLLING_BATCH": "disable",
        "OPTION_ASYNC_MODE": "true",
        "OPTION_ENTRYPOINT": "djl_python.lmi_vllm.vllm_async_service",
        "OPTION_TENSOR_PARALLEL_DEGREE": "1",
        # vLLM's own cap on an A10G; vLLM admits below it by free KV blocks (the plan fits 7
        # full 4,096-token sequences but 22 typical chat requests)
        "OPTION_MAX_ROLLING_BATCH_SIZE": "256",
        "OPTION_MAX_MODEL_LEN": "4096",
        "SERVING_FAIL_FAST": "true",
    }
    assert engine.validate(ctx, {}) == []


def test_mixtral_lmi_tensorrt_llm_on_p4d() -> None:
    engine = Engine.lmi(backend="trtllm")
    ctx = context(
        engine,
        "ml.p4d.24xlarge",
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        max_input_tokens=4096,
        max_total_tokens=8192,
    )
    assert engine.derive_env(ctx) == {
        "HF_MODEL_ID": "mistralai/Mixtral-8x7B-Instruct-v0.1",
        "OPTION_ROLLING_BATCH": "trtllm",
        "OPTION_TENSOR_PARALLEL_DEGREE": "8",
        "OPTION_MAX_ROLLING_BATCH_SIZE": "184",
        "OPTION_MAX_INPUT_LEN": "4096",
        "OPTION_MAX_OUTPUT_LEN": "8192",
        "SERVING_FAIL_FAST": "true",
    }
    assert engine.validate(ctx, {}) == []
    assert engine.image_for(ctx.instance).tag == "0.33.0-tensorrtllm0.21.0-cu128"
    # Token log-probs are asked per request; the stream carries them as JSON lines.
    assert (engine.request_format, engine.stream_format) == (
        RequestFormat.MESSAGES,
        StreamFormat.LMI_JSONLINES,
    )


def test_falcon_40b_lmi_tensor_parallel_8_on_g5_48xlarge() -> None:
    engine = Engine.lmi(
        tensor_parallel_degree=8, max_rolling_batch_size=32, max_rolling_batch_prefill_tokens=1024
    )
    ctx = context(engine, "ml.g5.48xlarge", "tiiuae/falcon-40b-instruct")
    assert engine.derive_env(ctx) == {
        "HF_MODEL_ID": "tiiuae/falcon-40b-instruct",
        "OPTION_ROLLING_BATCH": "disable",
        "OPTION_ASYNC_MODE": "true",
        "OPTION_ENTRYPOINT": "djl_python.lmi_vllm.vllm_async_service",
        "OPTION_TENSOR_PARALLEL_DEGREE": "8",
        "OPTION_MAX_ROLLING_BATCH_SIZE": "32",
        "OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS": "1024",
        "SERVING_FAIL_FAST": "true",
    }
    assert engine.validate(ctx, {}) == []


def test_llama2_13b_tgi_on_g5_12xlarge_shards_over_four_gpus() -> None:
    engine = Engine.tgi()
    ctx = context(
        engine,
        "ml.g5.12xlarge",
        "meta-llama/Llama-2-13b-chat-hf",
        max_input_tokens=2048,
        max_total_tokens=4096,
    )
    assert engine.derive_env(ctx) == {
        "HF_MODEL_ID": "meta-llama/Llama-2-13b-chat-hf",
        "SM_NUM_GPUS": "4",
        "MAX_INPUT_TOKENS": "2048",
        "MAX_TOTAL_TOKENS": "4096",
        "MAX_BATCH_TOTAL_TOKENS": "58624",  # 90% of the planned 65,273 KV tokens, in 256s
        "MESSAGES_API_ENABLED": "true",
    }
    assert engine.validate(ctx, {}) == []


def test_mistral_7b_tgi_neuronx_on_inf2_xlarge() -> None:
    engine = Engine.tgi_neuronx()
    ctx = context(
        engine,
        "ml.inf2.xlarge",
        "mistralai/Mistral-7B-Instruct-v0.2",
        max_input_tokens=2048,
        max_total_tokens=4096,
    )
    assert engine.derive_env(ctx) == {
        "HF_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.2",
        "HF_NUM_CORES": "2",
        "HF_AUTO_CAST_TYPE": "bf16",
        "MAX_BATCH_SIZE": "4",
        "HF_BATCH_SIZE": "4",
        "MAX_TOTAL_TOKENS": "4096",
        "HF_SEQUENCE_LENGTH": "4096",
        "MAX_INPUT_TOKENS": "2048",
        "MESSAGES_API_ENABLED": "true",
    }
    assert engine.validate(ctx, {}) == []
    assert engine.warnings(ctx, {}) == []


def test_llama3_8b_tgi_one_gpu_per_inference_component_copy() -> None:
    engine = Engine.tgi()
    ctx = context(
        engine, "ml.g5.12xlarge", accelerators=1, max_input_tokens=2048, max_total_tokens=4096
    )
    env = engine.derive_env(ctx)
    assert env["SM_NUM_GPUS"] == "1"
    assert env == {
        "HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct",
        "SM_NUM_GPUS": "1",
        "MAX_INPUT_TOKENS": "2048",
        "MAX_TOTAL_TOKENS": "4096",
        "MAX_BATCH_TOTAL_TOKENS": "26112",
        "MESSAGES_API_ENABLED": "true",
    }
    assert engine.validate(ctx, {}) == []


# -- formats, images, tokens ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "name", "request_format", "stream_format", "family"),
    [
        (Engine.tgi(), "tgi", RequestFormat.MESSAGES, StreamFormat.OPENAI, "tgi"),
        (
            Engine.tgi_neuronx(),
            "tgi-neuronx",
            RequestFormat.MESSAGES,
            StreamFormat.OPENAI,
            "tgi-neuronx",
        ),
        (Engine.lmi(), "lmi-vllm", RequestFormat.MESSAGES, StreamFormat.LMI_JSONLINES, "lmi"),
        (
            Engine.lmi(backend="trtllm"),
            "lmi-trtllm",
            RequestFormat.MESSAGES,
            StreamFormat.LMI_JSONLINES,
            "lmi-trtllm",
        ),
        (Engine.vllm(), "vllm", RequestFormat.MESSAGES, StreamFormat.OPENAI, "vllm"),
        (Engine.sglang(), "sglang", RequestFormat.MESSAGES, StreamFormat.OPENAI, "sglang"),
    ],
)
def test_each_engine_states_its_contract_and_default_image(
    engine: Engine,
    name: str,
    request_format: RequestFormat,
    stream_format: StreamFormat,
    family: str,
) -> None:
    assert engine.name == name
    assert (engine.request_format, engine.stream_format) == (request_format, stream_format)
    image = engine.image_for(InstanceType("ml.g5.2xlarge"))
    spec = dlc_family(family)
    assert (image.repository_name, image.tag) == (spec.repository, spec.tag)
    assert engine.token_env_names == ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def test_a_user_image_replaces_the_default() -> None:
    from constructs_llm.images.container_image import ContainerImage

    image = ContainerImage.dlc(
        "huggingface-pytorch-tgi-inference", "2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04"
    )
    assert Engine.tgi(image=image).image_for(InstanceType("ml.g5.2xlarge")) is image


def test_custom_engine_uses_the_stated_contract() -> None:
    from constructs_llm.images.container_image import ContainerImage

    engine = Engine.custom(
        image=ContainerImage.from_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/mine:1"),
        stream_format="tgi",
        request_format="generate",
        accelerator="nvidia",
        env={"MY_FLAG": "1"},
        model_env_name="MODEL_PATH",
        token_env_names=("HF_TOKEN",),
    )
    ctx = context(engine, "ml.g5.2xlarge", planned=False, max_total_tokens=4096)
    assert (engine.stream_format, engine.request_format) == (
        StreamFormat.TGI,
        RequestFormat.GENERATE,
    )
    assert engine.derive_env(ctx) == {
        "MY_FLAG": "1",
        "MODEL_PATH": "meta-llama/Meta-Llama-3-8B-Instruct",
    }
    assert engine.token_env_names == ("HF_TOKEN",)
    assert "Engine.custom() serves NVIDIA GPUs but ml.inf2.xlarge" in problems(
        engine, context(engine, "ml.inf2.xlarge", planned=False)
    )
    assert any("set them in env" in w for w in engine.warnings(ctx, {}))


def test_only_tgi_states_an_upstream_status() -> None:
    (status,) = Engine.tgi().notes
    assert status.startswith("Engine.tgi(): TGI is archived upstream")
    for engine in (
        Engine.vllm(),
        Engine.lmi(),
        Engine.sglang(),
        Engine.tgi_neuronx(),
    ):
        assert engine.notes == ()
    assert "archived" in (Engine.tgi.__doc__ or "")


# -- plan-fed defaults ----------------------------------------------------------------------


def test_batch_defaults_come_from_the_plan_only_with_a_token_limit() -> None:
    tgi, trtllm = Engine.tgi(), Engine.lmi(backend="trtllm")
    no_limit = context(tgi, "ml.g5.12xlarge", "meta-llama/Llama-2-13b-chat-hf")
    assert "MAX_BATCH_TOTAL_TOKENS" not in tgi.derive_env(no_limit)
    assert "OPTION_MAX_ROLLING_BATCH_SIZE" not in trtllm.derive_env(
        context(trtllm, "ml.g5.12xlarge", "meta-llama/Llama-2-13b-chat-hf")
    )
    big = context(
        trtllm, "ml.g5.48xlarge", "microsoft/Phi-3-mini-4k-instruct", max_total_tokens=512
    )
    assert trtllm.derive_env(big)["OPTION_MAX_ROLLING_BATCH_SIZE"] == "256"  # LMI's caps it


@pytest.mark.parametrize(
    ("instance", "seqs"),
    [
        ("ml.g5.4xlarge", "256"),  # A10G, 22 GiB
        ("ml.g6e.12xlarge", "256"),  # L40S, 45 GiB
        ("ml.p4de.24xlarge", "256"),  # A100 80 GiB: vLLM keeps 256 on A100s
        ("ml.p5.48xlarge", "1024"),  # H100 80 GiB
        ("ml.p5e.48xlarge", "1024"),  # H200
        (
            InstanceType("ml.g9x.2xlarge", allow_unknown_family=True),
            "256",
        ),  # a family the catalog does not know: vLLM's fallback
    ],
)
def test_lmi_vllm_caps_sequences_as_vllm_serve_does(
    instance: str | InstanceType, seqs: str
) -> None:
    # With or without a token limit: vLLM admits by free KV blocks below this cap, so the cap
    # is vLLM's own, not one sized for full-length sequences nor LMI's async-mode default 32.
    lmi = Engine.lmi()
    for limit in (None, 4096):
        ctx = context(lmi, instance, "microsoft/Phi-3-mini-4k-instruct", max_total_tokens=limit)
        assert lmi.derive_env(ctx)["OPTION_MAX_ROLLING_BATCH_SIZE"] == seqs


def test_lmi_vllm_cap_stays_within_the_prefill_tokens() -> None:
    # vLLM refuses max_num_batched_tokens < max_num_seqs, and bounds its own default by it.
    lmi = Engine.lmi(max_rolling_batch_prefill_tokens=128)
    ctx = context(lmi, "ml.g5.4xlarge", "microsoft/Phi-3-mini-4k-instruct", max_total_tokens=4096)
    env = lmi.derive_env(ctx)
    assert env["OPTION_MAX_ROLLING_BATCH_SIZE"] == "128"
    assert lmi.validate(ctx, {}) == []
    assert "OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS=100 is below OPTION_MAX_ROLLING_BATCH_SIZE" in (
        problems(lmi, ctx, {"OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS": "100"})
    )


def test_trtllm_caps_sequences_at_the_full_length_the_plan_fits() -> None:
    # TensorRT-LLM builds its engine for max_batch_size and reserves each request's full length.
    trtllm = Engine.lmi(backend="trtllm")
    ctx = context(
        trtllm, "ml.g5.4xlarge", "microsoft/Phi-3-mini-4k-instruct", max_total_tokens=4096
    )
    assert ctx.plan is not None and ctx.plan.max_concurrent_sequences == 7
    assert trtllm.derive_env(ctx)["OPTION_MAX_ROLLING_BATCH_SIZE"] == "7"


def test_user_settings_win_over_plan_defaults() -> None:
    ctx_args = ("ml.g5.12xlarge", "meta-llama/Llama-2-13b-chat-hf")
    tgi = Engine.tgi(max_batch_total_tokens=20000)
    lmi = Engine.lmi(max_rolling_batch_size=64)
    assert (
        tgi.derive_env(context(tgi, *ctx_args, max_total_tokens=4096))["MAX_BATCH_TOTAL_TOKENS"]
        == "20000"
    )
    assert (
        lmi.derive_env(context(lmi, *ctx_args, max_total_tokens=4096))[
            "OPTION_MAX_ROLLING_BATCH_SIZE"
        ]
        == "64"
    )


def test_vllm_and_sglang_map_the_typed_settings() -> None:
    vllm = Engine.vllm(max_num_seqs=64, dtype="bf16", gpu_memory_utilization=0.85)
    ctx = context(vllm, "ml.g6e.12xlarge", revision="abc123", max_total_tokens=8192)
    assert vllm.derive_env(ctx) == {
        "SM_VLLM_MODEL": "meta-llama/Meta-Llama-3-8B-Instruct",
        "SM_VLLM_REVISION": "abc123",
        "SM_VLLM_TENSOR_PARALLEL_SIZE": "4",
        "SM_VLLM_MAX_MODEL_LEN": "8192",
        "SM_VLLM_MAX_NUM_SEQS": "64",
        "SM_VLLM_GPU_MEMORY_UTILIZATION": "0.85",
        "SM_VLLM_DTYPE": "bfloat16",
    }
    sglang = Engine.sglang(tp_size=2)
    assert sglang.derive_env(context(sglang, "ml.g5.12xlarge", max_total_tokens=8192)) == {
        "SM_SGLANG_MODEL_PATH": "meta-llama/Meta-Llama-3-8B-Instruct",
        "SM_SGLANG_TP_SIZE": "2",
        "SM_SGLANG_CONTEXT_LENGTH": "8192",
        "SM_SGLANG_ENABLE_METRICS": "true",  # SGLang serves no metrics without it
    }


def test_s3_weights_point_every_engine_at_opt_ml_model() -> None:
    for engine, key in (
        (Engine.tgi(), "HF_MODEL_ID"),
        (Engine.lmi(), "HF_MODEL_ID"),
        (Engine.vllm(), "SM_VLLM_MODEL"),
        (Engine.sglang(), "SM_SGLANG_MODEL_PATH"),
    ):
        ctx = EngineContext(placement=Placement("ml.g5.2xlarge"), model_location="/opt/ml/model")
        assert engine.derive_env(ctx)[key] == "/opt/ml/model"


# -- Neuron cores ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance", "accelerators", "cores", "devices"),
    [
        ("ml.inf2.xlarge", None, "2", 1),
        ("ml.inf2.24xlarge", None, "12", 6),
        ("ml.inf2.48xlarge", None, "24", 12),
        ("ml.inf2.48xlarge", 2, "4", 2),
        ("ml.trn1.32xlarge", None, "32", 16),
    ],
)
def test_neuron_cores_default_to_every_core_the_copy_gets(
    instance: str, accelerators: int | None, cores: str, devices: int
) -> None:
    engine = Engine.tgi_neuronx()
    ctx = context(engine, instance, accelerators=accelerators, max_total_tokens=4096)
    assert engine.derive_env(ctx)["HF_NUM_CORES"] == cores
    assert engine.devices_used(ctx.instance, accelerators) == devices
    assert engine.validate(ctx, {}) == []
    assert engine.warnings(ctx, {}) == []


def test_without_a_sequence_length_the_neuron_image_picks_a_cached_shape() -> None:
    engine = Engine.tgi_neuronx()
    ctx = context(engine, "ml.inf2.xlarge", "mistralai/Mistral-7B-Instruct-v0.2")
    env = engine.derive_env(ctx)
    assert not {"MAX_BATCH_SIZE", "HF_BATCH_SIZE", "MAX_TOTAL_TOKENS", "HF_SEQUENCE_LENGTH"} & set(
        env
    )
    assert any("set max_total_tokens" in w for w in engine.warnings(ctx, {}))


def test_unusual_inferentia2_core_counts_only_warn() -> None:
    engine = Engine.tgi_neuronx(num_cores=6)
    ctx = context(engine, "ml.inf2.24xlarge", max_total_tokens=4096)
    assert engine.validate(ctx, {}) == []
    assert any("HF_NUM_CORES=6 on ml.inf2.24xlarge" in w for w in engine.warnings(ctx, {}))


# -- overrides that are allowed -------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "env"),
    [
        (Engine.tgi(), {"MAX_BATCH_PREFILL_TOKENS": "4096", "MAX_CONCURRENT_REQUESTS": "64"}),
        (Engine.tgi(), {"SM_NUM_GPUS": "2", "HF_MODEL_ID": "meta-llama/Llama-2-13b-chat-hf"}),
        (Engine.tgi(), {"MAX_TOTAL_TOKENS": "4096", "MAX_BATCH_TOTAL_TOKENS": "16384"}),
        (
            Engine.lmi(),
            {"OPTION_MAX_ROLLING_BATCH_SIZE": "16", "OPTION_GPU_MEMORY_UTILIZATION": "0.85"},
        ),
        (
            Engine.lmi(),
            {"OPTION_TENSOR_PARALLEL_DEGREE": "max", "OPTION_ENABLE_PREFIX_CACHING": "true"},
        ),
        (
            Engine.vllm(),
            {"SM_VLLM_ENABLE_PREFIX_CACHING": "true", "SM_VLLM_TENSOR_PARALLEL_SIZE": "2"},
        ),
    ],
)
def test_user_env_may_add_keys_and_override_tuning(engine: Engine, env: dict[str, str]) -> None:
    ctx = context(
        engine,
        "ml.g5.12xlarge",
        "meta-llama/Llama-2-13b-chat-hf",
        max_input_tokens=2048,
        max_total_tokens=4096,
    )
    assert engine.validate(ctx, env) == []


# Bad settings and env fail through the model that uses them: tests/test_validation_matrix.py.


# -- the rest of the contract ---------------------------------------------------------------


def test_unknown_family_skips_hardware_checks_and_defers_to_the_engine() -> None:
    new_family = InstanceType("ml.g9x.2xlarge", allow_unknown_family=True)
    engine = Engine.lmi()
    ctx = context(engine, new_family, planned=False)
    assert engine.validate(ctx, {"OPTION_TENSOR_PARALLEL_DEGREE": "16"}) == []
    assert engine.derive_env(ctx)["OPTION_TENSOR_PARALLEL_DEGREE"] == "max"
    tgi = Engine.tgi()
    assert "SM_NUM_GPUS" not in tgi.derive_env(context(tgi, new_family, planned=False))


def test_trtllm_without_an_input_limit_warns_about_the_compiled_default() -> None:
    engine = Engine.lmi(backend="trtllm")
    warnings = engine.warnings(context(engine, "ml.p4d.24xlarge", planned=False), {})
    assert any("1024-token prompts by default" in w for w in warnings)


def test_weight_dtype_follows_quantization_then_dtype() -> None:
    assert Engine.tgi(quantize="gptq", dtype="fp16").weight_dtype == "gptq"
    assert Engine.lmi(dtype="bfloat16").weight_dtype == "bf16"
    assert Engine.vllm(quantization="compressed-tensors").weight_dtype == "int4"
    assert Engine.tgi_neuronx(auto_cast_type="fp16").weight_dtype == "fp16"
    assert Engine.sglang().weight_dtype is None


def test_revision_and_trust_remote_code_use_each_engine_s_names() -> None:
    ctx = EngineContext(
        placement=Placement("ml.g5.2xlarge"), model_location="org/model", revision="v1"
    )
    tgi = Engine.tgi(trust_remote_code=True).derive_env(ctx)
    lmi = Engine.lmi(trust_remote_code=True).derive_env(ctx)
    assert (tgi["HF_MODEL_REVISION"], tgi["HF_MODEL_TRUST_REMOTE_CODE"]) == ("v1", "true")
    assert (lmi["HF_REVISION"], lmi["OPTION_TRUST_REMOTE_CODE"]) == ("v1", "true")


def _search(pattern: str, text: str) -> bool:
    import re

    if re.search(pattern, text, re.S):
        return True
    raise AssertionError(f"{pattern!r} not found in:\n{text}")


@pytest.mark.parametrize(
    "kind",
    [TgiEngine, TgiNeuronxEngine, LmiEngine, VllmEngine, SglangEngine, CustomEngine],
    ids=lambda kind: kind.__name__,
)
def test_every_engine_checks_its_image_and_remote_code_switch(kind: type) -> None:
    """Each engine declares these fields itself, so each declaration must carry its check (the
    bad values and their messages are rows of tests/test_validation_matrix.py)."""
    checks = {f.name: f.metadata.get("constructs_llm.check") for f in dataclasses.fields(kind)}
    image = checks["image"]
    assert isinstance(image, SettingCheck) and image.image
    if "trust_remote_code" in checks:
        switch = checks["trust_remote_code"]
        assert isinstance(switch, SettingCheck) and switch.boolean


def test_env_numbers_are_ascii_digits_only() -> None:
    # "²".isdigit() is True but int("²") raises; such a value is not a number, never a crash.
    engine = Engine.tgi()
    ctx = context(engine, "ml.g5.12xlarge", max_input_tokens=1024, max_total_tokens=2048)
    found = problems(engine, ctx, {"SM_NUM_GPUS": "²", "MAX_BATCH_PREFILL_TOKENS": "1²"})
    assert "env SM_NUM_GPUS='²' must be a positive integer" in found
    assert engine.validate(ctx, {"SM_NUM_GPUS": " 2 ", "MAX_BATCH_PREFILL_TOKENS": "٣"}) == []
