"""An OpenAI embeddings request, checked for one embedding model, and the bodies its engine
takes (``engines.py``).

Stdlib only: this file ships in the Lambda asset.

The fields of OpenAI's ``POST /v1/embeddings`` and what the runtime does with them:

- ``input``: a string, or a list of 1 to 2048 strings (OpenAI's limit); none may be empty
  (OpenAI's rule, and TEI refuses an empty input with "`inputs` cannot be empty",
  huggingface/text-embeddings-inference: ``core/src/tokenization.rs``). Token arrays (a list
  of integers, or of lists of integers) get a 400 naming ``input``: OpenAI clients make them
  with tiktoken, OpenAI's tokenizer, whose ids mean nothing to another model's vocabulary, so
  TEI (which takes token ids,
  ``InputType::Ids`` in TEI's ``router/src/http/types.rs``) would embed other text without a
  word. LangChain's ``OpenAIEmbeddings`` sends such arrays unless it is built with
  ``check_embedding_ctx_length=False`` (langchain-ai/langchain:
  ``libs/partners/openai/langchain_openai/embeddings/base.py``: its
  ``_tokenize`` encodes with ``tiktoken``, falling back to ``cl100k_base`` for a model name
  tiktoken does not know); the error says so.
- ``encoding_format``: ``float`` (the default) or ``base64``, the embedding's float32 values in
  little-endian byte order, base64-encoded, as OpenAI answers (the ``openai`` SDK asks for
  base64 by default and decodes it with ``array.array("f", ...)``).
- ``dimensions``: served only for a model trained with Matryoshka Representation Learning
  (the route's ``min_dimensions``), from that length up to the model's; TEI truncates the
  embedding and normalizes it again (``dimensions`` in TEI >= 1.8, TEI's ``core/src/infer.rs``),
  and the runtime does the same where an older TEI returned the full length. Any other
  model gets a 400 naming the field.
- ``model`` routes the request; ``user`` is accepted and ignored (it cannot change the
  answer). Any other field gets a 400 naming it.

A list longer than the route's ``max_inputs`` (TEI's ``--max-client-batch-size``, 32 by
default, past which it answers 413) is split into bodies of at most that many, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..http.errors import RequestError, unsupported
from ..routing import Route
from .engines import EmbeddingApi, embedding_api

#: OpenAI's limit on the inputs of one request ("any array must be 2048 dimensions or less").
MAX_INPUTS = 2048
_ENCODINGS = ("float", "base64")
_FIELDS = frozenset({"model", "input", "encoding_format", "dimensions", "user"})
_TOKEN_ARRAYS = (
    "token arrays are not served: they are ids of OpenAI's tokenizer, which mean other text to "
    "this model's vocabulary; send the text as a string or a list of strings (LangChain: "
    "OpenAIEmbeddings(..., check_embedding_ctx_length=False) sends the text)"
)


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
    """Check a decoded embeddings request for ``route``'s
    model; ``RequestError`` (400) names the field and the fix."""
    for key in data:
        if key not in _FIELDS:
            raise RequestError(
                f"unrecognized request argument {str(key)[:100]!r}; the embeddings API takes "
                f"{', '.join(sorted(_FIELDS))}",
                param=str(key)[:100],
                code="unknown_parameter",
            )
    user = data.get("user")
    if user is not None and not isinstance(user, str):
        raise RequestError("'user' must be a string", param="user")
    inputs = _inputs(data.get("input"))
    encoding = data.get("encoding_format")
    if encoding is None:
        encoding = "float"
    if encoding not in _ENCODINGS:
        raise RequestError(
            f"'encoding_format' must be 'float' or 'base64', got {encoding!r:.100}",
            param="encoding_format",
        )
    dimensions = _dimensions(data.get("dimensions"), route)
    api = embedding_api(route.model, route.engine)
    step = route.max_inputs or len(inputs)
    chunks = [inputs[start : start + step] for start in range(0, len(inputs), step)]
    return EmbeddingsRequest(
        inputs=inputs,
        encoding_format=encoding,
        dimensions=dimensions,
        bodies=tuple(api.body(chunk, dimensions) for chunk in chunks),
        sizes=tuple(len(chunk) for chunk in chunks),
        api=api,
    )


def _inputs(value: object) -> tuple[str, ...]:
    if value is None:
        raise RequestError(
            "'input' is required: a string, or a list of strings", param="input", code="missing"
        )
    if isinstance(value, str):
        items: list[object] = [value]
    elif isinstance(value, list):
        items = value
    else:
        raise RequestError(
            f"'input' must be a string or a list of strings, got {type(value).__name__}",
            param="input",
        )
    if not items:
        raise RequestError("'input' must hold at least one string, got []", param="input")
    if len(items) > MAX_INPUTS:
        raise RequestError(
            f"'input' holds {len(items)} items, more than the {MAX_INPUTS} one request may "
            "hold; send them in several requests",
            param="input",
        )
    if any(isinstance(item, int | list) and not isinstance(item, bool) for item in items):
        raise unsupported("input", _TOKEN_ARRAYS)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise RequestError(
                f"'input[{index}]' must be a string, got {type(item).__name__}",
                param=f"input[{index}]",
            )
        if not item:
            raise RequestError(
                f"'input[{index}]' is an empty string, which cannot be embedded; drop it or "
                "send text",
                param=f"input[{index}]",
            )
    return tuple(str(item) for item in items)


def _dimensions(value: object, route: Route) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestError(
            f"'dimensions' must be a positive integer, got {value!r:.100}", param="dimensions"
        )
    shortest, longest = route.min_dimensions, route.dimensions
    if shortest is None:
        raise unsupported(
            "dimensions",
            f"the model {route.model[:200]!r} is not known to be trained for shorter "
            "(Matryoshka) embeddings, so truncating them would lose their meaning; leave "
            "'dimensions' out",
        )
    if value < shortest or (longest is not None and value > longest):
        upper = f" to {longest}" if longest is not None else " up"
        raise RequestError(
            f"'dimensions' must be from {shortest}{upper} for the model {route.model[:200]!r}, "
            f"got {value}",
            param="dimensions",
        )
    return value
