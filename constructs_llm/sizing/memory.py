"""Accelerator memory planning for LLM serving: do the weights fit, and how much KV cache is left.

Pure Python (no ``aws_cdk``), so it can be used from scripts and tests directly.

The method, per device group that serves one model copy (the tensor-parallel group):

- **weights** = parameters x bytes per parameter of the weight dtype or quantization
  (fp32 4, fp16/bf16 2, fp8/int8 1, AWQ/GPTQ/int4 0.5), spread evenly over the devices.
- **device memory** is what the engine sizes from: on GPUs the total CUDA reports, measured
  on the H100 (79.18 GiB, not EC2's 80) and estimated conservatively elsewhere
  (``hardware/device_memory.py``); on Neuron the HBM per chip.
- **usable memory** = device memory x ``gpu_memory_utilization`` - the overhead per device,
  summed over the devices: vLLM's budget (``gpu_memory_utilization`` x CUDA's total, minus
  the weights, the activation peak of its profile run, non-torch memory and CUDA graphs).
  The defaults follow the engines: vLLM, LMI-vLLM and the vLLM DLC reserve 90% of each GPU
  (``gpu_memory_utilization=0.9``); the overhead is 1 GiB per device, 1.5 GiB on the GPUs
  where vLLM's defaults batch 8,192 tokens per step (an H100 run measured 1.37 GiB there:
  activation peak 1.1, non-torch 0.22, graphs ~0.05). TGI and SGLang size themselves
  differently but land within a few percent of this. Treat every figure as an estimate.
- **KV cache per token** = 2 (K and V) x layers x KV heads x head dim x KV dtype bytes, for the
  whole model (vLLM ``AttentionSpec.real_page_size_bytes``); each device holds 1/TP of it. When
  the tensor-parallel degree exceeds the KV heads, each device still holds one whole head, so
  the heads are replicated TP/kv_heads times.
- **KV budget** = usable - weights; it bounds the tokens the engine can batch, and
  ``budget // (KV per token x max_total_tokens)`` full-length sequences (rounded down) can run
  at once, or
  ``budget // (KV per token x TYPICAL_REQUEST_TOKENS)`` typical chat requests (the median
  prompt + reply of a published production trace; see :data:`TYPICAL_REQUEST_TOKENS`).

The seeds' method (``2 x layers x hidden_size x bytes`` per token, the LMI docs' formula)
assumes every attention head has its own K and V; for grouped-query models it overstates the
cache by ``attention_heads / kv_heads``. :func:`lmi_seed_kv_estimate` reproduces it for
comparison only.

How engines use a plan (only when ``max_total_tokens`` is set, so the plan's sequence length is
the one the engine enforces), only where the user set nothing, and only where the engine
allocates for whole sequences:

- TGI: ``MAX_BATCH_TOTAL_TOKENS`` = 90% of ``max_batch_total_tokens``, in 256-token steps and
  never below ``max_total_tokens`` (TGI infers its own figure for flash-attention models).
- LMI with TensorRT-LLM: ``OPTION_MAX_ROLLING_BATCH_SIZE`` = min(256,
  ``max_concurrent_sequences``): the engine is built for that batch and its default scheduler
  reserves each request's full length.
- TGI NeuronX: the static batch size = min(4, ``max_concurrent_sequences``).
- Paged engines keep their own sequence caps, since their schedulers admit by free KV blocks:
  the vLLM and SGLang DLCs, and LMI with vLLM, which gets vLLM's server default
  (``engines._support.vllm_default_max_num_seqs``) rather than LMI's async-mode 32.

Embedding models (``ModelArchitecture.kind`` EMBEDDING, served by TEI) keep no KV cache: one
forward pass per batch, nothing kept between requests. Their plan is the weights plus a modest
activation budget for the largest batch TEI forms (``embedding_memory.py``), on the one GPU
TEI uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from constructs_llm import catalogs
from constructs_llm.contract import ModelKind
from constructs_llm.errors import SizingError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.sizing.embedding_memory import embedding_fit
from constructs_llm.sizing.planner import (
    EngineSizing,
    Memory,
    caveats,
    device_memory,
    devices_for,
    fit_problems,
    kib,
    overhead_per_device,
)

if TYPE_CHECKING:
    from collections.abc import Mapping


#: Bytes per weight for each dtype or quantization name engines accept.
DTYPE_BYTES: Mapping[str, float] = {
    "fp32": 4,
    "float32": 4,
    "fp16": 2,
    "float16": 2,
    "bf16": 2,
    "bfloat16": 2,
    "fp8": 1,
    "int8": 1,
    "eetq": 1,
    "bitsandbytes": 1,
    "awq": 0.5,
    "gptq": 0.5,
    "marlin": 0.5,
    "int4": 0.5,
    "bitsandbytes-nf4": 0.5,
    "bitsandbytes-fp4": 0.5,
}

#: Fraction of each device the engines reserve (vLLM's ``gpu_memory_utilization`` default).
GPU_MEMORY_UTILIZATION = 0.9
#: A typical chat request, prompt plus reply, in tokens: the median of the 19,366 conversation
#: requests of Azure's LLM inference trace 2023 (``data/AzureLLMInferenceTrace_conv.csv`` in
#: github.com/Azure/AzurePublicDataset, the trace of Patel et al., "Splitwise: Efficient
#: generative LLM inference using phase splitting", ISCA 2024). Its median prompt is 1,020
#: tokens and its median reply 129; the benchmark's histogram of it is
#: ``bench/data/azure_llm_conversation_2023.json``.
TYPICAL_REQUEST_TOKENS = 1_412

#: Tokens TEI batches into one forward pass by default (``--max-batch-tokens``, 16384 in
#: text-embeddings-inference router/src/main.rs).
DEFAULT_BATCH_TOKENS = 16384


@dataclass(frozen=True, kw_only=True)
class ModelArchitecture:
    """The figures memory sizing needs, as in the model's ``config.json``.

    Build one for a model the packaged table does not know::

        ModelArchitecture(params_billion=7.6, layers=28, kv_heads=4, head_dim=128,
                          hidden_size=3584, context_length=32768)

    or, for an embedding model::

        ModelArchitecture(params_billion=0.335, layers=24, kv_heads=16, head_dim=64,
                          hidden_size=1024, context_length=512, kind=ModelKind.EMBEDDING,
                          embedding_dimensions=1024)

    :param params_billion: total parameters in billions (all experts for MoE models).
    :param layers: ``num_hidden_layers``.
    :param kv_heads: ``num_key_value_heads`` (equal to attention heads without GQA/MQA).
    :param head_dim: ``head_dim``, else ``hidden_size / num_attention_heads``.
    :param hidden_size: ``hidden_size``.
    :param context_length: ``max_position_embeddings`` (longest sequence the model supports).
    :param attention_heads: ``num_attention_heads``; tensor parallelism must divide it.
        @default unknown (not checked)
    :param default_dtype: dtype the engines load by default. @default "bf16"
    :param model_id: the Hub id the figures belong to. @default None
    :param source: where the figures come from. @default None
    :param notes: caveats shown with every plan (sliding-window layers, MoE). @default none
    :param kind: ``ModelKind.CHAT`` or ``ModelKind.EMBEDDING`` (no KV cache; served with
        ``Engine.tei()``). @default CHAT
    :param embedding_dimensions: an embedding model's vector length. @default unknown
    :param matryoshka_min_dimensions: the shortest truncation an embedding model trained with
        Matryoshka Representation Learning supports; the invoker then serves OpenAI's
        ``dimensions`` from it to ``embedding_dimensions``. @default None (no truncation)
    :param active_params_billion: for a mixture-of-experts model, the parameters each
        generated token reads (routed experts plus shared layers), for decode-rate estimates.
        @default params_billion (a dense model)
    """

    params_billion: float
    layers: int
    kv_heads: int
    head_dim: int
    hidden_size: int
    context_length: int
    attention_heads: int | None = None
    default_dtype: str = "bf16"
    model_id: str | None = None
    source: str | None = None
    notes: tuple[str, ...] = ()
    kind: ModelKind = ModelKind.CHAT
    embedding_dimensions: int | None = None
    matryoshka_min_dimensions: int | None = None
    active_params_billion: float | None = None

    def __post_init__(self) -> None:
        problems = Problems("ModelArchitecture")
        problems.extend(
            Problem.of(name, value, f"{name} must be a positive integer, got {value!r}")
            for name, value in (
                ("layers", self.layers),
                ("kv_heads", self.kv_heads),
                ("head_dim", self.head_dim),
                ("hidden_size", self.hidden_size),
                ("context_length", self.context_length),
                ("attention_heads", self.attention_heads),
                ("embedding_dimensions", self.embedding_dimensions),
                ("matryoshka_min_dimensions", self.matryoshka_min_dimensions),
            )
            if value is not None
            and (not isinstance(value, int) or isinstance(value, bool) or value < 1)
        )
        billions = self.params_billion
        if isinstance(billions, bool) or not isinstance(billions, int | float) or billions <= 0:
            problems.add(
                Problem.of(
                    "params_billion",
                    billions,
                    f"params_billion must be > 0, got {billions!r}",
                )
            )
        active = self.active_params_billion
        if active is not None and (
            isinstance(active, bool)
            or not isinstance(active, int | float)
            or not isinstance(billions, int | float)
            or not 0 < active <= billions
        ):
            problems.add(
                Problem.of(
                    "active_params_billion",
                    self.active_params_billion,
                    "active_params_billion must be above 0 and at most params_billion "
                    f"({billions!r}), got {active!r};",
                    "leave it out for a dense model",
                )
            )
        if not isinstance(self.kind, ModelKind):
            problems.add(
                Problem.of(
                    "kind",
                    self.kind,
                    f"kind must be ModelKind.CHAT or ModelKind.EMBEDDING, got {self.kind!r};",
                    "import ModelKind from constructs_llm",
                )
            )
        kv, heads = self.kv_heads, self.attention_heads
        if isinstance(kv, int) and isinstance(heads, int) and heads and kv > heads:
            problems.add(
                Problem.of(
                    "kv_heads",
                    kv,
                    f"kv_heads ({kv}) cannot exceed attention_heads ({heads});",
                    "check num_key_value_heads in config.json",
                )
            )
        dtype = self.default_dtype
        if not isinstance(dtype, str) or dtype.lower() not in DTYPE_BYTES:
            problems.add(
                Problem.of(
                    "default_dtype",
                    dtype,
                    f"default_dtype must be one of {_dtype_names()}, got {dtype!r}",
                )
            )
        for name, text in (("model_id", self.model_id), ("source", self.source)):
            if text is not None and not isinstance(text, str):
                problems.add(
                    Problem.of(
                        name,
                        text,
                        f"{name} must be a string or None, got {text!r}",
                    )
                )
        notes = self.notes
        if not isinstance(notes, tuple | list) or not all(isinstance(n, str) for n in notes):
            problems.add(
                Problem.of(
                    "notes",
                    self.notes,
                    f"notes must be a tuple of strings, got {self.notes!r}",
                )
            )
        problems.extend(_embedding_problems(self))
        problems.raise_if_any()

    @property
    def name(self) -> str:
        return self.model_id or "the model"

    @property
    def is_embedding(self) -> bool:
        return self.kind is ModelKind.EMBEDDING

    def kv_bytes_per_token(self, kv_dtype_bytes: float = 2) -> int:
        """K and V for one token across all layers (whole model, before tensor parallelism)."""
        return int(2 * self.layers * self.kv_heads * self.head_dim * kv_dtype_bytes)

    def weights_bytes(self, dtype_bytes: float) -> int:
        return int(self.params_billion * 1e9 * dtype_bytes)

    @property
    def download_bytes(self) -> int:
        """The checkpoint as the container downloads it: the parameters in the dtype (or
        quantization) they are stored in, ``default_dtype``, whatever the engine converts them
        to when it loads them."""
        return self.weights_bytes(_dtype_bytes(self.default_dtype.lower()))

    @classmethod
    def lookup(cls, model_id: str) -> ModelArchitecture | None:
        """The packaged figures for a Hub model id (case-insensitive, aliases included).

        The result carries ``model_id`` as given; ``source`` names the config it restates.
        """
        arch = _table().get(model_id.strip().lower())
        return None if arch is None else replace(arch, model_id=model_id.strip())

    @classmethod
    def known_models(cls) -> tuple[str, ...]:
        """Canonical Hub ids in the packaged table."""
        return tuple(sorted({a.model_id for a in _table().values() if a.model_id}))


@dataclass(frozen=True, kw_only=True)
class MemoryPlan:
    """How one model copy uses its accelerators. All memory figures are estimates (GiB)."""

    model: str
    instance: str
    devices: int
    device_memory_gib: float
    usable_gib: float
    dtype: str
    weights_gib: float
    kv_bytes_per_token: int  # whole model; each device holds kv_bytes_per_token_per_device
    kv_bytes_per_token_per_device: int
    kv_budget_gib: float
    max_total_tokens: int  # the full sequence length the plan was made for
    max_batch_total_tokens: int  # tokens of KV cache that fit in the budget
    max_concurrent_sequences: int  # full-length sequences that fit at once
    typical_request_tokens: int  # TYPICAL_REQUEST_TOKENS, or max_total_tokens when shorter
    typical_concurrent_sequences: int  # typical requests whose KV fits at once
    fits: bool
    problems: tuple[Problem, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    #: An embedding model's activation budget for its largest batch (0 for chat models).
    activations_gib: float = 0.0
    kind: ModelKind = ModelKind.CHAT

    def summary(self) -> str:
        """One line: weights, KV budget, KV per token, concurrent full-length sequences and
        concurrent typical requests (an embedding model: weights, activations of the largest
        batch, what is left)."""
        status = "" if self.fits else " [DOES NOT FIT]"
        if self.kind is ModelKind.EMBEDDING:
            return (
                f"{self.model} on {self.devices} x {self.device_memory_gib:.1f} GiB "
                f"({self.instance}){status}: weights {self.weights_gib:.1f} GiB ({self.dtype}), "
                f"activations {self.activations_gib:.1f} GiB for {self.max_batch_total_tokens:,}"
                f" batch tokens, {self.kv_budget_gib:.1f} GiB spare (embedding model: no KV "
                "cache)"
            )
        return (
            f"{self.model} on {self.devices} x {self.device_memory_gib:.1f} GiB "
            f"({self.instance}){status}: weights {self.weights_gib:.1f} GiB ({self.dtype}), "
            f"KV budget {self.kv_budget_gib:.1f} GiB, KV {kib(self.kv_bytes_per_token)} per "
            f"token, {self.max_batch_total_tokens:,} batch tokens, "
            f"{self.max_concurrent_sequences} concurrent {self.max_total_tokens:,}-token sequences"
            f" ({self.typical_concurrent_sequences:,} at a typical "
            f"{self.typical_request_tokens:,}-token chat request)"
        )


def plan_memory(
    arch: ModelArchitecture,
    *,
    instance: InstanceType | str,
    accelerators: int | None = None,
    engine: EngineSizing | None = None,
    dtype: str | None = None,
    kv_dtype: str | None = None,
    max_total_tokens: int | None = None,
    gpu_memory_utilization: float = GPU_MEMORY_UTILIZATION,
    overhead_gib_per_device: float | None = None,
    strict: bool = True,
    batch_tokens: int | None = None,
) -> MemoryPlan:
    """Plan accelerator memory for ``arch`` on ``instance``.

    An embedding model (``arch.kind`` EMBEDDING) is planned as its weights plus the
    activations of one batch of ``batch_tokens`` (``embedding_memory.py``), with no KV cache.

    :param accelerators: devices available to the model copy (an inference component's
        accelerator count). @default all devices of the instance
    :param engine: narrows the devices to the engine's tensor-parallel group and supplies the
        weight dtype or quantization. @default None
    :param dtype: weight dtype or quantization (``DTYPE_BYTES`` names). @default the engine's,
        else ``arch.default_dtype``
    :param kv_dtype: KV cache dtype. @default fp32 for fp32 weights, else 16-bit (quantized
        models keep a 16-bit cache unless the engine is told otherwise)
    :param max_total_tokens: the longest sequence (prompt + generation) to plan for.
        @default the model's context length; then a cache too small for one full-context
        sequence is a warning, not an error (TGI lowers its default to fit; vLLM does not)
    :param gpu_memory_utilization: fraction of each device the engine may use. @default 0.9
    :param overhead_gib_per_device: memory per device outside weights and KV cache (GiB).
        @default 1 GiB, 1.5 GiB on GPUs where vLLM batches 8,192 tokens per step
    :param strict: raise :class:`SizingError` when the model does not fit. With False, return
        the plan with ``fits=False`` and the reasons in ``problems``. @default True
    :param batch_tokens: an embedding model's largest batch (TEI's ``max_batch_tokens``).
        @default 16384, TEI's default
    :raises SizingError: weights do not fit, ``max_total_tokens`` exceeds the model's context,
        the KV budget cannot hold one ``max_total_tokens`` sequence, or tensor parallelism
        does not divide the attention heads.
    """
    inst = InstanceType.of(instance)
    device_gib = device_memory(inst, arch)
    overhead = (
        overhead_per_device(inst) if overhead_gib_per_device is None else overhead_gib_per_device
    )
    if max_total_tokens is not None and max_total_tokens < 1:
        wrong = f"max_total_tokens must be >= 1, got {max_total_tokens!r}"
        fail("", Problem.of("max_total_tokens", max_total_tokens, wrong), SizingError)
    problems: list[Problem] = []
    devices = devices_for(inst, accelerators, engine, problems)
    if arch.is_embedding:
        devices = 1  # TEI loads the model on one GPU (candle's Device::new_cuda(0))
    dtype_name = (dtype or (engine.weight_dtype if engine else None) or arch.default_dtype).lower()
    kv_bytes = _dtype_bytes(kv_dtype.lower()) if kv_dtype else None
    memory = Memory.of(
        arch,
        devices=devices,
        usable_gib=devices * (device_gib * gpu_memory_utilization - overhead),
        dtype=dtype_name,
        dtype_bytes=_dtype_bytes(dtype_name),
        kv_bytes=kv_bytes,
        seq_len=max_total_tokens or arch.context_length,
    )
    where = f"{devices} x {device_gib:.1f} GiB ({inst.name})"
    reserve = f"{gpu_memory_utilization:.0%} of each device, minus {overhead:g} GiB"
    if arch.is_embedding:
        return _embedding_plan(arch, inst, memory, where, reserve, batch_tokens, problems, strict)
    problems += fit_problems(arch, inst, memory, where, reserve, max_total_tokens)
    figures: dict[str, Any] = dict(
        kv_bytes_per_token=memory.kv_whole,
        kv_bytes_per_token_per_device=memory.kv_per_device,
        kv_budget_gib=round(memory.budget_gib, 2),
        max_total_tokens=memory.seq_len,
        max_batch_total_tokens=memory.batch_tokens,
        max_concurrent_sequences=max(memory.concurrent, 0),
        typical_request_tokens=min(TYPICAL_REQUEST_TOKENS, memory.seq_len),
        typical_concurrent_sequences=memory.batch_tokens
        // min(TYPICAL_REQUEST_TOKENS, memory.seq_len),
        warnings=tuple(caveats(arch, inst, memory, where, max_total_tokens)),
    )
    return _plan(arch, inst, memory, problems, strict, figures)


def _embedding_plan(
    arch: ModelArchitecture,
    inst: InstanceType,
    memory: Memory,
    where: str,
    reserve: str,
    batch_tokens: int | None,
    problems: list[Problem],
    strict: bool,
) -> MemoryPlan:
    """The plan of an embedding model: weights and one batch's activations, no KV cache."""
    tokens = batch_tokens or DEFAULT_BATCH_TOKENS
    fit = embedding_fit(
        arch.name,
        hidden_size=arch.hidden_size,
        memory=memory,
        batch_tokens=tokens,
        where=where,
        reserve=reserve,
    )
    problems += fit.problems
    figures: dict[str, Any] = dict(
        kv_bytes_per_token=0,
        kv_bytes_per_token_per_device=0,
        kv_budget_gib=round(fit.spare_gib, 2),
        max_total_tokens=arch.context_length,
        max_batch_total_tokens=tokens,
        max_concurrent_sequences=tokens // arch.context_length,
        typical_request_tokens=0,  # no KV cache: requests hold nothing between batches
        typical_concurrent_sequences=0,
        warnings=tuple(arch.notes),
        activations_gib=round(fit.activations_gib, 2),
        kind=ModelKind.EMBEDDING,
    )
    return _plan(arch, inst, memory, problems, strict, figures)


def _plan(
    arch: ModelArchitecture,
    inst: InstanceType,
    memory: Memory,
    problems: list[Problem],
    strict: bool,
    figures: dict[str, Any],
) -> MemoryPlan:
    """The plan of ``arch`` on ``inst``: what every plan reports of ``memory`` and
    ``problems``, with the figures of the model's kind; under ``strict``, the problems raised
    as one :class:`SizingError` instead."""
    if strict:
        found = Problems(f"memory plan of {arch.name} on {inst.name}")
        found.extend(problems, SizingError)
        found.raise_if_any()
    return MemoryPlan(
        model=arch.name,
        instance=inst.name,
        devices=memory.devices,
        device_memory_gib=round(device_memory(inst, arch), 2),
        usable_gib=round(memory.usable_gib, 2),
        dtype=memory.dtype,
        weights_gib=round(memory.weights_gib, 2),
        fits=not problems,
        problems=tuple(problems),
        **figures,
    )


def _embedding_problems(arch: ModelArchitecture) -> list[Problem]:
    """Embedding figures belong to embedding models, and a truncation to a shorter vector."""
    found = []
    dims, shortest = arch.embedding_dimensions, arch.matryoshka_min_dimensions
    if not arch.is_embedding and (dims is not None or shortest is not None):
        found.append(
            Problem.of(
                "kind",
                arch.kind,
                "embedding_dimensions and matryoshka_min_dimensions describe embedding models;",
                "pass kind=ModelKind.EMBEDDING as well",
            )
        )
    if isinstance(dims, int) and isinstance(shortest, int) and shortest > dims:
        found.append(
            Problem.of(
                "matryoshka_min_dimensions",
                shortest,
                f"matryoshka_min_dimensions ({shortest}) cannot exceed embedding_dimensions "
                f"({dims});",
                "check the model card",
            )
        )
    return found


def lmi_seed_kv_estimate(*, layers: int, hidden_size: int, dtype_bytes: float, tokens: int) -> int:
    """KV cache bytes by the seeds' (and LMI docs') formula: 2 x layers x hidden x bytes x tokens.

    It assumes multi-head attention. For Phi-3-mini (32 layers, fp16) and 4 x 4096 tokens,
    plugging hidden 4096 gives 8.59e9 bytes; its real hidden size 3072 gives 6.44e9; and as
    Phi-3-mini has as many KV heads as attention heads, 6.44e9 is also the GQA-aware figure.
    For grouped-query models use :meth:`ModelArchitecture.kv_bytes_per_token` instead.
    """
    return int(2 * layers * hidden_size * dtype_bytes * tokens)


def dtype_bytes(name: str) -> float:
    """Bytes per weight for a dtype or quantization name (case-insensitive)."""
    return _dtype_bytes(name.lower())


# -- helpers -------------------------------------------------------------------------------


def _dtype_bytes(name: str) -> float:
    if name not in DTYPE_BYTES:
        fail("", _unknown_dtype(name, _dtype_names()), SizingError)
    return float(DTYPE_BYTES[name])


def _unknown_dtype(name: str, known: str) -> Problem:
    return Problem.of(
        "dtype",
        name,
        f"unknown dtype or quantization {name!r};",
        f"use one of {known}",
        kind=SizingError,
    )


def _dtype_names() -> str:
    return ", ".join(sorted(DTYPE_BYTES))


#: The model table's columns that ModelArchitecture takes under the same names.
_TABLE_COLUMNS = (
    "params_billion",
    "layers",
    "kv_heads",
    "head_dim",
    "hidden_size",
    "context_length",
    "attention_heads",
    "default_dtype",
    "source",
    "notes",
    "embedding_dimensions",
    "matryoshka_min_dimensions",
    "active_params_billion",
)


@cache
def _table() -> dict[str, ModelArchitecture]:
    table: dict[str, ModelArchitecture] = {}
    for row in catalogs.models().models:
        columns = {name: getattr(row, name) for name in _TABLE_COLUMNS}
        arch = ModelArchitecture(**columns, model_id=row.id, kind=ModelKind(row.kind))
        for key in (row.id, *row.aliases):
            table[key.lower()] = arch
    return table
