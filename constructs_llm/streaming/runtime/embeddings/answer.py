"""TEI's embeddings as OpenAI's answer. Stdlib only: this file ships in the Lambda asset.

TEI's ``embed`` route answers a JSON array with one array of floats per input, in input order,
for a single input too (``EmbedResponse(Vec<Vec<f32>>)``, huggingface/text-embeddings-inference:
``router/src/http/types.rs``).
OpenAI's answer::

    {"object": "list", "model": "<model>",
     "data": [{"object": "embedding", "index": 0, "embedding": [0.0123, ...]}, ...],
     "usage": {"prompt_tokens": 0, "total_tokens": 0}}

with each ``embedding`` a base64 string of little-endian float32 values when
``encoding_format`` is ``base64``.

Usage: TEI counts the tokens it embedded, but only in response headers (``x-compute-tokens``,
``ResponseMetadata`` in TEI's ``router/src/http/server.rs``), and SageMaker's ``InvokeEndpoint``
returns the container's body with its content type, the invoked variant and the custom
attributes header only (botocore ``sagemaker-runtime`` ``InvokeEndpointOutput``). The count
never reaches the runtime, which cannot tokenize for the model itself, so ``usage`` reports 0
tokens rather than a guess; the fields are there because OpenAI clients read them.

``dimensions``: an answer longer than asked (a TEI older than 1.8, which ignores the field) is
cut to that length and scaled to unit length again, as TEI itself does.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Sequence
from typing import Any

__all__ = ["EngineAnswerError", "embeddings_object", "parse_tei_answer"]


class EngineAnswerError(Exception):
    """TEI answered a body that is not one embedding per input."""


def parse_tei_answer(body: bytes, expected: int) -> list[list[float]]:
    """The ``expected`` embeddings of one TEI answer."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError) as err:
        raise EngineAnswerError(f"the model answered a body that is not JSON ({err})") from None
    if not isinstance(data, list) or len(data) != expected:
        found = f"{len(data)} items" if isinstance(data, list) else type(data).__name__
        raise EngineAnswerError(
            f"the model answered {found} where {expected} embedding(s) were expected; is it "
            "an embedding model served by TEI?"
        )
    vectors: list[list[float]] = []
    for index, vector in enumerate(data):
        if (
            not isinstance(vector, list)
            or not vector
            or not all(type(v) is float or type(v) is int for v in vector)
        ):
            raise EngineAnswerError(
                f"the model's embedding {index} is not a list of numbers (got {vector!r:.80})"
            )
        vectors.append([float(v) for v in vector])
    return vectors


def embeddings_object(
    vectors: Sequence[list[float]],
    *,
    model: str,
    encoding_format: str,
    dimensions: int | None,
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
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm > 0 else vector
