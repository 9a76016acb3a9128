"""The AWS vLLM and SGLang SageMaker DLCs (``SM_VLLM_*`` / ``SM_SGLANG_*`` env as flags)."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from constructs_llm.container_image import ContainerImage
from constructs_llm.engines._support import (
    TORCH_DTYPES,
    VLLM_QUANTIZE,
    GpuEngine,
    at_least,
    dtype_name,
    present,
    vllm_full_context_problem,
)
from constructs_llm.engines.context import EngineContext, EnvRule
from constructs_llm.engines.settings import setting

__all__ = ["SglangEngine", "VllmEngine"]


class _FlagEngine(GpuEngine):
    """A DLC whose entrypoint turns ``<prefix><FLAG>`` env into ``--<flag>``. The factory
    kwargs carry the flags' names, so the tensor-parallel flag is its setting's name.
    """

    _prefix: ClassVar[str]  # "SM_VLLM_"
    _model_flag: ClassVar[str]  # takes the Hub id or /opt/ml/model
    _length_flag: ClassVar[str]  # longest prompt + generation
    _quantize_setting = "quantization"
    quantization: str | None
    trust_remote_code: bool

    @abc.abstractmethod
    def _tuning_flags(self) -> dict[str, object]:
        """The engine's own flags (batching, memory), between the length and the dtype."""

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        flags = {
            self._model_flag: ctx.model_location,
            "REVISION": ctx.revision,
            self._parallel_setting.upper(): self._tensor_parallel or ctx.devices or None,
            self._length_flag: ctx.max_total_tokens,
            **self._tuning_flags(),
            "DTYPE": dtype_name(self.dtype, TORCH_DTYPES),
            "QUANTIZATION": self.quantization,
            "TRUST_REMOTE_CODE": "true" if self.trust_remote_code else None,
        }
        return {self._prefix + flag: str(v) for flag, v in flags.items() if v is not None}

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {
            self._prefix + self._model_flag: EnvRule.MODEL,
            self._prefix + "REVISION": EnvRule.REVISION,
            self._prefix + self._parallel_setting.upper(): EnvRule.PARALLEL,
            self._prefix + self._length_flag: EnvRule.LIMIT,
        }


@dataclass(frozen=True, kw_only=True)
class VllmEngine(_FlagEngine):
    """The AWS vLLM SageMaker DLC (``SM_VLLM_<FLAG>`` env becomes ``--<flag>``).

    ``/invocations`` is vLLM's SageMaker router (chat requests, OpenAI SSE stream).
    The CUDA 13 images need a recent host AMI (``InferenceAmiVersion``).

    :param image: @default the newest vLLM DLC the library knows
    :param tensor_parallel_size: @default every GPU the copy gets
    :param max_num_seqs: @default vLLM's
    :param max_num_batched_tokens: @default vLLM's
    :param gpu_memory_utilization: @default vLLM's 0.9
    :param dtype: fp16, bf16 or fp32. @default the checkpoint's
    :param quantization: @default detected from the checkpoint
    :param trust_remote_code: @default False
    """

    name = "vllm"
    factory_name = "vllm"
    _prefix, _model_flag, _length_flag = "SM_VLLM_", "MODEL", "MAX_MODEL_LEN"
    _parallel_setting = "tensor_parallel_size"

    image: ContainerImage | None = None
    tensor_parallel_size: int | None = setting(positive=True)
    max_num_seqs: int | None = setting(positive=True)
    max_num_batched_tokens: int | None = setting(positive=True)
    gpu_memory_utilization: float | None = setting(fraction=True)
    dtype: str | None = setting(dtype=True)
    quantization: str | None = setting(choices=VLLM_QUANTIZE)
    trust_remote_code: bool = False

    def _tuning_flags(self) -> dict[str, object]:
        return {
            "MAX_NUM_SEQS": self.max_num_seqs,
            "MAX_NUM_BATCHED_TOKENS": self.max_num_batched_tokens,
            "GPU_MEMORY_UTILIZATION": self.gpu_memory_utilization,
        }

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {**super()._key_rules(), "HF_MODEL_ID": EnvRule.MODEL}

    def _settings_problems(self, ctx: EngineContext) -> list[str]:
        return super()._settings_problems(ctx) + present([vllm_full_context_problem(ctx)])

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
class SglangEngine(_FlagEngine):
    """The AWS SGLang SageMaker DLC (``SM_SGLANG_<FLAG>`` env becomes ``--<flag>``).

    SGLang's ``/invocations`` accepts only chat requests (``messages``) and streams OpenAI
    SSE chunks.

    :param image: @default the newest SGLang DLC the library knows
    :param tp_size: @default every GPU the copy gets
    :param max_running_requests: @default SGLang's
    :param mem_fraction_static: @default SGLang's
    :param dtype: fp16, bf16 or fp32. @default the checkpoint's
    :param quantization: @default detected from the checkpoint
    :param trust_remote_code: @default False
    """

    name = "sglang"
    factory_name = "sglang"
    _prefix, _model_flag, _length_flag = "SM_SGLANG_", "MODEL_PATH", "CONTEXT_LENGTH"
    _parallel_setting = "tp_size"

    image: ContainerImage | None = None
    tp_size: int | None = setting(positive=True)
    max_running_requests: int | None = setting(positive=True)
    mem_fraction_static: float | None = setting(fraction=True)
    dtype: str | None = setting(dtype=True)
    quantization: str | None = setting(choices=VLLM_QUANTIZE)
    trust_remote_code: bool = False

    def _tuning_flags(self) -> dict[str, object]:
        return {
            "MAX_RUNNING_REQUESTS": self.max_running_requests,
            "MEM_FRACTION_STATIC": self.mem_fraction_static,
        }

    def _aliases(self) -> Mapping[str, str]:
        return {"SM_SGLANG_TENSOR_PARALLEL_SIZE": "SM_SGLANG_TP_SIZE"}  # --tp-size alias
