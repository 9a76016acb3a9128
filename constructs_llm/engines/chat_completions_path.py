"""What an engine's container answers on ``POST /v1/chat/completions``: the path SageMaker's
own OpenAI route calls, whatever the container does on ``/invocations``.

AWS's guide "Invoke endpoints with OpenAI-compatible APIs"
(https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-openai-compatible.html):
"The container must implement the ``/v1/chat/completions`` path and return streaming responses
in SSE format"; it lists the vLLM DLC, the SGLang DLC, and custom containers that implement the
OpenAI paths and ``/ping``. Each engine states what its own container does, from the engine's
source (cited on each engine class).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class ChatCompletionsPath(str, Enum):
    """What a container answers on ``POST /v1/chat/completions``."""

    #: Chat completions, streamed as server-sent events, in a container AWS's guide lists for
    #: the route (the vLLM and SGLang DLCs).
    LISTED = "listed"
    #: Chat completions streamed as server-sent events, by the engine's own source, in a
    #: container AWS's guide does not list (TGI).
    UNLISTED = "unlisted"
    #: Chat completions, but streamed as JSON lines rather than server-sent events (LMI).
    JSON_LINES = "json-lines"
    #: No chat completions on that path (an embedding server).
    ABSENT = "absent"
    #: Not known (an image of the user's own).
    UNKNOWN = "unknown"


# From the least served to the most: a request may reach any of several containers.
_ORDER = (
    ChatCompletionsPath.ABSENT,
    ChatCompletionsPath.JSON_LINES,
    ChatCompletionsPath.UNKNOWN,
    ChatCompletionsPath.UNLISTED,
    ChatCompletionsPath.LISTED,
)


def least_served(paths: Iterable[ChatCompletionsPath]) -> ChatCompletionsPath:
    """What a request reaching any of these containers can count on."""
    return min(paths, key=_ORDER.index, default=ChatCompletionsPath.UNKNOWN)
