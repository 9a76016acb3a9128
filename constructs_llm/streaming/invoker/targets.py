"""What a ``StreamingInvoker`` does with its targets: checks them, and writes the runtime's
routing table (one ``formats.RouteSpec`` per served model name, read by ``runtime/routing.py``).

One chat target gets the single-target environment (``ENDPOINT_NAME``, ``MODEL_NAME``, ...).
Several targets become ``ROUTES``, a JSON list whose endpoint names CloudFormation fills in at
deploy time. Either way the runtime is told which engine serves each target (``ENGINE``, or
each route's ``"engine"``), so a request field that engine honours passes and one it does not
gets a 400 naming both; whether that engine serves tool calls (``TOOLS=on|off``, or each
route's ``"tools"``); whether the model is known to take no images (``VISION=off``, or each
route's ``"vision": false``, from the model table), so an image part gets a 400 saying so; and
the model's ``max_total_tokens`` when it is set (``MAX_TOTAL_TOKENS``, or each route's
``"max_total_tokens"``), so a ``max_tokens`` no engine could serve gets a 400 before SageMaker
is called. An endpoint deployed elsewhere has no model
here: its engine is the one it was imported with (``from_endpoint_attributes(engine=...)``),
and without one the runtime sends only the fields every engine honours (and TEI's body to an
embedding model).

Everything here is read from each target's ``facts`` (``hosting/target.py``, ``TargetFacts``),
which its host builds from its plan; nothing asks which host class a target is, so a new host
needs no edit here.

An embedding model (``Engine.tei()``) is always written as ``ROUTES``, even alone: its route
takes the ``embed`` request format and carries what ``POST /v1/embeddings`` needs, its
embedding length (``dimensions``), its shortest Matryoshka truncation (``min_dimensions``) and
its engine's per-call input limit (``max_inputs``), which the single-target variables (those of
a chat model) have no names for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from aws_cdk import Stack
from constructs import Construct

from constructs_llm.contract import Env, ModelKind, RouteSpec
from constructs_llm.hosting.target import InvocationTarget, TargetFacts
from constructs_llm.problems import Problem
from constructs_llm.values import describe

#: "The total size of all environment variables doesn't exceed 4 KB" (Lambda quotas).
_LAMBDA_ENV_LIMIT = 4096
# What an unresolved value (an endpoint name, a secret ARN) may take once CloudFormation
# fills it in: SageMaker names stop at 63 characters, ARNs at a little over 100.
_TOKEN_ESTIMATE = 128
_TOKEN_TEXT = re.compile(r"\$\{Token\[[^\]]+\]\}")
# Keys the invoker may add after its targets are checked (auth, heartbeat).
_LATER_KEYS_ESTIMATE = 256
_FIX = "create an LlmEndpoint, an InferenceComponent or component.add_adapter(...) for it"


def check_targets(
    invoker: Construct, target: object, targets: object
) -> tuple[list[InvocationTarget], list[Problem]]:
    """The invoker's targets (``target=`` or ``targets=``), and every problem with them."""
    if target is not None and targets is not None:
        wrong = "pass target=... for one model or targets=[...] for several, not both"
        return [], [Problem.of("targets", targets, wrong)]
    if target is None and targets is None:
        wrong = "pass target=<endpoint or component> (or targets=[...] for several models)"
        return [], [Problem.of("target", None, wrong)]
    if targets is None:
        given, label = [target], "target"
    elif not isinstance(targets, list | tuple):
        wrong = f"targets must be a list of endpoints or components, got {describe(targets)}"
        return [], [Problem.of("targets", targets, wrong)]
    elif not targets:
        wrong = "targets must hold at least one endpoint or component, got [];"
        return [], [Problem.of("targets", targets, wrong, _FIX)]
    else:
        given, label = list(targets), "targets"
    problems: list[Problem] = []
    found: list[InvocationTarget] = []
    for index, item in enumerate(given):
        where = label if label == "target" else f"targets[{index}]"
        if not isinstance(item, InvocationTarget):
            problems.append(
                Problem.of(
                    where,
                    item,
                    f"{where} must be an LlmEndpoint, an InferenceComponent or an adapter, got "
                    f"{describe(item)};",
                    _FIX,
                )
            )
            continue
        problems += _stack_problems(invoker, item, where)
        if item.facts.is_async:
            problems.append(_async_target(where, describe(item)))
        found.append(item)
    problems += _duplicate_names(found)
    return found, problems


def _async_target(where: str, target: str) -> Problem:
    return Problem.of(
        "targets",
        target,
        f"{where} {target} is an asynchronous endpoint (async_inference=...), which answers "
        'InvokeEndpointAsync only ("the presence of an asynchronous inference configuration '
        "(AsyncInferenceConfig) object in the endpoint configuration implies that the endpoint "
        "can only receive asynchronous invocations\", SageMaker's asynchronous inference "
        "guide), and the invoker streams with InvokeEndpointWithResponseStream; submit requests "
        "with constructs_llm.streaming.submit_chat (or chat_async), or front a real-time "
        "LlmEndpoint of the model with the invoker",
    )


def _stack_problems(invoker: Construct, target: InvocationTarget, where: str) -> list[Problem]:
    """A target from another stack would tie the two stacks together with exports; an
    endpoint deployed elsewhere is imported by name instead."""
    facts = target.facts
    if not facts.hosted_here or not isinstance(target, Construct):
        return []
    here, there = Stack.of(invoker), Stack.of(target)
    if here is there:
        return []
    located = f"{where} {describe(target)} is in stack '{there.node.path}', the invoker in "
    if facts.inference_component_name is not None:  # an import holds no component name
        return [
            Problem.of(
                "targets",
                target,
                f"{located}'{here.node.path}';",
                "move the invoker to the component's stack",
            )
        ]
    return [
        Problem.of(
            "targets",
            target,
            f"{located}'{here.node.path}';",
            "import it into this stack with "
            "LlmEndpoint.from_endpoint_attributes(self, id, endpoint_name=..., engine=...) "
            "(or move "
            "the invoker to its stack)",
        )
    ]


def _duplicate_names(targets: Sequence[InvocationTarget]) -> list[Problem]:
    """Clients pick a target by its served model name, so each name must be unique."""
    owners: dict[str, list[str]] = {}
    for target in targets:
        owners.setdefault(target.facts.served_model_name, []).append(describe(target))
    return [
        Problem.of(
            "served_model_name",
            name,
            f"targets serve the model name {name!r} {len(who)} times ({', '.join(who)});",
            "pass served_model_name=... to one of them (an adapter is served under its name)",
        )
        for name, who in owners.items()
        if len(who) > 1
    ]


def routes_environment(scope: Construct, targets: Sequence[InvocationTarget]) -> dict[str, str]:
    """The runtime's environment for its targets: one chat target as its own variables,
    several (or an embedding model) as ROUTES."""
    facts = [target.facts for target in targets]
    if len(facts) == 1 and facts[0].model_kind is ModelKind.CHAT:
        (target,) = facts
        env = {
            Env.ENDPOINT_NAME: target.endpoint_name,
            Env.STREAM_FORMAT: target.stream_format.value,
            Env.REQUEST_FORMAT: target.request_format.value,
            Env.MODEL_NAME: target.served_model_name,
            Env.TOOLS: "on" if target.tool_calls else "off",
        }
        if target.engine is not None:
            env[Env.ENGINE] = target.engine.value
        if target.vision is False:
            env[Env.VISION] = "off"
        if target.inference_component_name is not None:
            env[Env.INFERENCE_COMPONENT_NAME] = target.inference_component_name
        limit = target.max_total_tokens
        if limit is not None:
            env[Env.MAX_TOTAL_TOKENS] = str(limit)
        return env
    routes = [_route(target) for target in facts]
    return {Env.ROUTES: Stack.of(scope).to_json_string(routes)}


_CHAT = frozenset({ModelKind.CHAT})
_EMBEDDING = frozenset({ModelKind.EMBEDDING})
_EVERY = _CHAT | _EMBEDDING


def _trait(name: str) -> Callable[[TargetFacts], object]:
    """An embedding model's trait (``EmbeddingTraits``), when it is known."""
    return lambda t: None if t.embedding_traits is None else getattr(t.embedding_traits, name)


#: A route's keys, in the order ``ROUTES`` writes them: the kinds of model whose routes have
#: it, and its value for a target (None: left out). An embedding model's route has no stream
#: format or tools (nothing streams, nothing calls tools), and what ``POST /v1/embeddings``
#: checks and splits by.
_ROUTE_KEYS: tuple[tuple[str, frozenset[ModelKind], Callable[[TargetFacts], object]], ...] = (
    ("model", _EVERY, lambda t: t.served_model_name),
    ("endpoint", _EVERY, lambda t: t.endpoint_name),
    ("stream_format", _CHAT, lambda t: t.stream_format.value),
    ("request_format", _EVERY, lambda t: t.request_format.value),
    ("tools", _CHAT, lambda t: t.tool_calls),
    ("engine", _EVERY, lambda t: None if t.engine is None else t.engine.value),
    ("vision", _CHAT, lambda t: False if t.vision is False else None),  # true is not written
    ("component", _EVERY, lambda t: t.inference_component_name),
    ("variants", _EVERY, lambda t: list(t.variant_names) or None),
    ("max_total_tokens", _CHAT, lambda t: t.max_total_tokens),
    ("dimensions", _EMBEDDING, _trait("dimensions")),
    ("min_dimensions", _EMBEDDING, _trait("min_dimensions")),
    ("max_inputs", _EMBEDDING, _trait("max_inputs_per_call")),
)


def _route(target: TargetFacts) -> RouteSpec:
    route = {
        key: value
        for key, kinds, value_of in _ROUTE_KEYS
        if target.model_kind in kinds and (value := value_of(target)) is not None
    }
    return cast(RouteSpec, route)


def environment_size_problem(
    env: Mapping[str, str], targets: Sequence[InvocationTarget]
) -> Problem | None:
    """The environment must fit Lambda's 4 KB; endpoint names are counted at their longest."""
    facts = [target.facts for target in targets]
    if len(facts) > 1 or any(f.model_kind is ModelKind.EMBEDDING for f in facts):
        routes = json.dumps([_route(f) for f in facts], separators=(",", ":"))
        env = {**env, Env.ROUTES: routes}
    size = _LATER_KEYS_ESTIMATE + sum(len(k) + _size(v) for k, v in env.items())
    if size <= _LAMBDA_ENV_LIMIT:
        return None
    return Problem.of(
        "targets",
        None,
        f"the invoker's environment would take up to {size:,} bytes with {len(targets)} "
        f"targets, above Lambda's {_LAMBDA_ENV_LIMIT:,}-byte limit on all environment variables;",
        "split the targets over two invokers",
    )


def _size(value: str) -> int:
    """A value's length, with each unresolved token counted at its longest."""
    tokens = _TOKEN_TEXT.findall(value)
    return len(value.encode()) - sum(map(len, tokens)) + _TOKEN_ESTIMATE * len(tokens)
