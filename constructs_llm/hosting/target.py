"""What an invoker needs from the thing it calls: an endpoint, an inference component or an
adapter component; above all its ``TargetFacts``, the frozen value the invoker reads instead
of asking which host class a target is."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from aws_cdk import Token
from aws_cdk import aws_iam as iam

from constructs_llm import catalogs
from constructs_llm.contract import EngineName, ModelKind, RequestFormat, StreamFormat
from constructs_llm.problems import Problem
from constructs_llm.sizing.decode import DecodeRate, decode_rate

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch
    from constructs import Node
    from typing_extensions import Unpack

    from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
    from constructs_llm.hosting.async_inference import AsyncInference
    from constructs_llm.hosting.plan import PoolPlan
    from constructs_llm.model.llm_model import LlmModel
    from constructs_llm.operations.autoscaling import Autoscaling
    from constructs_llm.operations.metrics import DashboardView, MetricOverrides


@dataclass(frozen=True)
class EmbeddingTraits:
    """What the invoker needs to know of an embedding model to serve ``POST /v1/embeddings``.

    :param dimensions: the length of its embeddings. @default None (not known)
    :param min_dimensions: the shortest Matryoshka truncation it supports, so OpenAI's
        ``dimensions`` is served from it to ``dimensions``. @default None (no truncation: a
        request with ``dimensions`` gets a 400)
    :param max_inputs_per_call: inputs its engine takes in one request; the invoker splits a
        longer ``input`` list. @default None (no limit known)
    """

    dimensions: int | None = None
    min_dimensions: int | None = None
    max_inputs_per_call: int | None = None


@dataclass(frozen=True, kw_only=True)
class TargetFacts:
    """What a target is, for what calls it (the invoker): one frozen value its host builds
    from its plan (``target.facts``). The invoker takes these fields and never asks which
    host class a target is, so a new host needs no edit in the invoker.

    :param endpoint_name: the SageMaker endpoint's name (a token until deploy).
    :param inference_component_name: the inference component on it; None for an endpoint.
    :param served_model_name: the name OpenAI clients send as ``model``.
    :param engine: the engine every model the target answers with runs on, when the runtime
        knows it; None for several engines, a custom one, or an endpoint deployed elsewhere
        imported without one (the runtime then sends only the fields every engine honours).
    :param stream_format: how its engine frames a stream (``AUTO``: per line).
    :param request_format: the body its engine takes.
    :param model_kind: chat or embedding.
    :param tool_calls: whether its engine serves OpenAI tool calls.
    :param vision: whether its models take images: False when the model table knows each of
        them as text-only, True when it knows one takes images, None when not known.
    :param variant_names: production variants a request may pin (``X-Target-Variant``); ()
        when none or not known.
    :param max_total_tokens: the longest prompt + generation every model it answers with
        serves, when known.
    :param slowest_decode: the single-stream decode rate on its slowest hardware (an estimate,
        ``sizing/decode.py``), when known.
    :param embedding_traits: an embedding model's dimensions, Matryoshka truncation and
        per-call input limit; None for a chat model.
    :param is_async: whether it queues requests (an asynchronous endpoint), which only
        ``InvokeEndpointAsync`` reaches.
    :param max_in_flight: the most requests its autoscaling holds in flight at once (its
        largest fleet of instances or copies times ``target_concurrent_requests``, or times
        ``target_backlog_per_instance`` on an asynchronous endpoint); None without such a
        target.
    :param hosted_here: whether this app hosts it; False for an endpoint deployed elsewhere,
        imported by name (nothing to size, no stack of its own).
    """

    endpoint_name: str
    inference_component_name: str | None
    served_model_name: str
    engine: EngineName | None
    stream_format: StreamFormat
    request_format: RequestFormat
    model_kind: ModelKind
    tool_calls: bool
    vision: bool | None
    variant_names: tuple[str, ...]
    max_total_tokens: int | None
    slowest_decode: DecodeRate | None
    embedding_traits: EmbeddingTraits | None
    is_async: bool
    max_in_flight: int | None
    hosted_here: bool


@runtime_checkable
class InvocationTarget(Protocol):
    """Implemented by ``LlmEndpoint``, ``InferenceComponent``, ``AdapterComponent`` and
    imported endpoints (``LlmEndpoint.from_endpoint_name``). The invoker reads a target's
    ``facts``; the other members are what users read of it."""

    @property
    def facts(self) -> TargetFacts:
        """What the target is, as one frozen value built from its plan."""
        ...

    @property
    def endpoint_name(self) -> str: ...

    @property
    def inference_component_name(self) -> str | None: ...

    @property
    def stream_format(self) -> StreamFormat: ...

    @property
    def request_format(self) -> RequestFormat: ...

    @property
    def served_model_name(self) -> str:
        """The name OpenAI clients send as ``model`` and see in ``/v1/models``."""
        ...

    @property
    def variant_names(self) -> tuple[str, ...]:
        """Production variants a request may pin (``X-Target-Variant``); () when none or
        not known."""
        ...

    @property
    def tool_calls(self) -> bool:
        """Whether the engine serves OpenAI tool calls, so the invoker forwards ``tools``."""
        ...

    @property
    def max_total_tokens(self) -> int | None:
        """The served model's longest prompt + generation, when known, so the invoker refuses a
        ``max_tokens`` no engine could serve before calling SageMaker."""
        ...

    @property
    def is_async(self) -> bool:
        """Whether the target queues requests (an asynchronous endpoint), which only
        ``InvokeEndpointAsync`` reaches: an invoker cannot stream from it."""
        ...

    @property
    def model_kind(self) -> ModelKind:
        """Chat or embedding: the invoker serves an embedding model on ``POST /v1/embeddings``
        and refuses chat requests to it (and embeddings requests to a chat model) with a 400."""
        ...

    @property
    def embedding_traits(self) -> EmbeddingTraits | None:
        """An embedding model's dimensions, Matryoshka truncation and per-call input limit;
        None for a chat model."""
        ...

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant: ...

    @property
    def node(self) -> Node: ...

    def dashboard_view(self) -> DashboardView:
        """What a dashboard row shows of it (an ``LlmDashboard`` row of its invokers' metrics
        at least)."""
        ...


@runtime_checkable
class QueuingTarget(InvocationTarget, Protocol):
    """A target that can queue requests (``LlmEndpoint``; one with ``async_inference`` set
    does, as its facts' ``is_async`` says): where it queues them, and the grant to queue them
    (the owner's API)."""

    @property
    def async_inference(self) -> AsyncInference | None: ...

    def grant_invoke_async(self, grantee: iam.IGrantable) -> iam.Grant: ...


@runtime_checkable
class IEndpoint(InvocationTarget, Protocol):
    """A SageMaker real-time endpoint, created by this app (``LlmEndpoint``) or deployed
    elsewhere (``LlmEndpoint.from_endpoint_name`` / ``from_endpoint_attributes``): what an
    invoker calls, what ``grant_invoke`` grants on, and its SageMaker metrics."""

    @property
    def endpoint_arn(self) -> str: ...

    def metric(self, metric_name: str, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric: ...

    def metric_invocations(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric: ...

    def metric_model_latency(self, **options: Unpack[MetricOverrides]) -> cloudwatch.Metric: ...

    @property
    def openai_base_url(self) -> str:
        """The base URL of SageMaker's own OpenAI route for this endpoint."""
        ...

    def grant_openai(self, grantee: iam.IGrantable) -> iam.Grant:
        """What a caller of SageMaker's own OpenAI route needs on this endpoint."""
        ...


def hosted_facts(
    target: InvocationTarget, pools: Sequence[PoolPlan], scaling: Autoscaling | None
) -> TargetFacts:
    """The facts of a target this app hosts: what it offers users, what the pools it answers
    from tell (the models bound to them, and their hardware), and its ``scaling``."""
    models = {pool.binding.model for pool in pools if pool.binding is not None}
    return facts_of(
        target,
        engine=engine_name(model.engine.name for model in models),
        vision=_vision({catalogs.sees_images(model.source.model_id) for model in models}),
        slowest_decode=_slowest(pools),
        max_in_flight=_in_flight(scaling, target.is_async),
        hosted_here=True,
    )


def facts_of(
    target: InvocationTarget,
    *,
    engine: EngineName | None,
    vision: bool | None = None,
    slowest_decode: DecodeRate | None = None,
    max_in_flight: int | None = None,
    hosted_here: bool,
) -> TargetFacts:
    """A target's facts: the members it offers users, and what only its host knows."""
    return TargetFacts(
        **{name: getattr(target, name) for name in _OFFERED},
        engine=engine,
        vision=vision,
        slowest_decode=slowest_decode,
        max_in_flight=max_in_flight,
        hosted_here=hosted_here,
    )


#: The members every target offers users, which its facts repeat under the same names.
_OFFERED = (
    "endpoint_name",
    "inference_component_name",
    "served_model_name",
    "stream_format",
    "request_format",
    "model_kind",
    "tool_calls",
    "variant_names",
    "max_total_tokens",
    "embedding_traits",
    "is_async",
)


def _in_flight(scaling: Autoscaling | None, is_async: bool) -> int | None:
    """The largest fleet times the requests each is held to, when both are known: on an
    asynchronous endpoint the backlog each instance is scaled for
    (``target_backlog_per_instance``), so the queue can grow to what scales the endpoint out to
    its most."""
    if scaling is None:
        return None
    per = scaling.target_backlog_per_instance if is_async else scaling.target_concurrent_requests
    most = scaling.max_capacity
    if isinstance(per, int | float) and isinstance(most, int) and per > 0 and most > 0:
        return math.floor(most * per)
    return None


_ENGINE_NAMES = frozenset(engine.value for engine in EngineName)


def engine_name(names: Iterable[str]) -> EngineName | None:
    """The one engine (``Engine.name``) of these, when the runtime knows it; None for none,
    several, or a custom one."""
    found = set(names)
    if len(found) != 1:
        return None
    name = found.pop()
    return EngineName(name) if name in _ENGINE_NAMES else None


def _vision(seen: set[bool | None]) -> bool | None:
    """False when every model is known to be text-only, True when one is known to take
    images, else None."""
    if not seen or None in seen:
        return None
    return True in seen


def _slowest(pools: Sequence[PoolPlan]) -> DecodeRate | None:
    """The slowest single-stream decode rate among the pools whose model and hardware are
    known (``sizing/decode.py``)."""
    rates = [rate for rate in map(_rate, pools) if rate is not None]
    return min(rates, key=lambda rate: rate.tokens_per_s) if rates else None


def _rate(pool: PoolPlan) -> DecodeRate | None:
    if pool.binding is None:
        return None
    plan, arch = pool.binding.plan, pool.binding.model.architecture
    if plan is None or arch is None:
        return None
    return decode_rate(plan, arch, pool.instance_type)


def embedding_traits_of(model: LlmModel) -> EmbeddingTraits | None:
    """What the invoker needs of ``model`` when it is an embedding model (else None): the
    figures of its architecture (given, or from the packaged table) and its engine's per-call
    input limit."""
    if model.engine.model_kind is not ModelKind.EMBEDDING:
        return None
    arch = model.architecture
    return EmbeddingTraits(
        dimensions=arch.embedding_dimensions if arch else None,
        min_dimensions=arch.matryoshka_min_dimensions if arch else None,
        max_inputs_per_call=model.engine.max_inputs_per_call,
    )


def default_served_name(model: LlmModel) -> str:
    """The Hub id of the model's weights, else the model's construct id."""
    return model.source.model_id or model.node.id


def served_name_problem(prop: str, value: object) -> Problem | None:
    """A model name clients send as ``model``: known at synth (the invoker routes by it and
    checks it is unique), 1-256 printable characters, no whitespace."""
    if value is None:
        return None
    if not isinstance(value, str) or Token.is_unresolved(value):
        return Problem.of(
            prop,
            value,
            f"{prop} must be a string known at synth, got {value!r}",
        )
    if not 1 <= len(value) <= 256 or not value.isprintable() or any(c.isspace() for c in value):
        return Problem.of(
            prop,
            value,
            f"{prop} must be 1-256 printable characters without spaces (clients send it as "
            f"'model'), got {value!r}",
        )
    return None


class _ServedPlan(Protocol):
    """What :class:`ServesModel` reads of a component's plan."""

    @property
    def model(self) -> LlmModel: ...

    @property
    def served_model_name(self) -> str | None:
        """As given to the construct (None: derived from the model)."""
        ...


class ServesModel:
    """The parts of ``InvocationTarget`` that come from the served ``LlmModel`` (an inference
    component's, or an adapter's base's), read from the construct's plan."""

    plan: _ServedPlan

    @property
    def model(self) -> LlmModel:
        return self.plan.model

    @property
    def stream_format(self) -> StreamFormat:
        return self.model.stream_format

    @property
    def request_format(self) -> RequestFormat:
        return self.model.request_format

    @property
    def chat_completions_path(self) -> ChatCompletionsPath:
        return self.model.engine.chat_completions_path

    @property
    def served_model_name(self) -> str:
        """The name the invoker reports to OpenAI clients and routes by: ``served_model_name``
        if given, else the Hub id, else the model's id."""
        return self.plan.served_model_name or default_served_name(self.model)

    @property
    def variant_names(self) -> tuple[str, ...]:
        return ()

    @property
    def tool_calls(self) -> bool:
        return self.model.tool_calling.served

    @property
    def max_total_tokens(self) -> int | None:
        return self.model.max_total_tokens

    @property
    def is_async(self) -> bool:
        return False

    @property
    def model_kind(self) -> ModelKind:
        return self.model.engine.model_kind

    @property
    def embedding_traits(self) -> EmbeddingTraits | None:
        return embedding_traits_of(self.model)
