"""An endpoint deployed elsewhere (``LlmEndpoint.from_endpoint_name/attributes``): a target for
a ``StreamingInvoker`` and for ``grant_invoke``."""

from __future__ import annotations

from aws_cdk import Stack, Token
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm.contract import ModelKind, RequestFormat, StreamFormat
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.engine import ENGINE_FIX, Engine
from constructs_llm.hosting.endpoint_base import grant_invoke
from constructs_llm.hosting.names import name_problem
from constructs_llm.hosting.openai_route import OffersOpenAiRoute, OpenAiRoute
from constructs_llm.hosting.target import (
    EmbeddingTraits,
    TargetFacts,
    engine_name,
    facts_of,
    served_name_problem,
)
from constructs_llm.operations.metrics import DashboardView, InvocationMetrics
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.values import type_problem


class ImportedEndpoint(InvocationMetrics, OffersOpenAiRoute, Construct):
    """A SageMaker real-time endpoint this app does not create. Create it with
    ``LlmEndpoint.from_endpoint_name(scope, id, name)`` or
    ``LlmEndpoint.from_endpoint_attributes(scope, id, endpoint_name=..., ...)``.

    :param endpoint_name: the endpoint's name.
    :param engine: the engine it serves: its request and stream formats, and, for the
        invoker, the request fields that engine honours and the body an embedding model takes
        there. @default unknown (the invoker then sends only the fields every engine honours,
        and TEI's embeddings body)
    :param stream_format: how it frames streamed tokens. @default the engine's, else
        ``StreamFormat.AUTO`` (detected per line: TGI, OpenAI or LMI framing)
    :param request_format: the request body it takes. @default the engine's, else
        ``RequestFormat.MESSAGES`` (every built-in engine takes chat requests)
    :param variant_name: its production variant, for ``metric*()``. @default unknown (metrics
        then raise, naming this parameter)
    :param served_model_name: the model name the invoker reports to OpenAI clients.
        @default the endpoint name
    :param tool_calls: whether the endpoint's engine serves OpenAI tool calls (its tool
        parsing is on), so the invoker forwards ``tools``. @default what ``engine`` serves for a
        model the library does not know (TGI: on; vLLM, SGLang, LMI: only with
        ``tool_call_parser=``), else off: the model deployed there is not known
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoint_name: str,
        engine: Engine | None = None,
        stream_format: StreamFormat | None = None,
        request_format: RequestFormat | None = None,
        variant_name: str | None = None,
        served_model_name: str | None = None,
        tool_calls: bool | None = None,
    ) -> None:
        super().__init__(scope, id)
        problems = Problems(f"LlmEndpoint.from_endpoint_attributes '{self.node.path}'")
        problems.add(name_problem("endpoint_name", endpoint_name))
        problems.add(name_problem("variant_name", variant_name))
        problems.add(_format_problem("stream_format", stream_format, StreamFormat))
        problems.add(_format_problem("request_format", request_format, RequestFormat))
        problems.add(type_problem("engine", engine, Engine, ENGINE_FIX, optional=True))
        problems.add(served_name_problem("served_model_name", served_model_name))
        if served_model_name is None and Token.is_unresolved(endpoint_name):
            problems.add(_imported_name_unknown())
        problems.raise_if_any()  # the engine's type is known from here on
        problems.add(_tools_problem(tool_calls, request_format or _engine_format(engine)))
        problems.raise_if_any()
        self._endpoint_name = endpoint_name
        self._engine = engine
        self._stream_format = stream_format or (engine.stream_format if engine else None)
        self._request_format = request_format or (engine.request_format if engine else None)
        self._chat_path = engine.chat_completions_path if engine else ChatCompletionsPath.UNKNOWN
        self.variant_name = variant_name
        self.served_model_name = served_model_name or endpoint_name
        engine_tools = engine.tool_calling().served if engine else False
        self._tool_calls = engine_tools if tool_calls is None else tool_calls
        self._max_inputs_per_call = engine.max_inputs_per_call if engine else None

    @property
    def endpoint_name(self) -> str:
        return self._endpoint_name

    @property
    def endpoint_arn(self) -> str:
        """``arn:...:endpoint/<name>``. SageMaker writes endpoint ARNs in lower case whatever
        the name's case (``DescribeEndpoint``'s ``EndpointArn``; see
        prometheus-community/yet-another-cloudwatch-exporter#1178), so the name is lowered
        here when it is known at synth."""
        name = self._endpoint_name
        name = name if Token.is_unresolved(name) else name.lower()
        return Stack.of(self).format_arn(
            service="sagemaker", resource="endpoint", resource_name=name
        )

    @property
    def engine(self) -> Engine | None:
        """The engine it serves, as stated (``engine=``); None when not stated."""
        return self._engine

    @property
    def facts(self) -> TargetFacts:
        """What an invoker reads of the endpoint: what it was imported with (its engine, if
        stated); nothing to size here."""
        stated = [self._engine.name] if self._engine is not None else []
        return facts_of(self, engine=engine_name(stated), hosted_here=False)

    @property
    def inference_component_name(self) -> str | None:
        return None

    @property
    def stream_format(self) -> StreamFormat:
        return self._stream_format or StreamFormat.AUTO

    @property
    def variant_names(self) -> tuple[str, ...]:
        """Not known: ``X-Target-Variant`` passes any well-formed name on to SageMaker."""
        return ()

    @property
    def request_format(self) -> RequestFormat:
        return self._request_format or RequestFormat.MESSAGES

    @property
    def chat_completions_path(self) -> ChatCompletionsPath:
        """What its container answers on ``/v1/chat/completions``: its engine's, if stated."""
        return self._chat_path

    @property
    def tool_calls(self) -> bool:
        return self._tool_calls

    @property
    def max_total_tokens(self) -> int | None:
        """Not known: the engine deployed there checks its own limit."""
        return None

    @property
    def is_async(self) -> bool:
        """A real-time endpoint, as imported."""
        return False

    @property
    def model_kind(self) -> ModelKind:
        """Embedding when its engine (or ``request_format``) takes embed requests, else chat."""
        return self.request_format.kind

    @property
    def embedding_traits(self) -> EmbeddingTraits | None:
        """For an embedding model: its engine's per-call input limit; its dimensions are not
        known, so a request with ``dimensions`` gets a 400."""
        if self.model_kind is not ModelKind.EMBEDDING:
            return None
        return EmbeddingTraits(max_inputs_per_call=self._max_inputs_per_call)

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on the endpoint."""
        return grant_invoke(grantee, self.endpoint_arn)

    def dashboard_view(self) -> DashboardView:
        """Its dashboard row shows what its invokers measure (this app does not host it)."""
        return DashboardView(label="endpoint deployed elsewhere", sagemaker=False)

    def _openai_route(self) -> OpenAiRoute:
        return OpenAiRoute(
            self,
            invoke_arns=(self.endpoint_arn,),
            plan=None,  # deployed elsewhere: no plan here
        )

    def _metric_dimensions(self) -> dict[str, str]:
        if self.variant_name is None:
            fail(
                "",
                Problem.of(
                    "variant_name",
                    None,
                    f"endpoint '{self.node.path}' was imported without its variant name, which "
                    "SageMaker's endpoint metrics are keyed by;",
                    "pass LlmEndpoint.from_endpoint_attributes(..., variant_name=...)",
                ),
            )
        return {"EndpointName": self.endpoint_name, "VariantName": self.variant_name}


def _imported_name_unknown() -> Problem:
    return Problem.of(
        "served_model_name",
        None,
        "endpoint_name is not known at synth (an import or a parameter), so it cannot be the "
        "name clients send as 'model';",
        "pass served_model_name='...'",
    )


def _engine_format(engine: Engine | None) -> RequestFormat | None:
    return engine.request_format if engine else None


def _tools_problem(tool_calls: object, request_format: RequestFormat | None) -> Problem | None:
    if tool_calls is not None and not isinstance(tool_calls, bool):
        return Problem.of(
            "tool_calls",
            tool_calls,
            f"tool_calls must be True, False or None, got {tool_calls!r}",
        )
    if tool_calls and request_format is RequestFormat.GENERATE:
        return Problem.of(
            "tool_calls",
            tool_calls,
            "tool_calls=True needs the messages request format: the generate request format "
            "has no tool calling",
        )
    if tool_calls and request_format is RequestFormat.EMBED:
        return Problem.of(
            "tool_calls",
            tool_calls,
            "tool_calls=True: an embedding model (the embed request format) has no tool calling",
        )
    return None


def _format_problem(prop: str, value: object, kind: type) -> Problem | None:
    if value is None or isinstance(value, kind):
        return None
    members = ", ".join(f"{kind.__name__}.{m.name}" for m in kind)  # type: ignore[attr-defined]
    return Problem.of(
        prop,
        value,
        f"{prop} must be one of {members}, got {value!r}",
    )
