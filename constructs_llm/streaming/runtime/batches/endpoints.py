"""The endpoints a batch may name (``POST /v1/batches``' ``endpoint``, and each line's ``url``)
and the kind of model each takes. Stdlib only: this file ships in the Lambda asset.

OpenAI's reference for ``POST /v1/batches`` lists ``/v1/responses``, ``/v1/chat/completions``,
``/v1/embeddings``, ``/v1/completions``, ``/v1/moderations``, ``/v1/images/generations``,
``/v1/images/edits`` and ``/v1/videos``. A batch here serves the three paths the invoker itself
serves, each line through that path's own request check (``worker.py``): a chat or a Responses
line goes to a chat model, an embeddings line to an embedding model. The others are refused
with a 400 naming these.
"""

from __future__ import annotations

from typing import Final

from ...formats import ModelKind

CHAT: Final = "/v1/chat/completions"
RESPONSES: Final = "/v1/responses"
EMBEDDINGS: Final = "/v1/embeddings"

#: Each served endpoint and the kind of model its lines must name.
KINDS: Final = {CHAT: ModelKind.CHAT, RESPONSES: ModelKind.CHAT, EMBEDDINGS: ModelKind.EMBEDDING}
SERVED: Final = tuple(KINDS)
