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

Each engine lives in ``constructs_llm/engines/`` as a frozen dataclass whose fields are its
settings; a factory here is that dataclass's constructor, so a setting is written once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import ParamSpec

from constructs_llm.engines.base import ServingEngine
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.context import Accelerator, EngineContext
from constructs_llm.engines.custom import CustomEngine
from constructs_llm.engines.dlc import SglangEngine, VllmEngine
from constructs_llm.engines.lmi import LmiEngine
from constructs_llm.engines.parsers import ParserChoice
from constructs_llm.engines.signals import EngineSignals
from constructs_llm.engines.tei import TeiEngine
from constructs_llm.engines.tgi import TgiEngine, TgiNeuronxEngine
from constructs_llm.engines.tools import ToolCalling
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.model.container_image import ContainerImage
from constructs_llm.problems import fail
from constructs_llm.streaming.formats import ModelKind, RequestFormat, StreamFormat

ENGINE_FIX = (
    "use Engine.tgi(), Engine.tgi_neuronx(), Engine.lmi(), Engine.vllm(), Engine.sglang(), "
    "Engine.tei() (embedding models) or Engine.custom(image=..., stream_format=...)"
)

_P = ParamSpec("_P")


def _factory(implementation: Callable[_P, ServingEngine]) -> Callable[_P, Engine]:
    """``Engine.<name>(...)``: builds the engine's dataclass and wraps it; same keywords and
    docstring as the dataclass."""

    def make(*args: _P.args, **kwargs: _P.kwargs) -> Engine:
        return Engine(implementation(*args, **kwargs))

    make.__doc__ = implementation.__doc__
    make.__signature__ = inspect.signature(implementation)  # type: ignore[attr-defined]
    # Named as users write it, so a factory passed uncalled is named in messages.
    make.__name__ = implementation.factory_name  # type: ignore[attr-defined]
    make.__qualname__ = f"Engine.{implementation.factory_name}"  # type: ignore[attr-defined]
    return make


class Engine:
    """A serving container contract. Create one with a factory: ``Engine.tgi()``,
    ``Engine.tgi_neuronx()``, ``Engine.lmi()``, ``Engine.vllm()``, ``Engine.sglang()``,
    ``Engine.tei()`` (embedding models) or ``Engine.custom(image=..., stream_format=...)``; or
    wrap your own :class:`~constructs_llm.engines.base.ServingEngine` with
    ``Engine(implementation)``.

    Every engine exposes ``name``, ``accelerator`` ("nvidia", "neuron" or None = any),
    ``stream_format``, ``request_format``, ``model_kind`` (chat or embedding),
    ``token_env_names``, ``weight_dtype``, ``notes``, ``signals`` (its Prometheus metrics), and
    :meth:`image_for`, :meth:`derive_env`, :meth:`validate`, :meth:`warnings`,
    :meth:`tool_calling`, :meth:`reasoning_parsing`, :meth:`for_model_kind`.
    """

    __slots__ = ("implementation",)

    tgi = staticmethod(_factory(TgiEngine))
    tgi_neuronx = staticmethod(_factory(TgiNeuronxEngine))
    lmi = staticmethod(_factory(LmiEngine))
    vllm = staticmethod(_factory(VllmEngine))
    sglang = staticmethod(_factory(SglangEngine))
    tei = staticmethod(_factory(TeiEngine))
    custom = staticmethod(_factory(CustomEngine))

    def __init__(self, implementation: ServingEngine) -> None:
        if not isinstance(implementation, ServingEngine):
            fail(
                "",
                f"Engine(...) wraps a ServingEngine, got {type(implementation).__name__}; use a "
                "factory such as Engine.tgi() or Engine.custom(image=..., stream_format=...)",
            )
        self.implementation = implementation

    def __repr__(self) -> str:
        return f"Engine({self.implementation!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Engine) and other.implementation == self.implementation

    __hash__ = None  # type: ignore[assignment]  # settings may hold dicts

    # -- the contract, answered by the implementation -------------------------------------

    @property
    def name(self) -> str:
        """Short engine name, e.g. "tgi" or "lmi-vllm"."""
        return self.implementation.name

    @property
    def accelerator(self) -> Accelerator | None:
        """Accelerator the engine serves on; None = any."""
        return self.implementation.accelerator

    @property
    def stream_format(self) -> StreamFormat:
        """How the container frames a streamed reply."""
        return self.implementation.stream_format

    @property
    def request_format(self) -> RequestFormat:
        """The request body the container expects on ``/invocations``."""
        return self.implementation.request_format

    @property
    def chat_completions_path(self) -> ChatCompletionsPath:
        """What the container answers on ``POST /v1/chat/completions`` (SageMaker's own OpenAI
        route calls that path)."""
        return self.implementation.chat_completions_path

    @property
    def model_kind(self) -> ModelKind:
        """What the served model answers: ``ModelKind.CHAT`` or ``ModelKind.EMBEDDING``."""
        return self.implementation.model_kind

    @property
    def batch_tokens(self) -> int | None:
        """An embedding engine's largest batch in tokens (sizes its activations)."""
        return self.implementation.batch_tokens

    @property
    def max_inputs_per_call(self) -> int | None:
        """Inputs an embedding engine takes in one request (the invoker splits longer lists)."""
        return self.implementation.max_inputs_per_call

    @property
    def token_env_names(self) -> tuple[str, ...]:
        """Env names that receive the Hugging Face token (a Secrets Manager reference)."""
        return self.implementation.token_env_names

    @property
    def weight_dtype(self) -> str | None:
        """Quantization or dtype the weights load in (memory sizing); None = the model's."""
        return self.implementation.weight_dtype

    def quantization_asked(
        self, user_env: Mapping[str, str] | None = None
    ) -> tuple[str, str] | None:
        """The quantization the container is told to load, as written (``Engine.vllm(
        quantization='awq')`` or ``env SM_VLLM_QUANTIZATION='awq'``), and its value; None when
        the engine reads it from the checkpoint.

        :param user_env: the model's extra env. @default none
        """
        return self.implementation.quantization_asked(user_env or {})

    @property
    def notes(self) -> tuple[str, ...]:
        """One-line facts a reviewer should see at synth, such as an engine's upstream status;
        each ``LlmModel`` with this engine records them as synth notes."""
        return self.implementation.notes

    @property
    def signals(self) -> EngineSignals | None:
        """The metrics it serves for its KV cache, queue and token latencies (vLLM, SGLang),
        which SageMaker's detailed observability scrapes; None for the other engines."""
        return self.implementation.signals

    def image_for(self, instance: InstanceType) -> ContainerImage:
        """The image to run on ``instance``: the user's, else the default DLC."""
        return self.implementation.image_for(instance)

    def devices_used(self, instance: InstanceType, accelerators: int | None = None) -> int:
        """Accelerator devices one model copy shards over (its tensor-parallel group)."""
        return self.implementation.devices_used(instance, accelerators)

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        """The container environment for ``ctx`` (before user ``env`` and the token)."""
        return self.implementation.derive_env(ctx)

    def validate(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        """Problems with this engine on ``ctx`` with ``user_env``; each names value and fix."""
        return self.implementation.validate(ctx, user_env)

    def warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        """Things that may work but deserve a look; each says what to verify."""
        implementation = self.implementation
        return [
            *implementation.warnings(ctx, user_env),
            *implementation.precision_warnings(ctx, user_env),
        ]

    def tool_calling(
        self, *, family: str | None = None, user_env: Mapping[str, str] | None = None
    ) -> ToolCalling:
        """Whether the engine serves OpenAI tool calls for a model of ``family`` (a family of
        the packaged model table) with ``user_env``, and with which parser.

        :param family: @default None (a model the table does not know)
        :param user_env: the model's extra env. @default none
        """
        return self.implementation.tool_calling(family=family, user_env=user_env)

    def reasoning_parsing(self, *, family: str | None = None) -> ParserChoice:
        """The reasoning parser the engine runs for a model of ``family`` (a family of the
        packaged model table), or why it runs none (``parser`` None, ``reason`` naming the fix).

        :param family: @default None (a model the table does not know)
        """
        return self.implementation.reasoning_parsing(family=family)

    def for_model_kind(self, kind: ModelKind) -> Engine:
        """The engine as it serves a model of ``kind``: ``Engine.vllm()`` and
        ``Engine.sglang()`` left at ``embedding=None`` serve an embedding model as one."""
        serving = self.implementation.for_model_kind(kind)
        return self if serving is self.implementation else Engine(serving)
