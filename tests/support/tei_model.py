"""A stand-in for TEI behind the fake SageMaker: it answers each ``/invocations`` body the way
text-embeddings-inference v1.8's ``embed`` route does (``router/src/http/server.rs`` and
``core/src/infer.rs``), with embeddings derived from each input's text, so a test can compute
the exact vector a text must get.

- ``inputs``: a string or a list of strings (``Input::Single`` / ``Input::Batch``); a list
  longer than ``max_client_batch_size`` is refused with TEI's validation error (413, "batch
  size N > maximum allowed batch size M"), an empty input with "`inputs` cannot be empty".
- ``dimensions``: the embedding is cut to that length, then normalized (when ``normalize``,
  TEI's default); ``dimensions`` above the model's is a validation error. A model built with
  ``honours_dimensions=False`` ignores the field, as TEI before 1.8 did.
- The answer is a JSON array of float arrays, one per input (``fake_sagemaker.tei_answer``).
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_sagemaker import ReceivedRequest, Scenario, tei_answer, tei_error

__all__ = ["TeiModel", "raw_vector", "unit"]


def raw_vector(text: str, size: int) -> list[float]:
    """The model's pooled output for ``text`` before normalization (float32 values)."""
    seed = hashlib.sha256(text.encode()).digest()
    values: list[float] = []
    counter = 0
    while len(values) < size:
        block = hashlib.sha256(seed + counter.to_bytes(4, "little")).digest()
        values += [(b - 127.5) / 127.5 for b in block]
        counter += 1
    return [_f32(v) for v in values[:size]]


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [_f32(v / norm) for v in vector]


def _f32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


@dataclass
class TeiModel:
    """An embedding model of ``dimensions`` served by TEI; use ``responder`` as the fake's."""

    dimensions: int = 8
    max_client_batch_size: int = 32
    honours_dimensions: bool = True
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def embed(self, text: str, dimensions: int | None = None) -> list[float]:
        """The embedding TEI answers for ``text`` (normalized, cut to ``dimensions``)."""
        vector = raw_vector(text, self.dimensions)
        if dimensions is not None:
            vector = vector[:dimensions]
        return unit(vector)

    def responder(self, request: ReceivedRequest) -> Scenario:
        body = request.json()
        self.bodies.append(body)
        inputs = body["inputs"]
        batch = inputs if isinstance(inputs, list) else [inputs]
        if not batch:
            return tei_error("`inputs` cannot be empty", "empty", 400)
        if len(batch) > self.max_client_batch_size:
            return tei_error(
                f"batch size {len(batch)} > maximum allowed batch size "
                f"{self.max_client_batch_size}",
                "validation",
                413,
            )
        if any(text == "" for text in batch):
            return tei_error("`inputs` cannot be empty", "validation", 413)
        dimensions = body.get("dimensions") if self.honours_dimensions else None
        if dimensions is not None and dimensions > self.dimensions:
            return tei_error(
                "`dimensions` should be smaller than the maximum embedding dimension.",
                "validation",
                413,
            )
        vectors = [raw_vector(text, self.dimensions) for text in batch]
        if dimensions is not None:
            vectors = [v[:dimensions] for v in vectors]
        if body.get("normalize", True):
            vectors = [unit(v) for v in vectors]
        return tei_answer(vectors)
