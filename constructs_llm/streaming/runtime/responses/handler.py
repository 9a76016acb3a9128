"""``POST /v1/responses``: read and route the request by ``model``, translate it into the chat
request the engine takes (``request.py``), then generate its answer as Responses events
(``stream.py``) or one ``response`` object (``answer.py``).

Stdlib + boto3 only: this file ships in the Lambda asset. The answer behaves as chat's does
where HTTP is concerned (``generation.py``): an engine that fails before its first token gets
a real HTTP error status with an OpenAI-shaped error body; a heartbeat (``HEARTBEAT_SECONDS``)
may commit the ``200`` earlier, and a failure after that ends the stream with
``response.created``, ``response.in_progress`` and ``response.failed``. The log line gets the
same fields as chat's, so the request's metrics are the chat request's.
"""

from __future__ import annotations

from ..generation import Generation, generate, read_chat_request
from ..http.exchange import Exchange
from .answer import ResponseAnswer
from .objects import ResponseShape
from .request import build_responses_request
from .stream import ResponseEvents


def serve_responses(exchange: Exchange) -> None:
    """Answer one Responses request."""
    routed = read_chat_request(exchange, build_responses_request)
    if routed is None:
        return
    request, route, variant = routed
    shape = ResponseShape(model=route.model, echo=request.echo)
    generate(
        exchange,
        Generation(
            route=route,
            variant=variant,
            engine_body=request.chat.engine_body,
            prefix_aware_id=request.chat.prefix_aware_id,
            stream=request.stream,
            writer=lambda: ResponseEvents(shape, logprobs=request.logprobs),
            answer=lambda: ResponseAnswer(shape, logprobs=request.logprobs),
        ),
    )
