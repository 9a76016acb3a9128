"""An embeddings request from its body to its answer: read and route it by ``model``, check it
(``embeddings_request.py``), call ``InvokeEndpoint`` once per TEI body, and answer OpenAI's
``list`` of embeddings (``embeddings_answer.py``).

Stdlib + boto3 only: this file ships in the Lambda asset.

A request whose inputs take several TEI calls (more than the route's ``max_inputs``) makes
them at once, at most :data:`MAX_PARALLEL_CALLS` at a time, and answers in input order; if one
fails, the request fails as that call did (the upstream table in ``upstream.py``), and the
calls not yet started are not made. A model container answering anything but one embedding
per input is a 502 (``model_answer_invalid``).

The request's log line records its ``model``, the number of ``inputs``, the TEI ``calls`` it
took, the ``encoding_format`` and ``dimensions``; it carries the request's metrics
(``metrics.py``: Requests, Duration, OverheadLatency, Errors, EmbeddedInputs).
"""

from __future__ import annotations

from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any

from ..formats import ModelKind
from .embeddings_answer import EngineAnswerError, embeddings_object, parse_tei_answer
from .embeddings_request import EmbeddingsRequest, build_embeddings_request
from .http_exchange import Exchange
from .requests import RequestError, load_request
from .routing import VARIANT_HEADER, Route, accept_route
from .upstream import UpstreamFailure, describe_failure, invoke_once

__all__ = ["MAX_PARALLEL_CALLS", "EmbeddingsExchange"]

#: TEI calls one request makes at once (TEI batches concurrent requests itself).
MAX_PARALLEL_CALLS = 4


class EmbeddingsExchange(Exchange):
    """Serves ``POST /v1/embeddings`` (``_embeddings``)."""

    def _embeddings(self) -> None:
        settings = self.server.settings
        try:
            data = load_request(self._read_body(settings.max_body_bytes))
            self._routed = route = self.server.routes.pick(data.get("model"))
            variant = accept_route(route, ModelKind.EMBEDDING, self.headers.get(VARIANT_HEADER))
            request = build_embeddings_request(data, route)
        except RequestError as err:
            self._send_error(
                err.status, err.message, error_type=err.error_type, param=err.param, code=err.code
            )
            return
        record = self._record
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
        record["overhead_ms"] = self._elapsed_ms()
        try:
            vectors = self._embed(route, request, variant)
        except EngineAnswerError as err:
            record["upstream_error"] = "model_answer_invalid"
            self._send_error(
                502, str(err), error_type="upstream_error", code="model_answer_invalid"
            )
            return
        except _Failed as failed:
            record["upstream_error"] = failed.failure.upstream_code
            failure = failed.failure
            self._send_error(
                failure.status, failure.message, error_type=failure.error_type, code=failure.code
            )
            return
        answer = embeddings_object(
            vectors,
            model=route.model,
            encoding_format=request.encoding_format,
            dimensions=request.dimensions,
        )
        self._send_json(200, answer)

    def _embed(
        self, route: Route, request: EmbeddingsRequest, variant: str | None
    ) -> list[list[float]]:
        """Every input's embedding, in order, from one TEI call per body."""
        client = self.server.client
        sizes = request.sizes

        def call(index: int) -> list[list[float]]:
            try:
                answer = invoke_once(client, route, request.bodies[index], target_variant=variant)
            except Exception as exc:
                raise _Failed(describe_failure(exc)) from exc
            return parse_tei_answer(answer, sizes[index])

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
            return [vector for future in futures for vector in future.result()]


class _Failed(Exception):
    """A TEI call failed; ``failure`` is the answer the client gets."""

    def __init__(self, failure: UpstreamFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _first_failure(futures: list[Future[Any]], done: set[Future[Any]]) -> BaseException | None:
    """The exception of the first call (in input order) that failed, if any did."""
    for future in futures:
        if future in done and future.exception() is not None:
            return future.exception()
    return None
