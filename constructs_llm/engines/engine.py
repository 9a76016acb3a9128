"""Serving engines: the container contract of TGI, TGI NeuronX, LMI, vLLM, SGLang, TEI (embedding
models) or your own image.

An :class:`Engine` turns typed settings plus the hardware of one model copy into the container
environment, picks the default Deep Learning Container for its accelerator, and tells the
streaming invoker which request body to send (:attr:`Engine.request_format`) and how the reply
streams (:attr:`Engine.stream_format`). Defaults follow serving best practice: tensor
parallelism over every GPU (or NeuronCore) the model copy gets, continuous batching,
messages/chat requests, and streaming with ``"stream": true`` per request.

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

Each engine lives in ``constructs_llm/engines/`` as a frozen dataclass, a subclass of
:class:`Engine` whose fields are its settings; a factory (``Engine.tgi``, ...) is that class
itself, so ``Engine.tgi(...)`` returns the engine object and a setting is written once.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from constructs_llm.contract import ModelKind, RequestFormat, StreamFormat
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.context import HF_TOKEN_ENV_NAMES, Accelerator, EngineContext, EnvRule
from constructs_llm.engines.env_rules import (
    EnvContract,
    rule_problem,
    token_limit_problems,
    user_env_problems,
)
from constructs_llm.engines.env_shape import env_shape_problems
from constructs_llm.engines.parsers import ParserChoice
from constructs_llm.engines.signals import EngineSignals
from constructs_llm.engines.tools import ToolCalling, tools_off
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.precision import (
    PrecisionCheck,
    precision_of,
    precision_problem,
    precision_warning,
)
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem

if TYPE_CHECKING:
    from constructs_llm.engines.custom import CustomEngine
    from constructs_llm.engines.dlc import SglangEngine, VllmEngine
    from constructs_llm.engines.lmi import LmiEngine
    from constructs_llm.engines.tei import TeiEngine
    from constructs_llm.engines.tgi import TgiEngine, TgiNeuronxEngine

_Found = TypeVar("_Found")


ENGINE_FIX = (
    "use Engine.tgi(), Engine.tgi_neuronx(), Engine.lmi(), Engine.vllm(), Engine.sglang(), "
    "Engine.tei() (embedding models) or Engine.custom(image=..., stream_format=...)"
)


class _Factory:
    """``Engine.<name>``: the engine's class, whose constructor is the factory (its keywords
    are the engine's settings), imported on first use so each engine module can import
    :class:`Engine`."""

    def __init__(self, module: str, name: str) -> None:
        self._module, self._name = f"constructs_llm.engines.{module}", name

    def __get__(self, instance: object, owner: type) -> Any:
        return getattr(importlib.import_module(self._module), self._name)


class Engine(abc.ABC):
    """A serving container contract. Create one with a factory: ``Engine.tgi()``,
    ``Engine.tgi_neuronx()``, ``Engine.lmi()``, ``Engine.vllm()``, ``Engine.sglang()``,
    ``Engine.tei()`` (embedding models) or ``Engine.custom(image=..., stream_format=...)``;
    each returns the engine itself, a frozen dataclass whose fields are its settings.

    Every engine exposes ``name``, ``accelerator`` ("nvidia", "neuron" or None = any),
    ``stream_format``, ``request_format``, ``model_kind`` (chat or embedding),
    ``token_env_names``, ``weight_dtype``, ``notes``, ``signals`` (its Prometheus metrics), and
    :meth:`image_for`, :meth:`derive_env`, :meth:`validate`, :meth:`warnings`,
    :meth:`tool_calling`, :meth:`reasoning_parsing`, :meth:`for_model_kind`.
    ``factory_name`` names its factory in messages; an engine whose contract is fixed states
    ``name``, ``accelerator``, ``stream_format`` and ``request_format`` as class attributes.
    """

    if TYPE_CHECKING:
        tgi: ClassVar[type[TgiEngine]]
        tgi_neuronx: ClassVar[type[TgiNeuronxEngine]]
        lmi: ClassVar[type[LmiEngine]]
        vllm: ClassVar[type[VllmEngine]]
        sglang: ClassVar[type[SglangEngine]]
        tei: ClassVar[type[TeiEngine]]
        custom: ClassVar[type[CustomEngine]]
    else:
        tgi = _Factory("tgi", "TgiEngine")
        tgi_neuronx = _Factory("tgi", "TgiNeuronxEngine")
        lmi = _Factory("lmi", "LmiEngine")
        vllm = _Factory("dlc", "VllmEngine")
        sglang = _Factory("dlc", "SglangEngine")
        tei = _Factory("tei", "TeiEngine")
        custom = _Factory("custom", "CustomEngine")

    factory_name: ClassVar[str]
    #: How the container frames a streamed reply.
    stream_format: StreamFormat
    #: The request body the container expects on ``/invocations``.
    request_format: RequestFormat
    #: What the container answers on ``POST /v1/chat/completions``, the path SageMaker's own
    #: OpenAI route calls (each engine cites its source).
    chat_completions_path: ChatCompletionsPath
    #: Tool calling: None = on where the engine and model are known to serve it, True = asked
    #: for (fails at synth where it cannot be served), False = off. Engines that serve tools
    #: take it as a setting.
    tool_calls: bool | None = None
    #: Env names whose values name the dtype, and the quantization, the container runs
    #: (checked against the GPU's compute capability, ``hardware/precision.py``, and the
    #: quantization against the checkpoint's, ``model/source_checks.py``).
    _dtype_keys: ClassVar[tuple[str, ...]] = ()
    _quantization_keys: ClassVar[tuple[str, ...]] = ()

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Short engine name, e.g. "tgi" or "lmi-vllm"."""

    @property
    @abc.abstractmethod
    def accelerator(self) -> Accelerator | None:
        """Accelerator the engine serves on; None = any."""

    @property
    def model_kind(self) -> ModelKind:
        """What the served model answers: chat, or embeddings (from the request format)."""
        return self.request_format.kind

    @property
    def batch_tokens(self) -> int | None:
        """An embedding engine's largest batch in tokens (its activation budget); None for
        chat engines, whose KV cache the memory plan sizes instead."""
        return None

    @property
    def max_inputs_per_call(self) -> int | None:
        """Inputs an embedding engine takes in one request; the invoker splits a longer
        ``input`` list into calls of at most this many. None: no limit known."""
        return None

    @property
    def token_env_names(self) -> tuple[str, ...]:
        """Env names that receive the Hugging Face token (a Secrets Manager reference)."""
        return HF_TOKEN_ENV_NAMES

    @property
    def weight_dtype(self) -> str | None:
        """Quantization or dtype the weights load in (memory sizing); None = the model's."""
        return None

    @property
    def notes(self) -> tuple[str, ...]:
        """One-line facts a reviewer should see at synth (each model with this engine records
        them as synth notes). @default none"""
        return ()

    @property
    def signals(self) -> EngineSignals | None:
        """The metrics the engine serves for its KV cache, queue and token latencies, which
        SageMaker's detailed observability scrapes (``engines/signals.py``). @default none"""
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

    def validate(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[Problem]:
        """Problems with this engine on ``ctx`` with ``user_env``; each names value and fix."""
        problems = self._hardware_problems(ctx)
        problems += token_limit_problems(ctx)
        problems += self._settings_problems(ctx)
        problems += self._tool_problems(ctx, user_env)
        derived = self.derive_env(ctx)
        problems += user_env_problems(self._env_contract(), ctx, derived, user_env)
        effective = {**derived, **user_env}
        problems += env_shape_problems(_strings(user_env), _strings(effective), self.env_name_of)
        problems += self._effective_problems(ctx, effective)
        problems += self._precision_messages(ctx, effective, precision_problem)
        return problems

    def env_name_of(self, flag: str) -> str | None:
        """The env name this engine's container reads for the command-line flag ``flag``
        (``max-model-len``), or None where it reads no flags from env. @default None"""
        return None

    def precision_warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        """A precision the GPU runs only in part (FP8 weight-only below compute capability
        8.9), one message each."""
        effective = {**self.derive_env(ctx), **user_env}
        return self._precision_messages(ctx, effective, precision_warning)

    def _precision_messages(
        self, ctx: EngineContext, env: Mapping[str, str], check: PrecisionCheck[_Found]
    ) -> list[_Found]:
        asked = precision_of(env, (*self._dtype_keys, *self._quantization_keys))
        found = (
            check(a, ctx.instance, factory=self.factory_name, fp8_from=self._fp8_from())
            for a in asked
        )
        return [message for message in found if message]

    def warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        """Things that may work but deserve a look; each says what to verify."""
        return [*self._warnings(ctx, user_env), *self.precision_warnings(ctx, user_env)]

    def _warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        """The engine's own warnings. @default none"""
        return []

    def tool_calling(
        self, *, family: str | None = None, user_env: Mapping[str, str] | None = None
    ) -> ToolCalling:
        """Whether this engine serves OpenAI tool calls for a model of ``family`` with
        ``user_env``, and with which parser. @default off: an engine says how it serves tools"""
        return tools_off(
            f"Engine.{self.factory_name}() does not serve tool calls; drop tool_calls=True"
        )

    def reasoning_parsing(self, *, family: str | None = None) -> ParserChoice:
        """The reasoning parser this engine runs for a model of ``family``, or why none runs.
        @default none: an engine says how it parses reasoning"""
        return ParserChoice(reason=f"Engine.{self.factory_name}() takes no reasoning parser")

    def for_model_kind(self, kind: ModelKind) -> Engine:
        """This engine as it serves a model of ``kind`` (the packaged table's): an engine
        that serves both kinds and was not told which (``embedding=None``) serves that one.
        @default this engine, unchanged"""
        return self

    # -- what subclasses refine -------------------------------------------------------------

    def _key_rules(self) -> Mapping[str, EnvRule]:
        """Env keys the engine derives that user env may not freely override."""
        return {}

    def _aliases(self) -> Mapping[str, str]:
        """Env names the container reads as another (derived) name: alias -> derived key."""
        return {}

    def _rule_problem(
        self, kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
    ) -> Problem | None:
        return rule_problem(kind, key, value, derived, ctx)

    def _settings_problems(self, ctx: EngineContext) -> list[Problem]:
        return []

    def quantization_asked(
        self, user_env: Mapping[str, str] | None = None
    ) -> tuple[str, str] | None:
        """The quantization the container is told to load, as written (``Engine.vllm(
        quantization='awq')`` or ``env SM_VLLM_QUANTIZATION='awq'``), and its value; None when
        the engine reads it from the checkpoint.

        :param user_env: the model's extra env. @default none
        """
        for key in self._quantization_keys:
            value = (user_env or {}).get(key, "").strip()
            if value:
                return f"env {key}={value!r}", value
        return None

    def _fp8_from(self) -> tuple[int, int]:
        """The compute capability from which the engine runs FP8 at all (weight-only below
        8.9): 8.0 unless the engine says otherwise (TGI's Marlin FP8 kernels)."""
        return (8, 0)

    def _tool_problems(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[Problem]:
        """``tool_calls=True`` where this model cannot be served."""
        if self.tool_calls is not True:
            return []
        calling = self.tool_calling(family=ctx.model_family, user_env=user_env)
        return [] if calling.served else [_tools_not_served(self.factory_name, calling.reason)]

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[Problem]:
        return []

    def _hardware_problems(self, ctx: EngineContext) -> list[Problem]:
        inst, wanted = ctx.instance, self.accelerator
        if wanted is None or inst.accelerator == wanted:
            return []
        if inst.accelerator is None and not inst.family_known:
            return []  # an unknown family (warned about elsewhere)
        return [_wrong_hardware(self.factory_name, wanted, inst)]

    def _parallel_problem(
        self, setting: str, value: int | None, ctx: EngineContext
    ) -> Problem | None:
        if value is None or not ctx.instance.known or not ctx.devices:
            return None
        return _parallel_above(setting, value, ctx) if value > ctx.devices else None

    def _env_contract(self) -> EnvContract:
        return EnvContract(
            rules=self._key_rules(),
            aliases=self._aliases(),
            token_env_names=self.token_env_names,
            check=self._rule_problem,
        )


_KINDS = {
    "nvidia": "NVIDIA GPUs",
    "neuron": "AWS Neuron accelerators (Inferentia/Trainium)",
    "habana": "Habana Gaudi accelerators",  # ml.dl1: no built-in engine serves it
}
_INSTEAD = {
    "nvidia": "a GPU instance such as ml.g5.2xlarge",
    "neuron": "an ml.inf2 or ml.trn1 instance",
}


def _wrong_hardware(factory: str, wanted: str, inst: InstanceType) -> Problem:
    have = inst.accelerator
    if have is None:
        return Problem.of(
            "engine",
            factory,
            f"Engine.{factory}() serves {_KINDS[wanted]} but {inst.name} has no accelerator;",
            f"choose {_INSTEAD[wanted]}",
        )
    return Problem.of(
        "engine",
        factory,
        f"Engine.{factory}() serves {_KINDS[wanted]} but {inst.name} has {_KINDS[have]};",
        f"use {_engines_for(have)} on {inst.name}, or choose {_INSTEAD[wanted]}",
    )


def _engines_for(accelerator: str) -> str:
    if accelerator == "neuron":
        return "Engine.tgi_neuronx()"
    if accelerator == "nvidia":
        return "Engine.tgi(), Engine.lmi(), Engine.vllm() or Engine.sglang()"
    return "Engine.custom(image=...) with an image built for it"


def _parallel_above(setting: str, value: int, ctx: EngineContext) -> Problem:
    return Problem.of(
        setting,
        value,
        f"{setting}={value} exceeds the {ctx.devices} GPU(s) {ctx.where};",
        f"use {setting} <= {ctx.devices} or an instance with more GPUs",
    )


def _tools_not_served(factory: str, why: str) -> Problem:
    return Problem.of(
        "tool_calls",
        True,
        f"Engine.{factory}(tool_calls=True) cannot be served:",
        why,
    )


def _strings(env: Mapping[Any, Any]) -> dict[str, str]:
    """The entries of ``env`` that are strings (the others are reported on their own)."""
    return {k: v for k, v in env.items() if isinstance(k, str) and isinstance(v, str)}
