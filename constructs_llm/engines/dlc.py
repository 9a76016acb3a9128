"""The AWS vLLM and SGLang SageMaker DLCs (``SM_VLLM_*`` / ``SM_SGLANG_*`` env as flags)."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from constructs_llm.engines._support import (
    TORCH_DTYPES,
    VLLM_FP8_FROM,
    VLLM_QUANTIZE,
    GpuEngine,
    at_least,
    dtype_name,
    present,
    vllm_full_context_problem,
)
from constructs_llm.engines.context import EngineContext, EnvRule
from constructs_llm.engines.settings import ALL_DTYPES, setting
from constructs_llm.engines.tools import (
    ParserEngine,
    ToolCalling,
    parser_setting_problems,
    parser_tool_calling,
)
from constructs_llm.model.container_image import ContainerImage

__all__ = ["SglangEngine", "VllmEngine"]


class _FlagEngine(GpuEngine):
    """A DLC whose entrypoint turns ``<prefix><FLAG>`` env into ``--<flag>``. The factory
    kwargs carry the flags' names, so the tensor-parallel flag is its setting's name.
    """

    _prefix: ClassVar[str]  # "SM_VLLM_"
    _model_flag: ClassVar[str]  # takes the Hub id or /opt/ml/model
    _length_flag: ClassVar[str]  # longest prompt + generation
    _parsers: ClassVar[ParserEngine]  # whose tool-call parser names apply
    _quantize_setting = "quantization"
    quantization: str | None
    trust_remote_code: bool
    tool_call_parser: str | None

    @abc.abstractmethod
    def _tuning_flags(self) -> dict[str, object]:
        """The engine's own flags (batching, memory), between the length and the dtype."""

    @abc.abstractmethod
    def _tool_flags(self, parser: str) -> dict[str, object]:
        """The flags that turn tool-call parsing on with ``parser``."""

    def _more_problems(self) -> list[str]:
        return parser_setting_problems(self._parsers, self.tool_calls, self.tool_call_parser)

    def tool_calling(
        self, *, family: str | None = None, user_env: Mapping[str, str] | None = None
    ) -> ToolCalling:
        return parser_tool_calling(
            self._parsers,
            factory=self.factory_name,
            tool_calls=self.tool_calls,
            parser=self.tool_call_parser,
            family=family,
        )

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
        tools = self.tool_calling(family=ctx.model_family)
        if tools.served and tools.parser:
            flags.update(self._tool_flags(tools.parser))
        return {self._prefix + flag: str(v) for flag, v in flags.items() if v is not None}

    def _key_rules(self) -> Mapping[str, EnvRule]:
        tool_keys = ("ENABLE_AUTO_TOOL_CHOICE", "TOOL_CALL_PARSER")
        return {
            self._prefix + self._model_flag: EnvRule.MODEL,
            self._prefix + "REVISION": EnvRule.REVISION,
            self._prefix + self._parallel_setting.upper(): EnvRule.PARALLEL,
            self._prefix + self._length_flag: EnvRule.LIMIT,
            **{self._prefix + key: EnvRule.TOOLS for key in tool_keys},
        }


@dataclass(frozen=True, kw_only=True)
class VllmEngine(_FlagEngine):
    """The AWS vLLM SageMaker DLC (``SM_VLLM_<FLAG>`` env becomes ``--<flag>``).

    ``/invocations`` is vLLM's SageMaker router (chat requests, OpenAI SSE stream).
    The CUDA 13 images need a recent host AMI (``InferenceAmiVersion``).

    :param image: @default the newest vLLM DLC the library knows
    :param tensor_parallel_size: @default every GPU the copy gets
    :param max_num_seqs: @default vLLM's: 256, or 1024 on GPUs with 70 GiB or more that are
        not A100s (``EngineArgs.get_batch_defaults``, ``vllm/engine/arg_utils.py``); vLLM
        admits requests below it while free KV-cache blocks hold them, so it is left to vLLM
        rather than sized for full-length sequences
    :param max_num_batched_tokens: @default vLLM's (2048 per step, 8192 on the larger GPUs)
    :param gpu_memory_utilization: @default vLLM's 0.9
    :param dtype: fp16, bf16 or fp32. @default the checkpoint's
    :param quantization: @default detected from the checkpoint
    :param trust_remote_code: @default False
    :param tool_calls: OpenAI tool calls, parsed by vLLM (``SM_VLLM_ENABLE_AUTO_TOOL_CHOICE``
        and ``SM_VLLM_TOOL_CALL_PARSER``). True fails at synth when no parser is known for the
        model and none is given; False turns it off (the invoker then answers a request with
        tools with a 400). @default None: on when the packaged table knows the model
        family's parser (Llama 3.1-3.3, Mistral 7B v0.3, Mixtral 8x22B, Qwen 2.5 and 3), off
        otherwise
    :param tool_call_parser: a vLLM parser name (``hermes``, ``llama3_json``, ...) for a model
        the table does not know or to override it; turns tool calling on. @default the model
        family's
    """

    name = "vllm"
    factory_name = "vllm"
    _prefix, _model_flag, _length_flag = "SM_VLLM_", "MODEL", "MAX_MODEL_LEN"
    _parallel_setting = "tensor_parallel_size"
    _parsers = "vllm"
    _dtype_keys, _quantization_keys = ("SM_VLLM_DTYPE",), ("SM_VLLM_QUANTIZATION",)

    image: ContainerImage | None = setting(image=True)
    tensor_parallel_size: int | None = setting(positive=True)
    max_num_seqs: int | None = setting(positive=True)
    max_num_batched_tokens: int | None = setting(positive=True)
    gpu_memory_utilization: float | None = setting(fraction=True)
    dtype: str | None = setting(dtype=ALL_DTYPES)
    quantization: str | None = setting(choices=VLLM_QUANTIZE)
    trust_remote_code: bool = setting(False, boolean=True)
    tool_calls: bool | None = setting(boolean=True)
    tool_call_parser: str | None = None

    def _tuning_flags(self) -> dict[str, object]:
        return {
            "MAX_NUM_SEQS": self.max_num_seqs,
            "MAX_NUM_BATCHED_TOKENS": self.max_num_batched_tokens,
            "GPU_MEMORY_UTILIZATION": self.gpu_memory_utilization,
        }

    def _tool_flags(self, parser: str) -> dict[str, object]:
        # An empty value is a bare --enable-auto-tool-choice in every version of the DLC's
        # entrypoint: before aws/deep-learning-containers@1c1aacc0 (vLLM 0.17.1) a value was
        # always passed on after the flag ("true" would break argparse), since then "true" and
        # "" both give the bare flag (scripts/docker/vllm/sagemaker_args.py, build_args).
        return {"ENABLE_AUTO_TOOL_CHOICE": "", "TOOL_CALL_PARSER": parser}

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {**super()._key_rules(), "HF_MODEL_ID": EnvRule.MODEL}

    def _settings_problems(self, ctx: EngineContext) -> list[str]:
        return super()._settings_problems(ctx) + present([vllm_full_context_problem(ctx)])

    def _fp8_from(self) -> tuple[int, int]:
        return VLLM_FP8_FROM

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
    :param max_running_requests: @default SGLang's: half the tokens its KV pool holds,
        capped by its request pool (``max_total_num_tokens // 2``,
        ``python/sglang/srt/managers/tp_worker.py`` in sgl-project/sglang); its scheduler
        admits by free KV tokens below that
    :param mem_fraction_static: @default SGLang's
    :param dtype: fp16, bf16 or fp32. @default the checkpoint's
    :param quantization: @default detected from the checkpoint
    :param trust_remote_code: @default False
    :param tool_calls: OpenAI tool calls, parsed by SGLang (``SM_SGLANG_TOOL_CALL_PARSER``;
        SGLang has no auto-choice flag). True fails at synth when no parser is known for the
        model and none is given; False turns it off. @default None: on when the packaged table
        knows the model family's parser, off otherwise
    :param tool_call_parser: an SGLang parser name (``qwen25``, ``llama3``, ``mistral``, ...)
        for a model the table does not know or to override it. @default the model family's
    """

    name = "sglang"
    factory_name = "sglang"
    _prefix, _model_flag, _length_flag = "SM_SGLANG_", "MODEL_PATH", "CONTEXT_LENGTH"
    _parallel_setting = "tp_size"
    _parsers = "sglang"
    _dtype_keys, _quantization_keys = ("SM_SGLANG_DTYPE",), ("SM_SGLANG_QUANTIZATION",)

    image: ContainerImage | None = setting(image=True)
    tp_size: int | None = setting(positive=True)
    max_running_requests: int | None = setting(positive=True)
    mem_fraction_static: float | None = setting(fraction=True)
    dtype: str | None = setting(dtype=ALL_DTYPES)
    quantization: str | None = setting(choices=VLLM_QUANTIZE)
    trust_remote_code: bool = setting(False, boolean=True)
    tool_calls: bool | None = setting(boolean=True)
    tool_call_parser: str | None = None

    def _tuning_flags(self) -> dict[str, object]:
        return {
            "MAX_RUNNING_REQUESTS": self.max_running_requests,
            "MEM_FRACTION_STATIC": self.mem_fraction_static,
        }

    def _tool_flags(self, parser: str) -> dict[str, object]:
        # SGLang parses tools only with --tool-call-parser, which the DLC's entrypoint makes of
        # SM_SGLANG_TOOL_CALL_PARSER (scripts/docker/sglang/sagemaker_entrypoint.sh).
        return {"TOOL_CALL_PARSER": parser}

    def _aliases(self) -> Mapping[str, str]:
        return {"SM_SGLANG_TENSOR_PARALLEL_SIZE": "SM_SGLANG_TP_SIZE"}  # --tp-size alias
