"""The memory planner's arithmetic and findings, for ``sizing.plan_memory`` (pure Python)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from constructs_llm.errors import SizingError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import Problem, fail

GIB = 1024**3


class ModelShape(Protocol):
    """The figures of a model the arithmetic reads (``sizing.ModelArchitecture``)."""

    @property
    def layers(self) -> int: ...

    @property
    def kv_heads(self) -> int: ...

    @property
    def head_dim(self) -> int: ...

    @property
    def context_length(self) -> int: ...

    @property
    def attention_heads(self) -> int | None: ...

    @property
    def notes(self) -> tuple[str, ...]: ...

    @property
    def name(self) -> str: ...

    def kv_bytes_per_token(self, kv_dtype_bytes: float = 2) -> int: ...

    def weights_bytes(self, dtype_bytes: float) -> int: ...


class EngineSizing(Protocol):
    """What the planner needs from an engine (``engines.engine.Engine`` provides it)."""

    @property
    def weight_dtype(self) -> str | None:
        """Quantization or dtype of the weights as loaded; None = the model's default."""
        ...

    def devices_used(self, instance: InstanceType, accelerators: int | None) -> int:
        """Accelerator devices one model copy shards over (its tensor-parallel group)."""
        ...


@dataclass(frozen=True)
class Memory:
    """The arithmetic of one plan (GiB, bytes and tokens)."""

    devices: int
    seq_len: int
    usable_gib: float
    dtype: str
    dtype_bytes: float
    weights_gib: float
    kv_heads_per_device: int
    kv_per_device: int
    kv_whole: int
    budget_gib: float
    batch_tokens: int

    @classmethod
    def of(
        cls,
        arch: ModelShape,
        *,
        devices: int,
        usable_gib: float,
        dtype: str,
        dtype_bytes: float,
        kv_bytes: float | None,
        seq_len: int,
    ) -> Memory:
        # Quantized weights keep a 16-bit KV cache unless the engine is told otherwise.
        kv_bytes = kv_bytes or (4.0 if dtype_bytes == 4 else 2.0)
        weights = arch.weights_bytes(dtype_bytes) / GIB
        # With TP above the KV heads, every device still holds one whole head.
        kv_heads_per_device = max(1, math.ceil(arch.kv_heads / devices))
        kv_per_device = int(2 * arch.layers * kv_heads_per_device * arch.head_dim * kv_bytes)
        budget = max(0.0, usable_gib - weights)
        # Every device holds its share of each token, so the tightest device bounds the batch.
        batch = int(budget * GIB / devices // kv_per_device) if kv_per_device else 0
        return cls(
            devices=devices,
            seq_len=seq_len,
            usable_gib=usable_gib,
            dtype=dtype,
            dtype_bytes=dtype_bytes,
            weights_gib=weights,
            kv_heads_per_device=kv_heads_per_device,
            kv_per_device=kv_per_device,
            kv_whole=arch.kv_bytes_per_token(kv_bytes),
            budget_gib=budget,
            batch_tokens=batch,
        )

    @property
    def concurrent(self) -> int:
        return self.batch_tokens // self.seq_len


def fit_problems(
    arch: ModelShape,
    inst: InstanceType,
    memory: Memory,
    where: str,
    reserve: str,
    max_total_tokens: int | None,
) -> list[Problem]:
    problems = []
    if max_total_tokens is not None and max_total_tokens > arch.context_length:
        problems.append(
            Problem.of(
                "max_total_tokens",
                max_total_tokens,
                f"max_total_tokens {max_total_tokens:,} exceeds the {arch.context_length:,}-token "
                f"context of {arch.name};",
                f"set max_total_tokens <= {arch.context_length:,}",
                kind=SizingError,
            )
        )
    if inst.accelerator == "nvidia":
        problems.extend(_head_split_problems(arch, memory.devices, inst))
    if memory.weights_gib > memory.usable_gib:
        hint = _bigger_hint(memory.dtype_bytes, memory.devices, inst)
        problems.append(
            _weights_do_not_fit(
                arch.name, memory.weights_gib, memory.dtype, where, memory.usable_gib, reserve, hint
            )
        )
    elif memory.concurrent < 1 and max_total_tokens is not None:
        per_token = kib(memory.kv_whole)
        problems.append(
            Problem.of(
                "max_total_tokens",
                max_total_tokens,
                f"the KV cache left on {where} holds {memory.batch_tokens:,} tokens ({per_token} "
                f"per token), less than one {max_total_tokens:,}-token sequence;",
                f"lower max_total_tokens to <= {memory.batch_tokens:,} or use more or larger "
                "accelerators",
                kind=SizingError,
            )
        )
    return problems


def _weights_do_not_fit(
    model: str, weights: float, dtype: str, where: str, usable: float, reserve: str, hint: str
) -> Problem:
    return Problem.of(
        "instance_type",
        None,
        f"{model} weights need {weights:.1f} GiB in {dtype} but {where} leave {usable:.1f} GiB "
        f"after the engine's reserve ({reserve});",
        hint,
        kind=SizingError,
    )


def caveats(
    arch: ModelShape,
    inst: InstanceType,
    memory: Memory,
    where: str,
    max_total_tokens: int | None,
) -> list[str]:
    caveats = list(arch.notes)
    fits = memory.weights_gib <= memory.usable_gib
    if fits and memory.concurrent < 1 and max_total_tokens is None:
        caveats.append(
            _kv_below_context(where, memory.batch_tokens, arch.context_length, arch.name)
        )
    if memory.kv_heads_per_device * memory.devices > arch.kv_heads:
        caveats.append(_kv_replicated(arch.name, arch.kv_heads, memory.devices))
    if inst.accelerator == "neuron":
        caveats.append(_neuron_static_kv())
    return caveats


def _kv_below_context(where: str, tokens: int, context: int, model: str) -> str:
    return (
        f"the KV cache left on {where} holds {tokens:,} tokens, less than the full "
        f"{context:,}-token context of {model}; set max_total_tokens <= {tokens:,} (vLLM-based "
        "engines refuse to start otherwise; TGI lowers its default to fit)"
    )


def _kv_replicated(model: str, kv_heads: int, devices: int) -> str:
    return (
        f"{model} has {kv_heads} KV heads for {devices} devices, so each device replicates a "
        "head; the plan counts the replicated cache"
    )


def _neuron_static_kv() -> str:
    return (
        "Neuron engines allocate the KV cache statically for batch size x sequence length at "
        "compile time; the plan is an estimate of whether that shape fits"
    )


def device_memory(inst: InstanceType, arch: ModelShape) -> float:
    """The memory per device the engine sizes from (CUDA's total on GPUs)."""
    memory = inst.engine_memory_gib
    if inst.accelerator is None or not inst.accelerator_count:
        wrong = (
            f"{inst.name} has no accelerators in the hardware catalog, so {arch.name} cannot be "
            "planned on it;"
        )
        fix = "choose a GPU (ml.g5, ml.g6e, ml.p4d, ...) or Neuron instance"
    elif memory is None:
        wrong = (
            f"the accelerator memory of {inst.name} is unknown, so {arch.name} cannot be planned "
            "on it; verify the fit by hand"
        )
        fix = ""
    else:
        return memory
    fail("", Problem.of("instance_type", inst.name, wrong, fix, kind=SizingError), SizingError)


#: vLLM's server defaults step 8,192 tokens (and 1,024 sequences) on GPUs with at least this
#: much memory that are not A100s, else 2,048 (and 256) (``EngineArgs.get_batch_defaults``,
#: vllm-project/vllm: ``vllm/engine/arg_utils.py`` at 99d7eb5d).
_LARGE_STEP_GPU_GIB = 70


def large_step_gpu(inst: InstanceType) -> bool:
    """Whether vLLM's server defaults take the large step on ``inst``'s GPUs (H100, H200,
    B200, RTX PRO 6000), judged from the memory CUDA reports as vLLM does; False when the GPU
    is unknown, as vLLM falls back to the small step when it cannot query the device."""
    memory = inst.engine_memory_gib or 0
    model = (inst.accelerator_model or "").lower()
    return inst.accelerator == "nvidia" and memory >= _LARGE_STEP_GPU_GIB and "a100" not in model


#: What each device holds outside the weights and the KV cache (GiB): CUDA context and other
#: non-torch memory, the activation peak of the engine's profile run and its CUDA graphs. On
#: an H100 (vLLM 0.25, Llama-3.1-8B, 8,192 batched tokens) they measured 0.22 + 1.1 + ~0.05;
#: under an A10G's budget (Phi-3-mini, 2,048 tokens) 0.22 + 0.16.
_OVERHEAD_GIB_PER_DEVICE = 1.0
#: The same on GPUs where the engines batch 8,192 tokens per step (``large_step_gpu``).
_OVERHEAD_GIB_LARGE_STEP = 1.5


def overhead_per_device(inst: InstanceType) -> float:
    """The reserve per device outside weights and KV cache for ``inst``'s accelerators."""
    return _OVERHEAD_GIB_LARGE_STEP if large_step_gpu(inst) else _OVERHEAD_GIB_PER_DEVICE


def devices_for(
    inst: InstanceType,
    accelerators: int | None,
    engine: EngineSizing | None,
    problems: list[Problem],
) -> int:
    """The tensor-parallel group; more than the instance has is a problem (planned as all)."""
    available = inst.accelerator_count
    if accelerators is not None and not 1 <= accelerators <= available:
        fail("", _accelerators_out_of_range(available, inst.name, accelerators), SizingError)
    devices = engine.devices_used(inst, accelerators) if engine else (accelerators or available)
    if devices > available:
        problems.append(_shards_beyond_instance(devices, inst.name, available))
        return available
    return devices


def _accelerators_out_of_range(available: int, instance: str, accelerators: object) -> Problem:
    return Problem.of(
        "accelerators",
        accelerators,
        f"accelerators must be between 1 and the {available} of {instance}, got {accelerators!r}",
        kind=SizingError,
    )


def _shards_beyond_instance(devices: int, instance: str, available: int) -> Problem:
    return Problem.of(
        "engine",
        devices,
        f"the engine shards over {devices} devices but {instance} has {available};",
        "lower the tensor parallel degree or choose a larger instance",
        kind=SizingError,
    )


def _head_split_problems(arch: ModelShape, devices: int, inst: InstanceType) -> list[Problem]:
    """GPU engines shard attention heads evenly and KV heads evenly (or replicate them)."""
    if _splits(arch, devices):
        return []
    heads = f"{arch.attention_heads} attention heads and " if arch.attention_heads else ""
    good = [d for d in range(1, inst.accelerator_count + 1) if _splits(arch, d)]
    return [_heads_not_split(devices, heads, arch.kv_heads, arch.name, good)]


def _heads_not_split(
    degree: int, heads: str, kv_heads: int, model: str, good: list[int]
) -> Problem:
    return Problem.of(
        "engine",
        degree,
        f"tensor parallel degree {degree} does not split the {heads}{kv_heads} KV heads of "
        f"{model} evenly;",
        f"use a degree among {good}",
        kind=SizingError,
    )


def _splits(arch: ModelShape, degree: int) -> bool:
    kv = arch.kv_heads
    heads_ok = not arch.attention_heads or arch.attention_heads % degree == 0
    return heads_ok and (kv % degree == 0 or degree % kv == 0)


def _bigger_hint(dtype_bytes: float, devices: int, inst: InstanceType) -> str:
    hints = []
    if devices < inst.accelerator_count:
        hints.append(f"shard over more of the instance's {inst.accelerator_count} devices")
    if dtype_bytes > 1:
        hints.append("serve a quantized checkpoint (fp8, AWQ or GPTQ)")
    hints.append("choose an instance with more accelerator memory")
    return "; or ".join(hints)


def kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"
