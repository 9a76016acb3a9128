"""Engines: the env each seed scenario gets, formats, images, and every bad input named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from constructs_llm.container_image import dlc_family
from constructs_llm.engine import Engine, EngineContext
from constructs_llm.errors import ConfigurationError
from constructs_llm.instance_type import InstanceType
from constructs_llm.sizing import ModelArchitecture, plan_memory
from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat

SECRETISH = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3"


def context(
    engine: Engine,
    instance: str,
    model_id: str = "meta-llama/Meta-Llama-3-8B-Instruct",
    *,
    planned: bool = True,
    **kwargs: Any,
) -> EngineContext:
    """The context LlmModel builds: the memory plan is made for the engine's devices."""
    inst = InstanceType(instance)
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
    return EngineContext(instance=inst, model_location=model_id, plan=plan, **kwargs)


def problems(engine: Engine, ctx: EngineContext, env: Mapping[str, Any] | None = None) -> str:
    return "\n".join(engine.validate(ctx, env or {}))


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
        "OPTION_MAX_ROLLING_BATCH_SIZE": "8",  # the plan fits 8 full 4096-token sequences
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
        "OPTION_MAX_ROLLING_BATCH_SIZE": "193",
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
        "MAX_BATCH_TOTAL_TOKENS": "61440",  # 90% of the planned 68,437 KV tokens, in 256s
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
        "MAX_BATCH_TOTAL_TOKENS": "30464",
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
    from constructs_llm.container_image import ContainerImage

    image = ContainerImage.dlc(
        "huggingface-pytorch-tgi-inference", "2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04"
    )
    assert Engine.tgi(image=image).image_for(InstanceType("ml.g5.2xlarge")) is image


def test_custom_engine_uses_the_stated_contract() -> None:
    from constructs_llm.container_image import ContainerImage

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


# -- plan-fed defaults ----------------------------------------------------------------------


def test_batch_defaults_come_from_the_plan_only_with_a_token_limit() -> None:
    tgi, lmi = Engine.tgi(), Engine.lmi()
    no_limit = context(tgi, "ml.g5.12xlarge", "meta-llama/Llama-2-13b-chat-hf")
    assert "MAX_BATCH_TOTAL_TOKENS" not in tgi.derive_env(no_limit)
    assert "OPTION_MAX_ROLLING_BATCH_SIZE" not in lmi.derive_env(
        context(lmi, "ml.g5.12xlarge", "meta-llama/Llama-2-13b-chat-hf")
    )
    big = context(lmi, "ml.g5.48xlarge", "microsoft/Phi-3-mini-4k-instruct", max_total_tokens=512)
    assert lmi.derive_env(big)["OPTION_MAX_ROLLING_BATCH_SIZE"] == "256"  # LMI's default caps it


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
    }


def test_s3_weights_point_every_engine_at_opt_ml_model() -> None:
    for engine, key in (
        (Engine.tgi(), "HF_MODEL_ID"),
        (Engine.lmi(), "HF_MODEL_ID"),
        (Engine.vllm(), "SM_VLLM_MODEL"),
        (Engine.sglang(), "SM_SGLANG_MODEL_PATH"),
    ):
        ctx = EngineContext(instance=InstanceType("ml.g5.2xlarge"), model_location="/opt/ml/model")
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


# -- everything that must fail, naming the value and the fix ---------------------------------

_G5_12 = "ml.g5.12xlarge"


@pytest.mark.parametrize(
    ("engine", "instance", "kwargs", "env", "message"),
    [
        # wrong accelerator, both ways
        (
            Engine.tgi(),
            "ml.inf2.xlarge",
            {},
            {},
            r"Engine\.tgi\(\) serves NVIDIA GPUs but ml\.inf2\.xlarge has AWS Neuron.*Engine\.tgi_neuronx\(\)",
        ),
        (
            Engine.lmi(),
            "ml.trn1.2xlarge",
            {},
            {},
            r"Engine\.lmi\(\) serves NVIDIA.*ml\.trn1\.2xlarge.*Engine\.tgi_neuronx\(\)",
        ),
        (
            Engine.tgi_neuronx(),
            "ml.g5.2xlarge",
            {},
            {},
            r"Engine\.tgi_neuronx\(\) serves AWS Neuron.*ml\.g5\.2xlarge has NVIDIA GPUs.*Engine\.tgi\(\)",
        ),
        (
            Engine.vllm(),
            "ml.m5.xlarge",
            {},
            {},
            r"ml\.m5\.xlarge has no accelerator; choose a GPU instance",
        ),
        (Engine.tgi_neuronx(), "ml.inf1.xlarge", {}, {}, r"ml\.inf1\.xlarge is Inferentia1"),
        # tensor parallelism beyond the hardware
        (
            Engine.tgi(num_shard=8),
            _G5_12,
            {},
            {},
            r"num_shard\)=8 exceeds the 4 GPU\(s\) of ml\.g5\.12xlarge",
        ),
        (
            Engine.lmi(tensor_parallel_degree=8),
            _G5_12,
            {},
            {},
            r"tensor_parallel_degree\)=8 exceeds the 4 GPU",
        ),
        (
            Engine.vllm(tensor_parallel_size=2),
            "ml.g5.2xlarge",
            {},
            {},
            r"tensor_parallel_size\)=2 exceeds the 1 GPU",
        ),
        (Engine.sglang(tp_size=8), _G5_12, {}, {}, r"tp_size\)=8 exceeds"),
        (
            Engine.tgi(num_shard=2),
            _G5_12,
            {"accelerators": 1},
            {},
            r"num_shard\)=2 exceeds the 1 GPU\(s\) this copy gets on ml\.g5\.12xlarge",
        ),
        (
            Engine.tgi(),
            _G5_12,
            {},
            {"SM_NUM_GPUS": "8"},
            r"env SM_NUM_GPUS=8 exceeds the 4 GPUs of ml\.g5\.12xlarge",
        ),
        (
            Engine.tgi(),
            _G5_12,
            {},
            {"SM_NUM_GPUS": "all"},
            r"env SM_NUM_GPUS='all' must be a positive integer",
        ),
        (
            Engine.lmi(),
            _G5_12,
            {},
            {"TENSOR_PARALLEL_DEGREE": "2"},
            r"TENSOR_PARALLEL_DEGREE='2' is read by the container as OPTION_TENSOR_PARALLEL_DEGREE.*'4'",
        ),
        # Neuron cores
        (
            Engine.tgi_neuronx(num_cores=4),
            "ml.inf2.xlarge",
            {},
            {},
            r"num_cores=4\) exceeds the 2 NeuronCores of ml\.inf2\.xlarge",
        ),
        (
            Engine.tgi_neuronx(num_cores=24),
            "ml.trn1.32xlarge",
            {},
            {},
            r"num_cores=24\) is not a topology.*1, 2, 8, 16 or a multiple of 32",
        ),
        (
            Engine.tgi_neuronx(),
            "ml.inf2.48xlarge",
            {},
            {"HF_NUM_CORES": "32"},
            r"env HF_NUM_CORES=32 exceeds the 24 NeuronCores",
        ),
        # token limits
        (
            Engine.tgi(),
            _G5_12,
            {"max_input_tokens": 4096, "max_total_tokens": 4096},
            {},
            r"max_input_tokens \(4096\) must be less than max_total_tokens \(4096\)",
        ),
        (
            Engine.tgi(max_batch_prefill_tokens=1024),
            _G5_12,
            {"max_input_tokens": 2048, "max_total_tokens": 4096},
            {},
            r"MAX_BATCH_PREFILL_TOKENS=1024 is below MAX_INPUT_TOKENS=2048.*max_batch_prefill_tokens to at least 2048",
        ),
        (
            Engine.tgi(max_batch_total_tokens=2048),
            _G5_12,
            {"max_total_tokens": 4096},
            {},
            r"MAX_BATCH_TOTAL_TOKENS=2048 is below MAX_TOTAL_TOKENS=4096",
        ),
        (
            Engine.tgi(),
            _G5_12,
            {"max_input_tokens": 2048},
            {"MAX_INPUT_LENGTH": "1024"},
            r"MAX_INPUT_LENGTH='1024' is TGI's legacy name",
        ),
        (
            Engine.tgi(),
            _G5_12,
            {"max_total_tokens": 4096},
            {"MAX_TOTAL_TOKENS": "8192"},
            r"MAX_TOTAL_TOKENS='8192' contradicts max_total_tokens=4096.*max_total_tokens=8192",
        ),
        (
            Engine.lmi(),
            _G5_12,
            {},
            {"OPTION_MAX_MODEL_LEN": "8192"},
            r"OPTION_MAX_MODEL_LEN='8192' bypasses max_total_tokens",
        ),
        (
            Engine.lmi(max_rolling_batch_size=64, max_rolling_batch_prefill_tokens=32),
            _G5_12,
            {},
            {},
            r"OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS=32 is below OPTION_MAX_ROLLING_BATCH_SIZE=64",
        ),
        (
            Engine.vllm(),
            "ml.g5.2xlarge",
            {"model_id": "meta-llama/Llama-3.1-8B-Instruct"},
            {},
            r"full 131,072-token context.*holds about 34,073 tokens.*max_total_tokens <= 34,073",
        ),
        (
            Engine.lmi(),
            "ml.g5.2xlarge",
            {"model_id": "meta-llama/Llama-3.1-8B-Instruct"},
            {},
            r"vLLM sizes for the full 131,072-token context",
        ),
        # model source, protocol, removed backends
        (
            Engine.tgi(),
            _G5_12,
            {},
            {"HF_MODEL_ID": "other/model"},
            r"HF_MODEL_ID='other/model' contradicts the model source.*hugging_face\('other/model'\)",
        ),
        (
            Engine.tgi(),
            _G5_12,
            {"revision": "main"},
            {"HF_MODEL_REVISION": "dev"},
            r"HF_MODEL_REVISION='dev' contradicts the source revision 'main'",
        ),
        (
            Engine.lmi(),
            _G5_12,
            {},
            {"OPTION_ROLLING_BATCH": "lmi-dist"},
            r"'lmi-dist' was removed in LMI v15.*backend='vllm'",
        ),
        (
            Engine.lmi(),
            _G5_12,
            {},
            {"OPTION_ENTRYPOINT": "my.handler"},
            r"OPTION_ENTRYPOINT='my.handler' changes the request/stream contract.*Engine\.custom",
        ),
        (
            Engine.lmi(),
            _G5_12,
            {},
            {"OPTION_OUTPUT_FORMATTER": "sse"},
            r"OPTION_OUTPUT_FORMATTER='sse' changes",
        ),
        # secrets and timeouts in env
        (
            Engine.tgi(),
            _G5_12,
            {},
            {"HF_TOKEN": SECRETISH},
            r"env HF_TOKEN holds 'hf_a1…' that looks like a Hugging Face token.*token=secret",
        ),
        (
            Engine.vllm(),
            _G5_12,
            {},
            {"EXTRA": f"--token {SECRETISH}"},
            r"env EXTRA holds a value that looks like a Hugging Face token",
        ),
        (
            Engine.tgi(),
            _G5_12,
            {},
            {"CONTAINER_STARTUP_HEALTH_CHECK_TIMEOUT": "1800"},
            r"CONTAINER_STARTUP_HEALTH_CHECK_TIMEOUT looks like a SageMaker startup timeout.*health_check_timeout=Duration",
        ),
        (
            Engine.lmi(),
            _G5_12,
            {},
            {"ModelDataDownloadTimeoutInSeconds": "1800"},
            r"ModelDataDownloadTimeoutInSeconds looks like.*download_timeout",
        ),
        (
            Engine.tgi(),
            _G5_12,
            {},
            {"MAX_CONCURRENT_REQUESTS": 64},
            r"env\['MAX_CONCURRENT_REQUESTS'\] must map a string to a string, got int 64; write it as '64'",
        ),
    ],
)
def test_bad_input_is_reported_with_the_value_and_the_fix(
    engine: Engine, instance: str, kwargs: dict[str, Any], env: dict[str, Any], message: str
) -> None:
    ctx = context(engine, instance, **kwargs)
    assert engine.validate(ctx, env), "expected a problem"
    assert _search(message, problems(engine, ctx, env))


def test_a_secret_is_never_echoed_in_full() -> None:
    engine = Engine.tgi()
    found = problems(engine, context(engine, _G5_12), {"HF_TOKEN": SECRETISH})
    assert SECRETISH not in found


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            lambda: Engine.lmi(backend="lmi-dist"),
            r"'lmi-dist' was removed in LMI v15 \(0\.33\.0\).*backend='vllm'",
        ),
        (lambda: Engine.lmi(backend="scheduler"), r"'scheduler' was removed in LMI v15"),
        (lambda: Engine.lmi(backend="tensorrt"), r"'vllm' or 'trtllm', got 'tensorrt'"),
        (
            lambda: Engine.tgi(num_shard=0),
            r"Engine\.tgi\(\): num_shard must be an integer >= 1, got 0",
        ),
        (lambda: Engine.tgi(quantize="int3"), r"quantize must be one of .*got 'int3'"),
        (lambda: Engine.lmi(dtype="fp64"), r"dtype must be fp16, bf16 or fp32, got 'fp64'"),
        (
            lambda: Engine.vllm(gpu_memory_utilization=1.5),
            r"gpu_memory_utilization must be in \(0, 1\], got 1\.5",
        ),
        (
            lambda: Engine.tgi_neuronx(auto_cast_type="fp8"),
            r"auto_cast_type must be one of bf16, fp16, got 'fp8'",
        ),
        (lambda: Engine.tgi_neuronx(batch_size=-1), r"batch_size must be an integer >= 1, got -1"),
        (
            lambda: Engine.custom(image=None, stream_format="sse"),  # type: ignore[arg-type]
            r"(?s)image is required.*stream_format must be one of tgi, lmi_jsonlines, openai, auto, got 'sse'",
        ),
    ],
)
def test_bad_engine_settings_fail_where_they_are_written(factory: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        factory()


# -- the rest of the contract ---------------------------------------------------------------


def test_unknown_family_skips_hardware_checks_and_defers_to_the_engine() -> None:
    engine = Engine.lmi()
    ctx = context(engine, "ml.g9x.2xlarge", planned=False)
    assert engine.validate(ctx, {"OPTION_TENSOR_PARALLEL_DEGREE": "16"}) == []
    assert engine.derive_env(ctx)["OPTION_TENSOR_PARALLEL_DEGREE"] == "max"
    tgi = Engine.tgi()
    assert "SM_NUM_GPUS" not in tgi.derive_env(context(tgi, "ml.g9x.2xlarge", planned=False))


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
        instance=InstanceType("ml.g5.2xlarge"), model_location="org/model", revision="v1"
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
