"""Serving engines: the container contract of TGI, TGI NeuronX, LMI, vLLM, SGLang or your own image.

An :class:`Engine` turns typed settings plus the instance type into the container environment,
picks the default Deep Learning Container for its accelerator, and tells the streaming invoker
which request body to send (:attr:`Engine.request_format`) and how the reply streams
(:attr:`Engine.stream_format`). Defaults follow serving best practice: tensor parallelism over
every GPU (or NeuronCore) the model copy gets, continuous batching, messages/chat requests, and
streaming with ``"stream": true`` per request.

User ``env`` passed to the model is checked against the derived environment
(:meth:`Engine.validate`). The rule:

- **add** any key the engine does not derive, and **override** tuning keys (batch sizes,
  prefill and batch token budgets, memory fractions, dtype);
- **never contradict** what the construct knows better: the model source (``HF_MODEL_ID`` and
  friends; change ``source=`` instead), the token limits (``MAX_TOTAL_TOKENS``,
  ``OPTION_MAX_MODEL_LEN``, ...; set ``max_input_tokens``/``max_total_tokens`` on the model so
  sizing sees them), the request/stream protocol (``OPTION_ROLLING_BATCH``,
  ``OPTION_ENTRYPOINT``, ...; use ``Engine.custom`` for another protocol), or a
  tensor-parallel/GPU count beyond the hardware;
- **never** put a Hugging Face token in ``env`` (use ``ModelSource.hugging_face(..., token=)``),
  nor SageMaker timeouts (they are ``LlmEndpoint(health_check_timeout=..., download_timeout=...)``).
"""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Literal

from constructs_llm.container_image import ContainerImage
from constructs_llm.instance_type import InstanceType, is_token
from constructs_llm.sizing import MemoryPlan
from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat

if TYPE_CHECKING:
    from constructs_llm.engines.custom import CustomEngine
    from constructs_llm.engines.dlc import SglangEngine, VllmEngine
    from constructs_llm.engines.lmi import LmiEngine
    from constructs_llm.engines.tgi import TgiEngine, TgiNeuronxEngine

Accelerator = Literal["nvidia", "neuron"]

#: Env names Hugging Face libraries read a Hub token from (huggingface_hub: HF_TOKEN first,
#: then the legacy HUGGING_FACE_HUB_TOKEN; TGI's router reads the legacy name).
HF_TOKEN_ENV_NAMES: tuple[str, ...] = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
_TOKEN_KEYS = frozenset({*HF_TOKEN_ENV_NAMES, "HF_API_TOKEN", "HUGGINGFACE_HUB_TOKEN"})
_HF_TOKEN_VALUE = re.compile(r"hf_[A-Za-z0-9]{20,}")


class EnvRule(Enum):
    """How user ``env`` may touch a key the engine derives (keys without a rule are free)."""

    MODEL = "model"  # from the model source; never contradicted
    REVISION = "revision"
    PARALLEL = "parallel"  # may be lowered, never beyond the hardware
    LIMIT = "limit"  # from max_input_tokens / max_total_tokens; never contradicted
    PROTOCOL = "protocol"  # request/stream contract; never contradicted


@dataclass(frozen=True, kw_only=True)
class EngineContext:
    """What the engine needs to know about one model copy.

    :param instance: the instance type the copy runs on.
    :param accelerators: devices (GPUs, or Neuron chips) the copy gets; None = all of the
        instance (inference components give a copy a subset).
    :param model_location: Hub id, or ``/opt/ml/model`` for weights SageMaker downloads.
    :param revision: Hub revision (branch, tag or commit). @default None
    :param max_input_tokens: longest prompt. @default the engine's default
    :param max_total_tokens: longest prompt + generation. @default the engine's default
    :param plan: memory plan for the copy, used to size batch defaults. @default None
    """

    instance: InstanceType
    model_location: str
    accelerators: int | None = None
    revision: str | None = None
    max_input_tokens: int | None = None
    max_total_tokens: int | None = None
    plan: MemoryPlan | None = None

    @property
    def devices(self) -> int:
        """Devices available to the copy (0 when the hardware is unknown)."""
        return self.accelerators or self.instance.accelerator_count


class Engine(abc.ABC):
    """A serving container contract. Create one with a factory: ``Engine.tgi()``, ...

    Every engine exposes ``name``, ``accelerator`` ("nvidia", "neuron" or None = any),
    ``stream_format``, ``request_format``, ``token_env_names``, ``weight_dtype``, and
    :meth:`image_for`, :meth:`derive_env`, :meth:`validate`, :meth:`warnings`. An engine
    whose contract is fixed may state the first four as class attributes.
    """

    # -- factories ------------------------------------------------------------------------

    @staticmethod
    def tgi(
        *,
        image: ContainerImage | None = None,
        num_shard: int | None = None,
        max_batch_prefill_tokens: int | None = None,
        max_batch_total_tokens: int | None = None,
        quantize: str | None = None,
        dtype: str | None = None,
        trust_remote_code: bool = False,
    ) -> TgiEngine:
        """Hugging Face Text Generation Inference on NVIDIA GPUs.

        TGI >= 2.4 accepts the OpenAI messages API on ``/invocations`` and streams
        ``chat.completion.chunk`` server-sent events, so requests are MESSAGES and the stream
        is OPENAI. ``MESSAGES_API_ENABLED=true`` is also set for images from TGI 2.0-2.3.
        Hugging Face has put TGI in maintenance mode; prefer ``Engine.vllm()`` or
        ``Engine.lmi()`` for new models.

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
        """
        from constructs_llm.engines.tgi import TgiEngine

        return TgiEngine(
            image=image,
            num_shard=num_shard,
            max_batch_prefill_tokens=max_batch_prefill_tokens,
            max_batch_total_tokens=max_batch_total_tokens,
            quantize=quantize,
            dtype=dtype,
            trust_remote_code=trust_remote_code,
        )

    @staticmethod
    def tgi_neuronx(
        *,
        image: ContainerImage | None = None,
        num_cores: int | None = None,
        batch_size: int | None = None,
        auto_cast_type: str = "bf16",
        max_batch_prefill_tokens: int | None = None,
    ) -> TgiNeuronxEngine:
        """TGI on AWS Inferentia2 / Trainium (optimum-neuron), same router and API as TGI.

        Neuron compiles static shapes: batch size x sequence length x cores x dtype. When they
        match an entry of the public optimum-neuron cache the model loads in minutes; otherwise
        it compiles at start-up, which can take close to an hour and needs host memory.
        ``max_total_tokens`` on the model becomes the compiled sequence length.

        :param num_cores: ``HF_NUM_CORES`` (tensor parallel NeuronCores; 2 per Inferentia2
            chip). @default every core of the chips the copy gets
        :param batch_size: static batch (``MAX_BATCH_SIZE`` and the legacy ``HF_BATCH_SIZE``).
            @default 4, or fewer if the memory plan holds fewer full-length sequences
        :param auto_cast_type: ``HF_AUTO_CAST_TYPE`` (bf16 or fp16). @default "bf16"
        :param max_batch_prefill_tokens: @default batch_size x max_input_tokens (the image's)
        """
        from constructs_llm.engines.tgi import TgiNeuronxEngine

        return TgiNeuronxEngine(
            image=image,
            num_cores=num_cores,
            batch_size=batch_size,
            auto_cast_type=auto_cast_type,
            max_batch_prefill_tokens=max_batch_prefill_tokens,
        )

    @staticmethod
    def lmi(
        backend: str = "vllm",
        *,
        image: ContainerImage | None = None,
        tensor_parallel_degree: int | None = None,
        max_rolling_batch_size: int | None = None,
        max_rolling_batch_prefill_tokens: int | None = None,
        dtype: str | None = None,
        quantize: str | None = None,
        trust_remote_code: bool = False,
    ) -> LmiEngine:
        """AWS Large Model Inference (DJL Serving) with continuous (rolling) batching.

        Backends the current LMI images ship: ``"vllm"`` (the default; the ``-lmi`` image line,
        served by LMI's async vLLM handler, the default since LMI v17) and ``"trtllm"``
        (TensorRT-LLM, only in the separate ``-tensorrtllm`` image line, whose last release is
        0.33.0). ``lmi-dist`` and ``scheduler`` were removed in LMI v15 (0.33.0); use
        ``"vllm"``. With vLLM, continuous batching is vLLM's own scheduler in LMI's async mode:
        ``OPTION_ROLLING_BATCH=disable`` only turns off LMI's older rolling-batch wrapper, and
        ``max_rolling_batch_size`` still caps the sequences vLLM runs at once.

        Both accept the OpenAI messages schema on ``/invocations`` (TensorRT-LLM through LMI's
        rolling-batch input parser) and stream chat chunks as JSON lines, so requests are
        MESSAGES and the stream is LMI_JSONLINES. Token log-probs are per request
        (``"logprobs": true``).

        :param backend: "vllm" or "trtllm". @default "vllm"
        :param tensor_parallel_degree: ``OPTION_TENSOR_PARALLEL_DEGREE``. @default every GPU
            the copy gets
        :param max_rolling_batch_size: ``OPTION_MAX_ROLLING_BATCH_SIZE``. @default 256 (LMI's),
            lowered to the full-length sequences the memory plan fits when it is known
        :param max_rolling_batch_prefill_tokens: ``OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS``
            (vLLM ``max_num_batched_tokens``; ``OPTION_MAX_NUM_TOKENS`` for TensorRT-LLM).
            @default the engine's
        :param dtype: ``OPTION_DTYPE`` (fp16, bf16, fp32). @default the checkpoint's
        :param quantize: ``OPTION_QUANTIZE``. Runtime fp8/bitsandbytes for vLLM; leave unset
            for pre-quantized AWQ/GPTQ checkpoints unless you want the planner to size for
            them. @default none
        :param trust_remote_code: ``OPTION_TRUST_REMOTE_CODE``. @default False
        """
        from constructs_llm.engines.lmi import LmiEngine

        return LmiEngine(
            backend=backend,  # type: ignore[arg-type]  # checked in __post_init__
            image=image,
            tensor_parallel_degree=tensor_parallel_degree,
            max_rolling_batch_size=max_rolling_batch_size,
            max_rolling_batch_prefill_tokens=max_rolling_batch_prefill_tokens,
            dtype=dtype,
            quantize=quantize,
            trust_remote_code=trust_remote_code,
        )

    @staticmethod
    def vllm(
        *,
        image: ContainerImage | None = None,
        tensor_parallel_size: int | None = None,
        max_num_seqs: int | None = None,
        max_num_batched_tokens: int | None = None,
        gpu_memory_utilization: float | None = None,
        dtype: str | None = None,
        quantization: str | None = None,
        trust_remote_code: bool = False,
    ) -> VllmEngine:
        """The AWS vLLM SageMaker DLC (``SM_VLLM_<FLAG>`` env becomes ``--<flag>``).

        ``/invocations`` is vLLM's SageMaker router (chat requests, OpenAI SSE stream).
        The CUDA 13 images need a recent host AMI (``InferenceAmiVersion``).

        :param tensor_parallel_size: @default every GPU the copy gets
        :param max_num_seqs: @default vLLM's
        :param max_num_batched_tokens: @default vLLM's
        :param gpu_memory_utilization: @default vLLM's 0.9
        :param dtype: fp16, bf16 or fp32. @default the checkpoint's
        :param quantization: @default detected from the checkpoint
        """
        from constructs_llm.engines.dlc import VllmEngine

        return VllmEngine(
            image=image,
            tensor_parallel_size=tensor_parallel_size,
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens,
            gpu_memory_utilization=gpu_memory_utilization,
            dtype=dtype,
            quantization=quantization,
            trust_remote_code=trust_remote_code,
        )

    @staticmethod
    def sglang(
        *,
        image: ContainerImage | None = None,
        tp_size: int | None = None,
        max_running_requests: int | None = None,
        mem_fraction_static: float | None = None,
        dtype: str | None = None,
        quantization: str | None = None,
        trust_remote_code: bool = False,
    ) -> SglangEngine:
        """The AWS SGLang SageMaker DLC (``SM_SGLANG_<FLAG>`` env becomes ``--<flag>``).

        SGLang's ``/invocations`` accepts only chat requests (``messages``) and streams OpenAI
        SSE chunks.

        :param tp_size: @default every GPU the copy gets
        :param max_running_requests: @default SGLang's
        :param mem_fraction_static: @default SGLang's
        :param dtype: fp16, bf16 or fp32. @default the checkpoint's
        :param quantization: @default detected from the checkpoint
        """
        from constructs_llm.engines.dlc import SglangEngine

        return SglangEngine(
            image=image,
            tp_size=tp_size,
            max_running_requests=max_running_requests,
            mem_fraction_static=mem_fraction_static,
            dtype=dtype,
            quantization=quantization,
            trust_remote_code=trust_remote_code,
        )

    @staticmethod
    def custom(
        *,
        image: ContainerImage,
        stream_format: StreamFormat | str,
        request_format: RequestFormat | str = RequestFormat.MESSAGES,
        accelerator: Accelerator | None = None,
        env: Mapping[str, str] | None = None,
        model_env_name: str | None = "HF_MODEL_ID",
        token_env_names: tuple[str, ...] = HF_TOKEN_ENV_NAMES,
        weight_dtype: str | None = None,
    ) -> CustomEngine:
        """Bring your own serving image; you state its contract.

        :param image: the container image.
        :param stream_format: how it frames streamed tokens (``StreamFormat``).
        :param request_format: the request body it expects. @default MESSAGES
        :param accelerator: "nvidia" or "neuron" to check the instance type. @default any
        :param env: fixed environment of the image. @default none
        :param model_env_name: env name that receives the Hub id or ``/opt/ml/model``; None
            to pass nothing. @default "HF_MODEL_ID"
        :param token_env_names: env names that receive a Hub token. @default HF_TOKEN and
            HUGGING_FACE_HUB_TOKEN
        :param weight_dtype: dtype or quantization for memory sizing. @default the model's
        """
        from constructs_llm.engines.custom import CustomEngine

        return CustomEngine(
            image=image,
            stream_format=stream_format,
            request_format=request_format,
            accelerator=accelerator,
            env=env,
            model_env_name=model_env_name,
            token_env_names=token_env_names,
            weight_dtype=weight_dtype,
        )

    # -- contract -------------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Short engine name, e.g. "tgi" or "lmi-vllm"."""

    @property
    @abc.abstractmethod
    def accelerator(self) -> Accelerator | None:
        """Accelerator the engine serves on; None = any."""

    @property
    @abc.abstractmethod
    def stream_format(self) -> StreamFormat:
        """How the container frames a streamed reply."""

    @property
    @abc.abstractmethod
    def request_format(self) -> RequestFormat:
        """The request body the container expects on ``/invocations``."""

    @property
    def token_env_names(self) -> tuple[str, ...]:
        """Env names that receive the Hugging Face token (a Secrets Manager reference)."""
        return HF_TOKEN_ENV_NAMES

    @property
    def weight_dtype(self) -> str | None:
        """Quantization or dtype the weights load in (memory sizing); None = the model's."""
        return None

    @abc.abstractmethod
    def image_for(self, instance: InstanceType) -> ContainerImage:
        """The image to run on ``instance``: the user's, else the default DLC."""

    def devices_used(self, instance: InstanceType, accelerators: int | None = None) -> int:
        """Accelerator devices one model copy shards over (its tensor-parallel group); by
        default every device the copy gets, at least one."""
        return accelerators or max(instance.accelerator_count, 1)

    @abc.abstractmethod
    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        """The container environment for ``ctx`` (before user ``env`` and the token)."""

    def validate(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        """Problems with this engine on ``ctx`` with ``user_env``; each names value and fix."""
        problems = self._hardware_problems(ctx)
        problems += _token_limit_problems(ctx)
        problems += self._settings_problems(ctx)
        derived = self.derive_env(ctx)
        problems += _user_env_problems(self, ctx, derived, user_env)
        problems += self._effective_problems(ctx, {**derived, **user_env})
        return problems

    def warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        """Things that may work but deserve a look; each says what to verify."""
        return []

    # -- shared helpers -------------------------------------------------------------------

    def _key_rules(self) -> Mapping[str, EnvRule]:
        """Env keys the engine derives that user env may not freely override."""
        return {}

    def _aliases(self) -> Mapping[str, str]:
        """Env names the container reads as another (derived) name: alias -> derived key."""
        return {}

    def _hardware_problems(self, ctx: EngineContext) -> list[str]:
        inst = ctx.instance
        wanted, have = self.accelerator, inst.accelerator
        if wanted is None or have == wanted or (have is None and not inst.family_known):
            return []  # any hardware, a match, or an unknown family (warned about elsewhere)
        kinds = {
            "nvidia": "NVIDIA GPUs",
            "neuron": "AWS Neuron accelerators (Inferentia/Trainium)",
            "habana": "Habana Gaudi accelerators",
        }
        instead = {
            "nvidia": "a GPU instance such as ml.g5.2xlarge",
            "neuron": "an ml.inf2 or ml.trn1 instance",
        }
        if have is None:
            return [
                f"Engine.{self._factory}() serves {kinds[wanted]} but {inst.name} has no "
                f"accelerator; choose {instead[wanted]}"
            ]
        return [
            f"Engine.{self._factory}() serves {kinds[wanted]} but {inst.name} has "
            f"{kinds[have]}; use {_engines_for(have)} on {inst.name}, or choose {instead[wanted]}"
        ]

    @property
    def _factory(self) -> str:
        return self.name.replace("-", "_")

    def _settings_problems(self, ctx: EngineContext) -> list[str]:
        return []

    def _rule_problem(
        self, kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
    ) -> str | None:
        return rule_problem(kind, key, value, derived, ctx)

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[str]:
        return []

    def _parallel_problem(self, setting: str, value: int | None, ctx: EngineContext) -> str | None:
        devices = ctx.devices
        if value is None or not ctx.instance.known or not devices:
            return None
        if value > devices:
            where = f"the {devices} GPU(s) " + (
                f"this copy gets on {ctx.instance.name}"
                if ctx.accelerators
                else f"of {ctx.instance.name}"
            )
            return (
                f"{setting}={value} exceeds {where}; use {setting} <= {devices} or an instance "
                "with more GPUs"
            )
        return None


# -- user env checks ------------------------------------------------------------------------


def _user_env_problems(
    engine: Engine, ctx: EngineContext, derived: Mapping[str, str], user_env: Mapping[str, str]
) -> list[str]:
    rules = engine._key_rules()
    aliases = engine._aliases()
    token_names = _TOKEN_KEYS | set(engine.token_env_names)
    problems: list[str] = []
    for key, value in user_env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append(
                f"env[{key!r}] must map a string to a string, got {type(value).__name__} "
                f"{value!r}; write it as {str(value)!r}"
            )
            continue
        if is_token(value):
            continue  # resolved at deploy time; nothing to compare
        if key in token_names or _HF_TOKEN_VALUE.search(value):
            problems.append(_token_in_env_message(key, value))
            continue
        if _looks_like_timeout(key):
            problems.append(
                f"env {key} looks like a SageMaker startup timeout, but the container never "
                "reads it; set LlmEndpoint(health_check_timeout=Duration.minutes(...), "
                "download_timeout=Duration.minutes(...)) (or the same on InferenceComponent)"
            )
            continue
        target = aliases.get(key, key)
        if target != key and target in derived and derived[target] != value:
            problems.append(
                f"env {key}={value!r} is read by the container as {target}, which the engine "
                f"sets to {derived[target]!r} and which wins; set the engine's own setting "
                f"instead of {key}"
            )
            continue
        problem = engine._rule_problem(rules.get(target), key, value, derived.get(target), ctx)
        if problem:
            problems.append(problem)
    return problems


def rule_problem(
    kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
) -> str | None:
    """The problem with user ``env[key] = value`` for a derived key of ``kind``, if any."""
    if kind is None or value == derived:
        return None
    if (kind is EnvRule.MODEL and value == ctx.model_location) or (
        kind is EnvRule.REVISION and value == ctx.revision
    ):
        return None  # restates the source under another name the container reads
    if kind is EnvRule.MODEL:
        return (
            f"env {key}={value!r} contradicts the model source {ctx.model_location!r}; "
            f"choose the model with source=ModelSource.hugging_face({value!r}) (or s3(...)) "
            "instead of env"
        )
    if kind is EnvRule.REVISION:
        return (
            f"env {key}={value!r} contradicts the source revision {ctx.revision!r}; pass "
            f"ModelSource.hugging_face(..., revision={value!r}) instead"
        )
    if kind is EnvRule.LIMIT:
        setting = "max_input_tokens" if "INPUT" in key else "max_total_tokens"
        current = getattr(ctx, setting)
        clash = f"contradicts {setting}={current}" if current else f"bypasses {setting}"
        return (
            f"env {key}={value!r} {clash} of the model; set {setting}={value} on the model "
            "instead, so memory sizing and validation use it"
        )
    if kind is EnvRule.PROTOCOL:
        return (
            f"env {key}={value!r} changes the request/stream contract the engine sets "
            f"({key}={derived!r}) and the streaming invoker relies on; remove it, or describe "
            "your container with Engine.custom(image=..., stream_format=...)"
        )
    return _parallel_env_problem(key, value, ctx)


def _parallel_env_problem(key: str, value: str, ctx: EngineContext) -> str | None:
    if key == "OPTION_TENSOR_PARALLEL_DEGREE" and value.strip().lower() == "max":
        return None
    if not value.strip().isdigit() or int(value) < 1:
        return f"env {key}={value!r} must be a positive integer"
    neuron = key == "HF_NUM_CORES"
    available = available_cores(ctx) if neuron else (ctx.devices or None)
    if available is not None and ctx.instance.known and int(value) > available:
        unit = "NeuronCores" if neuron else "GPUs"
        return (
            f"env {key}={value} exceeds the {available} {unit} "
            f"{'this copy gets on' if ctx.accelerators else 'of'} {ctx.instance.name}; "
            f"use at most {available}"
        )
    return None


def _token_in_env_message(key: str, value: str) -> str:
    shown = f"'{value[:5]}…'" if value.startswith("hf_") else "a value"
    return (
        f"env {key} holds {shown} that looks like a Hugging Face token in plain text (it would "
        "be readable in the template and in DescribeModel); store it in Secrets Manager and "
        "pass ModelSource.hugging_face(model_id, token=secret)"
    )


def _looks_like_timeout(key: str) -> bool:
    flat = re.sub(r"[^A-Z]", "", key.upper())
    return ("HEALTHCHECK" in flat and "TIMEOUT" in flat) or "DOWNLOADTIMEOUT" in flat


# -- helpers --------------------------------------------------------------------------------


def _token_limit_problems(ctx: EngineContext) -> list[str]:
    low, high = ctx.max_input_tokens, ctx.max_total_tokens
    if low is not None and high is not None and low >= high:
        return [
            f"max_input_tokens ({low}) must be less than max_total_tokens ({high}), which "
            f"counts the prompt plus the generated tokens; raise max_total_tokens above {low}"
        ]
    return []


def cores_per_chip(instance: InstanceType) -> int | None:
    """NeuronCores per Neuron chip (2 on Inferentia2 and Trainium1); None without data."""
    if not instance.neuron_cores or not instance.accelerator_count:
        return None
    return instance.neuron_cores // instance.accelerator_count


def available_cores(ctx: EngineContext) -> int | None:
    """NeuronCores of the chips the copy gets; None without Neuron data."""
    per_chip = cores_per_chip(ctx.instance)
    if per_chip is None:
        return None
    return (ctx.accelerators or ctx.instance.accelerator_count) * per_chip


def _engines_for(accelerator: str | None) -> str:
    if accelerator == "neuron":
        return "Engine.tgi_neuronx()"
    if accelerator == "nvidia":
        return "Engine.tgi(), Engine.lmi(), Engine.vllm() or Engine.sglang()"
    return "Engine.custom(image=...) with an image built for it"
