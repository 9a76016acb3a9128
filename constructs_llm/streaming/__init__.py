"""Token streaming: a pure incremental parser, the Lambda runtime and its construct.

``parse_stream`` and the event types come from the runtime package, which is stdlib-only;
``StreamingInvoker`` (the CDK construct) is loaded only when asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_llm.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "parse_stream": "constructs_llm.streaming.runtime.parsing.parser",
    "TokenEvent": "constructs_llm.streaming.runtime.parsing.events",
    "ToolCallEvent": "constructs_llm.streaming.runtime.parsing.events",
    "ReasoningEvent": "constructs_llm.streaming.runtime.parsing.events",
    "DoneEvent": "constructs_llm.streaming.runtime.parsing.events",
    "ErrorEvent": "constructs_llm.streaming.runtime.parsing.events",
    "StreamEvent": "constructs_llm.streaming.runtime.parsing.events",
    "StreamFormat": "constructs_llm.contract",
    "RequestFormat": "constructs_llm.contract",
    "iter_payload_parts": "constructs_llm.streaming.runtime.parsing.sagemaker_stream",
    "stream_events": "constructs_llm.streaming.runtime.parsing.sagemaker_stream",
    "UpstreamStreamError": "constructs_llm.streaming.runtime.parsing.parser",
    "stream_chat": "constructs_llm.streaming.client",
    "sigv4_hook": "constructs_llm.streaming.client",
    "content_sha256_hook": "constructs_llm.streaming.client",
    "ChatStreamError": "constructs_llm.streaming.client",
    "submit_chat": "constructs_llm.streaming.async_chat",
    "chat_async": "constructs_llm.streaming.async_chat",
    "AsyncChatJob": "constructs_llm.streaming.async_chat",
    "AsyncChatError": "constructs_llm.streaming.async_chat",
    "sagemaker_bearer_token": "constructs_llm.streaming.bearer_token",
    "bearer_token_hook": "constructs_llm.streaming.bearer_token",
    "bearer_token_provider": "constructs_llm.streaming.bearer_token",
    "StreamingInvoker": "constructs_llm.streaming.invoker.streaming_invoker",
    "InvokerAuth": "constructs_llm.streaming.invoker.auth",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # names for type checkers and IDEs; loaded lazily above
    from constructs_llm.contract import RequestFormat as RequestFormat
    from constructs_llm.contract import StreamFormat as StreamFormat
    from constructs_llm.streaming.async_chat import AsyncChatError as AsyncChatError
    from constructs_llm.streaming.async_chat import AsyncChatJob as AsyncChatJob
    from constructs_llm.streaming.async_chat import chat_async as chat_async
    from constructs_llm.streaming.async_chat import submit_chat as submit_chat
    from constructs_llm.streaming.bearer_token import bearer_token_hook as bearer_token_hook
    from constructs_llm.streaming.bearer_token import (
        bearer_token_provider as bearer_token_provider,
    )
    from constructs_llm.streaming.bearer_token import (
        sagemaker_bearer_token as sagemaker_bearer_token,
    )
    from constructs_llm.streaming.client import ChatStreamError as ChatStreamError
    from constructs_llm.streaming.client import content_sha256_hook as content_sha256_hook
    from constructs_llm.streaming.client import sigv4_hook as sigv4_hook
    from constructs_llm.streaming.client import stream_chat as stream_chat
    from constructs_llm.streaming.invoker.auth import InvokerAuth as InvokerAuth
    from constructs_llm.streaming.invoker.streaming_invoker import (
        StreamingInvoker as StreamingInvoker,
    )
    from constructs_llm.streaming.runtime.parsing.events import DoneEvent as DoneEvent
    from constructs_llm.streaming.runtime.parsing.events import ErrorEvent as ErrorEvent
    from constructs_llm.streaming.runtime.parsing.events import ReasoningEvent as ReasoningEvent
    from constructs_llm.streaming.runtime.parsing.events import StreamEvent as StreamEvent
    from constructs_llm.streaming.runtime.parsing.events import TokenEvent as TokenEvent
    from constructs_llm.streaming.runtime.parsing.events import ToolCallEvent as ToolCallEvent
    from constructs_llm.streaming.runtime.parsing.parser import (
        UpstreamStreamError as UpstreamStreamError,
    )
    from constructs_llm.streaming.runtime.parsing.parser import parse_stream as parse_stream
    from constructs_llm.streaming.runtime.parsing.sagemaker_stream import (
        iter_payload_parts as iter_payload_parts,
    )
    from constructs_llm.streaming.runtime.parsing.sagemaker_stream import (
        stream_events as stream_events,
    )
