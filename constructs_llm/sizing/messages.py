"""The text of the memory planner's problems and caveats (pure Python, like ``sizing``)."""

from __future__ import annotations

__all__ = [
    "accelerators_out_of_range",
    "context_exceeded",
    "heads_not_split",
    "kv_below_context",
    "kv_below_sequence",
    "kv_replicated",
    "neuron_static_kv",
    "no_accelerators",
    "shards_beyond_instance",
    "unknown_device_memory",
    "unknown_dtype",
    "weights_do_not_fit",
]


def no_accelerators(instance: str, model: str) -> str:
    return (
        f"{instance} has no accelerators in the hardware catalog, so {model} cannot be planned "
        "on it; choose a GPU (ml.g5, ml.g6e, ml.p4d, ...) or Neuron instance"
    )


def unknown_device_memory(instance: str, model: str) -> str:
    return (
        f"the accelerator memory of {instance} is unknown, so {model} cannot be planned on it; "
        "verify the fit by hand"
    )


def accelerators_out_of_range(available: int, instance: str, accelerators: object) -> str:
    return f"accelerators must be between 1 and the {available} of {instance}, got {accelerators!r}"


def shards_beyond_instance(devices: int, instance: str, available: int) -> str:
    return (
        f"the engine shards over {devices} devices but {instance} has {available}; lower the "
        "tensor parallel degree or choose a larger instance"
    )


def unknown_dtype(name: str, known: str) -> str:
    return f"unknown dtype or quantization {name!r}; use one of {known}"


def context_exceeded(max_total_tokens: int, context: int, model: str) -> str:
    return (
        f"max_total_tokens {max_total_tokens:,} exceeds the {context:,}-token context of "
        f"{model}; set max_total_tokens <= {context:,}"
    )


def heads_not_split(degree: int, heads: str, kv_heads: int, model: str, good: list[int]) -> str:
    return (
        f"tensor parallel degree {degree} does not split the {heads}{kv_heads} KV heads of "
        f"{model} evenly; use a degree among {good}"
    )


def weights_do_not_fit(
    model: str, weights: float, dtype: str, where: str, usable: float, reserve: str, hint: str
) -> str:
    return (
        f"{model} weights need {weights:.1f} GiB in {dtype} but {where} leave {usable:.1f} GiB "
        f"after the engine's reserve ({reserve}); {hint}"
    )


def kv_below_sequence(where: str, tokens: int, per_token: str, max_total_tokens: int) -> str:
    return (
        f"the KV cache left on {where} holds {tokens:,} tokens ({per_token} per token), less "
        f"than one {max_total_tokens:,}-token sequence; lower max_total_tokens to <= {tokens:,} "
        "or use more or larger accelerators"
    )


def kv_below_context(where: str, tokens: int, context: int, model: str) -> str:
    return (
        f"the KV cache left on {where} holds {tokens:,} tokens, less than the full "
        f"{context:,}-token context of {model}; set max_total_tokens <= {tokens:,} (vLLM-based "
        "engines refuse to start otherwise; TGI lowers its default to fit)"
    )


def kv_replicated(model: str, kv_heads: int, devices: int) -> str:
    return (
        f"{model} has {kv_heads} KV heads for {devices} devices, so each device replicates a "
        "head; the plan counts the replicated cache"
    )


def neuron_static_kv() -> str:
    return (
        "Neuron engines allocate the KV cache statically for batch size x sequence length at "
        "compile time; the plan is an estimate of whether that shape fits"
    )
