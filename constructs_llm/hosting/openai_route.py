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
  ``https://runtime.sagemaker.{Region}.{PartitionResult#dnsSuffix}`` in boto/botocore:
  ``botocore/data/sagemaker-runtime/2017-05-13/endpoint-rule-set-1.json``, which is
  ``AWS::URLSuffix``.
- The permissions. The guide, section "IAM permissions": the caller needs
  ``sagemaker:InvokeEndpoint``, scoped to the endpoint's ARN ("Always restrict the Resource for
  sagemaker:InvokeEndpoint to specific endpoint ARNs"), and ``sagemaker:CallWithBearerToken``,
  which "requires a wildcard ("*") for the Resource field. It does not support resource-level
  restrictions." The guide's policy puts no condition on it, and documents none. The grant
  follows that policy exactly: a condition such as ``aws:ResourceAccount`` (which AWS's managed
  policy ``AmazonSageMakerJobRuntimeAccess`` sets for its job APIs) is not documented for this
  action, and a condition key absent from the request context makes ``StringEquals`` fail, so
  every bearer-token call would be denied. What a token reaches is bounded by
  ``InvokeEndpoint`` on this endpoint (and component).
- The container. The guide: "The container must implement the ``/v1/chat/completions`` path
  and return streaming responses in SSE format"; SageMaker hands the container the client's
  Chat Completions body on that path (not ``/invocations``) and its answer back unchanged. The
  guide lists the vLLM DLC, the SGLang DLC, and custom containers that implement the OpenAI
  paths and ``/ping``. Each engine states what its container answers on that path
  (``Engine.chat_completions_path``, citing the engine's source), and
  :func:`openai_route_support` answers from it: vLLM and SGLang serve; TGI implements the
  contract by its own source but is not listed (a warning to verify); LMI streams JSON lines
  there, not SSE, and an embedding server has no chat path (errors); an image of the user's is
  not known (a warning to verify).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from aws_cdk import Fn, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct, IConstruct

from constructs_llm.cdk_values import grantee_problem
from constructs_llm.compliance import BEARER_TOKEN_CALLS
from constructs_llm.contract import RequestFormat
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.hosting.rules import When, rule_problems
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.wildcard_policy import grant_in_own_policy

if TYPE_CHECKING:
    from constructs_llm.hosting.rules import HostingPlan

#: The action that authorizes the call itself (scoped to the endpoint and component ARNs).
_OPENAI_INVOKE_ACTION = "sagemaker:InvokeEndpoint"
#: The action that lets a bearer token minted from the caller's credentials stand in for a
#: SigV4 signature (no resource of its own).
_BEARER_TOKEN_ACTION = "sagemaker:CallWithBearerToken"
#: The id of the policy, under the host, that holds the bearer-token statement.
_BEARER_TOKEN_POLICY = "BearerTokenCalls"
#: What OpenAI clients append ``/chat/completions`` to.
_OPENAI_PATH = "/openai/v1"

_CHAT_ENGINES = "Engine.vllm() or Engine.sglang()"
_LISTED = (
    "AWS's guide for the route lists the vLLM and SGLang DLCs and custom containers that "
    "implement POST /v1/chat/completions (streaming server-sent events) and GET /ping"
)


@dataclass(frozen=True)
class RouteSupport:
    """Whether a container answers Chat Completions on SageMaker's OpenAI route.

    :param served: True = yes; False = no (using the route is an error); None = not verified
        (a warning).
    :param message: what fails or what to verify, and the fix. @default none (served)
    :param warning_id: the acknowledgeable id of the warning (``served`` None). @default none
    """

    served: bool | None
    message: str | None = None
    warning_id: WarningId | None = None


def openai_route_support(
    request_format: RequestFormat, chat_path: ChatCompletionsPath
) -> RouteSupport:
    """What SageMaker's OpenAI route gives a container that takes ``request_format`` bodies on
    ``/invocations`` and answers ``chat_path`` on ``POST /v1/chat/completions``, the path the
    route calls, passing the client's body and the container's answer on unchanged.

    - vLLM and SGLang (``LISTED``): served.
    - TGI (``UNLISTED``): its router serves the path with SSE and ``/ping``, but AWS does not
      list it: a warning to verify on a staging endpoint.
    - LMI (``JSON_LINES``): DJL Serving answers the path as ``/invocations``, streaming JSON
      lines, which the route's contract (SSE) excludes: an error.
    - An embedding model (``RequestFormat.EMBED``) or an embedding server: an error; the route
      routes Chat Completions only.
    - A container that takes generate requests (``RequestFormat.GENERATE``): an error.
    - An image of the user's or an endpoint deployed elsewhere (``UNKNOWN``): a warning to
      verify.
    """
    if request_format is RequestFormat.EMBED or chat_path is ChatCompletionsPath.ABSENT:
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
            f"Completions body on POST /v1/chat/completions; serve the model with {_CHAT_ENGINES}"
            ", or put a StreamingInvoker in front, which turns chat requests into generate "
            "requests",
        )
    if chat_path is ChatCompletionsPath.LISTED:
        return RouteSupport(served=True)
    if chat_path is ChatCompletionsPath.JSON_LINES:
        return RouteSupport(
            served=False,
            message="SageMaker's OpenAI route calls the container's POST /v1/chat/completions "
            "and needs its streams as server-sent events, but LMI (DJL Serving) answers that "
            "path as it answers /invocations, streaming chat chunks as JSON lines, and AWS's "
            f"guide does not list it ({_LISTED}); serve the model with {_CHAT_ENGINES}, or put "
            "a StreamingInvoker in front, which reframes LMI's stream as OpenAI server-sent "
            "events",
        )
    if chat_path is ChatCompletionsPath.UNLISTED:
        return RouteSupport(
            served=None,
            warning_id=WarningId.OPENAI_ROUTE_UNLISTED,
            message="TGI's router serves POST /v1/chat/completions with server-sent events and "
            "GET /ping (router/src/server.rs), the contract of SageMaker's OpenAI route, but "
            f"AWS has not verified TGI behind it: {_LISTED}. Try streamed and non-streamed "
            "calls through the route on a staging endpoint, then acknowledge this warning; or "
            f"serve the model with {_CHAT_ENGINES}, or put a StreamingInvoker in front",
        )
    return RouteSupport(
        served=None,
        warning_id=WarningId.OPENAI_ROUTE_UNKNOWN,
        message="the library does not know whether its container implements the contract of "
        "SageMaker's OpenAI route (an image of your own, or an endpoint deployed elsewhere "
        f"whose engine is not stated): {_LISTED}, to which the route hands the client's body "
        "unchanged. Check that the image answers POST /v1/chat/completions with chat.completion "
        "JSON and, streamed, chat.completion.chunk server-sent events, then acknowledge this "
        "warning (for an endpoint deployed elsewhere, LlmEndpoint.from_endpoint_attributes("
        "engine=Engine.vllm()) states it instead)",
    )


class RouteHost(IConstruct, Protocol):
    """What the route reads of the construct that offers it."""

    @property
    def endpoint_name(self) -> str: ...

    @property
    def inference_component_name(self) -> str | None: ...

    @property
    def request_format(self) -> RequestFormat: ...

    @property
    def chat_completions_path(self) -> ChatCompletionsPath: ...


@dataclass(frozen=True)
class OpenAiRoute:
    """SageMaker's own OpenAI route to one endpoint or inference component, as its host
    offers it (``openai_base_url`` and ``grant_openai`` of ``LlmEndpoint``,
    ``InferenceComponent`` and an imported endpoint): :attr:`base_url` for OpenAI clients and
    :meth:`grant` for their callers.

    Both refuse, with a ``ConfigurationError``, a route that cannot serve: a container whose
    ``/v1/chat/completions`` does not stream server-sent events (LMI), one that takes generate
    or embed requests, or an asynchronous endpoint (a cross-feature rule,
    ``hosting/rules.py``). ``grant`` (which every caller of the route needs) also warns,
    under an acknowledgeable id, where the route is not verified: TGI, whose router implements
    the contract but which AWS does not list (``constructs-llm:openai-route-unlisted``), and an
    image of the user's or an endpoint deployed elsewhere whose engine is not stated
    (``constructs-llm:openai-route-unknown``). Reading ``base_url`` adds nothing.

    :param host: the construct that offers the route: its endpoint (and component), its
        container's contract; named in messages, warned on.
    :param invoke_arns: the ARNs ``InvokeEndpoint`` is scoped to.
    :param plan: the plan of the endpoint the route reaches, for the route's cross-feature
        rules; None for an endpoint deployed elsewhere.
    """

    host: RouteHost
    invoke_arns: tuple[str, ...]
    plan: HostingPlan | None

    @property
    def base_url(self) -> str:
        """The base URL OpenAI clients use (``OpenAI(base_url=..., api_key=<token>)``), as a
        CloudFormation string: ``https://runtime.sagemaker.<region>.<url suffix>/endpoints/
        <endpoint>/openai/v1``, or for an inference component ``.../endpoints/<endpoint>/
        inference-components/<component>/openai/v1`` (the path selects the component).
        Clients send ``model=""``: SageMaker routes by the URL, and the container checks a
        non-empty name against its own (vLLM accepts an empty one,
        vllm-project/vllm: ``vllm/entrypoints/openai/serving_engine.py`` ``_is_model_supported``).
        The token comes from :func:`constructs_llm.streaming.sagemaker_bearer_token`.

        :raises ConfigurationError: the route cannot serve this endpoint or component
        """
        self._support()
        stack = Stack.of(self.host)
        parts = [
            "https://runtime.sagemaker.",
            stack.region,
            ".",
            stack.url_suffix,
            "/endpoints/",
            self.host.endpoint_name,
        ]
        component = self.host.inference_component_name
        if component is not None:
            parts += ["/inference-components/", component]
        return Fn.join("", [*parts, _OPENAI_PATH])

    def grant(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``grantee`` to call :attr:`base_url` with a bearer token:
        ``sagemaker:InvokeEndpoint`` on this endpoint (and, for an inference component, on the
        component too, as ``grant_invoke`` scopes it), and ``sagemaker:CallWithBearerToken`` on
        ``"*"`` with no condition, as AWS's guide grants it (see the module docstring). The
        token statement goes in a policy of the host's own (``BearerTokenCalls``, attached to
        the grantee's role, user or group), where its cdk-nag finding is acknowledged: the
        grantee itself carries no acknowledgment, so a wildcard its owner adds is flagged.
        The grant returned is the ``InvokeEndpoint`` statement's."""
        host = self.host
        problem = grantee_problem("grantee", grantee)
        if problem:
            fail(f"{type(host).__name__} '{host.node.path}'.grant_openai", problem)
        support = self._support()
        if support.served is None and support.warning_id and support.message:
            warn(host, SynthWarning(support.warning_id, support.message))
        invoke = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=[_OPENAI_INVOKE_ACTION],
            resource_arns=list(self.invoke_arns),
        )
        token = iam.PolicyStatement(actions=[_BEARER_TOKEN_ACTION], resources=["*"])
        home = host if isinstance(host, Construct) else Stack.of(host)
        grant_in_own_policy(home, _BEARER_TOKEN_POLICY, grantee, [token], BEARER_TOKEN_CALLS)
        return invoke

    def _support(self) -> RouteSupport:
        """What the route gives this container; raises, naming every reason, when the route
        cannot serve it (its container, or a rule of the endpoint's plan)."""
        problems = Problems(f"{type(self.host).__name__} '{self.host.node.path}'")
        support = openai_route_support(self.host.request_format, self.host.chat_completions_path)
        if support.served is False:
            problems.add(
                Problem.of(
                    "model",
                    None,
                    f"SageMaker's OpenAI route cannot serve it: {support.message}",
                )
            )
        if self.plan is not None:
            problems.extend(rule_problems(self.plan, When.OPENAI_ROUTE))
        problems.raise_if_any()
        return support


class OffersOpenAiRoute:
    """``openai_base_url`` and ``grant_openai`` of a construct that SageMaker's own OpenAI route
    reaches, read from the :class:`OpenAiRoute` it builds (``_openai_route``)."""

    @abc.abstractmethod
    def _openai_route(self) -> OpenAiRoute:
        """The route this host builds (the type checker refuses a host that builds none; the
        base has no route of its own to give)."""
        raise NotImplementedError

    @property
    def openai_base_url(self) -> str:
        """The base URL OpenAI clients use on SageMaker's own OpenAI route (see
        :attr:`OpenAiRoute.base_url`).

        :raises ConfigurationError: the route cannot serve it
        """
        return self._openai_route().base_url

    def grant_openai(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``grantee`` to call :attr:`openai_base_url` with a bearer token (see
        :meth:`OpenAiRoute.grant`)."""
        return self._openai_route().grant(grantee)
