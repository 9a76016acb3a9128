"""Every field of an OpenAI embeddings request, one row each: how it is checked, and what
each engine receives. Adding a field is adding a row.

Stdlib only: this file ships in the Lambda asset. The fields are those of the ``openai`` SDK's
``EmbeddingCreateParams`` (``model``, ``input``, ``encoding_format``, ``dimensions``,
``user``); any other field gets a 400 naming it.

- ``input``: a string, or a list of 1 to 2048 strings (OpenAI's limit); none may be empty
  (OpenAI's rule, and TEI refuses an empty input with "`inputs` cannot be empty",
  huggingface/text-embeddings-inference: ``core/src/tokenization.rs``). Token arrays (a list
  of integers, or of lists of integers) get a 400 naming ``input``: OpenAI clients make them
  with tiktoken, OpenAI's tokenizer, whose ids mean nothing to another model's vocabulary, so
  TEI (which takes token ids, ``InputType::Ids`` in TEI's ``router/src/http/types.rs``) would
  embed other text without a word. LangChain's ``OpenAIEmbeddings`` sends such arrays unless
  it is built with ``check_embedding_ctx_length=False`` (langchain-ai/langchain:
  ``libs/partners/openai/langchain_openai/embeddings/base.py``: its ``_tokenize`` encodes with
  ``tiktoken``, falling back to ``cl100k_base`` for a model name tiktoken does not know); the
  error says so. TEI receives the strings as ``inputs``, vLLM as ``input`` (``engines.py``).
- ``encoding_format``: ``float`` (the default) or ``base64``, the embedding's float32 values
  in little-endian byte order, base64-encoded, as OpenAI answers (the ``openai`` SDK asks for
  base64 by default and decodes it with ``array.array("f", ...)``). Not sent: the engines
  answer floats, and the runtime encodes them (``answer.py``).
- ``dimensions``: served only for a model trained with Matryoshka Representation Learning
  (the route's ``min_dimensions``), from that length up to the model's; TEI and vLLM both
  receive it as ``dimensions`` and truncate the embedding and normalize it again
  (``dimensions`` in TEI >= 1.8, TEI's ``core/src/infer.rs``), and the runtime does the same
  where an older TEI returned the full length. Any other model gets a 400 naming the field.
- ``model``: a string; it routes the request (``routing.py``) and is not sent (the endpoint
  is the model).
- ``user``: a string, accepted and ignored (it cannot change the answer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..chat.values import string
from ..http.errors import RequestError, unsupported
from ..routing import Route

__all__ = ["ENCODINGS", "FIELDS", "MAX_INPUTS", "EmbeddingsField"]

#: OpenAI's limit on the inputs of one request ("any array must be 2048 dimensions or less").
MAX_INPUTS = 2048
ENCODINGS = ("float", "base64")

Check = Callable[[Any, Route], Any]


@dataclass(frozen=True, kw_only=True)
class EmbeddingsField:
    """One field of an embeddings request.

    :param name: its name in the request.
    :param check: checks a value that is set; returns it checked.
    :param required: what a request must give (a request without it is a 400 saying so).
        @default None: it may be left out
    :param default: its value when it is not set. @default None
    :param tei: its name in TEI's body. @default None (not sent)
    :param vllm: its name in vLLM's body. @default None (not sent)
    :param ignored: why it is accepted and ignored (it cannot change the answer).
    """

    name: str
    check: Check
    required: str | None = None
    default: Any = None
    tei: str | None = None
    vllm: str | None = None
    ignored: str | None = None


# -- checks ----------------------------------------------------------------------------------

_TOKEN_ARRAYS = (
    "token arrays are not served: they are ids of OpenAI's tokenizer, which mean other text to "
    "this model's vocabulary; send the text as a string or a list of strings (LangChain: "
    "OpenAIEmbeddings(..., check_embedding_ctx_length=False) sends the text)"
)


def _inputs(value: Any, route: Route) -> tuple[str, ...]:
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


def _encoding(value: Any, route: Route) -> str:
    if value not in ENCODINGS:
        raise RequestError(
            f"'encoding_format' must be 'float' or 'base64', got {value!r:.100}",
            param="encoding_format",
        )
    return str(value)


def _dimensions(value: Any, route: Route) -> int:
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


FIELDS: tuple[EmbeddingsField, ...] = (
    EmbeddingsField(name="model", check=lambda value, route: string(value, "model")),
    EmbeddingsField(
        name="user",
        check=lambda value, route: string(value, "user"),
        ignored="an end-user identifier for OpenAI's abuse monitoring",
    ),
    EmbeddingsField(
        name="input",
        check=_inputs,
        required="a string, or a list of strings",
        tei="inputs",
        vllm="input",
    ),
    EmbeddingsField(name="encoding_format", check=_encoding, default="float"),
    EmbeddingsField(name="dimensions", check=_dimensions, tei="dimensions", vllm="dimensions"),
)
"""The table, in the order the fields are checked."""
