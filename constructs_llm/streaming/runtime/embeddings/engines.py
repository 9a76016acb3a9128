"""What each engine takes on SageMaker's ``/invocations`` for an embedding model, and what it
answers: the route's engine (``formats.EngineName``) picks one. Stdlib only: this file ships
in the Lambda asset.

- **TEI** (and a route whose engine is not known): ``{"inputs": [...], "normalize": true}``,
  plus ``"dimensions"`` when asked; its ``/invocations`` is the ``embed`` route for an
  embedding model, answering a JSON array with one array of floats per input
  (``EmbedResponse(Vec<Vec<f32>>)``, huggingface/text-embeddings-inference:
  ``router/src/http/types.rs``). The inputs always go as a list, even one string: TEI takes a
  single input only if a request slot is free at once (``try_acquire_permit``, else 429
  "Model is overloaded"), while a list waits for one (``acquire_permit``, TEI's
  ``router/src/http/server.rs``). TEI counts the tokens only in response headers, which
  ``InvokeEndpoint`` does not return, so the usage is not known.
- **vLLM** (its pooling runner): OpenAI's own body, ``{"input": [...]}`` plus
  ``"dimensions"`` when asked. vLLM's ``/invocations`` tries each request type the model's
  tasks serve and takes the first that validates (vllm-project/vllm:
  ``vllm/entrypoints/serve/sagemaker/api_router.py``, ``invocations``); for an ``embed``
  model the first is ``EmbeddingRequest`` (vllm-project/vllm:
  ``vllm/entrypoints/pooling/factories.py``, ``get_pooling_invocation_types``), whose ``model`` is
  optional. TEI's body fails there: ``inputs`` is no field of it ("Cannot find suitable handler for
  request"), and vLLM 0.32 refuses ``normalize`` ("use 'use_activation' instead"). vLLM answers
  OpenAI's ``list`` (``EmbeddingResponse``: ``data[].index`` and ``.embedding``, and
  ``usage.prompt_tokens``, which the answer passes on).
- **SGLang**: its ``/invocations`` takes a chat completion request and nothing else
  (sgl-project/sglang: ``python/sglang/srt/entrypoints/http_server.py``,
  ``sagemaker_chat_completions``), so no body reaches its embeddings on SageMaker: an
  embeddings request to an SGLang route gets a 400 saying so, before SageMaker is called.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...formats import EngineName
from ..http.errors import RequestError
from ..http.json_body import engine_json
from .fields import FIELDS, EmbeddingsField

_SGLANG = (
    "its engine, sglang, takes chat completion requests only on /invocations, the one path "
    "SageMaker calls (sgl-project/sglang: python/sglang/srt/entrypoints/http_server.py), so "
    "its embeddings cannot be reached through SageMaker; serve the embedding model with "
    "Engine.vllm() or Engine.tei()"
)


class EngineAnswerError(Exception):
    """The engine answered a body that is not one embedding per input."""


@dataclass(frozen=True)
class Embedded:
    """One call's embeddings, in input order, and the tokens the engine counted (None: not
    known)."""

    vectors: list[list[float]]
    prompt_tokens: int | None


@dataclass(frozen=True)
class EmbeddingApi:
    """One engine's embedding body and answer.

    :param name: what the errors call it.
    :param sent_as: a request field's name in this engine's body (None: not sent), a column
        of the field table (``fields.py``).
    :param constant: what every body of this engine carries besides the fields.
    :param parse: the embeddings of an answer that must hold this many.
    """

    name: str
    sent_as: Callable[[EmbeddingsField], str | None]
    constant: tuple[tuple[str, Any], ...]
    parse: Callable[[bytes, int], Embedded]

    def body(self, values: dict[str, Any]) -> bytes:
        """The body carrying the checked ``values`` (by request field) this engine takes."""
        body: dict[str, Any] = dict(self.constant)
        for row in FIELDS:
            name, value = self.sent_as(row), values.get(row.name)
            if name is not None and value is not None:
                body[name] = list(value) if isinstance(value, tuple) else value
        return _json(body)


def _json(body: dict[str, Any]) -> bytes:
    return engine_json(body)  # a lone surrogate raises UnicodeEncodeError: request.py names it


def _decoded(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError) as err:
        raise EngineAnswerError(f"the model answered a body that is not JSON ({err})") from None


def _parse_tei(body: bytes, expected: int) -> Embedded:
    data = _decoded(body)
    if not isinstance(data, list) or len(data) != expected:
        found = f"{len(data)} items" if isinstance(data, list) else type(data).__name__
        raise EngineAnswerError(
            f"the model answered {found} where {expected} embedding(s) were expected; is it "
            "an embedding model served by TEI?"
        )
    return Embedded([_vector(index, vector) for index, vector in enumerate(data)], None)


def _parse_openai(body: bytes, expected: int) -> Embedded:
    data = _decoded(body)
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != expected:
        found = f"{len(items)} items" if isinstance(items, list) else "no 'data' list"
        raise EngineAnswerError(
            f"the model answered {found} where {expected} embedding(s) were expected; is it "
            "an embedding model served by vLLM's pooling runner?"
        )
    ordered: list[list[float] | None] = [None] * expected
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < expected or ordered[index] is not None:
            raise EngineAnswerError(
                f"the model's answer has an item without its index ({item!r:.80})"
            )
        ordered[index] = _vector(index, item.get("embedding"))
    usage = data.get("usage") if isinstance(data, dict) else None
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    count = tokens if type(tokens) is int and tokens >= 0 else None
    return Embedded([vector for vector in ordered if vector is not None], count)


def _vector(index: int, vector: Any) -> list[float]:
    if (
        not isinstance(vector, list)
        or not vector
        or not all(type(v) is float or type(v) is int for v in vector)
    ):
        raise EngineAnswerError(
            f"the model's embedding {index} is not a list of numbers (got {vector!r:.80})"
        )
    return [float(v) for v in vector]


_TEI = EmbeddingApi("TEI", lambda row: row.tei, (("normalize", True),), _parse_tei)
_OPENAI = EmbeddingApi("vLLM", lambda row: row.vllm, (("encoding_format", "float"),), _parse_openai)


def embedding_api(model: str, engine: EngineName | None) -> EmbeddingApi:
    """The body and answer of ``engine``'s embeddings; a 400 naming ``model`` for an engine
    SageMaker cannot reach them on."""
    if engine is EngineName.VLLM:
        return _OPENAI
    if engine is EngineName.SGLANG:
        raise RequestError(
            f"the model {model[:200]!r} cannot embed through this gateway: {_SGLANG}",
            param="model",
            code="unsupported_model",
        )
    return _TEI
