"""``POST /v1/chat/completions``: read and route the request, check it, and generate its answer
as ``chat.completion.chunk`` events (``stream.py``) or one ``chat.completion``
(``completion.py``). Stdlib + boto3 only: this file ships in the Lambda asset.
"""

from __future__ import annotations

import time

from ...formats import ModelKind
from ..generation import Generation, generate
from ..http.errors import RequestError
from ..http.exchange import Exchange
from ..routing import VARIANT_HEADER, accept_route
from .completion import CompletionBuilder
from .request import build_chat_request
from .stream import ChunkStream
from .wire import new_completion_id

__all__ = ["serve_chat"]


def serve_chat(exchange: Exchange) -> None:
    """Answer one chat request."""
    try:
        data = exchange.read_json()
        exchange.route = route = exchange.server.routes.pick(data.get("model"))
        variant = accept_route(route, ModelKind.CHAT, exchange.headers.get(VARIANT_HEADER))
        request = build_chat_request(
            data,
            route.request_format,
            tools=exchange.settings.tools_for(route),
            max_total_tokens=route.max_total_tokens,
            engine=route.engine,
            vision=route.vision,
        )
    except RequestError as err:
        exchange.refuse(err)
        return
    completion_id, created = new_completion_id(), int(time.time())
    generate(
        exchange,
        Generation(
            route=route,
            variant=variant,
            engine_body=request.engine_body,
            stream=request.stream,
            writer=lambda: ChunkStream(
                completion_id=completion_id,
                created=created,
                model=route.model,
                logprobs=request.logprobs,
                include_usage=request.include_usage,
                chose_tools=request.chose_tools,
            ),
            answer=lambda: CompletionBuilder(
                completion_id=completion_id,
                created=created,
                model=route.model,
                logprobs=request.logprobs,
                chose_tools=request.chose_tools,
            ),
        ),
    )
