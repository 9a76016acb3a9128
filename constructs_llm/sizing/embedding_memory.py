"""Memory of an embedding model on its GPU: the weights, and the activations of the largest
batch TEI forms. Pure Python.

An embedding model keeps no KV cache: TEI runs one forward pass per batch and keeps nothing
between requests, batching up to ``max_batch_tokens`` tokens (16384 by default) into one pass
("This represents the total amount of potential tokens within a batch", text-embeddings-inference
``router/src/main.rs``). While a batch runs, a few tensors of ``batch tokens x hidden size``
are alive at once: the hidden states, the Q, K and V projections, the attention output and the
MLP's intermediate (about 4 x the hidden size). :data:`_ACTIVATION_FACTOR` counts 12 such
tensors, a modest budget on top of the planner's per-device reserve (the CUDA context), and an
estimate: TEI cannot infer the number itself ("Since the actual memory overhead depends on the
model implementation, text-embeddings-inference cannot infer this number automatically").
"""

from __future__ import annotations

from dataclasses import dataclass

from constructs_llm.errors import SizingError
from constructs_llm.problems import Problem
from constructs_llm.sizing.planner import Memory

GIB = 1024**3
#: Tensors of ``batch tokens x hidden size`` alive at once during one forward pass.
_ACTIVATION_FACTOR = 12


@dataclass(frozen=True)
class EmbeddingFit:
    """The weights and activations of one embedding copy, what is left, and the problems."""

    activations_gib: float
    spare_gib: float
    problems: tuple[Problem, ...]


def embedding_fit(
    model: str, *, hidden_size: int, memory: Memory, batch_tokens: int, where: str, reserve: str
) -> EmbeddingFit:
    """Whether ``model``'s weights and one batch of ``batch_tokens`` fit in the memory the
    engine may use (``memory.usable_gib``)."""
    weights_gib, usable_gib = memory.weights_gib, memory.usable_gib
    activations = batch_tokens * hidden_size * memory.dtype_bytes * _ACTIVATION_FACTOR / GIB
    spare = usable_gib - weights_gib - activations
    problems: tuple[Problem, ...] = ()
    if weights_gib > usable_gib:
        problems = (
            _weights_do_not_fit(model, weights_gib, memory.dtype, where, usable_gib, reserve),
        )
    elif spare < 0:
        problems = (_batch_does_not_fit(model, batch_tokens, activations, where, usable_gib),)
    return EmbeddingFit(activations_gib=activations, spare_gib=max(spare, 0.0), problems=problems)


def _weights_do_not_fit(
    model: str, weights: float, dtype: str, where: str, usable: float, reserve: str
) -> Problem:
    return Problem.of(
        "instance_type",
        None,
        f"{model} weights need {weights:.1f} GiB in {dtype} but {where} leave {usable:.1f} GiB "
        f"after the engine's reserve ({reserve}); TEI runs a copy on one GPU, so choose an "
        "instance whose GPU has more memory",
        kind=SizingError,
    )


def _batch_does_not_fit(
    model: str, tokens: int, activations: float, where: str, usable: float
) -> Problem:
    return Problem.of(
        "batch_tokens",
        tokens,
        f"{model}: a batch of {tokens:,} tokens needs about {activations:.1f} GiB of activations "
        f"beside the weights, more than the {usable:.1f} GiB {where} leave;",
        "lower Engine.tei(max_batch_tokens=...) or choose a GPU with more memory",
        kind=SizingError,
    )
