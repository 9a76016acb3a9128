"""Routing: how an endpoint spreads requests over its instances, and a component's over its
copies (``RoutingConfig`` on every production variant, and so on every instance pool of it).

The strategies are SageMaker's (botocore 1.44.5 ``ProductionVariantRoutingConfig``,
``RoutingStrategy``; aws-cdk-lib ``CfnEndpointConfig.RoutingConfigProperty``,
``PrefixAwareRoutingConfigProperty``):

- ``LEAST_OUTSTANDING_REQUESTS`` (the default): to the instance (or copy) with the fewest
  requests in flight. LLM requests differ in length by orders of magnitude, so the least busy
  instance is the best guess when nothing else is known.
- ``RANDOM``: to an instance chosen at random: requests of even cost, many instances.
- ``PREFIX_AWARE``: requests that share the start of their prompt (a system prompt, a
  document, a conversation's history) go to the same instance, and to the same copy of a
  component there, whose engine may still hold that prefix in its KV cache; past
  ``ConcurrencyThreshold`` requests in flight there, to another one. ``PrefixLength`` counts
  bytes of the request body on ``InvokeEndpoint*`` and characters of the messages' text on the
  OpenAI route; it must cover the shared part and enough of what differs to spread the rest.
  SageMaker applies it only where two or more instances can serve.
- ``KV_AWARE``: to an instance (or copy) that already holds the start of the prompt in its KV
  cache, weighed against how busy each is; otherwise as ``LEAST_OUTSTANDING_REQUESTS``. It
  "works only with supported containers, such as the SageMaker AI vLLM Deep Learning
  Container", so the library allows it where every model of the endpoint runs on the vLLM DLC.
  CloudFormation's registry schema of ``AWS::SageMaker::EndpointConfig`` (cfn-lint 1.58.0,
  schemas of 2026-10-20) does not list ``KV_AWARE`` among ``RoutingStrategy``'s values yet:
  a warning says so, since CloudFormation may refuse the template until it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.problems import Problem, Problems
from constructs_llm.values import describe

#: ``PrefixAwareRoutingConfig``'s ranges (botocore ``PrefixAwareRoutingPrefixLength``,
#: ``ConcurrencyThreshold``; the CloudFormation schema states the same).
PREFIX_LENGTH = (1024, 65536)
CONCURRENCY_THRESHOLD = (1, 1024)


class RoutingStrategy(str, Enum):
    """SageMaker's ``RoutingStrategy`` values."""

    LEAST_OUTSTANDING_REQUESTS = "LEAST_OUTSTANDING_REQUESTS"
    RANDOM = "RANDOM"
    PREFIX_AWARE = "PREFIX_AWARE"
    KV_AWARE = "KV_AWARE"


@dataclass(frozen=True)
class Routing:
    """How an endpoint routes requests among its instances (and a component's copies), on
    every variant and instance pool. Build it with a factory:

    - ``Routing.least_outstanding_requests()`` (the default): the least busy instance; the
      choice when requests differ in length and share little.
    - ``Routing.random()``: an instance at random; requests of even cost on many instances.
    - ``Routing.prefix_aware(prefix_length=, concurrency_threshold=)``: requests sharing a
      prompt prefix (a long system prompt, RAG context, chat history) go where that prefix was
      served, so the engine's prefix cache is hit; needs two instances or more.
    - ``Routing.kv_aware()``: where the prompt's start is already in an engine's KV cache,
      weighed against load; the vLLM DLC only.

    :param strategy: SageMaker's ``RoutingStrategy``.
    :param prefix_length: ``PREFIX_AWARE`` only: bytes (characters on the OpenAI route) of the
        prompt's start that decide the instance. @default none
    :param concurrency_threshold: ``PREFIX_AWARE`` only: requests in flight on the chosen
        instance (or copy) past which another is chosen. @default none
    """

    strategy: RoutingStrategy
    prefix_length: int | None = None
    concurrency_threshold: int | None = None

    @staticmethod
    def least_outstanding_requests() -> Routing:
        """To the instance (or copy) with the fewest requests in flight (the default)."""
        return Routing(RoutingStrategy.LEAST_OUTSTANDING_REQUESTS)

    @staticmethod
    def random() -> Routing:
        """To an instance (or copy) chosen at random."""
        return Routing(RoutingStrategy.RANDOM)

    @staticmethod
    def prefix_aware(*, prefix_length: int, concurrency_threshold: int) -> Routing:
        """Requests sharing their first ``prefix_length`` bytes (characters on the OpenAI
        route) to the same instance and copy, until ``concurrency_threshold`` requests are in
        flight there.

        :param prefix_length: 1,024-65,536: the shared part of the prompts (system prompt,
            documents) and enough of what differs to spread the rest.
        :param concurrency_threshold: 1-1,024 requests in flight on the chosen instance (or
            copy) past which another is chosen.
        """
        problems = Problems("Routing.prefix_aware")
        problems.add(_range_problem("prefix_length", prefix_length, PREFIX_LENGTH))
        problems.add(
            _range_problem("concurrency_threshold", concurrency_threshold, CONCURRENCY_THRESHOLD)
        )
        problems.raise_if_any()
        return Routing(
            RoutingStrategy.PREFIX_AWARE,
            prefix_length=prefix_length,
            concurrency_threshold=concurrency_threshold,
        )

    @staticmethod
    def kv_aware() -> Routing:
        """To an instance (or copy) whose KV cache holds the prompt's start, weighed against
        how busy it is; only with the SageMaker AI vLLM Deep Learning Container."""
        return Routing(RoutingStrategy.KV_AWARE)

    @property
    def label(self) -> str:
        """The factory call that builds it, for messages."""
        if self.strategy is RoutingStrategy.PREFIX_AWARE:
            return (
                f"Routing.prefix_aware(prefix_length={self.prefix_length}, "
                f"concurrency_threshold={self.concurrency_threshold})"
            )
        return f"Routing.{self.strategy.value.lower()}()"

    def config(self) -> sagemaker.CfnEndpointConfig.RoutingConfigProperty:
        """The variant's ``RoutingConfig``; ``PrefixAwareRoutingConfig`` with prefix-aware
        routing only, as SageMaker requires."""
        prefix = (
            sagemaker.CfnEndpointConfig.PrefixAwareRoutingConfigProperty(
                prefix_length=self.prefix_length,
                concurrency_threshold=self.concurrency_threshold,
            )
            if self.strategy is RoutingStrategy.PREFIX_AWARE
            else None
        )
        return sagemaker.CfnEndpointConfig.RoutingConfigProperty(
            routing_strategy=self.strategy.value, prefix_aware_routing_config=prefix
        )


DEFAULT = Routing.least_outstanding_requests()

#: The ``RoutingStrategy`` values CloudFormation's registry schema of
#: ``AWS::SageMaker::EndpointConfig`` lists (cfn-lint 1.58.0, schemas of 2026-10-20, the same in
#: every region; tests/test_endpoint_routing.py reads them from the installed cfn-lint).
CFN_SCHEMA_STRATEGIES = frozenset({"LEAST_OUTSTANDING_REQUESTS", "PREFIX_AWARE", "RANDOM"})

ROUTING_FIX = (
    "pass Routing.least_outstanding_requests(), Routing.random(), "
    "Routing.prefix_aware(prefix_length=..., concurrency_threshold=...) or Routing.kv_aware()"
)


def _range_problem(name: str, value: object, bounds: tuple[int, int]) -> Problem | None:
    low, high = bounds
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return None
    return Problem.of(
        name,
        value,
        f"{name} must be an integer from {low:,} to {high:,}, got {describe(value)}",
    )


def routing_problem(routing: object) -> Problem | None:
    """``routing=`` of a host: a ``Routing``, or None for the default."""
    if routing is None or isinstance(routing, Routing):
        return None
    return Problem.of(
        "routing",
        routing,
        f"routing must be a Routing, got {describe(routing)}; {ROUTING_FIX}",
    )


def kv_aware_problem(routing: Routing, engines: dict[str, str | None]) -> Problem | None:
    """``KV_AWARE`` where a model does not run on the vLLM DLC; ``engines`` maps each model
    (its path) to its engine's factory, or None when it runs on the vLLM DLC."""
    if routing.strategy is not RoutingStrategy.KV_AWARE:
        return None
    others = {path: engine for path, engine in engines.items() if engine is not None}
    if not others:
        return None
    named = ", ".join(f"model '{path}' runs {engine}" for path, engine in sorted(others.items()))
    return Problem.of(
        "routing",
        routing,
        "routing=Routing.kv_aware() works only with containers that support it, such as the "
        f"SageMaker AI vLLM Deep Learning Container, but {named};",
        "serve it with Engine.vllm() "
        "on its default image, or choose Routing.prefix_aware(...) or "
        "Routing.least_outstanding_requests()",
    )


def single_instance_note(routing: Routing, label: str, most: int) -> str | None:
    """Prefix-aware routing that cannot act: at most one instance serves (``most``)."""
    if routing.strategy is not RoutingStrategy.PREFIX_AWARE or most > 1:
        return None
    return (
        f"Routing: {routing.label} on {label} acts only when two or more instances can serve, "
        f"and at most {most} does: requests are routed as without it until the fleet grows "
        "(raise instance_count or the autoscaling maximum)"
    )


def routing_schema_warning(routing: Routing) -> str | None:
    """A strategy SageMaker's API takes but CloudFormation's schema does not list yet."""
    if routing.strategy.value in CFN_SCHEMA_STRATEGIES:
        return None
    return (
        f"routing={routing.label}: CloudFormation's registry schema of "
        "AWS::SageMaker::EndpointConfig (cfn-lint 1.58.0, schemas of 2026-10-20) lists "
        f"RoutingStrategy {', '.join(sorted(CFN_SCHEMA_STRATEGIES))}, not "
        f"{routing.strategy.value}, which SageMaker's API (botocore 1.44.5) takes: CloudFormation "
        "may refuse the endpoint config until its schema lists it. Check it with a deploy to a "
        "test stack first, or choose Routing.prefix_aware(...)"
    )


def runs_vllm_dlc(engine_factory: str, repository: str | None) -> bool:
    """Whether a model runs the SageMaker AI vLLM DLC: ``Engine.vllm()`` on an image of the
    DLC's vLLM repository (its default, or one given in the DLC's repository)."""
    from constructs_llm.images.dlc_registry import dlc_family

    return engine_factory == "vllm" and repository == dlc_family("vllm").repository
