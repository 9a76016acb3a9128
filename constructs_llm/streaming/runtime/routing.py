"""Which SageMaker endpoint (and inference component) serves a request, chosen by its ``model``.

Stdlib only: this file ships in the Lambda asset.

One invoker may front several models (``StreamingInvoker(targets=[...])``). Each is a
:class:`Route`: the name clients send as ``model``, the endpoint, the inference component
when there is one, the engine (when known) and its request and stream formats, whether it
serves tool calls, and the production variants a request may pin. ``StreamingInvoker`` writes
them to ``ROUTES``, a JSON list of ``formats.RouteSpec`` entries::

    [{"model": "chat", "endpoint": "shared-ep", "component": "chat-ic",
      "stream_format": "openai", "request_format": "messages", "engine": "vllm",
      "tools": true},
     {"model": "ab", "endpoint": "ab-ep", "stream_format": "auto",
      "request_format": "messages", "tools": false,
      "variants": ["Llama-g5-2xlarge", "Qwen-g5-2xlarge"]}]

A route's ``engine`` (``formats.EngineName``) decides which request fields pass to it: those
its engine honours (``chat/fields.py``); without it, only those every engine honours. A
route's ``"vision": false`` says its model takes no images: a request with an image part gets
a 400 saying so; without it, image parts go to the engine as they come.

A route's ``tools`` (true or false) says whether its engine serves tool calls; without it the
``TOOLS`` setting decides (see ``settings.py``). A route with ``"tools": false`` answers a
request with tools with a 400 naming the field, while another route serves them.

A route's ``max_total_tokens``, when its model's is known, is the most tokens its engine takes
for the prompt and the completion together: a request whose ``max_tokens`` (or
``max_completion_tokens``) is larger can never be served, and gets a 400 naming the field and
the limit before SageMaker is called (``chat/fields.py``).

An embedding model's route takes the ``embed`` request format (TEI's ``{"inputs": [...]}``)
and serves ``POST /v1/embeddings`` only; it has no stream format or tools, and may state the
length of its embeddings (``dimensions``), the shortest Matryoshka truncation it supports
(``min_dimensions``: OpenAI's ``dimensions`` is served from it up to ``dimensions``, and
refused with a 400 without it) and how many inputs its engine takes in one call
(``max_inputs``: a longer ``input`` list is split into calls of at most that many)::

    {"model": "embedder", "endpoint": "shared-ep", "component": "embedder-ic",
     "request_format": "embed", "dimensions": 1024, "max_inputs": 32}

Its kind (``Route.kind``, from the request format) decides which API it serves: a chat or
responses request for an embedding model, or an embeddings request for a chat model, gets a
400 naming the model's kind (``model_kind_mismatch``).

Without ``ROUTES`` the single-target variables (``ENDPOINT_NAME``,
``INFERENCE_COMPONENT_NAME``, ``STREAM_FORMAT``, ``REQUEST_FORMAT``, ``MODEL_NAME``,
``MAX_TOTAL_TOKENS``) make the one route, which serves every request whatever its ``model`` (as
before routing existed). With several routes a request's ``model`` picks its route: a missing
``model`` is a 400 and an unknown one a 404 with OpenAI's ``model_not_found`` code, both
listing the served names.

Pinning a variant: a request header ``X-Target-Variant: <variant>`` is passed to SageMaker as
``TargetVariant``, which "overrides the default behavior for the endpoint, which is to
distribute the invocation traffic based on the variant weights" (botocore ``sagemaker-runtime``
``InvokeEndpointWithResponseStream``, sent as ``X-Amzn-SageMaker-Target-Variant``). The name
must be one of the route's production variants when they are known; a model served by an
inference component has no variant to pin (400).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..formats import EngineName, ModelKind, RequestFormat, RouteSpec, StreamFormat
from .http.errors import RequestError

VARIANT_HEADER = "X-Target-Variant"
# SageMaker's variant name pattern and length (botocore ``TargetVariantHeader``).
_VARIANT_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
_KEYS = frozenset(RouteSpec.__annotations__)
_EMBEDDING_KEYS = ("dimensions", "min_dimensions", "max_inputs")
#: The largest embedding length or per-call input count a route may state.
_MAX_EMBEDDING_COUNT = 1_000_000
MAX_TOKENS_CEILING = 2**31 - 1
"""The largest token count the runtime passes on: a signed 32-bit integer (TGI reads
``max_tokens`` and ``max_new_tokens`` as ``u32``, huggingface/text-generation-inference:
``router/src/lib.rs``)."""


@dataclass(frozen=True, kw_only=True)
class Route:
    """One served model and where its requests go.

    :param model: the name clients send as ``model`` and see in ``/v1/models``.
    :param endpoint_name: the SageMaker endpoint.
    :param inference_component_name: the component on it. @default None (a model endpoint)
    :param stream_format: how the engine frames its stream. @default AUTO (per line)
    :param request_format: the body the engine takes. @default MESSAGES
    :param engine: the engine, when known: which request fields pass (``chat/fields.py``).
        @default None (not known: the fields every engine honours)
    :param variants: production variants a request may pin. @default () (not known: any
        well-formed name is passed to SageMaker)
    :param tools: whether the engine serves tool calls. @default None (the ``TOOLS`` setting,
        else on for the messages format and off for generate)
    :param vision: whether the model takes images: False refuses image parts with a 400.
        @default None (not known: image parts are sent as they come)
    :param max_total_tokens: the most tokens the engine takes, prompt and completion together
        (the model's ``max_total_tokens``). @default None (not known: the engine checks)
    :param dimensions: an embedding model's embedding length. @default None (not known)
    :param min_dimensions: its shortest Matryoshka truncation. @default None (none: a request
        with ``dimensions`` gets a 400)
    :param max_inputs: inputs its engine takes in one call. @default None (no limit known)
    """

    model: str
    endpoint_name: str
    inference_component_name: str | None = None
    stream_format: StreamFormat = StreamFormat.AUTO
    request_format: RequestFormat = RequestFormat.MESSAGES
    engine: EngineName | None = None
    variants: tuple[str, ...] = ()
    tools: bool | None = None
    vision: bool | None = None
    max_total_tokens: int | None = None
    dimensions: int | None = None
    min_dimensions: int | None = None
    max_inputs: int | None = None

    @property
    def kind(self) -> ModelKind:
        """Chat, or embedding for a route that takes the embed request format."""
        return self.request_format.kind


class RoutingTable:
    """The routes of one runtime, by model name."""

    def __init__(self, routes: Sequence[Route]) -> None:
        if not routes:
            raise ValueError("a routing table needs at least one route")
        self.routes = tuple(routes)
        self._by_model = {route.model: route for route in self.routes}

    @property
    def models(self) -> list[str]:
        """The served model names, in the order the routes were given."""
        return [route.model for route in self.routes]

    def find(self, model: str) -> Route | None:
        return self._by_model.get(model)

    def pick(self, model: object) -> Route:
        """The route for a request's ``model``; one route serves every request.

        :raises RequestError: 400 without a ``model`` (several routes), 404 for an unknown one
        """
        if len(self.routes) == 1:
            return self.routes[0]
        if model is not None and not isinstance(model, str):
            raise RequestError("'model' must be a string", param="model")
        if model is None:
            served = ", ".join(repr(m) for m in self.models)  # for the message only
            raise RequestError(
                f"'model' is required: this endpoint serves several models ({served})",
                param="model",
                code="missing_required",
            )
        route = self._by_model.get(model)
        if route is None:
            raise model_not_found(model, self.models)
        return route


def model_not_found(model: str, served: Sequence[str]) -> RequestError:
    """OpenAI's 404 for a model that is not served here, listing those that are."""
    names = ", ".join(repr(m) for m in served)
    return RequestError(
        f"the model {model[:200]!r} does not exist; this endpoint serves {names}",
        param="model",
        code="model_not_found",
        status=404,
    )


_PATHS = {ModelKind.CHAT: "POST /v1/chat/completions", ModelKind.EMBEDDING: "POST /v1/embeddings"}


def _kind_mismatch(route: Route, wanted: ModelKind) -> RequestError | None:
    """A 400 when ``route`` serves another kind of model than the request's API wants: chat
    for ``/v1/chat/completions`` and ``/v1/responses``, embedding for ``/v1/embeddings``."""
    if route.kind is wanted:
        return None
    return RequestError(
        f"the model {route.model[:200]!r} is {_a(route.kind)} model, which this API does not "
        f"serve; send it to {_PATHS[route.kind]}, or send this request to {_a(wanted)} model",
        param="model",
        code="model_kind_mismatch",
    )


def accept_route(route: Route, kind: ModelKind, variant_header: str | None) -> str | None:
    """The variant a request to ``route`` pins, once the route is known to serve the ``kind``
    of model the request's API wants.

    :raises RequestError: a model of the other kind, or a bad variant
    """
    mismatch = _kind_mismatch(route, kind)
    if mismatch is not None:
        raise mismatch
    return target_variant(route, variant_header)


def _a(kind: ModelKind) -> str:
    return f"an {kind.value}" if kind is ModelKind.EMBEDDING else f"a {kind.value}"


def target_variant(route: Route, header: str | None) -> str | None:
    """The variant a request pins with ``X-Target-Variant``, checked against ``route``.

    :raises RequestError: 400 naming the header, the value and the variants there are
    """
    if header is None:
        return None
    name = header.strip()
    if route.inference_component_name is not None:
        raise RequestError(
            f"header {VARIANT_HEADER}: the model {route.model!r} is served by an inference "
            "component, which has no variants to pin; drop the header",
            code="invalid_header",
        )
    if route.variants and name not in route.variants:
        known = ", ".join(repr(v) for v in route.variants)
        raise RequestError(
            f"header {VARIANT_HEADER}: {name[:100]!r} is not a production variant of the "
            f"model {route.model!r}; use one of {known}",
            code="invalid_header",
        )
    if not _VARIANT_NAME.match(name):
        raise RequestError(
            f"header {VARIANT_HEADER}: {name[:100]!r} is not a SageMaker variant name "
            "(letters, digits and hyphens, at most 63 characters)",
            code="invalid_header",
        )
    return name


def parse_routes(raw: str, problems: list[str]) -> tuple[Route, ...]:
    """``ROUTES`` as routes; every problem (naming the entry and value) goes to ``problems``."""
    try:
        data = json.loads(raw)
    except ValueError as err:
        problems.append(f"ROUTES must be a JSON list of routes ({err})")
        return ()
    if not isinstance(data, list) or not data:
        problems.append(f"ROUTES must be a non-empty JSON list of routes (got {raw[:100]!r})")
        return ()
    routes = [r for i, item in enumerate(data) if (r := _route(i, item, problems)) is not None]
    seen: set[str] = set()
    for route in routes:
        if route.model in seen:
            problems.append(f"ROUTES serves the model {route.model!r} twice; give each its name")
        seen.add(route.model)
    return tuple(routes)


def _route(index: int, item: Any, problems: list[str]) -> Route | None:
    where = f"ROUTES[{index}]"
    if not isinstance(item, dict):
        problems.append(f"{where} must be an object (got {item!r:.100})")
        return None
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        problems.append(f"{where} has unknown keys {unknown}; known: {sorted(_KEYS)}")
    model, endpoint, component = (item.get(k) for k in ("model", "endpoint", "component"))
    variants = item.get("variants", [])
    found = len(problems)
    for key, value in (("model", model), ("endpoint", endpoint)):
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{where}.{key} must be a non-empty string (got {value!r:.100})")
    if component is not None and (not isinstance(component, str) or not component.strip()):
        problems.append(f"{where}.component must be a non-empty string (got {component!r:.100})")
    if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
        problems.append(f"{where}.variants must be a list of names (got {variants!r:.100})")
    stream = _member(item, "stream_format", StreamFormat, StreamFormat.AUTO, where, problems)
    request = _member(
        item, "request_format", RequestFormat, RequestFormat.MESSAGES, where, problems
    )
    engine = _member(item, "engine", EngineName, None, where, problems)
    tools = item.get("tools")
    if tools is not None and not isinstance(tools, bool):
        problems.append(f"{where}.tools must be true or false (got {tools!r:.100})")
    elif tools and request is RequestFormat.GENERATE:
        problems.append(f"{where}.tools is true, but the generate API has no tool calling")
    vision = item.get("vision")
    if vision is not None and not isinstance(vision, bool):
        problems.append(f"{where}.vision must be true or false (got {vision!r:.100})")
    limit = item.get("max_total_tokens")
    if limit is not None and not (
        type(limit) is int and 1 <= limit <= MAX_TOKENS_CEILING  # bool is not a count
    ):
        problems.append(
            f"{where}.max_total_tokens must be an integer from 1 to {MAX_TOKENS_CEILING} "
            f"(got {limit!r:.100})"
        )
    counts = _embedding_counts(item, request, where, problems)
    if len(problems) > found or not isinstance(model, str) or not isinstance(endpoint, str):
        return None
    return Route(
        model=model,
        endpoint_name=endpoint,
        inference_component_name=component,
        stream_format=stream,
        request_format=request,
        engine=engine,
        variants=tuple(variants),
        tools=tools,
        vision=vision,
        max_total_tokens=limit,
        **counts,
    )


def _embedding_counts(
    item: dict[str, Any], request: RequestFormat, where: str, problems: list[str]
) -> dict[str, int]:
    """An embedding route's ``dimensions``, ``min_dimensions`` and ``max_inputs``."""
    given = {key: item[key] for key in _EMBEDDING_KEYS if item.get(key) is not None}
    if given and request is not RequestFormat.EMBED:
        problems.append(
            f"{where} has {sorted(given)}, which only an embedding model's route takes "
            '("request_format": "embed")'
        )
        return {}
    if request is RequestFormat.EMBED and item.get("tools"):
        problems.append(f"{where}.tools is true, but an embedding model has no tool calling")
    counts: dict[str, int] = {}
    for key, value in given.items():
        if type(value) is int and 1 <= value <= _MAX_EMBEDDING_COUNT:
            counts[key] = value
        else:
            problems.append(
                f"{where}.{key} must be an integer from 1 to {_MAX_EMBEDDING_COUNT} "
                f"(got {value!r:.100})"
            )
    shortest, dims = counts.get("min_dimensions"), counts.get("dimensions")
    if shortest is not None and dims is not None and shortest > dims:
        problems.append(
            f"{where}.min_dimensions ({shortest}) cannot exceed {where}.dimensions ({dims})"
        )
    return counts


def _member(
    item: dict[str, Any], key: str, kind: Any, default: Any, where: str, problems: list[str]
) -> Any:
    raw = item.get(key)
    if raw is None:
        return default
    try:
        return kind(str(raw).strip().lower())
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        problems.append(f"{where}.{key} must be one of {allowed} (got {raw!r:.100})")
        return default
