"""The AWS vLLM and SGLang SageMaker DLCs (``SM_VLLM_*`` / ``SM_SGLANG_*`` env as flags)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from constructs_llm.container_image import ContainerImage
from constructs_llm.engine import Accelerator, Engine, EngineContext, EnvRule
from constructs_llm.engines._support import (
    TORCH_DTYPES,
    VLLM_QUANTIZE,
    at_least,
    check_settings,
    default_image,
    dtype_name,
    planned_weight_dtype,
    present,
    put,
    vllm_full_context_problem,
)
from constructs_llm.instance_type import InstanceType
from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat


@dataclass(frozen=True, kw_only=True)
class VllmEngine(Engine):
    """The AWS vLLM SageMaker DLC. Create with :meth:`Engine.vllm`."""

    image: ContainerImage | None = None
    tensor_parallel_size: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    dtype: str | None = None
    quantization: str | None = None
    trust_remote_code: bool = False

    def __post_init__(self) -> None:
        check_settings(
            "Engine.vllm",
            ints={
                "tensor_parallel_size": self.tensor_parallel_size,
                "max_num_seqs": self.max_num_seqs,
                "max_num_batched_tokens": self.max_num_batched_tokens,
            },
            fractions={"gpu_memory_utilization": self.gpu_memory_utilization},
            choices={"quantization": (self.quantization, VLLM_QUANTIZE)},
            dtype=self.dtype,
        )

    @property
    def name(self) -> str:
        return "vllm"

    @property
    def accelerator(self) -> Accelerator | None:
        return "nvidia"

    @property
    def stream_format(self) -> StreamFormat:
        return StreamFormat.OPENAI

    @property
    def request_format(self) -> RequestFormat:
        return RequestFormat.MESSAGES

    @property
    def weight_dtype(self) -> str | None:
        return planned_weight_dtype(self.quantization, self.dtype)

    def image_for(self, instance: InstanceType) -> ContainerImage:
        return self.image or default_image("vllm")

    def devices_used(self, instance: InstanceType, accelerators: int | None = None) -> int:
        return self.tensor_parallel_size or accelerators or max(instance.accelerator_count, 1)

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = {"SM_VLLM_MODEL": ctx.model_location}
        put(env, "SM_VLLM_REVISION", ctx.revision)
        put(env, "SM_VLLM_TENSOR_PARALLEL_SIZE", self.tensor_parallel_size or ctx.devices or None)
        put(env, "SM_VLLM_MAX_MODEL_LEN", ctx.max_total_tokens)
        put(env, "SM_VLLM_MAX_NUM_SEQS", self.max_num_seqs)
        put(env, "SM_VLLM_MAX_NUM_BATCHED_TOKENS", self.max_num_batched_tokens)
        put(env, "SM_VLLM_GPU_MEMORY_UTILIZATION", self.gpu_memory_utilization)
        put(env, "SM_VLLM_DTYPE", dtype_name(self.dtype, TORCH_DTYPES))
        put(env, "SM_VLLM_QUANTIZATION", self.quantization)
        if self.trust_remote_code:
            env["SM_VLLM_TRUST_REMOTE_CODE"] = "true"
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {
            "SM_VLLM_MODEL": EnvRule.MODEL,
            "HF_MODEL_ID": EnvRule.MODEL,
            "SM_VLLM_REVISION": EnvRule.REVISION,
            "SM_VLLM_TENSOR_PARALLEL_SIZE": EnvRule.PARALLEL,
            "SM_VLLM_MAX_MODEL_LEN": EnvRule.LIMIT,
        }

    def _settings_problems(self, ctx: EngineContext) -> list[str]:
        return present(
            [
                self._parallel_problem(
                    "Engine.vllm(tensor_parallel_size)", self.tensor_parallel_size, ctx
                ),
                vllm_full_context_problem(ctx),
            ]
        )

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[str]:
        return present(
            [
                at_least(
                    env,
                    "SM_VLLM_MAX_NUM_BATCHED_TOKENS",
                    "SM_VLLM_MAX_NUM_SEQS",
                    "max_num_batched_tokens",
                    what="vLLM needs max_num_batched_tokens >= max_num_seqs",
                )
            ]
        )


@dataclass(frozen=True, kw_only=True)
class SglangEngine(Engine):
    """The AWS SGLang SageMaker DLC. Create with :meth:`Engine.sglang`."""

    image: ContainerImage | None = None
    tp_size: int | None = None
    max_running_requests: int | None = None
    mem_fraction_static: float | None = None
    dtype: str | None = None
    quantization: str | None = None
    trust_remote_code: bool = False

    def __post_init__(self) -> None:
        check_settings(
            "Engine.sglang",
            ints={"tp_size": self.tp_size, "max_running_requests": self.max_running_requests},
            fractions={"mem_fraction_static": self.mem_fraction_static},
            choices={"quantization": (self.quantization, VLLM_QUANTIZE)},
            dtype=self.dtype,
        )

    @property
    def name(self) -> str:
        return "sglang"

    @property
    def accelerator(self) -> Accelerator | None:
        return "nvidia"

    @property
    def stream_format(self) -> StreamFormat:
        return StreamFormat.OPENAI

    @property
    def request_format(self) -> RequestFormat:
        return RequestFormat.MESSAGES  # SGLang's /invocations takes chat requests only

    @property
    def weight_dtype(self) -> str | None:
        return planned_weight_dtype(self.quantization, self.dtype)

    def image_for(self, instance: InstanceType) -> ContainerImage:
        return self.image or default_image("sglang")

    def devices_used(self, instance: InstanceType, accelerators: int | None = None) -> int:
        return self.tp_size or accelerators or max(instance.accelerator_count, 1)

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = {"SM_SGLANG_MODEL_PATH": ctx.model_location}
        put(env, "SM_SGLANG_REVISION", ctx.revision)
        put(env, "SM_SGLANG_TP_SIZE", self.tp_size or ctx.devices or None)
        put(env, "SM_SGLANG_CONTEXT_LENGTH", ctx.max_total_tokens)
        put(env, "SM_SGLANG_MAX_RUNNING_REQUESTS", self.max_running_requests)
        put(env, "SM_SGLANG_MEM_FRACTION_STATIC", self.mem_fraction_static)
        put(env, "SM_SGLANG_DTYPE", dtype_name(self.dtype, TORCH_DTYPES))
        put(env, "SM_SGLANG_QUANTIZATION", self.quantization)
        if self.trust_remote_code:
            env["SM_SGLANG_TRUST_REMOTE_CODE"] = "true"
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {
            "SM_SGLANG_MODEL_PATH": EnvRule.MODEL,
            "SM_SGLANG_REVISION": EnvRule.REVISION,
            "SM_SGLANG_TP_SIZE": EnvRule.PARALLEL,
            "SM_SGLANG_CONTEXT_LENGTH": EnvRule.LIMIT,
        }

    def _aliases(self) -> Mapping[str, str]:
        return {"SM_SGLANG_TENSOR_PARALLEL_SIZE": "SM_SGLANG_TP_SIZE"}  # --tp-size alias

    def _settings_problems(self, ctx: EngineContext) -> list[str]:
        return present([self._parallel_problem("Engine.sglang(tp_size)", self.tp_size, ctx)])
