"""AWS Large Model Inference (DJL Serving) with vLLM or TensorRT-LLM."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, replace
from typing import Literal

from constructs_llm.contract import StreamFormat
from constructs_llm.engines._support import (
    VLLM_FP8_FROM,
    VLLM_QUANTIZE,
    GpuEngine,
    at_least,
    dtype_name,
    planned_batch,
    present,
    put,
    vllm_default_max_num_seqs,
    vllm_full_context_problem,
)
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.context import EngineContext, EnvRule
from constructs_llm.engines.engine_args import lora_rank_problem, parallel_product_problem
from constructs_llm.engines.env_rules import rule_problem
from constructs_llm.engines.parsers import REASONING_PARSERS, ParserChoice, parser_family_problems
from constructs_llm.engines.settings import ALL_DTYPES, setting
from constructs_llm.engines.tools import (
    ToolCalling,
    parser_setting_problems,
    parser_tool_calling,
    tools_off,
)
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem

LmiBackend = Literal["vllm", "trtllm"]

# LMI's async vLLM service hands these to vLLM's chat serving (enable_auto_tools, tool_parser):
# deepjavalibrary/djl-serving: djl_python/lmi_vllm/vllm_async_service.py @ d21927c4; LMI
# serves tools "through the vLLM backend only" (deepjavalibrary/djl-serving:
# serving/docs/lmi/user_guides/tool_calling.md).
_LMI_TOOL_KEYS = ("OPTION_ENABLE_AUTO_TOOL_CHOICE", "OPTION_TOOL_CALL_PARSER")
# LMI's async vLLM service hands option.reasoning_parser to vLLM's chat serving;
# option.enable_reasoning makes LMI check the name against vLLM's registry at start-up
# (deepjavalibrary/djl-serving: djl_python/lmi_vllm/vllm_async_service.py, and
# deepjavalibrary/djl-serving: djl_python/properties_manager/vllm_rb_properties.py
# validate_reasoning_parser, @ d21927c4).
_LMI_REASONING_KEYS = ("OPTION_ENABLE_REASONING", "OPTION_REASONING_PARSER")
_LMI_DEFAULT_BATCH = 256  # OPTION_MAX_ROLLING_BATCH_SIZE default for trtllm
_TRT_DEFAULT_INPUT_LEN = 1024  # option.max_input_len default of the TRT-LLM image

# LMI's async vLLM handler (explicit, so images from v15 on behave alike; default from v17).
_LMI_ASYNC = {
    "OPTION_ROLLING_BATCH": "disable",
    "OPTION_ASYNC_MODE": "true",
    "OPTION_ENTRYPOINT": "djl_python.lmi_vllm.vllm_async_service",
}


@dataclass(frozen=True)
class LmiEngine(GpuEngine):
    """AWS Large Model Inference (DJL Serving) with continuous (rolling) batching.

    Backends the current LMI images ship: ``"vllm"`` (the default; the ``-lmi`` image line,
    served by LMI's async vLLM handler, the default since LMI v17) and ``"trtllm"``
    (TensorRT-LLM, only in the separate ``-tensorrtllm`` image line, whose last release is
    0.33.0). ``lmi-dist`` and ``scheduler`` were removed in LMI v15 (0.33.0); use
    ``"vllm"``. With vLLM, continuous batching is vLLM's own scheduler in LMI's async mode:
    ``OPTION_ROLLING_BATCH=disable`` only turns off LMI's older rolling-batch wrapper, and
    ``max_rolling_batch_size`` still caps the sequences vLLM runs at once (it becomes vLLM's
    ``max_num_seqs``: ``generate_vllm_engine_arg_dict`` in LMI's
    deepjavalibrary/djl-serving: ``djl_python/properties_manager/vllm_rb_properties.py``).

    Batch limits follow how each backend uses memory. vLLM pages the KV cache: it admits a
    request while free blocks hold its next tokens and preempts the newest one when the
    running requests outgrow the cache, so a cap sized for full-length sequences leaves the
    cache mostly idle with chat requests, far shorter than the limit (see
    ``TYPICAL_REQUEST_TOKENS`` in ``sizing/memory.py``).
    The vLLM backend therefore gets vLLM's own server cap, not LMI's async-mode default of
    32 (``LmiConfigRecommender.setRollingBatchSize`` gives 256 only to
    ``rolling_batch=vllm``, and async mode runs with ``rolling_batch=disable``;
    ``Properties.max_rolling_batch_size`` defaults to 32). TensorRT-LLM builds its engine for
    ``max_batch_size`` and its default ``GUARANTEED_NO_EVICT`` scheduler reserves each
    request's full length (nvidia.github.io/TensorRT-LLM, "Useful Runtime Options",
    "Capacity Scheduler Policy"), so there the cap stays the full-length sequences the
    memory plan fits.

    Both accept the OpenAI messages schema on ``/invocations`` (TensorRT-LLM through LMI's
    rolling-batch input parser) and stream chat chunks as JSON lines, so requests are
    MESSAGES and the stream is LMI_JSONLINES. Token log-probs are per request
    (``"logprobs": true``).

    :param backend: "vllm" or "trtllm" (the one positional argument). @default "vllm"
    :param image: @default the newest LMI DLC the library knows for the backend
    :param tensor_parallel_degree: ``OPTION_TENSOR_PARALLEL_DEGREE``. @default every GPU
        the copy gets
    :param max_rolling_batch_size: ``OPTION_MAX_ROLLING_BATCH_SIZE``. @default with vLLM,
        vLLM's own ``max_num_seqs`` for the GPU (256; 1024 on GPUs with 70 GiB or more that
        are not A100s), no more than ``max_rolling_batch_prefill_tokens``, as vLLM itself
        bounds it; vLLM admits by free KV blocks below it. With TensorRT-LLM, 256 (LMI's)
        lowered to the full-length sequences the memory plan fits when it is known
    :param max_rolling_batch_prefill_tokens: ``OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS``
        (vLLM ``max_num_batched_tokens``; ``OPTION_MAX_NUM_TOKENS`` for TensorRT-LLM).
        @default the engine's
    :param dtype: ``OPTION_DTYPE`` (fp16, bf16, fp32). @default the checkpoint's
    :param quantize: ``OPTION_QUANTIZE``. Runtime fp8/bitsandbytes for vLLM; leave unset
        for pre-quantized AWQ/GPTQ checkpoints unless you want the planner to size for
        them. @default none
    :param trust_remote_code: ``OPTION_TRUST_REMOTE_CODE``. @default False
    :param tool_calls: OpenAI tool calls, parsed by vLLM (``OPTION_ENABLE_AUTO_TOOL_CHOICE``,
        ``OPTION_TOOL_CALL_PARSER``); the vLLM backend only (TensorRT-LLM's chat input drops
        ``tools``). True fails at synth when no parser is known for the model and none is
        given; False turns it off. @default None: on with the vLLM backend when the packaged
        table knows the model family's parser, off otherwise
    :param tool_call_parser: a vLLM parser name for a model the table does not know or to
        override it. @default the model family's
    :param reasoning: a reasoning model's thinking returned apart from its answer, parsed by
        vLLM (``OPTION_ENABLE_REASONING``, ``OPTION_REASONING_PARSER``); the vLLM backend only.
        True fails at synth when no parser is known for the model and none is given; False
        sets none. @default None: on with the vLLM backend when the packaged table knows the
        model family's parser, off otherwise
    :param reasoning_parser: a vLLM reasoning parser name for a model the table does not know
        or to override it. @default the model family's
    """

    factory_name = "lmi"
    stream_format = StreamFormat.LMI_JSONLINES
    # DJL Serving answers POST /v1/chat/completions as it answers /invocations
    # (serving/src/main/java/ai/djl/serving/http/InferenceRequestHandler.java @ d21927c4), so
    # its stream is JSON lines there too: vllm_stream_output_formatter strips vLLM's "data: "
    # (deepjavalibrary/djl-serving: djl_python/lmi_vllm/request_response_utils.py), and SageMaker's
    # OpenAI route needs SSE.
    chat_completions_path = ChatCompletionsPath.JSON_LINES
    _parallel_setting = "tensor_parallel_degree"
    _dtype_keys, _quantization_keys = ("OPTION_DTYPE",), ("OPTION_QUANTIZE",)

    backend: str = "vllm"  # an LmiBackend, checked below
    _: KW_ONLY
    image: ContainerImage | None = setting(image=True)
    tensor_parallel_degree: int | None = setting(positive=True)
    max_rolling_batch_size: int | None = setting(positive=True)
    max_rolling_batch_prefill_tokens: int | None = setting(positive=True)
    dtype: str | None = setting(dtype=ALL_DTYPES)
    quantize: str | None = setting(choices=(*VLLM_QUANTIZE, "smoothquant"))
    trust_remote_code: bool = setting(False, boolean=True)
    tool_calls: bool | None = setting(boolean=True)
    tool_call_parser: str | None = None
    reasoning: bool | None = setting(boolean=True)
    reasoning_parser: str | None = None

    def env_name_of(self, flag: str) -> str | None:
        """LMI hands ``OPTION_<ARG>`` to its backend as the engine argument ``<arg>``."""
        return "OPTION_" + flag.replace("-", "_").upper()

    def _more_problems(self) -> list[Problem]:
        backend = self.backend
        ok = isinstance(backend, str) and backend in ("vllm", "trtllm")
        problems = [] if ok else [_lmi_backend(str(backend))]
        if backend == "trtllm" and (self.tool_calls or self.tool_call_parser):
            problems.append(Problem.of("tool_calls", self.tool_calls, _trtllm_tools()))
        if backend == "trtllm" and (self.reasoning or self.reasoning_parser):
            problems.append(Problem.of("reasoning", self.reasoning, _trtllm_reasoning()))
        problems += REASONING_PARSERS.setting_problems(
            "vllm", self.reasoning, self.reasoning_parser
        )
        return problems + parser_setting_problems("vllm", self.tool_calls, self.tool_call_parser)

    def reasoning_parsing(self, *, family: str | None = None) -> ParserChoice:
        if self.backend != "vllm":
            return ParserChoice(reason=_trtllm_reasoning())
        return REASONING_PARSERS.choose(
            "vllm",
            factory=self.factory_name,
            switch=self.reasoning,
            parser=self.reasoning_parser,
            family=family,
        )

    def tool_calling(
        self, *, family: str | None = None, user_env: Mapping[str, str] | None = None
    ) -> ToolCalling:
        if self.backend != "vllm":
            return tools_off(_trtllm_tools())
        return parser_tool_calling(
            "vllm",
            factory=self.factory_name,
            tool_calls=self.tool_calls,
            parser=self.tool_call_parser,
            family=family,
        )

    @property
    def name(self) -> str:
        return f"lmi-{self.backend}"

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
        put(env, "OPTION_MAX_ROLLING_BATCH_SIZE", self.max_rolling_batch_size or self._batch(ctx))
        if self.backend == "vllm":
            put(
                env,
                "OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS",
                self.max_rolling_batch_prefill_tokens,
            )
            put(env, "OPTION_MAX_MODEL_LEN", ctx.max_total_tokens)
            tools = self.tool_calling(family=ctx.model_family)
            if tools.served and tools.parser:
                env.update(zip(_LMI_TOOL_KEYS, ("true", tools.parser), strict=True))
            reasoning = self.reasoning_parsing(family=ctx.model_family).parser
            if reasoning:
                env.update(zip(_LMI_REASONING_KEYS, ("true", reasoning), strict=True))
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

    def _batch(self, ctx: EngineContext) -> int | None:
        """The sequence cap the backend intends: vLLM's own (admission by free KV blocks),
        bounded by the prefill tokens as vLLM bounds its default (``max_num_seqs =
        min(default, max_num_batched_tokens)``, vllm-project/vllm: ``vllm/engine/arg_utils.py``);
        for TensorRT-LLM, the full-length sequences the plan fits."""
        if self.backend != "vllm":
            return planned_batch(ctx, None, cap=_LMI_DEFAULT_BATCH)
        seqs = vllm_default_max_num_seqs(ctx.instance)
        prefill = self.max_rolling_batch_prefill_tokens
        return min(seqs, prefill) if prefill else seqs

    def _key_rules(self) -> Mapping[str, EnvRule]:
        rules = {
            "HF_MODEL_ID": EnvRule.MODEL,
            "OPTION_MODEL_ID": EnvRule.MODEL,
            "HF_REVISION": EnvRule.REVISION,
            "OPTION_TENSOR_PARALLEL_DEGREE": EnvRule.PARALLEL,
            "OPTION_ROLLING_BATCH": EnvRule.PROTOCOL,
            "OPTION_OUTPUT_FORMATTER": EnvRule.PROTOCOL,
            **dict.fromkeys(_LMI_TOOL_KEYS, EnvRule.TOOLS),
            **dict.fromkeys(_LMI_REASONING_KEYS, EnvRule.REASONING),
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

    def _settings_problems(self, ctx: EngineContext) -> list[Problem]:
        full_context = vllm_full_context_problem(ctx) if self.backend == "vllm" else None
        choice = self.reasoning_parsing(family=ctx.model_family)
        asked = REASONING_PARSERS.unserved_problem(self.factory_name, self.reasoning, choice)
        family = parser_family_problems(
            "vllm", self.tool_call_parser, self.reasoning_parser, ctx.model_family
        )
        return super()._settings_problems(ctx) + present([full_context, asked]) + family

    def _fp8_from(self) -> tuple[int, int]:
        return VLLM_FP8_FROM if self.backend == "vllm" else super()._fp8_from()

    def _rule_problem(
        self, kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
    ) -> Problem | None:
        if key == "OPTION_ROLLING_BATCH" and value.strip().lower() in _REMOVED_LMI_BACKENDS:
            backend = replace(_lmi_backend(value), property="env['OPTION_ROLLING_BATCH']")
            return backend.at(f"env OPTION_ROLLING_BATCH={value!r}: ")
        return rule_problem(kind, key, value, derived, ctx)

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[Problem]:
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
                ),
                lora_rank_problem(env, "OPTION_MAX_LORA_RANK"),
                parallel_product_problem(
                    env, "OPTION_TENSOR_PARALLEL_DEGREE", "OPTION_PIPELINE_PARALLEL_DEGREE", ctx
                ),
            ]
        )

    def _warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        if self.backend == "trtllm" and ctx.max_input_tokens is None:
            return [_trtllm_without_input_length(_TRT_DEFAULT_INPUT_LEN)]
        return []


_REMOVED_LMI_BACKENDS = ("lmi-dist", "scheduler")  # removed in LMI v15 (0.33.0)


def _lmi_backend(backend: str) -> Problem:
    if backend.strip().lower() in _REMOVED_LMI_BACKENDS:
        return Problem.of(
            "backend",
            backend,
            f"LMI backend {backend!r} was removed in LMI v15 (0.33.0); current LMI images ship "
            "vLLM (the default) and, in the separate -tensorrtllm images, TensorRT-LLM:",
            "use Engine.lmi(backend='vllm')",
        )
    return Problem.of(
        "backend",
        backend,
        f"LMI backend must be 'vllm' or 'trtllm', got {backend!r};",
        "use Engine.lmi(backend='vllm')",
    )


def _trtllm_tools() -> str:
    return (
        "LMI serves tool calls through its vLLM backend only (TensorRT-LLM's chat input drops "
        "tools); use Engine.lmi(backend='vllm'), or drop tool_calls/tool_call_parser"
    )


def _trtllm_reasoning() -> str:
    return (
        "LMI parses reasoning through its vLLM backend only; use Engine.lmi(backend='vllm'), "
        "or drop reasoning/reasoning_parser"
    )


def _trtllm_without_input_length(default_len: int) -> str:
    return (
        f"LMI TensorRT-LLM compiles the engine for {default_len}-token prompts by default and "
        "rejects longer ones; set max_input_tokens (and max_total_tokens) on the model"
    )
