"""The AWS vLLM and SGLang SageMaker DLCs (``SM_VLLM_*`` / ``SM_SGLANG_*`` env as flags).

vLLM serves chat models and, with ``embedding=True``, embedding models with its pooling runner
(``--runner pooling``; a generative checkpoint is converted to an embedding model,
``--convert auto`` resolving to ``embed``: ``ModelConfig`` in vllm-project/vllm:
``vllm/config/model.py``); its ``/invocations`` routes a body to the handler whose request type it
validates as (vllm-project/vllm: ``vllm/entrypoints/serve/sagemaker/api_router.py``), so an
embeddings body reaches the embeddings handler. ``embedding=None`` (the default) follows the model:
an embedding model of the packaged table (``kind`` "embedding" in ``data/models.json``) is served as
one (``LlmModel`` asks the engine ``for_model_kind``), any other model as a chat model. An
embedding engine answers one JSON body per request (``RequestFormat.EMBED``), and calls no
tools and parses no reasoning.

SGLang serves chat models only behind SageMaker: its ``/invocations`` takes a chat completion
request and nothing else (``sagemaker_chat_completions`` in
sgl-project/sglang: ``python/sglang/srt/entrypoints/http_server.py`` @ 0025436e), so an
embedding model started with ``--is-embedding`` could not answer SageMaker; an embedding model
of the table on ``Engine.sglang()`` fails at synth naming ``Engine.vllm()`` and
``Engine.tei()``.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from constructs_llm.contract import ModelKind, RequestFormat
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
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.context import EngineContext, EnvRule
from constructs_llm.engines.engine import Engine
from constructs_llm.engines.engine_args import lora_rank_problem, parallel_product_problem
from constructs_llm.engines.parsers import (
    REASONING_PARSERS,
    ParserChoice,
    ParserEngine,
    parser_family_problems,
)
from constructs_llm.engines.settings import ALL_DTYPES, setting
from constructs_llm.engines.signals import SGLANG_SIGNALS, VLLM_SIGNALS, EngineSignals
from constructs_llm.engines.tools import (
    ToolCalling,
    parser_setting_problems,
    parser_tool_calling,
    tools_off,
)
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem


class _FlagEngine(GpuEngine):
    """A DLC whose entrypoint turns ``<prefix><FLAG>`` env into ``--<flag>``. The factory
    kwargs carry the flags' names, so the tensor-parallel flag is its setting's name.
    """

    _prefix: ClassVar[str]  # "SM_VLLM_"
    _model_flag: ClassVar[str]  # takes the Hub id or /opt/ml/model
    _length_flag: ClassVar[str]  # longest prompt + generation
    _parsers: ClassVar[ParserEngine]  # whose tool-call and reasoning parser names apply
    # The flags that serve an embedding model; empty: the engine serves chat models only.
    _embedding_flags: ClassVar[Mapping[str, str]] = {}
    _kind_rules: ClassVar[Mapping[str, EnvRule]]  # flags that choose chat or embeddings
    _quantize_setting = "quantization"
    quantization: str | None
    trust_remote_code: bool
    tool_call_parser: str | None
    reasoning: bool | None
    reasoning_parser: str | None
    embedding: bool | None = None  # a setting of the engines that serve embedding models
    _signals: ClassVar[EngineSignals]  # its Prometheus metrics (engines/signals.py)

    @abc.abstractmethod
    def _tuning_flags(self) -> dict[str, object]:
        """The engine's own flags (batching, memory), between the length and the dtype."""

    @abc.abstractmethod
    def _tool_flags(self, parser: str) -> dict[str, object]:
        """The flags that turn tool-call parsing on with ``parser``."""

    @property
    def request_format(self) -> RequestFormat:  # type: ignore[override]  # follows embedding
        return RequestFormat.EMBED if self.embedding else RequestFormat.MESSAGES

    @property
    def signals(self) -> EngineSignals | None:
        """Its metrics, for a chat model (an embedding model has no KV cache or token stream)."""
        return None if self.embedding else self._signals

    def for_model_kind(self, kind: ModelKind) -> Engine:
        if self._embedding_flags and self.embedding is None and kind is ModelKind.EMBEDDING:
            return dataclasses.replace(self, embedding=True)  # type: ignore[type-var]
        return self

    def _more_problems(self) -> list[Problem]:
        problems = parser_setting_problems(self._parsers, self.tool_calls, self.tool_call_parser)
        problems += REASONING_PARSERS.setting_problems(
            self._parsers, self.reasoning, self.reasoning_parser
        )
        if self.embedding:
            problems += _chat_settings_on_embedding(self)
        return problems

    def tool_calling(
        self, *, family: str | None = None, user_env: Mapping[str, str] | None = None
    ) -> ToolCalling:
        if self.embedding:
            return tools_off(_embedding_serves(self.factory_name, "tool calls"))
        return parser_tool_calling(
            self._parsers,
            factory=self.factory_name,
            tool_calls=self.tool_calls,
            parser=self.tool_call_parser,
            family=family,
        )

    def reasoning_parsing(self, *, family: str | None = None) -> ParserChoice:
        if self.embedding:
            return ParserChoice(reason=_embedding_serves(self.factory_name, "reasoning"))
        return REASONING_PARSERS.choose(
            self._parsers,
            factory=self.factory_name,
            switch=self.reasoning,
            parser=self.reasoning_parser,
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
        if self.embedding:
            flags.update(self._embedding_flags)
        tools = self.tool_calling(family=ctx.model_family)
        if tools.served and tools.parser:
            flags.update(self._tool_flags(tools.parser))
        flags["REASONING_PARSER"] = self.reasoning_parsing(family=ctx.model_family).parser
        return {self._prefix + flag: str(v) for flag, v in flags.items() if v is not None}

    def _settings_problems(self, ctx: EngineContext) -> list[Problem]:
        choice = self.reasoning_parsing(family=ctx.model_family)
        asked = REASONING_PARSERS.unserved_problem(self.factory_name, self.reasoning, choice)
        family = parser_family_problems(
            self._parsers, self.tool_call_parser, self.reasoning_parser, ctx.model_family
        )
        return super()._settings_problems(ctx) + present([asked]) + family

    def _key_rules(self) -> Mapping[str, EnvRule]:
        tool_keys = ("ENABLE_AUTO_TOOL_CHOICE", "TOOL_CALL_PARSER")
        return {
            self._prefix + self._model_flag: EnvRule.MODEL,
            self._prefix + "REVISION": EnvRule.REVISION,
            self._prefix + self._parallel_setting.upper(): EnvRule.PARALLEL,
            self._prefix + self._length_flag: EnvRule.LIMIT,
            **{self._prefix + key: EnvRule.TOOLS for key in tool_keys},
            self._prefix + "REASONING_PARSER": EnvRule.REASONING,
            **{self._prefix + key: rule for key, rule in self._kind_rules.items()},
        }

    def env_name_of(self, flag: str) -> str | None:
        """The DLC's entrypoint turns ``<prefix><FLAG>`` into ``--<flag>``."""
        return self._prefix + flag.replace("-", "_").upper()


@dataclass(frozen=True, kw_only=True)
class VllmEngine(_FlagEngine):
    """The AWS vLLM SageMaker DLC (``SM_VLLM_<FLAG>`` env becomes ``--<flag>``).

    ``/invocations`` is vLLM's SageMaker router (chat requests, OpenAI SSE stream), and
    ``/v1/chat/completions`` its OpenAI server's chat route, the one SageMaker's own OpenAI
    route calls; AWS's guide for that route lists the vLLM DLC.
    The CUDA 13 images need a recent host AMI (``InferenceAmiVersion``).

    :param image: @default the newest vLLM DLC the library knows
    :param tensor_parallel_size: @default every GPU the copy gets
    :param max_num_seqs: @default vLLM's: 256, or 1024 on GPUs with 70 GiB or more that are
        not A100s (``EngineArgs.get_batch_defaults``, vllm-project/vllm:
        ``vllm/engine/arg_utils.py``); vLLM admits requests below it while free KV-cache blocks hold
        them, so it is left to vLLM rather than sized for full-length sequences
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
    :param reasoning: a reasoning model's thinking returned apart from its answer, parsed by
        vLLM (``SM_VLLM_REASONING_PARSER``, vLLM's ``--reasoning-parser``). True fails at synth
        when no parser is known for the model and none is given; False sets none (the thinking
        stays in the answer's text). @default None: on when the packaged table knows the model
        family's parser (Qwen3: ``qwen3``; DeepSeek-R1 distills: ``deepseek_r1``), off
        otherwise
    :param reasoning_parser: a vLLM reasoning parser name (``qwen3``, ``deepseek_r1``, ...)
        for a model the table does not know or to override it; turns reasoning parsing on.
        @default the model family's
    :param embedding: serve an embedding model with vLLM's pooling runner
        (``SM_VLLM_RUNNER=pooling``); the invoker then answers ``POST /v1/embeddings``.
        @default None: True for an embedding model of the packaged table, else False
    """

    name = "vllm"
    factory_name = "vllm"
    chat_completions_path = ChatCompletionsPath.LISTED
    _prefix, _model_flag, _length_flag = "SM_VLLM_", "MODEL", "MAX_MODEL_LEN"
    _parallel_setting = "tensor_parallel_size"
    _parsers = "vllm"
    _signals = VLLM_SIGNALS
    _embedding_flags: ClassVar[Mapping[str, str]] = {"RUNNER": "pooling"}
    # --task (embed) was replaced by --runner and --convert in vLLM 0.10, and later removed.
    _kind_rules: ClassVar[Mapping[str, EnvRule]] = dict.fromkeys(
        ("RUNNER", "CONVERT", "TASK"), EnvRule.KIND
    )
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
    reasoning: bool | None = setting(boolean=True)
    reasoning_parser: str | None = None
    embedding: bool | None = setting(boolean=True)

    @property
    def batch_tokens(self) -> int | None:
        return self.max_num_batched_tokens if self.embedding else None

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
        # "" both give the bare flag (aws/deep-learning-containers:
        # scripts/docker/vllm/sagemaker_args.py, build_args).
        return {"ENABLE_AUTO_TOOL_CHOICE": "", "TOOL_CALL_PARSER": parser}

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {**super()._key_rules(), "HF_MODEL_ID": EnvRule.MODEL}

    def _settings_problems(self, ctx: EngineContext) -> list[Problem]:
        full_context = None if self.embedding else vllm_full_context_problem(ctx)
        return super()._settings_problems(ctx) + present([full_context])

    def _fp8_from(self) -> tuple[int, int]:
        return VLLM_FP8_FROM

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[Problem]:
        return present(
            [
                at_least(
                    env,
                    "SM_VLLM_MAX_NUM_BATCHED_TOKENS",
                    "SM_VLLM_MAX_NUM_SEQS",
                    "max_num_batched_tokens",
                    what="vLLM needs max_num_batched_tokens >= max_num_seqs",
                ),
                lora_rank_problem(env, "SM_VLLM_MAX_LORA_RANK"),
                parallel_product_problem(
                    env, "SM_VLLM_TENSOR_PARALLEL_SIZE", "SM_VLLM_PIPELINE_PARALLEL_SIZE", ctx
                ),
            ]
        )


@dataclass(frozen=True, kw_only=True)
class SglangEngine(_FlagEngine):
    """The AWS SGLang SageMaker DLC (``SM_SGLANG_<FLAG>`` env becomes ``--<flag>``).

    SGLang's ``/invocations`` accepts only chat requests (``messages``) and streams OpenAI
    SSE chunks, as its ``/v1/chat/completions`` does (sgl-project/sglang:
    ``python/sglang/srt/entrypoints/http_server.py``), the path SageMaker's own OpenAI route calls;
    AWS's guide for that route lists the SGLang DLC.

    :param image: @default the newest SGLang DLC the library knows
    :param tp_size: @default every GPU the copy gets
    :param max_running_requests: @default SGLang's: half the tokens its KV pool holds,
        capped by its request pool (``max_total_num_tokens // 2``,
        sgl-project/sglang: ``python/sglang/srt/managers/tp_worker.py``); its scheduler
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
    :param reasoning: a reasoning model's thinking returned apart from its answer, parsed by
        SGLang (``SM_SGLANG_REASONING_PARSER``, SGLang's ``--reasoning-parser``). True fails
        at synth when no parser is known for the model and none is given; False sets none.
        @default None: on when the packaged table knows the model family's parser (Qwen3:
        ``qwen3``; DeepSeek-R1 distills: ``deepseek-r1``), off otherwise
    :param reasoning_parser: an SGLang reasoning parser name (``qwen3``, ``deepseek-r1``, ...)
        for a model the table does not know or to override it. @default the model family's

    Chat models only: SGLang's ``/invocations`` takes chat completion requests alone, so an
    embedding model goes on ``Engine.vllm()`` or ``Engine.tei()``.

    Its Prometheus metrics are on (``SM_SGLANG_ENABLE_METRICS=true``, SGLang's
    ``--enable-metrics``), which SageMaker's detailed observability scrapes.
    """

    name = "sglang"
    factory_name = "sglang"
    chat_completions_path = ChatCompletionsPath.LISTED
    _prefix, _model_flag, _length_flag = "SM_SGLANG_", "MODEL_PATH", "CONTEXT_LENGTH"
    _parallel_setting = "tp_size"
    _parsers = "sglang"
    _signals = SGLANG_SIGNALS
    # --is-embedding would start a model that SGLang's /invocations (chat only) cannot serve.
    _kind_rules: ClassVar[Mapping[str, EnvRule]] = {"IS_EMBEDDING": EnvRule.PROTOCOL}
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
    reasoning: bool | None = setting(boolean=True)
    reasoning_parser: str | None = None

    def _tuning_flags(self) -> dict[str, object]:
        return {
            "MAX_RUNNING_REQUESTS": self.max_running_requests,
            "MEM_FRACTION_STATIC": self.mem_fraction_static,
            # SGLang serves no Prometheus metrics without --enable-metrics, which the DLC's
            # entrypoint makes of "true" (aws/deep-learning-containers:
            # scripts/docker/sglang/sagemaker_entrypoint.sh @ 3a66fab): detailed observability, and
            # the engine alarms, would find nothing to scrape.
            "ENABLE_METRICS": "true",
        }

    def _tool_flags(self, parser: str) -> dict[str, object]:
        # SGLang parses tools only with --tool-call-parser, which the DLC's entrypoint makes of
        # SM_SGLANG_TOOL_CALL_PARSER (aws/deep-learning-containers:
        # scripts/docker/sglang/sagemaker_entrypoint.sh).
        return {"TOOL_CALL_PARSER": parser}

    def _aliases(self) -> Mapping[str, str]:
        return {"SM_SGLANG_TENSOR_PARALLEL_SIZE": "SM_SGLANG_TP_SIZE"}  # --tp-size alias

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[Problem]:
        return present(
            [parallel_product_problem(env, "SM_SGLANG_TP_SIZE", "SM_SGLANG_PP_SIZE", ctx)]
        )


def _embedding_serves(factory: str, what: str) -> str:
    return f"Engine.{factory}(embedding=True) serves an embedding model, which has no {what}"


def _chat_settings_on_embedding(engine: _FlagEngine) -> list[Problem]:
    """Chat-only settings given to an engine that serves an embedding model."""
    given = [
        f"{name}={value!r}"
        for name, value in (
            ("tool_calls", engine.tool_calls),
            ("tool_call_parser", engine.tool_call_parser),
            ("reasoning", engine.reasoning),
            ("reasoning_parser", engine.reasoning_parser),
        )
        if value
    ]
    if not given:
        return []
    return [
        Problem.of(
            "embedding",
            True,
            "embedding=True serves an embedding model, which calls no tools and writes no "
            f"reasoning, but {', '.join(given)} was given;",
            "drop them, or drop embedding=True for a chat model",
        )
    ]
