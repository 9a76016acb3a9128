"""SageMaker's own OpenAI route: OpenAI clients call the endpoint directly, with a bearer
token minted from AWS credentials, and no Lambda in between.

What AWS documents, and where:

- The route. "Invoke endpoints with OpenAI-compatible APIs"
  (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-openai-compatible.html,
  May 2026): every real-time endpoint and inference component serves
  ``/openai/v1/chat/completions``, streaming included; SageMaker routes by the endpoint name
  in the URL and returns the container's answer as is. Chat Completions is the only OpenAI
  operation it routes.
- The base URLs. The guide's sample (aws-samples/sagemaker-genai-hosting-examples,
  ``03-features/openai/sagemaker-inference-openai-api.ipynb``, sections 1.2 and 2.2):
  ``https://runtime.sagemaker.<region>.amazonaws.com/endpoints/<endpoint>/openai/v1`` and, for
  an inference component, ``.../endpoints/<endpoint>/inference-components/<component>/openai/v1``
  (the component is named in the path; no header is needed). The host follows the partition:
  ``https://runtime.sagemaker.{Region}.{PartitionResult#dnsSuffix}`` in botocore's
  ``data/sagemaker-runtime/2017-05-13/endpoint-rule-set-1.json``, which is ``AWS::URLSuffix``.
- The permissions. The guide: the caller needs ``sagemaker:CallWithBearerToken`` and
  ``sagemaker:InvokeEndpoint``. Its sample scopes ``InvokeEndpoint`` to the endpoint's ARN and
  grants ``CallWithBearerToken`` on ``"*"``, as AWS's managed policy
  ``AmazonSageMakerJobRuntimeAccess`` also does: the action names no resource of its own.
- The container. SageMaker hands the client's Chat Completions body to the container and its
  answer back unchanged (the guide), so the container must take chat requests and stream
  OpenAI ``chat.completion.chunk`` server-sent events. :func:`openai_route_support` answers
  that from the engine's request and stream formats (each engine's module cites what its
  container does with a chat request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from aws_cdk import Fn, Stack
from aws_cdk import aws_iam as iam
from constructs import IConstruct

from constructs_llm.cdk_values import grantee_problem
from constructs_llm.compliance import BEARER_TOKEN_CALLS, waive
from constructs_llm.hosting.rules import When, rule_problems
from constructs_llm.problems import Problems, fail
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.streaming.formats import RequestFormat, StreamFormat
from constructs_llm.values import is_a

if TYPE_CHECKING:
    from constructs_llm.hosting.rules import HostingPlan

__all__ = [
    "BEARER_TOKEN_ACTION",
    "OPENAI_INVOKE_ACTION",
    "OPENAI_PATH",
    "NativeOpenAiRoute",
    "RouteSupport",
    "openai_route_support",
]

#: The action that authorizes the call itself (scoped to the endpoint and component ARNs).
OPENAI_INVOKE_ACTION = "sagemaker:InvokeEndpoint"
#: The action that lets a bearer token minted from the caller's credentials stand in for a
#: SigV4 signature (no resource of its own).
BEARER_TOKEN_ACTION = "sagemaker:CallWithBearerToken"
#: What OpenAI clients append ``/chat/completions`` to.
OPENAI_PATH = "/openai/v1"

_CHAT_ENGINES = "Engine.vllm() or Engine.sglang()"


@dataclass(frozen=True)
class RouteSupport:
    """Whether a container answers Chat Completions on SageMaker's OpenAI route.

    :param served: True = yes; False = no (using the route is an error); None = in part, or
        not known (a warning).
    :param message: what fails and the fix. @default none (served)
    :param warning_id: the acknowledgeable id of the warning (``served`` None). @default none
    """

    served: bool | None
    message: str | None = None
    warning_id: WarningId | None = None


def openai_route_support(
    request_format: RequestFormat, stream_format: StreamFormat
) -> RouteSupport:
    """What SageMaker's OpenAI route gives a container that takes ``request_format`` bodies
    and frames streams as ``stream_format``; the route passes both ways unchanged.

    - Chat requests and an OpenAI stream (vLLM, SGLang, TGI's Messages API, a custom image that
      states both): served.
    - Generate requests (``{"inputs": ...}``): not served; the container never sees a body it
      takes.
    - Embed requests (an embedding model on TEI): not served; the route has no embeddings
      operation.
    - Chat requests with another stream framing (LMI: vLLM's chunks as JSON lines without
      ``data:``, ``lmi_vllm/request_response_utils.py``; TGI token events): non-streamed
      completions are served, streams are not readable by OpenAI clients (their SSE decoder
      skips lines that are not ``data:`` fields).
    - ``StreamFormat.AUTO`` (a custom image or imported endpoint whose framing is not stated,
      variants that differ): not known.
    """
    if request_format is RequestFormat.EMBED:
        return RouteSupport(
            served=False,
            message="it serves an embedding model (Engine.tei(), RequestFormat.EMBED), and "
            "SageMaker's OpenAI route routes Chat Completions only; put a StreamingInvoker in "
            "front, which answers POST /v1/embeddings",
        )
    if request_format is RequestFormat.GENERATE:
        return RouteSupport(
            served=False,
            message='its container takes generate requests ({"inputs": ...}, '
            "RequestFormat.GENERATE), but SageMaker's OpenAI route hands it the client's Chat "
            f"Completions body unchanged; serve the model with a chat engine ({_CHAT_ENGINES}, "
            "Engine.tgi(), Engine.lmi()), or put a StreamingInvoker in front, which turns chat "
            "requests into generate requests",
        )
    if stream_format is StreamFormat.OPENAI:
        return RouteSupport(served=True)
    if stream_format is StreamFormat.AUTO:
        return RouteSupport(
            served=None,
            warning_id=WarningId.OPENAI_ROUTE_UNKNOWN,
            message="the library does not know how its container frames a stream (a custom "
            "image or an imported endpoint whose stream_format is not stated, or variants "
            "whose engines differ), and SageMaker's OpenAI route passes the container's answer "
            "on unchanged: check that the image answers a Chat Completions body on "
            "/invocations with chat.completion JSON and chat.completion.chunk server-sent "
            "events, then state stream_format=StreamFormat.OPENAI (Engine.custom(...) or "
            "LlmEndpoint.from_endpoint_attributes(...))",
        )
    if stream_format is StreamFormat.LMI_JSONLINES:
        framing = (
            "LMI streams chat chunks as JSON lines without SSE's 'data:' framing (it passes "
            "vLLM's chunks on that way)"
        )
    else:
        framing = f"its container streams {stream_format.name} token events, not chat chunks"
    return RouteSupport(
        served=None,
        warning_id=WarningId.OPENAI_ROUTE_STREAM,
        message=f"non-streamed chat completions work on SageMaker's OpenAI route, but {framing}"
        ", which OpenAI clients read as an empty stream (stream=True yields no chunk); for "
        f"streaming clients serve the model with {_CHAT_ENGINES}, or use a StreamingInvoker, "
        "which reframes the stream as OpenAI server-sent events",
    )


class _RouteHost(IConstruct, Protocol):
    """What :class:`NativeOpenAiRoute` needs of the construct it is mixed into."""

    @property
    def endpoint_name(self) -> str: ...

    @property
    def inference_component_name(self) -> str | None: ...

    @property
    def request_format(self) -> RequestFormat: ...

    @property
    def stream_format(self) -> StreamFormat: ...

    def _openai_invoke_arns(self) -> list[str]:
        """The ARNs ``InvokeEndpoint`` is scoped to."""
        ...

    def _openai_plan(self) -> HostingPlan | None:
        """The plan of the endpoint the route reaches (None for an endpoint deployed
        elsewhere), for the cross-feature rules of the route."""
        ...

    def _route_support(self) -> RouteSupport: ...


class NativeOpenAiRoute:
    """SageMaker's own OpenAI route to this endpoint or inference component:
    :attr:`openai_base_url` for OpenAI clients and :meth:`grant_openai` for their callers.

    Both refuse, with a ``ConfigurationError``, a route that cannot serve: a container that
    takes generate requests or embed requests, or an asynchronous endpoint (a cross-feature
    rule, ``hosting/rules.py``). ``grant_openai`` (which every caller of the route needs) also
    warns, under an acknowledgeable id, where the route serves in part: a container whose
    streams OpenAI clients cannot read (LMI, ``constructs-llm:openai-route-stream``), or whose
    framing is not known (custom images, imported endpoints,
    ``constructs-llm:openai-route-unknown``). Reading ``openai_base_url`` adds nothing.
    """

    @property
    def openai_base_url(self: _RouteHost) -> str:
        """The base URL OpenAI clients use (``OpenAI(base_url=..., api_key=<token>)``), as a
        CloudFormation string: ``https://runtime.sagemaker.<region>.<url suffix>/endpoints/
        <endpoint>/openai/v1``, or for an inference component ``.../endpoints/<endpoint>/
        inference-components/<component>/openai/v1`` (the path selects the component).
        Clients send ``model=""``: SageMaker routes by the URL, and the container checks a
        non-empty name against its own (vLLM accepts an empty one,
        ``vllm/entrypoints/openai/serving_engine.py`` ``_is_model_supported``). The token comes
        from :func:`constructs_llm.streaming.sagemaker_bearer_token`.

        :raises ConfigurationError: the route cannot serve this endpoint or component
        """
        self._route_support()
        stack = Stack.of(self)
        parts = [
            "https://runtime.sagemaker.",
            stack.region,
            ".",
            stack.url_suffix,
            "/endpoints/",
            self.endpoint_name,
        ]
        if self.inference_component_name is not None:
            parts += ["/inference-components/", self.inference_component_name]
        return Fn.join("", [*parts, OPENAI_PATH])

    def grant_openai(self: _RouteHost, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``grantee`` to call :attr:`openai_base_url` with a bearer token:
        ``sagemaker:InvokeEndpoint`` on this endpoint (and, for an inference component, on the
        component too, as ``grant_invoke`` scopes it), and ``sagemaker:CallWithBearerToken``,
        which names no resource and is granted on ``"*"`` as AWS's guide does (its cdk-nag
        finding is acknowledged on ``grantee``, with that reason)."""
        problem = grantee_problem("grantee", grantee)
        if problem:
            fail(f"{type(self).__name__} '{self.node.path}'.grant_openai", problem)
        support = self._route_support()
        if support.served is None and support.warning_id and support.message:
            warn(self, SynthWarning(support.warning_id, support.message))
        invoke = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=[OPENAI_INVOKE_ACTION],
            resource_arns=self._openai_invoke_arns(),
        )
        token = iam.Grant.add_to_principal(
            grantee=grantee, actions=[BEARER_TOKEN_ACTION], resource_arns=["*"]
        )
        if is_a(grantee, IConstruct):  # a construct that holds the policy, or its parent
            waive(grantee, BEARER_TOKEN_CALLS)  # type: ignore[arg-type]  # checked just above
        return invoke.combine(token)

    def _route_support(self: _RouteHost) -> RouteSupport:
        """What the route gives this container; raises, naming every reason, when the route
        cannot serve it (its container, or a rule of the endpoint's plan)."""
        problems = Problems(f"{type(self).__name__} '{self.node.path}'")
        support = openai_route_support(self.request_format, self.stream_format)
        if support.served is False:
            problems.add(f"SageMaker's OpenAI route cannot serve it: {support.message}")
        plan = self._openai_plan()
        if plan is not None:
            problems.extend(rule_problems(plan, When.OPENAI_ROUTE))
        problems.raise_if_any()
        return support
