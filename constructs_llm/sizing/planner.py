"""The memory planner's arithmetic and findings, for ``sizing.plan_memory`` (pure Python)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from constructs_llm.errors import SizingError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import fail
from constructs_llm.sizing import messages as msg

__all__ = [
    "GIB",
    "EngineSizing",
    "Memory",
    "ModelShape",
    "caveats",
    "device_memory",
    "devices_for",
    "fit_problems",
    "kib",
]

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
) -> list[str]:
    problems = []
    if max_total_tokens is not None and max_total_tokens > arch.context_length:
        problems.append(msg.context_exceeded(max_total_tokens, arch.context_length, arch.name))
    if inst.accelerator == "nvidia":
        problems.extend(_head_split_problems(arch, memory.devices, inst))
    if memory.weights_gib > memory.usable_gib:
        hint = _bigger_hint(memory.dtype_bytes, memory.devices, inst)
        problems.append(
            msg.weights_do_not_fit(
                arch.name, memory.weights_gib, memory.dtype, where, memory.usable_gib, reserve, hint
            )
        )
    elif memory.concurrent < 1 and max_total_tokens is not None:
        per_token = kib(memory.kv_whole)
        problems.append(
            msg.kv_below_sequence(where, memory.batch_tokens, per_token, max_total_tokens)
        )
    return problems


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
            msg.kv_below_context(where, memory.batch_tokens, arch.context_length, arch.name)
        )
    if memory.kv_heads_per_device * memory.devices > arch.kv_heads:
        caveats.append(msg.kv_replicated(arch.name, arch.kv_heads, memory.devices))
    if inst.accelerator == "neuron":
        caveats.append(msg.neuron_static_kv())
    return caveats


def device_memory(inst: InstanceType, arch: ModelShape) -> float:
    if inst.accelerator is None or not inst.accelerator_count:
        fail("", msg.no_accelerators(inst.name, arch.name), SizingError)
    if inst.accelerator_memory_gib is None:
        fail("", msg.unknown_device_memory(inst.name, arch.name), SizingError)
    return inst.accelerator_memory_gib


def devices_for(
    inst: InstanceType, accelerators: int | None, engine: EngineSizing | None, problems: list[str]
) -> int:
    """The tensor-parallel group; more than the instance has is a problem (planned as all)."""
    available = inst.accelerator_count
    if accelerators is not None and not 1 <= accelerators <= available:
        fail("", msg.accelerators_out_of_range(available, inst.name, accelerators), SizingError)
    devices = engine.devices_used(inst, accelerators) if engine else (accelerators or available)
    if devices > available:
        problems.append(msg.shards_beyond_instance(devices, inst.name, available))
        return available
    return devices


def _head_split_problems(arch: ModelShape, devices: int, inst: InstanceType) -> list[str]:
    """GPU engines shard attention heads evenly and KV heads evenly (or replicate them)."""
    if _splits(arch, devices):
        return []
    heads = f"{arch.attention_heads} attention heads and " if arch.attention_heads else ""
    good = [d for d in range(1, inst.accelerator_count + 1) if _splits(arch, d)]
    return [msg.heads_not_split(devices, heads, arch.kv_heads, arch.name, good)]


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
