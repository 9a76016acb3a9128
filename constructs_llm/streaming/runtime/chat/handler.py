"""``POST /v1/chat/completions``: read and route the request, check it, and generate its answer
as ``chat.completion.chunk`` events (``stream.py``) or one ``chat.completion``
(``completion.py``). Stdlib + boto3 only: this file ships in the Lambda asset.
"""

from __future__ import annotations

from ..generation import Generation, generate, read_chat_request
from ..http.exchange import Exchange
from .completion import CompletionBuilder
from .request import build_chat_request
from .stream import ChunkStream
from .wire import CompletionShape


def serve_chat(exchange: Exchange) -> None:
    """Answer one chat request."""
    routed = read_chat_request(exchange, build_chat_request)
    if routed is None:
        return
    request, route, variant = routed
    shape = CompletionShape(
        model=route.model,
        logprobs=request.logprobs,
        chose_tools=request.chose_tools,
        reasoning_field=exchange.settings.reasoning_field,
    )
    generate(
        exchange,
        Generation(
            route=route,
            variant=variant,
            engine_body=request.engine_body,
            prefix_aware_id=request.prefix_aware_id,
            stream=request.stream,
            writer=lambda: ChunkStream(shape, include_usage=request.include_usage),
            answer=lambda: CompletionBuilder(shape),
        ),
    )
