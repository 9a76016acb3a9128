"""The contract the invoker's two layers share: the wire formats an engine speaks, and the
names of the invoker's metrics. The construct layer (``streaming/invoker/``, ``engines/``,
``hosting/``) and the Lambda runtime (``streaming/runtime/``) both import this module, and
neither imports the other; it ships in the Lambda's code asset beside the runtime. Stdlib only.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["ERROR_KINDS", "NAMESPACE", "ModelKind", "RequestFormat", "StreamFormat"]


class StreamFormat(str, Enum):
    """How a serving container frames its token stream."""

    TGI = "tgi"  # SSE `data:{"token": ...}` events (TGI generate API)
    LMI_JSONLINES = "lmi_jsonlines"  # one JSON object per line (DJL LMI)
    OPENAI = "openai"  # SSE `chat.completion.chunk` events ending in `data: [DONE]`
    AUTO = "auto"  # detect per line


class ModelKind(str, Enum):
    """What a served model answers: chat (``POST /v1/chat/completions`` and
    ``/v1/responses``) or embeddings (``POST /v1/embeddings``). The invoker routes each request
    by its ``model`` and refuses a request of the other kind with a 400 naming the model's."""

    CHAT = "chat"
    EMBEDDING = "embedding"


class RequestFormat(str, Enum):
    """Which request body a serving container expects on /invocations."""

    MESSAGES = "messages"  # OpenAI-style {"messages": [...]} chat request
    GENERATE = "generate"  # TGI/LMI {"inputs": "...", "parameters": {...}}
    EMBED = "embed"  # TEI {"inputs": [...], "normalize": true}; one JSON answer, no stream

    @property
    def kind(self) -> ModelKind:
        """The kind of model that takes this body: an embedding model for ``EMBED``."""
        return ModelKind.EMBEDDING if self is RequestFormat.EMBED else ModelKind.CHAT


#: The CloudWatch namespace of the invoker's metrics (EMF records and the construct's metrics).
NAMESPACE = "ConstructsLlm/Invoker"

#: ``auth``: no valid key (401); ``invalid_request``: another 4xx before the answer;
#: ``throttled``: 429; ``timeout``: 504; ``upstream``: SageMaker or the engine failed before
#: the answer started (other 5xx); ``stream``: the answer started, then failed; ``internal``:
#: a bug in the runtime (500).
ERROR_KINDS = ("auth", "invalid_request", "throttled", "timeout", "upstream", "stream", "internal")
