"""The vocabulary the construct layer and the Lambda runtime share: the wire formats an engine
speaks, the names of the runtime's environment variables, the schema of its ``ROUTES`` table,
and the names of the invoker's metrics. It sits below both: the constructs (``engines/``,
``model/``, ``sizing/``, ``hosting/``, ``streaming/invoker/``) import it from here, the runtime
(``streaming/runtime/``) through ``streaming/formats.py``, and neither layer imports the other.
It ships in the Lambda's code asset, at the asset's root, beside the runtime. Stdlib only.
"""

from __future__ import annotations

from enum import Enum
from typing import Final, TypedDict

__all__ = [
    "DEFAULT_CORS_HEADERS",
    "DEFAULT_CORS_MAX_AGE_S",
    "DEFAULT_MAX_REQUEST_BYTES",
    "ERROR_KINDS",
    "MAX_REQUEST_BYTES",
    "NAMESPACE",
    "EngineName",
    "Env",
    "ModelKind",
    "ReasoningField",
    "RequestFormat",
    "RouteSpec",
    "StreamFormat",
]


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
    EMBED = "embed"  # an embedding model's body; one JSON answer, no stream

    @property
    def kind(self) -> ModelKind:
        """The kind of model that takes this body: an embedding model for ``EMBED``."""
        return ModelKind.EMBEDDING if self is RequestFormat.EMBED else ModelKind.CHAT


class EngineName(str, Enum):
    """The serving engine behind a route, by the name its ``Engine`` gives it: which request
    fields it honours (``streaming/runtime/chat/fields.py``) and which body an embedding model takes
    (``runtime/embeddings/``). A route whose engine is not known (a custom image, an endpoint
    deployed elsewhere) gets the fields every engine honours."""

    VLLM = "vllm"
    SGLANG = "sglang"
    LMI_VLLM = "lmi-vllm"  # DJL LMI's vLLM async service: vLLM's own request classes
    LMI_TRTLLM = "lmi-trtllm"
    TGI = "tgi"
    TGI_NEURONX = "tgi-neuronx"
    TEI = "tei"


class ReasoningField(str, Enum):
    """The name under which a chat answer carries a reasoning model's thinking, on its
    ``message`` and on each stream delta (``streaming/runtime/chat/wire.py`` says which clients read
    which). Responses' reasoning items are not affected."""

    REASONING = "reasoning"  # vLLM's name since 0.25; read by current clients
    REASONING_CONTENT = "reasoning_content"  # SGLang's and older vLLM's; older clients' only
    BOTH = "both"  # both names with the same text: some clients then read it twice

    @property
    def names(self) -> tuple[str, ...]:
        """The fields the thinking is written under."""
        if self is ReasoningField.BOTH:
            return (ReasoningField.REASONING.value, ReasoningField.REASONING_CONTENT.value)
        return (self.value,)


class Env:
    """The names of the runtime's environment variables; ``streaming/runtime/settings.py`` documents
    each one, and ``streaming/invoker/`` sets them."""

    PORT: Final = "PORT"
    BIND_ADDRESS: Final = "BIND_ADDRESS"
    ENDPOINT_NAME: Final = "ENDPOINT_NAME"
    INFERENCE_COMPONENT_NAME: Final = "INFERENCE_COMPONENT_NAME"
    STREAM_FORMAT: Final = "STREAM_FORMAT"
    REQUEST_FORMAT: Final = "REQUEST_FORMAT"
    MODEL_NAME: Final = "MODEL_NAME"
    ENGINE: Final = "ENGINE"
    VISION: Final = "VISION"
    MAX_TOTAL_TOKENS: Final = "MAX_TOTAL_TOKENS"
    TOOLS: Final = "TOOLS"
    ROUTES: Final = "ROUTES"
    MAX_BODY_BYTES: Final = "MAX_BODY_BYTES"
    UPSTREAM_READ_TIMEOUT: Final = "UPSTREAM_READ_TIMEOUT"
    CLIENT_TIMEOUT: Final = "CLIENT_TIMEOUT"
    REQUEST_DEADLINE: Final = "REQUEST_DEADLINE"
    MAX_CONNECTIONS: Final = "MAX_CONNECTIONS"
    HEARTBEAT_SECONDS: Final = "HEARTBEAT_SECONDS"
    CAPACITY_WAIT_SECONDS: Final = "CAPACITY_WAIT_SECONDS"
    API_KEYS_SECRET_ID: Final = "API_KEYS_SECRET_ID"
    API_KEYS_TTL_SECONDS: Final = "API_KEYS_TTL_SECONDS"
    API_KEYS_STALE_SECONDS: Final = "API_KEYS_STALE_SECONDS"
    ORIGIN_SECRET_ID: Final = "ORIGIN_SECRET_ID"
    CORS_ALLOWED_ORIGINS: Final = "CORS_ALLOWED_ORIGINS"
    CORS_ALLOWED_HEADERS: Final = "CORS_ALLOWED_HEADERS"
    CORS_MAX_AGE_SECONDS: Final = "CORS_MAX_AGE_SECONDS"
    METRICS_NAMESPACE: Final = "METRICS_NAMESPACE"
    REASONING_FIELD: Final = "REASONING_FIELD"
    BATCH_BUCKET: Final = "BATCH_BUCKET"
    BATCH_STATE_MACHINE_ARN: Final = "BATCH_STATE_MACHINE_ARN"
    BATCH_WINDOW_SECONDS: Final = "BATCH_WINDOW_SECONDS"
    BATCH_CONCURRENCY: Final = "BATCH_CONCURRENCY"
    BATCH_ASYNC: Final = "BATCH_ASYNC"

    #: The variables one target is described by; ``ROUTES`` replaces them all.
    SINGLE_TARGET: Final = (
        ENDPOINT_NAME,
        INFERENCE_COMPONENT_NAME,
        STREAM_FORMAT,
        REQUEST_FORMAT,
        MODEL_NAME,
        ENGINE,
        VISION,
        MAX_TOTAL_TOKENS,
    )


class RouteSpec(TypedDict, total=False):
    """One entry of ``ROUTES`` (a JSON list): a served model and where its requests go.
    ``streaming/runtime/routing.py`` reads it and documents each key; ``model`` and ``endpoint`` are
    required.

    :param model: the name clients send as ``model``.
    :param endpoint: the SageMaker endpoint's name.
    :param component: the inference component on it.
    :param stream_format: a ``StreamFormat`` value.
    :param request_format: a ``RequestFormat`` value.
    :param engine: an ``EngineName`` value, when the engine is known.
    :param tools: whether the engine serves tool calls.
    :param vision: false when the model is known to take no images (true is not written:
        a model that may see gets image parts as they come).
    :param variants: the production variants a request may pin.
    :param max_total_tokens: the model's prompt + completion limit.
    :param dimensions: an embedding model's embedding length.
    :param min_dimensions: its shortest Matryoshka truncation.
    :param max_inputs: inputs its engine takes in one call.
    """

    model: str
    endpoint: str
    component: str
    stream_format: str
    request_format: str
    engine: str
    tools: bool
    vision: bool
    variants: list[str]
    max_total_tokens: int
    dimensions: int
    min_dimensions: int
    max_inputs: int


#: The request headers a browser may send cross-origin unless told otherwise
#: (``CORS_ALLOWED_HEADERS``, ``Cors(allowed_headers=...)``): an API key, the JSON body's type,
#: and the body's SHA-256 that CloudFront's origin access control needs on a POST.
DEFAULT_CORS_HEADERS = ("authorization", "content-type", "x-amz-content-sha256")

#: Seconds a browser may keep a preflight's answer unless told otherwise: two hours, the most
#: Chromium keeps (Firefox keeps up to a day; Lambda's own CORS takes at most 86,400).
DEFAULT_CORS_MAX_AGE_S = 7200

#: The largest request body a Lambda function URL takes: "6 MB" of request payload (Lambda
#: quotas, "Invocation payload (request and response)"), in the binary megabytes Lambda counts.
MAX_REQUEST_BYTES = 6 * 1024 * 1024

#: The invoker's largest request body unless told otherwise (``MAX_BODY_BYTES``,
#: ``StreamingInvoker(max_request_bytes=...)``): 5 MiB, room for a phone photo as a data URL
#: (3.75 MB of image, 5 MB once base64-encoded) under the function URL's limit.
DEFAULT_MAX_REQUEST_BYTES = 5 * 1024 * 1024

#: The CloudWatch namespace of the invoker's metrics (EMF records and the construct's metrics).
NAMESPACE = "ConstructsLlm/Invoker"

#: ``auth``: no valid key (401), or refused before any key check: no origin secret or an origin
#: CORS does not allow (403); ``invalid_request``: another 4xx before the answer;
#: ``throttled``: 429; ``timeout``: 504; ``upstream``: SageMaker or the engine failed before
#: the answer started (other 5xx); ``stream``: the answer started, then failed; ``internal``:
#: a bug in the runtime (500).
ERROR_KINDS = ("auth", "invalid_request", "throttled", "timeout", "upstream", "stream", "internal")
