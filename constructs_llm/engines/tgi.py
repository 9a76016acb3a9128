"""Hugging Face TGI on NVIDIA GPUs and on AWS Neuron (TGI NeuronX)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from constructs_llm.engines._support import (
    DlcEngine,
    GpuEngine,
    at_least,
    dtype_name,
    int_value,
    planned_batch,
    present,
    put,
)
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.context import EngineContext, EnvRule, available_cores, cores_per_chip
from constructs_llm.engines.env_rules import env_entry_problem
from constructs_llm.engines.settings import setting
from constructs_llm.engines.tools import ToolCalling, tools_off, tools_turned_off
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem

_TGI_QUANTIZE = (
    "awq",
    "compressed-tensors",
    "eetq",
    "exl2",
    "gptq",
    "marlin",
    "bitsandbytes",
    "bitsandbytes-nf4",
    "bitsandbytes-fp4",
    "fp8",
)
# TGI's launcher takes only float16 and bfloat16 for --dtype (DTYPE; "possible values: float16,
# bfloat16" in huggingface/text-generation-inference: docs/source/basic_tutorials/launcher.md), so
# fp32 would fail at start.
_TGI_DTYPES = ("fp16", "bf16")
# TGI's launcher reads DISABLE_GRAMMAR_SUPPORT as a clap bool flag; these values leave it off.
_FALSE_VALUES = frozenset({"", "0", "false", "no", "off", "n", "f"})
_NEURON_DEFAULT_BATCH = 4  # matches the batch sizes of the public Neuron compilation cache
#: The synth note of every model served with ``Engine.tgi()``.
_UPSTREAM_STATUS = (
    "Engine.tgi(): TGI is archived upstream (maintenance mode from 2025-12-11, repository "
    "archived 2026-03-21, last SageMaker DLC 3.3.6) and gets no fixes; serve new models with "
    "Engine.vllm() or Engine.lmi()"
)
_TGI_BATCH_TOKENS_STEP = 256  # round the planned batch tokens down to a block multiple


#: The env keys the TGI launcher reads in both images (GPU and NeuronX) that the library
#: derives, with their rules; each image adds its parallelism key.
_LAUNCHER_RULES: Mapping[str, EnvRule] = {
    "HF_MODEL_ID": EnvRule.MODEL,
    "HF_MODEL_REVISION": EnvRule.REVISION,
    "MAX_INPUT_TOKENS": EnvRule.LIMIT,
    "MAX_TOTAL_TOKENS": EnvRule.LIMIT,
    "MESSAGES_API_ENABLED": EnvRule.PROTOCOL,
}


@dataclass(frozen=True, kw_only=True)
class TgiEngine(GpuEngine):
    """Hugging Face Text Generation Inference on NVIDIA GPUs.

    TGI >= 2.4 accepts the OpenAI messages API on ``/invocations`` and streams
    ``chat.completion.chunk`` server-sent events, so requests are MESSAGES and the stream
    is OPENAI. ``MESSAGES_API_ENABLED=true`` is also set for images from TGI 2.0-2.3. Its
    router also serves ``POST /v1/chat/completions`` (SSE) and ``GET /ping``
    (``router/src/server.rs``, huggingface/text-generation-inference @ db931fc), the contract
    AWS's guide gives containers behind SageMaker's own OpenAI route, but that guide does not
    list TGI among the containers it supports there.

    Upstream status: Hugging Face put TGI in maintenance mode on 2025-12-11 and archived its
    repository (github.com/huggingface/text-generation-inference, read-only) on 2026-03-21;
    the SageMaker TGI DLC ends at 3.3.6 (huggingface.co/docs/text-generation-inference). It
    gets no new models or fixes, so existing stacks keep it but new models should use
    ``Engine.vllm()`` or ``Engine.lmi()``. Each model served with it carries a synth note
    saying so.

    :param image: @default the newest TGI DLC the library knows (``data/dlc_images.json``)
    :param num_shard: GPUs to shard over (``SM_NUM_GPUS``). @default every GPU the copy gets
    :param max_batch_prefill_tokens: ``MAX_BATCH_PREFILL_TOKENS``; must be >=
        ``max_input_tokens``. @default TGI's (max_input_tokens + 50)
    :param max_batch_total_tokens: ``MAX_BATCH_TOTAL_TOKENS``; must be >=
        ``max_total_tokens``. @default 90% of the memory plan's KV capacity when the model
        and ``max_total_tokens`` are known (TGI infers it itself for flash-attention models)
    :param quantize: ``HF_MODEL_QUANTIZE`` (awq, gptq, fp8, bitsandbytes, ...). @default none
    :param dtype: ``DTYPE`` (fp16 or bf16). @default the checkpoint's
    :param trust_remote_code: ``HF_MODEL_TRUST_REMOTE_CODE``. @default False
    :param tool_calls: OpenAI tool calls through the Messages API, which needs no env: TGI
        constrains the output to the tools' JSON schema with its grammar, whatever the model
        (``router/src/lib.rs`` ``ChatRequest::try_into_generate``). False turns it off (the
        invoker then answers a request with tools with a 400). @default None: on, unless
        ``DISABLE_GRAMMAR_SUPPORT`` in env turns the grammar off
    """

    name = "tgi"
    factory_name = "tgi"
    chat_completions_path = ChatCompletionsPath.UNLISTED
    _parallel_setting = "num_shard"
    # huggingface/text-generation-inference: sagemaker-entrypoint.sh exports QUANTIZE from
    # HF_MODEL_QUANTIZE; either may be set.
    _dtype_keys, _quantization_keys = ("DTYPE",), ("HF_MODEL_QUANTIZE", "QUANTIZE")

    image: ContainerImage | None = setting(image=True)
    num_shard: int | None = setting(positive=True)
    max_batch_prefill_tokens: int | None = setting(positive=True)
    max_batch_total_tokens: int | None = setting(positive=True)
    quantize: str | None = setting(choices=_TGI_QUANTIZE)
    dtype: str | None = setting(dtype=_TGI_DTYPES)
    trust_remote_code: bool = setting(False, boolean=True)
    tool_calls: bool | None = setting(boolean=True)

    def env_name_of(self, flag: str) -> str | None:
        """The launcher reads each of its flags from the env name in capitals."""
        return flag.replace("-", "_").upper()

    @property
    def notes(self) -> tuple[str, ...]:
        return (_UPSTREAM_STATUS,)

    def tool_calling(
        self, *, family: str | None = None, user_env: Mapping[str, str] | None = None
    ) -> ToolCalling:
        if self.tool_calls is False:
            return tools_off(tools_turned_off(self.factory_name))
        # router/src/validation.rs: with grammar disabled, any grammar (tools use one) is refused.
        grammar_off = (user_env or {}).get("DISABLE_GRAMMAR_SUPPORT")
        if grammar_off is not None and grammar_off.strip().lower() not in _FALSE_VALUES:
            return tools_off(str(_tools_without_grammar("DISABLE_GRAMMAR_SUPPORT", grammar_off)))
        return ToolCalling(served=True)

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = {"HF_MODEL_ID": ctx.model_location}
        put(env, "HF_MODEL_REVISION", ctx.revision)
        put(env, "SM_NUM_GPUS", self.num_shard or ctx.devices or None)
        put(env, "MAX_INPUT_TOKENS", ctx.max_input_tokens)
        put(env, "MAX_TOTAL_TOKENS", ctx.max_total_tokens)
        put(env, "MAX_BATCH_PREFILL_TOKENS", self.max_batch_prefill_tokens)
        put(env, "MAX_BATCH_TOTAL_TOKENS", self.max_batch_total_tokens or _tgi_batch_tokens(ctx))
        put(env, "HF_MODEL_QUANTIZE", self.quantize)
        put(env, "DTYPE", dtype_name(self.dtype, {"fp16": "float16", "bf16": "bfloat16"}))
        if self.trust_remote_code:
            env["HF_MODEL_TRUST_REMOTE_CODE"] = "true"
        env["MESSAGES_API_ENABLED"] = "true"  # TGI 2.0-2.3; later versions need nothing
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {**_LAUNCHER_RULES, "SM_NUM_GPUS": EnvRule.PARALLEL}

    def _aliases(self) -> Mapping[str, str]:
        # The entrypoint (huggingface/text-generation-inference: sagemaker-entrypoint.sh) exports
        # MODEL_ID/REVISION/NUM_SHARD from the SM names.
        return {
            "MODEL_ID": "HF_MODEL_ID",
            "REVISION": "HF_MODEL_REVISION",
            "NUM_SHARD": "SM_NUM_GPUS",
        }

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[Problem]:
        problems = present(
            [
                at_least(
                    env, "MAX_BATCH_PREFILL_TOKENS", "MAX_INPUT_TOKENS", "max_batch_prefill_tokens"
                ),
                at_least(
                    env, "MAX_BATCH_TOTAL_TOKENS", "MAX_TOTAL_TOKENS", "max_batch_total_tokens"
                ),
            ]
        )
        if "MAX_INPUT_LENGTH" in env:
            problems.append(
                env_entry_problem(
                    "MAX_INPUT_LENGTH",
                    env["MAX_INPUT_LENGTH"],
                    " is TGI's legacy name for MAX_INPUT_TOKENS (setting both fails at launch);",
                    "remove it and set max_input_tokens= on the model",
                )
            )
        return problems


def _tools_without_grammar(key: str, value: str) -> Problem:
    return env_entry_problem(
        key,
        value,
        " turns off TGI's grammar, which its tool calls are built on;",
        "remove it, or drop tool_calls=True",
    )


# -- TGI NeuronX ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TgiNeuronxEngine(DlcEngine):
    """TGI on AWS Inferentia2 / Trainium (optimum-neuron), same router and API as TGI.

    Neuron compiles static shapes: batch size x sequence length x cores x dtype. When they
    match an entry of the public optimum-neuron cache the model loads in minutes; otherwise
    it compiles at start-up, which can take close to an hour and needs host memory.
    ``max_total_tokens`` on the model becomes the compiled sequence length.

    :param image: @default the newest TGI NeuronX DLC the library knows
    :param num_cores: ``HF_NUM_CORES`` (tensor parallel NeuronCores; 2 per Inferentia2
        chip). @default every core of the chips the copy gets
    :param batch_size: static batch (``MAX_BATCH_SIZE`` and the legacy ``HF_BATCH_SIZE``).
        @default 4, or fewer if the memory plan holds fewer full-length sequences
    :param auto_cast_type: ``HF_AUTO_CAST_TYPE`` (bf16 or fp16). @default "bf16"
    :param max_batch_prefill_tokens: @default batch_size x max_input_tokens (the image's)
    :param tool_calls: only None or False: the Neuron backend has no grammar, which TGI's tool
        calls are built on ("The basic TGI features are supported: continuous batching, token
        streaming, greedy search and multinomial sampling", huggingface/text-generation-inference:
        ``docs/source/backends/neuron.md``), so the invoker answers tools with a 400.
        @default None (off)
    """

    name = "tgi-neuronx"
    factory_name = "tgi_neuronx"
    chat_completions_path = ChatCompletionsPath.UNLISTED
    accelerator = "neuron"

    image: ContainerImage | None = setting(image=True)
    num_cores: int | None = setting(positive=True)
    batch_size: int | None = setting(positive=True)
    auto_cast_type: str = setting("bf16", choices=("bf16", "fp16"))
    max_batch_prefill_tokens: int | None = setting(positive=True)
    tool_calls: bool | None = setting(boolean=True)

    def env_name_of(self, flag: str) -> str | None:
        """The launcher reads each of its flags from the env name in capitals."""
        return flag.replace("-", "_").upper()

    def _more_problems(self) -> list[Problem]:
        return (
            [Problem.of("tool_calls", True, _tgi_neuronx_tools())]
            if self.tool_calls is True
            else []
        )

    @property
    def weight_dtype(self) -> str | None:
        return self.auto_cast_type

    def cores(self, instance: InstanceType, accelerators: int | None = None) -> int | None:
        """NeuronCores the copy uses (``HF_NUM_CORES``); None if the hardware is unknown."""
        if self.num_cores:
            return self.num_cores
        per_chip = cores_per_chip(instance)
        if per_chip is None:
            return None
        return (accelerators or instance.accelerator_count) * per_chip

    def devices_used(self, instance: InstanceType, accelerators: int | None = None) -> int:
        per_chip = cores_per_chip(instance)
        cores = self.cores(instance, accelerators)
        if per_chip is None or cores is None:
            return super().devices_used(instance, accelerators)
        return max(1, math.ceil(cores / per_chip))

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = {"HF_MODEL_ID": ctx.model_location}
        put(env, "HF_MODEL_REVISION", ctx.revision)
        put(env, "HF_NUM_CORES", self.cores(ctx.instance, ctx.accelerators))
        env["HF_AUTO_CAST_TYPE"] = self.auto_cast_type
        # Without a sequence length the image picks a cached shape; leave the batch to it too.
        batch = self.batch_size or (
            planned_batch(ctx, _NEURON_DEFAULT_BATCH) if ctx.max_total_tokens else None
        )
        # MAX_* are read by current images (huggingface/optimum-neuron:
        # text-generation-inference/tgi_env.py); HF_* by optimum-neuron <= 0.0.2x.
        put(env, "MAX_BATCH_SIZE", batch)
        put(env, "HF_BATCH_SIZE", batch)
        put(env, "MAX_TOTAL_TOKENS", ctx.max_total_tokens)
        put(env, "HF_SEQUENCE_LENGTH", ctx.max_total_tokens)
        put(env, "MAX_INPUT_TOKENS", ctx.max_input_tokens)
        # Left unset by default so the image checks the other values against its cache.
        put(env, "MAX_BATCH_PREFILL_TOKENS", self.max_batch_prefill_tokens)
        env["MESSAGES_API_ENABLED"] = "true"
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {
            **_LAUNCHER_RULES,
            "HF_NUM_CORES": EnvRule.PARALLEL,
            "HF_SEQUENCE_LENGTH": EnvRule.LIMIT,
        }

    def _aliases(self) -> Mapping[str, str]:
        return {"MODEL_ID": "HF_MODEL_ID", "REVISION": "HF_MODEL_REVISION"}

    def _settings_problems(self, ctx: EngineContext) -> list[Problem]:
        inst = ctx.instance
        if inst.accelerator != "neuron" or not inst.known:
            return []
        problems = [_inferentia1(inst)] if inst.family == "inf1" else []
        cores = self.cores(inst, ctx.accelerators)
        available = available_cores(ctx)
        if cores is not None and available is not None and cores > available:
            problems.append(_neuron_cores_above(cores, available, ctx))
        return problems

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[Problem]:
        return present(
            [
                at_least(
                    env, "MAX_BATCH_PREFILL_TOKENS", "MAX_INPUT_TOKENS", "max_batch_prefill_tokens"
                ),
                self._topology_problem(ctx, env),
            ]
        )

    def _topology_problem(self, ctx: EngineContext, env: Mapping[str, str]) -> Problem | None:
        """The effective HF_NUM_CORES (from num_cores or user env) must be one trn1 can run."""
        inst, cores, available = ctx.instance, int_value(env, "HF_NUM_CORES"), available_cores(ctx)
        if cores is None or available is None or cores > available:
            return None  # unknown hardware, or already reported as too many cores
        if not inst.family.startswith("trn1") or _trn1_topology(cores):
            return None
        source = (
            f"Engine.tgi_neuronx(num_cores={cores})"
            if cores == self.cores(inst, ctx.accelerators)
            else f"env HF_NUM_CORES={cores}"
        )
        return _unsupported_trn1_topology(source, inst, available)

    def _warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        inst = ctx.instance
        cores = int_value(user_env, "HF_NUM_CORES") or self.cores(inst, ctx.accelerators)
        if inst.accelerator != "neuron" or not inst.known or cores is None:
            return []
        found = []
        is_power_of_two = cores & (cores - 1) == 0
        if inst.family.startswith("inf2") and not (is_power_of_two or cores == inst.neuron_cores):
            found.append(_neuron_odd_cores(cores, inst))
        if ctx.max_total_tokens is None:
            found.append(_neuron_without_length())
        return found


def _inferentia1(inst: InstanceType) -> Problem:
    return Problem.of(
        "instance_type",
        inst.name,
        f"{inst.name} is Inferentia1, which TGI NeuronX does not support;",
        "use an ml.inf2 or ml.trn1 instance",
    )


def _neuron_cores_above(cores: int, available: int, ctx: EngineContext) -> Problem:
    return Problem.of(
        "num_cores",
        cores,
        f"Engine.tgi_neuronx(num_cores={cores}) exceeds the {available} NeuronCores {ctx.where};",
        f"use num_cores <= {available}",
    )


def _unsupported_trn1_topology(setting: str, inst: InstanceType, available: int) -> Problem:
    return Problem.of(
        setting,
        available,
        f"{setting} is not a topology the Neuron runtime supports on {inst.name} (1, 2, 8, 16 "
        "or a multiple of 32 cores);",
        f"use one of {[c for c in (1, 2, 8, 16, 32) if c <= available]}",
    )


def _neuron_odd_cores(cores: int, inst: InstanceType) -> str:
    return (
        f"HF_NUM_CORES={cores} on {inst.name}: the Neuron docs list 1, 2, 4, 8 and 24 cores as "
        f"Inferentia2 tensor-parallel degrees; verify the model compiles for {cores} cores, or "
        f"use a power of two or all {inst.neuron_cores} cores"
    )


def _neuron_without_length() -> str:
    return (
        "max_total_tokens is not set, so the Neuron image picks a cached configuration for you "
        "(or fails if none matches); set max_total_tokens to fix the compiled sequence length"
    )


def _tgi_neuronx_tools() -> str:
    return (
        "tool_calls=True: TGI NeuronX does not serve tool calls (its Neuron backend has no "
        "grammar, which TGI's tool calls are built on); use Engine.tgi() on GPUs, or drop "
        "tool_calls=True"
    )


def _tgi_batch_tokens(ctx: EngineContext) -> int | None:
    """90% of the planned KV capacity, in whole blocks, never below one full sequence."""
    plan = ctx.plan
    if plan is None or ctx.max_total_tokens is None or plan.max_concurrent_sequences < 1:
        return None
    tokens = (
        int(plan.max_batch_total_tokens * 0.9) // _TGI_BATCH_TOKENS_STEP * _TGI_BATCH_TOKENS_STEP
    )
    return max(tokens, ctx.max_total_tokens)


def _trn1_topology(cores: int) -> bool:
    # Neuron runtime on trn1: "Supported number of Neuron Cores is 1, 2, 8, 16 or a multiple of 32".
    return cores in (1, 2, 8, 16) or cores % 32 == 0
