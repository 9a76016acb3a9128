"""A Responses request from its body to its answer: read and route it by ``model``, translate
it into the chat request the engine takes (``responses_request.py``), then invoke, parse and
answer as the chat path does (``chat_flow.ChatExchange._invoke_and_answer``), in Responses
shapes (``responses_answers.py``).

Stdlib + boto3 only: this file ships in the Lambda asset.
"""

from __future__ import annotations

from ..formats import ModelKind
from .chat_flow import Answer
from .requests import RequestError, load_request
from .responses_answers import ResponsesAnswerWriter
from .responses_request import build_responses_request
from .routing import VARIANT_HEADER, accept_route

__all__ = ["ResponsesExchange"]


class ResponsesExchange(ResponsesAnswerWriter):
    """Serves ``POST /v1/responses`` (``_responses``) beside the chat route."""

    def _responses(self) -> None:
        settings = self.server.settings
        try:
            data = load_request(self._read_body(settings.max_body_bytes))
            self._target = self._routed = route = self.server.routes.pick(data.get("model"))
            self._variant = accept_route(route, ModelKind.CHAT, self.headers.get(VARIANT_HEADER))
            request = build_responses_request(
                data,
                route.request_format,
                tools=settings.tools_for(route),
                max_total_tokens=route.max_total_tokens,
            )
        except RequestError as err:
            self._send_error(
                err.status, err.message, error_type=err.error_type, param=err.param, code=err.code
            )
            return
        heartbeat = self._begin_answer(route, stream=request.stream)
        answer = Answer(
            stream=lambda events, beat: self._responses_stream(events, request, beat),
            complete=lambda events: self._responses_complete(events, request),
            end_stream_with_error=lambda failure: self._responses_end_with_error(request, failure),
        )
        try:
            self._invoke_and_answer(request.chat, heartbeat, answer)
        finally:
            if heartbeat is not None:
                heartbeat.stop()  # a no-op unless something unexpected raised
