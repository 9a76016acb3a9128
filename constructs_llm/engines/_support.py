"""What the engine implementations share: DLC engine bases, env building, setting checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, ClassVar

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.engines.context import Accelerator, EngineContext, decimal_int
from constructs_llm.engines.engine import Engine
from constructs_llm.engines.settings import DTYPE_ALIASES, SettingsChecked
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem
from constructs_llm.sizing.memory import DTYPE_BYTES
from constructs_llm.sizing.planner import large_step_gpu

VLLM_QUANTIZE = ("awq", "gptq", "marlin", "fp8", "bitsandbytes", "compressed-tensors")
#: Bytes per weight the planner assumes for quantizations outside ``DTYPE_BYTES``
#: (lower bound, so a plan never rejects a model that could fit).
_EXTRA_QUANT_BYTES = {"compressed-tensors": "int4", "exl2": "int4", "smoothquant": "int8"}


TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
#: vLLM runs FP8 checkpoints from compute capability 7.5, weight-only below 8.9 ("FP8 models
#: will run on compute capability >= 7.5 (Turing) as weight-only W8A16, utilizing FP8 Marlin",
#: vllm-project/vllm docs/features/quantization/fp8.md).
VLLM_FP8_FROM = (7, 5)


class DlcEngine(SettingsChecked, Engine):
    """An engine served by an AWS Deep Learning Container, whose default image is the newest
    the library knows for its family. Chat requests and an OpenAI stream unless overridden.
    """

    stream_format: StreamFormat = StreamFormat.OPENAI
    request_format: RequestFormat = RequestFormat.MESSAGES
    image: ContainerImage | None  # a field of each engine: the user's image, if any

    @property
    def _image_family(self) -> str:
        """The engine family in ``data/dlc_images.json``."""
        return self.name

    def image_for(self, instance: InstanceType) -> ContainerImage:
        return self.image or ContainerImage.dlc_default(self._image_family)


class GpuEngine(DlcEngine):
    """A DLC engine on NVIDIA GPUs that shards over every GPU the copy gets unless the
    ``_parallel_setting`` field sets the tensor-parallel size.
    """

    accelerator: ClassVar[Accelerator | None] = "nvidia"
    _parallel_setting: ClassVar[str]  # factory kwarg (a field) for the tensor-parallel size
    _quantize_setting: ClassVar[str] = "quantize"  # factory kwarg (a field) for quantization
    dtype: str | None  # a field of each engine

    @property
    def _tensor_parallel(self) -> int | None:
        value: int | None = getattr(self, self._parallel_setting)
        return value

    @property
    def weight_dtype(self) -> str | None:
        return _planned_weight_dtype(getattr(self, self._quantize_setting), self.dtype)

    def quantization_asked(
        self, user_env: Mapping[str, str] | None = None
    ) -> tuple[str, str] | None:
        asked = super().quantization_asked(user_env)
        value = getattr(self, self._quantize_setting)
        if asked is not None or not value:
            return asked
        return f"Engine.{self.factory_name}({self._quantize_setting}={value!r})", str(value)

    def devices_used(self, instance: InstanceType, accelerators: int | None = None) -> int:
        return self._tensor_parallel or super().devices_used(instance, accelerators)

    def _settings_problems(self, ctx: EngineContext) -> list[Problem]:
        setting = f"Engine.{self.factory_name}({self._parallel_setting})"
        return present([self._parallel_problem(setting, self._tensor_parallel, ctx)])


def dtype_name(dtype: str | None, names: Mapping[str, str]) -> str | None:
    """The engine's spelling of a dtype (fp16/bf16/fp32 and their aliases)."""
    if dtype is None:
        return None
    return names.get(DTYPE_ALIASES[dtype.lower()], dtype)


def _planned_weight_dtype(quantize: str | None, dtype: str | None) -> str | None:
    """The planner's name for how the weights load: the quantization, else the dtype."""
    if quantize:
        return _EXTRA_QUANT_BYTES.get(quantize, quantize)
    return DTYPE_ALIASES.get(dtype.lower(), dtype) if dtype else None


def planner_dtype(name: str) -> str | None:
    key = name.lower()
    return key if key in DTYPE_BYTES else None


def enum_value(kind: type[Enum], value: object, name: str, problems: list[Problem]) -> Any:
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(str(m.value) for m in kind)
        problems.append(
            Problem.of(
                name,
                value,
                f"{name} must be one of {allowed}, got {value!r}",
            )
        )
        return None


def put(env: dict[str, str], key: str, value: object) -> None:
    """Set ``env[key]`` to ``str(value)`` unless the value is None (engine default)."""
    if value is not None:
        env[key] = str(value)


def present(items: Sequence[Problem | None]) -> list[Problem]:
    return [i for i in items if i]


def int_value(env: Mapping[str, str], key: str) -> int | None:
    value = env.get(key)
    return decimal_int(value) if value is not None else None


def at_least(
    env: Mapping[str, str], key: str, floor_key: str, setting: str, *, what: str | None = None
) -> Problem | None:
    """A problem when the effective ``env[key]`` is below ``env[floor_key]``."""
    value, floor = int_value(env, key), int_value(env, floor_key)
    if value is None or floor is None or value >= floor:
        return None
    why = what or f"the engine refuses to start with {key} < {floor_key}"
    return _below_floor(key, value, floor_key, floor, setting, why)


def _below_floor(
    key: str, value: int, floor_key: str, floor: int, setting: str, why: str
) -> Problem:
    return Problem.of(
        f"env[{key!r}]",
        value,
        f"{key}={value} is below {floor_key}={floor} ({why});",
        f"raise {setting} to at least {floor} or lower {floor_key}",
    )


def vllm_full_context_problem(ctx: EngineContext) -> Problem | None:
    """vLLM refuses to start when its KV cache cannot hold one full-context sequence."""
    plan = ctx.plan
    if plan is None or ctx.max_total_tokens is not None or plan.max_concurrent_sequences >= 1:
        return None
    return Problem.of(
        "max_total_tokens",
        None,
        f"vLLM sizes for the full {plan.max_total_tokens:,}-token context of {plan.model} by "
        f"default, but the KV cache on {plan.instance} holds about "
        f"{plan.max_batch_total_tokens:,} tokens, so it would fail at start-up;",
        f"set max_total_tokens <= {plan.max_batch_total_tokens:,} on the model",
    )


def vllm_default_max_num_seqs(instance: InstanceType) -> int:
    """The ``max_num_seqs`` vLLM itself picks for a server on ``instance``'s GPUs: 1024 on
    GPUs with at least 70 GiB that are not A100s (H100, H200, B200, RTX PRO 6000), else 256;
    256 too when the GPU is unknown, as vLLM does when it cannot query the device
    (``EngineArgs.get_batch_defaults`` in vllm-project/vllm: ``vllm/engine/arg_utils.py`` at
    99d7eb5d).

    vLLM's scheduler admits a waiting request only while free KV-cache blocks hold its next
    tokens, and preempts the newest running request when the running ones need more blocks
    than are free (``Scheduler.schedule``, vllm-project/vllm: ``vllm/v1/core/sched/scheduler.py``);
    the cap only bounds that admission, so chat requests far shorter than ``max_total_tokens`` share
    the cache (vLLM's tuning guide suggests lowering it only when preemptions are frequent:
    docs.vllm.ai/en/stable/configuration/optimization/, "Preemption").
    """
    return 1024 if large_step_gpu(instance) else 256


def planned_batch(ctx: EngineContext, default: int | None, *, cap: int | None = None) -> int | None:
    """Concurrent full-length sequences the plan fits, capped by the engine default: the batch
    size of engines that allocate for the whole batch at its full length (TensorRT-LLM's
    engine shapes and its default ``GUARANTEED_NO_EVICT`` scheduler, Neuron's compiled
    ``batch_size x sequence_length``). Paged engines (vLLM, SGLang, TGI) admit by free KV
    blocks instead and must not get this cap."""
    plan = ctx.plan
    limit = cap or default
    if plan is None or ctx.max_total_tokens is None or plan.max_concurrent_sequences < 1:
        return default
    return min(limit, plan.max_concurrent_sequences) if limit else plan.max_concurrent_sequences
