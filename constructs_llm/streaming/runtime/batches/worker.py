"""The batch's Lambda function: one request line of a batch (``{"phase": "line"}``, each item of
the distributed map), and finishing the batch (``{"phase": "finalize"}``, after the map).
Stdlib + boto3 only: this file ships in the Lambda asset, whose handler is
``streaming/runtime/batches/worker.handle``.

A line is served as the invoker serves its ``url`` (``endpoints.py``), routed by its ``model``
(``routing.py``) and checked by that path's own request check, so a field gets the same 400:

- ``/v1/chat/completions`` (``chat/request.py``) and ``/v1/responses`` (``responses/request.py``,
  on a chat model): sent with ``InvokeEndpointWithResponseStream`` (a stream is not held to the
  60 s cap of a non-streamed invocation), its events aggregated into one ``chat.completion``
  (``chat/completion.py``) or one ``response`` (``responses/answer.py``), as ``stream: false``;
- ``/v1/embeddings`` (``embeddings/request.py``, on an embedding model): ``InvokeEndpoint`` once
  per body of its engine, answered as OpenAI's embeddings ``list`` (``embeddings/answer.py``).

A line of a model on an asynchronous endpoint (``BATCH_ASYNC``) is queued instead, and its
answer looked for after the map's ``Wait`` state (``{"phase": "poll"}``, ``queued.py``).

The answer is OpenAI's output line (OpenAI's reference, "The request output object")::

    {"id": "batch_req_…", "custom_id": "…",
     "response": {"status_code": 200, "request_id": "…", "body": {chat.completion}},
     "error": null}

A request its model refuses gets its status and OpenAI error as ``response``. A refusal that
capacity will cure is raised instead, as ``TargetBusy``, so the map's ``Retry`` waits and
tries again: throttling and 429s, 503s, timeouts, unreachable endpoints, and an inference
component with no copy to serve it (scaled to zero: the refusal is what starts its scale-out,
``NoCapacityInvocationFailures``). Once the retries are spent the item fails, and finishing
writes it to the error file with ``error: {"code", "message"}``.

Each answered line is also kept under ``batches/<batch id>/lines/`` (``BATCH_BUCKET``), so a
batch cancelled or expired before it finished still gets its files (``stopped.py``).
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from ...formats import Env
from ..chat.completion import CompletionBuilder
from ..chat.request import ChatRequest, build_chat_request
from ..chat.target import ChatTarget
from ..chat.wire import CompletionShape
from ..embeddings.answer import request_answer
from ..embeddings.engines import EngineAnswerError
from ..embeddings.handler import EmbedFailed, embed
from ..embeddings.request import EmbeddingsRequest, build_embeddings_request
from ..generation import terminated
from ..http.errors import RequestError, error_object
from ..http.exchange import new_request_id
from ..parsing.events import DoneEvent, ErrorEvent
from ..parsing.parser import parse_stream
from ..parsing.sagemaker_stream import iter_payload_parts
from ..responses.answer import ResponseAnswer
from ..responses.objects import ResponseShape
from ..responses.request import build_responses_request
from ..routing import Route, RoutingTable, accept_route
from ..settings import Settings, new_sagemaker_client
from ..upstream import UpstreamFailure, describe_failure, describe_stream_error, invoke
from ..whole_answer import Answer, answered
from .config import async_models, aws_client
from .endpoints import CHAT, EMBEDDINGS, KINDS, RESPONSES
from .queued import poll, submit
from .results import finalize, output_line
from .stopped import line_key
from .store import Store

#: Failures that capacity cures: the map retries them (``TargetBusy``). ``no_capacity`` is
#: ``upstream.py``'s code for SageMaker's refusal of a component with no copy
#: (``capacity_wait.is_no_capacity``): the refusal that starts its scale-out from zero.
_BUSY_CODES = frozenset(
    {
        "no_capacity",
        "model_overloaded",
        "upstream_throttled",
        "model_unavailable",
        "upstream_unavailable",
        "upstream_timeout",
        "upstream_unreachable",
    }
)


class TargetBusy(Exception):
    """The target cannot take the request now; Step Functions retries the item (its error
    name is this class's, as Lambda reports a handler's exception)."""


@functools.cache
def _settings() -> Settings:
    return Settings.from_env(os.environ)


@functools.cache
def _routes() -> RoutingTable:
    return _settings().routing()


@functools.cache
def _client() -> Any:
    return new_sagemaker_client(_settings())


@functools.cache
def _async_inputs() -> dict[str, str]:
    """``BATCH_ASYNC``: the asynchronous models and the input folder of each."""
    return async_models(os.environ)


def handle(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Lambda's entry point."""
    if event.get("phase") == "finalize":
        return finalize(event)
    if event.get("phase") == "poll":  # a queued line, after its Wait state
        pending = event["pending"]
        answer = poll(pending, aws_client("s3"))
    else:
        request_id = str(getattr(context, "aws_request_id", "") or new_request_id())
        batch_id = str(event.get("batch_id") or "")
        answer = serve_line(event.get("line"), request_id=request_id, batch_id=batch_id)
    if "pending" not in answer:
        keep(str(event.get("batch_id") or ""), answer)
    return answer


def keep(batch_id: str, answer: dict[str, Any]) -> None:
    """Keep the line's answer in the bucket (``BATCH_BUCKET``), for the files of a batch that
    stops before it finishes (``stopped.py``)."""
    bucket = os.environ.get(Env.BATCH_BUCKET, "")
    if bucket:
        key = line_key(batch_id, answer.get("custom_id"))
        Store(aws_client("s3"), bucket).put_json(key, answer)


def serve_line(
    line: object,
    *,
    request_id: str,
    routes: RoutingTable | None = None,
    settings: Settings | None = None,
    client: Any = None,
    batch_id: str = "",
    queued: dict[str, str] | None = None,
    s3: Any = None,
) -> dict[str, Any]:
    """One output line for one input line, or, on an asynchronous model (``queued``: each
    one's input folder, ``BATCH_ASYNC``), the pending line ``poll`` reads (raises
    ``TargetBusy`` to be retried)."""
    settings = settings or _settings()
    routes = routes or _routes()
    queued = _async_inputs() if queued is None else queued
    request = line if isinstance(line, dict) else {}
    custom_id = request.get("custom_id")
    try:
        route, checked = _checked(request, routes, settings)
        input_location = queued.get(route.model)
        if input_location is not None:
            chat = _queued_request(request, route, settings)
    except RequestError as err:
        refused = error_object(
            err.message, error_type=err.error_type, param=err.param, code=err.code
        )
        return _line(custom_id, err.status, request_id, refused)
    if input_location is not None:
        try:
            return submit(
                client or _client(),
                s3 or aws_client("s3"),
                route=route,
                chat=chat,
                input_location=input_location,
                batch_id=batch_id,
                custom_id=custom_id,
                request_id=request_id,
            )
        except Exception as exc:
            return _failed(custom_id, request_id, describe_failure(exc))
    if isinstance(checked, EmbeddingsRequest):
        return _embedded(custom_id, request_id, client or _client(), route, checked)
    engine_body, answer = checked
    try:
        upstream = invoke(client or _client(), route, engine_body)
    except Exception as exc:
        return _failed(custom_id, request_id, describe_failure(exc))
    events = parse_stream(iter(iter_payload_parts(upstream).__next__, None), route.stream_format)
    end = answered(answer, terminated(events))
    if isinstance(end, DoneEvent):
        return _line(custom_id, 200, request_id, answer.build(end))
    if isinstance(end, ErrorEvent):
        return _failed(custom_id, request_id, describe_stream_error(end))
    raise AssertionError("terminated() always ends with a done or error event")


def _checked(
    request: dict[str, Any], routes: RoutingTable, settings: Settings
) -> tuple[Route, EmbeddingsRequest | tuple[bytes, Answer]]:
    """The line's route and its checked request: an embeddings request, or a generation's
    engine body and the builder of its answer. ``RequestError`` as the invoker's path
    would answer it."""
    body = request.get("body")
    if not isinstance(body, dict):
        raise RequestError("the line has no body object", param="body")
    url = request.get("url", CHAT)  # the lines were checked: each names the batch's endpoint
    kind = KINDS.get(url) if isinstance(url, str) else None
    if kind is None:
        raise RequestError(f"url {url!r} is not served in a batch", param="url")
    route = routes.pick(body.get("model"))
    accept_route(route, kind, None)
    if url == EMBEDDINGS:
        return route, build_embeddings_request(body, route)
    target = ChatTarget.of_route(route, tools=settings.tools_for(route))
    if url == RESPONSES:
        responses = build_responses_request(body, target)
        shape = ResponseShape(model=route.model, echo=responses.echo)
        return route, (
            responses.chat.engine_body,
            ResponseAnswer(shape, logprobs=responses.logprobs),
        )
    chat = build_chat_request(body, target)
    completion = CompletionShape(
        model=route.model,
        logprobs=chat.logprobs,
        chose_tools=chat.chose_tools,
        reasoning_field=settings.reasoning_field,
    )
    return route, (chat.engine_body, CompletionBuilder(completion))


def _queued_request(request: dict[str, Any], route: Route, settings: Settings) -> ChatRequest:
    """The chat request of a line to an asynchronous model: chat completions only (its answer
    is read back as a ``chat.completion``, ``chat/async_answer.py``)."""
    url = request.get("url", CHAT)
    if url != CHAT:
        raise RequestError(
            f"the model {route.model!r} is served asynchronously, in {CHAT} batches only; "
            f"send this {url} line to a real-time model",
            param="url",
        )
    target = ChatTarget.of_route(route, tools=settings.tools_for(route))
    return build_chat_request(request["body"], target)


def _embedded(
    custom_id: object, request_id: str, client: Any, route: Route, request: EmbeddingsRequest
) -> dict[str, Any]:
    """An embeddings line's answer: every input's embedding, as ``POST /v1/embeddings``."""
    try:
        embedded = embed(client, route, request, None)
    except EmbedFailed as failed:
        return _failed(custom_id, request_id, failed.failure)
    except EngineAnswerError as err:
        invalid = error_object(str(err), error_type="upstream_error", code="model_answer_invalid")
        return _line(custom_id, 502, request_id, invalid)
    return _line(custom_id, 200, request_id, request_answer(embedded, route.model, request))


def _failed(custom_id: object, request_id: str, failure: UpstreamFailure) -> dict[str, Any]:
    if failure.code in _BUSY_CODES:
        raise TargetBusy(f"{failure.code}: {failure.message}")
    body = error_object(failure.message, error_type=failure.error_type, code=failure.code)
    return _line(custom_id, failure.status, request_id, body)


_line = output_line


def dumps(line: dict[str, Any]) -> str:
    """One line of an output or error file."""
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False)
