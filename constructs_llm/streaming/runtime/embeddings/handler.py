"""``POST /v1/embeddings``: read and route the request by ``model``, check it (``request.py``),
call ``InvokeEndpoint`` once per body of its engine (``engines.py``), and answer OpenAI's
``list`` of embeddings (``answer.py``).

Stdlib + boto3 only: this file ships in the Lambda asset.

A request whose inputs take several calls (more than the route's ``max_inputs``) makes
them at once, at most :data:`MAX_PARALLEL_CALLS` at a time, and answers in input order; if one
fails, the request fails as that call did (the upstream table in ``runtime/upstream.py``), and the
calls not yet started are not made. A model container answering anything but one embedding
per input is a 502 (``model_answer_invalid``).

The request's log line records its ``model``, the number of ``inputs``, the TEI ``calls`` it
took, the ``encoding_format`` and ``dimensions``; it carries the request's metrics
(``runtime/metrics.py``: Requests, Duration, OverheadLatency, Errors, EmbeddedInputs).
"""

from __future__ import annotations

from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any

from ...formats import ModelKind
from ..http.exchange import Exchange
from ..routing import Route
from ..upstream import UpstreamFailure, describe_failure, invoke_once, send_failure
from .answer import request_answer
from .engines import Embedded, EngineAnswerError
from .request import EmbeddingsRequest, build_embeddings_request

#: Calls one request makes at once (the engines batch concurrent requests themselves).
MAX_PARALLEL_CALLS = 4


def serve_embeddings(exchange: Exchange) -> None:
    """Answer one embeddings request."""
    routed = exchange.read_routed(ModelKind.EMBEDDING, build_embeddings_request)
    if routed is None:
        return
    request, route, variant = routed
    record = exchange.record
    record.update(
        model=route.model,
        inputs=len(request.inputs),
        calls=len(request.bodies),
        encoding_format=request.encoding_format,
    )
    if request.dimensions is not None:
        record["dimensions"] = request.dimensions
    if variant is not None:
        record["target_variant"] = variant
    record["overhead_ms"] = exchange.elapsed_ms()
    try:
        embedded = embed(exchange.server.client, route, request, variant)
    except EngineAnswerError as err:
        record["upstream_error"] = "model_answer_invalid"
        exchange.send_error(502, str(err), error_type="upstream_error", code="model_answer_invalid")
        return
    except EmbedFailed as failed:
        failure = failed.failure
        record["upstream_error"] = failure.upstream_code
        send_failure(exchange, failure)
        return
    exchange.send_json(200, request_answer(embedded, route.model, request))


def embed(client: Any, route: Route, request: EmbeddingsRequest, variant: str | None) -> Embedded:
    """Every input's embedding, in order, from one call per body, and the tokens counted;
    ``EmbedFailed`` carries the first failed call's answer (the batch worker's too)."""
    sizes = request.sizes

    def call(index: int) -> Embedded:
        try:
            answer = invoke_once(client, route, request.bodies[index], target_variant=variant)
        except Exception as exc:
            raise EmbedFailed(describe_failure(exc)) from exc
        return request.api.parse(answer, sizes[index])

    if len(request.bodies) == 1:
        return call(0)
    workers = min(MAX_PARALLEL_CALLS, len(request.bodies))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="embed") as pool:
        futures = [pool.submit(call, index) for index in range(len(request.bodies))]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = _first_failure(futures, done)
        if failed is not None:
            for future in futures:
                future.cancel()
            raise failed
        parts = [future.result() for future in futures]
    counts = [part.prompt_tokens for part in parts]
    total = None if None in counts else sum(c for c in counts if c is not None)
    return Embedded([vector for part in parts for vector in part.vectors], total)


class EmbedFailed(Exception):
    """A call failed; ``failure`` is the answer the client gets."""

    def __init__(self, failure: UpstreamFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _first_failure(futures: list[Future[Any]], done: set[Future[Any]]) -> BaseException | None:
    """The exception of the first call (in input order) that failed, if any did."""
    for future in futures:
        if future in done and future.exception() is not None:
            return future.exception()
    return None
