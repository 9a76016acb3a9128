"""AWS Large Model Inference (DJL Serving) with vLLM or TensorRT-LLM."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from constructs_llm.container_image import ContainerImage
from constructs_llm.engine import EngineContext, EnvRule, rule_problem
from constructs_llm.engines._support import (
    VLLM_QUANTIZE,
    GpuEngine,
    at_least,
    check_settings,
    dtype_name,
    planned_batch,
    present,
    put,
    vllm_full_context_problem,
)
from constructs_llm.errors import ConfigurationError
from constructs_llm.streaming.runtime.events import StreamFormat

LmiBackend = Literal["vllm", "trtllm"]

_LMI_DEFAULT_BATCH = 256  # OPTION_MAX_ROLLING_BATCH_SIZE default for vllm and trtllm
_TRT_DEFAULT_INPUT_LEN = 1024  # option.max_input_len default of the TRT-LLM image

# LMI's async vLLM handler (explicit, so images from v15 on behave alike; default from v17).
_LMI_ASYNC = {
    "OPTION_ROLLING_BATCH": "disable",
    "OPTION_ASYNC_MODE": "true",
    "OPTION_ENTRYPOINT": "djl_python.lmi_vllm.vllm_async_service",
}


@dataclass(frozen=True, kw_only=True)
class LmiEngine(GpuEngine):
    """AWS LMI (DJL Serving). Create with :meth:`Engine.lmi`."""

    stream_format = StreamFormat.LMI_JSONLINES
    _parallel_setting = "tensor_parallel_degree"

    backend: LmiBackend = "vllm"
    image: ContainerImage | None = None
    tensor_parallel_degree: int | None = None
    max_rolling_batch_size: int | None = None
    max_rolling_batch_prefill_tokens: int | None = None
    dtype: str | None = None
    quantize: str | None = None
    trust_remote_code: bool = False

    def __post_init__(self) -> None:
        if self.backend not in ("vllm", "trtllm"):
            raise ConfigurationError(_lmi_backend_message(self.backend))
        check_settings(
            "Engine.lmi",
            ints={
                "tensor_parallel_degree": self.tensor_parallel_degree,
                "max_rolling_batch_size": self.max_rolling_batch_size,
                "max_rolling_batch_prefill_tokens": self.max_rolling_batch_prefill_tokens,
            },
            choices={"quantize": (self.quantize, (*VLLM_QUANTIZE, "smoothquant"))},
            dtype=self.dtype,
        )

    @property
    def name(self) -> str:
        return f"lmi-{self.backend}"

    @property
    def _factory(self) -> str:
        return "lmi"

    @property
    def _image_family(self) -> str:
        return "lmi" if self.backend == "vllm" else "lmi-trtllm"

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = {"HF_MODEL_ID": ctx.model_location}
        put(env, "HF_REVISION", ctx.revision)
        if self.backend == "vllm":
            env.update(_LMI_ASYNC)
        else:
            env["OPTION_ROLLING_BATCH"] = "trtllm"
        env["OPTION_TENSOR_PARALLEL_DEGREE"] = str(
            self.tensor_parallel_degree or ctx.devices or "max"
        )
        put(
            env,
            "OPTION_MAX_ROLLING_BATCH_SIZE",
            self.max_rolling_batch_size or planned_batch(ctx, None, cap=_LMI_DEFAULT_BATCH),
        )
        if self.backend == "vllm":
            put(
                env,
                "OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS",
                self.max_rolling_batch_prefill_tokens,
            )
            put(env, "OPTION_MAX_MODEL_LEN", ctx.max_total_tokens)
        else:
            put(env, "OPTION_MAX_NUM_TOKENS", self.max_rolling_batch_prefill_tokens)
            put(env, "OPTION_MAX_INPUT_LEN", ctx.max_input_tokens)
            # "max_output_len" now maps to TensorRT-LLM's max_seq_len (prompt + generation).
            put(env, "OPTION_MAX_OUTPUT_LEN", ctx.max_total_tokens)
        put(
            env,
            "OPTION_DTYPE",
            dtype_name(self.dtype, {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32"}),
        )
        put(env, "OPTION_QUANTIZE", self.quantize)
        if self.trust_remote_code:
            env["OPTION_TRUST_REMOTE_CODE"] = "true"
        env["SERVING_FAIL_FAST"] = "true"  # exit on a failed load so SageMaker sees it at once
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        rules = {
            "HF_MODEL_ID": EnvRule.MODEL,
            "OPTION_MODEL_ID": EnvRule.MODEL,
            "HF_REVISION": EnvRule.REVISION,
            "OPTION_TENSOR_PARALLEL_DEGREE": EnvRule.PARALLEL,
            "OPTION_ROLLING_BATCH": EnvRule.PROTOCOL,
            "OPTION_OUTPUT_FORMATTER": EnvRule.PROTOCOL,
        }
        if self.backend == "vllm":
            rules |= dict.fromkeys(_LMI_ASYNC, EnvRule.PROTOCOL)
            rules |= dict.fromkeys(
                ("OPTION_MAX_MODEL_LEN", "OPTION_MAX_MODEL_LENGTH"), EnvRule.LIMIT
            )
        else:
            rules |= dict.fromkeys(("OPTION_MAX_INPUT_LEN", "OPTION_MAX_OUTPUT_LEN"), EnvRule.LIMIT)
        return rules

    def _aliases(self) -> Mapping[str, str]:
        return {
            "TENSOR_PARALLEL_DEGREE": "OPTION_TENSOR_PARALLEL_DEGREE",
            "MAX_BATCH_SIZE": "OPTION_MAX_ROLLING_BATCH_SIZE",
            "OPTION_MAX_NUM_SEQS": "OPTION_MAX_ROLLING_BATCH_SIZE",
            "OPTION_REVISION": "HF_REVISION",
        }

    def _settings_problems(self, ctx: EngineContext) -> list[str]:
        full_context = vllm_full_context_problem(ctx) if self.backend == "vllm" else None
        return super()._settings_problems(ctx) + present([full_context])

    def _rule_problem(
        self, kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
    ) -> str | None:
        if key == "OPTION_ROLLING_BATCH" and value.strip().lower() in _REMOVED_LMI_BACKENDS:
            return f"env OPTION_ROLLING_BATCH={value!r}: " + _lmi_backend_message(value)
        return rule_problem(kind, key, value, derived, ctx)

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[str]:
        if self.backend != "vllm":
            return []
        return present(
            [
                at_least(
                    env,
                    "OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS",
                    "OPTION_MAX_ROLLING_BATCH_SIZE",
                    "max_rolling_batch_prefill_tokens",
                    what="vLLM needs max_num_batched_tokens >= max_num_seqs",
                )
            ]
        )

    def warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        if self.backend == "trtllm" and ctx.max_input_tokens is None:
            return [
                "LMI TensorRT-LLM compiles the engine for "
                f"{_TRT_DEFAULT_INPUT_LEN}-token prompts by default and rejects longer ones; "
                "set max_input_tokens (and max_total_tokens) on the model"
            ]
        return []


_REMOVED_LMI_BACKENDS = ("lmi-dist", "scheduler")  # removed in LMI v15 (0.33.0)


def _lmi_backend_message(backend: str) -> str:
    if backend.strip().lower() in _REMOVED_LMI_BACKENDS:
        return (
            f"LMI backend {backend!r} was removed in LMI v15 (0.33.0); current LMI images ship "
            "vLLM (the default) and, in the separate -tensorrtllm images, TensorRT-LLM: use "
            "Engine.lmi(backend='vllm')"
        )
    return (
        f"LMI backend must be 'vllm' or 'trtllm', got {backend!r}; use Engine.lmi(backend='vllm')"
    )
