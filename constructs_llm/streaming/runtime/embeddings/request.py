"""An OpenAI embeddings request, checked for one embedding model by the field table
(``fields.py``: each field, its check, what each engine receives), and the bodies its engine
takes (``engines.py``).

Stdlib only: this file ships in the Lambda asset.

A list longer than the route's ``max_inputs`` (TEI's ``--max-client-batch-size``, 32 by
default, past which it answers 413) is split into bodies of at most that many, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..http.errors import RequestError
from ..http.json_body import lone_surrogate
from ..routing import Route
from .engines import EmbeddingApi, embedding_api
from .fields import FIELDS

_NAMES = tuple(row.name for row in FIELDS)


@dataclass(frozen=True, kw_only=True)
class EmbeddingsRequest:
    """A checked embeddings request: its inputs, the answer's encoding and length, the
    engine's bodies that embed them, in order, with the number of inputs each carries, and
    how the engine's answers read."""

    inputs: tuple[str, ...]
    encoding_format: str
    dimensions: int | None
    bodies: tuple[bytes, ...]
    sizes: tuple[int, ...]
    api: EmbeddingApi


def build_embeddings_request(data: dict[str, Any], route: Route) -> EmbeddingsRequest:
    """Check a decoded embeddings request for ``route``'s model, field by field as the table
    says; ``RequestError`` (400) names the field and the fix."""
    for key in data:
        if key not in _NAMES:
            raise RequestError(
                f"unrecognized request argument {str(key)[:100]!r}; the embeddings API takes "
                f"{', '.join(sorted(_NAMES))}",
                param=str(key)[:100],
                code="unknown_parameter",
            )
    values: dict[str, Any] = {}
    for row in FIELDS:
        value = data.get(row.name)
        if value is None and row.required is not None:
            raise RequestError(
                f"'{row.name}' is required: {row.required}",
                param=row.name,
                code="missing",
            )
        values[row.name] = row.default if value is None else row.check(value, route)
    inputs: tuple[str, ...] = values["input"]
    api = embedding_api(route.model, route.engine)
    step = route.max_inputs or len(inputs)
    chunks = [inputs[start : start + step] for start in range(0, len(inputs), step)]
    try:
        bodies = tuple(api.body({**values, "input": chunk}) for chunk in chunks)
    except UnicodeEncodeError:  # a lone surrogate escape: the 400 chat gives, naming where
        raise lone_surrogate(data) from None
    return EmbeddingsRequest(
        inputs=inputs,
        encoding_format=values["encoding_format"],
        dimensions=values["dimensions"],
        bodies=bodies,
        sizes=tuple(len(chunk) for chunk in chunks),
        api=api,
    )
