"""The embeddings as OpenAI's answer. Stdlib only: this file ships in the Lambda asset.

OpenAI's answer::

    {"object": "list", "model": "<model>",
     "data": [{"object": "embedding", "index": 0, "embedding": [0.0123, ...]}, ...],
     "usage": {"prompt_tokens": 7, "total_tokens": 7}}

with each ``embedding`` a base64 string of little-endian float32 values when
``encoding_format`` is ``base64``.

Usage: the engine's own token count where it answers one (vLLM's ``usage.prompt_tokens``).
TEI counts the tokens it embedded only in response headers (``x-compute-tokens``,
``ResponseMetadata`` in huggingface/text-embeddings-inference: ``router/src/http/server.rs``),
and SageMaker's ``InvokeEndpoint`` returns the container's body with its content type, the
invoked variant and the custom attributes header only (botocore ``sagemaker-runtime``
``InvokeEndpointOutput``). That count never reaches the runtime, which cannot tokenize for the
model itself, so ``usage`` then reports 0 tokens rather than a guess; the fields are there
because OpenAI clients read them.

``dimensions``: an answer longer than asked (a TEI older than 1.8, which ignores the field) is
cut to that length and scaled to unit length again, as TEI itself does.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engines import Embedded
    from .request import EmbeddingsRequest


def embeddings_object(
    vectors: Sequence[list[float]],
    *,
    model: str,
    encoding_format: str,
    dimensions: int | None,
    prompt_tokens: int | None = None,
) -> dict[str, Any]:
    """OpenAI's ``list`` of ``embedding`` objects for ``vectors``, in order."""
    data = []
    for index, vector in enumerate(vectors):
        if dimensions is not None and len(vector) > dimensions:
            vector = _unit(vector[:dimensions])
        embedding: list[float] | str = vector
        if encoding_format == "base64":
            embedding = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens or 0, "total_tokens": prompt_tokens or 0},
    }


def request_answer(vectors: Embedded, model: str, request: EmbeddingsRequest) -> dict[str, Any]:
    """The answer to ``request``: its inputs' embeddings, as it asked for them."""
    return embeddings_object(
        vectors.vectors,
        model=model,
        encoding_format=request.encoding_format,
        dimensions=request.dimensions,
        prompt_tokens=vectors.prompt_tokens,
    )


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm > 0 else vector
