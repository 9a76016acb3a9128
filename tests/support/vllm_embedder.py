"""A stand-in for an embedding model on vLLM's pooling runner behind the fake SageMaker: it
answers each ``/invocations`` body the way vLLM's SageMaker router does for an ``embed`` model
(vllm-project/vllm: ``vllm/entrypoints/serve/sagemaker/api_router.py``, ``invocations``,
which takes the first request type the body validates as: ``EmbeddingRequest`` first,
``vllm/entrypoints/pooling/factories.py``), so a test can compute the vectors a text must get.

- A body with ``input`` (a string or a list of strings) is OpenAI's embeddings request: the
  answer is vLLM's ``EmbeddingResponse``, ``{"id", "object": "list", "created", "model",
  "data": [{"index", "object": "embedding", "embedding"}], "usage"}``, with one prompt token
  counted per word here; ``dimensions`` cuts and normalizes, as vLLM's Matryoshka support does.
- TEI's body (``inputs``, ``normalize``) validates as no request type: vLLM answers 400
  "Cannot find suitable handler for request", and refuses ``normalize`` itself (vLLM 0.32:
  "Parameter 'normalize' was removed; use 'use_activation' instead").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_sagemaker import CallError, ReceivedRequest, Scenario
from tests.support.tei_model import raw_vector, unit

__all__ = ["VllmEmbedder"]


@dataclass
class VllmEmbedder:
    """An embedding model of ``dimensions`` on vLLM; use ``responder`` as the fake's."""

    dimensions: int = 8
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def embed(self, text: str, dimensions: int | None = None) -> list[float]:
        vector = raw_vector(text, self.dimensions)
        return unit(vector[:dimensions] if dimensions else vector)

    def responder(self, request: ReceivedRequest) -> Scenario:
        body = request.json()
        self.bodies.append(body)
        if "normalize" in body:
            return _error("Parameter 'normalize' was removed; use 'use_activation' instead")
        if "input" not in body:
            return _error(
                "Cannot find suitable handler for request. Expected one of: "
                "['EmbeddingCompletionRequest | EmbeddingChatRequest', 'PoolingRequest']"
            )
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dimensions = body.get("dimensions")
        data = [
            {"index": i, "object": "embedding", "embedding": self.embed(text, dimensions)}
            for i, text in enumerate(texts)
        ]
        data.reverse()  # the index, not the position, says which input it is
        tokens = sum(len(text.split()) for text in texts)
        answer = {
            "id": "embd-7c1f",
            "object": "list",
            "created": 1764201600,
            "model": "Qwen/Qwen3-Embedding-0.6B",
            "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0},
        }
        return Scenario(answer=json.dumps(answer).encode())


def _error(message: str) -> Scenario:
    body = json.dumps(
        {"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}
    )
    return Scenario(call_error=CallError.model_error(body, original_status=400))
