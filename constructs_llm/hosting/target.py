"""What an invoker needs from the thing it calls: an endpoint, an inference component or an
adapter component."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from aws_cdk import Token
from aws_cdk import aws_iam as iam

from constructs_llm.contract import ModelKind, RequestFormat, StreamFormat

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch
    from constructs import Node
    from typing_extensions import Unpack

    from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
    from constructs_llm.model.llm_model import LlmModel
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


@runtime_checkable
class InvocationTarget(Protocol):
    """Implemented by ``LlmEndpoint``, ``InferenceComponent``, ``AdapterComponent`` and
    imported endpoints (``LlmEndpoint.from_endpoint_name``)."""

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


def served_name_problem(prop: str, value: object) -> str | None:
    """A model name clients send as ``model``: known at synth (the invoker routes by it and
    checks it is unique), 1-256 printable characters, no whitespace."""
    if value is None:
        return None
    if not isinstance(value, str) or Token.is_unresolved(value):
        return f"{prop} must be a string known at synth, got {value!r}"
    if not 1 <= len(value) <= 256 or not value.isprintable() or any(c.isspace() for c in value):
        return (
            f"{prop} must be 1-256 printable characters without spaces (clients send it as "
            f"'model'), got {value!r}"
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
