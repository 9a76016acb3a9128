"""The role of every streaming invoker of every template may call what the invoker is
configured to call, read from the function's own environment (``ENDPOINT_NAME`` and
``INFERENCE_COMPONENT_NAME``, or each route of ``ROUTES``; ``API_KEYS_SECRET_ID``):

- ``sagemaker:InvokeEndpoint`` and ``sagemaker:InvokeEndpointWithResponseStream`` on each
  endpoint, and on each inference component it names (SageMaker authorizes a call that names
  a component against the endpoint and the component: "Actions, resources, and condition keys
  for Amazon SageMaker AI", InvokeEndpoint, resource types ``endpoint`` and
  ``inference-component``);
- ``secretsmanager:GetSecretValue`` on the API-key secret (a secret's ARN is its name, a dash
  and six random characters); and, when the template encrypts that secret with a key of its
  own, ``kms:Decrypt`` on that key through Secrets Manager (``kms:ViaService``
  ``secretsmanager.<region>.amazonaws.com``, "How AWS Secrets Manager uses AWS KMS"), allowed
  by the key policy and the role's policies together.

An invoker with the Batch API (``BATCH_STATE_MACHINE_ARN``) has each line served by the worker
function its state machine invokes (``runtime/batches/worker.py``): the worker is walked as an
invoker of its own (its role calls the targets its environment names, and writes its logs),
and its environment must name the same targets as the invoker's, so a batch line reaches the
model the same request would reach online; the asynchronous models of both ``BATCH_ASYNC``s
are the same, each a route of the worker's, and the worker queues on them as
``tests/support/walks/batch_async.py`` walks it (and calls none of them in real time).

What only a deploy proves: that the endpoint and secret exist when the function first runs,
and that nothing outside the template (SCPs, boundaries) denies the same calls.
"""

from __future__ import annotations

from typing import Any

from constructs_llm.contract import Env
from tests.support.contract_walk import Walk, of_type, region_service
from tests.support.iam_policy import Request, identity_policy, key_allows
from tests.support.symbolic import (
    SECRET_SUFFIX,
    Resolver,
    Text,
    arn,
    references,
    render,
    sagemaker_arn,
    text,
)
from tests.support.walks.batch_async import walk_async_lines

__all__ = ["INVOKE", "queued_inputs", "targets", "walk_invokers"]

INVOKE = ("sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream")


def targets(
    resolve: Resolver, env: dict[str, Any], *, queued: bool = False
) -> list[tuple[Text, Text | None]]:
    """(endpoint name, component name or None) of every target the environment names that it
    calls in real time (or, ``queued``, of those it queues on: ``BATCH_ASYNC``'s models)."""
    if Env.ROUTES in env:
        asynchronous = set(queued_inputs(resolve, env))
        return [
            (route["endpoint"], route.get("component"))
            for route in resolve.json(env[Env.ROUTES])
            if (render(route["model"]) in asynchronous) is queued
        ]
    if queued:
        return []
    if Env.ENDPOINT_NAME in env:
        component = env.get(Env.INFERENCE_COMPONENT_NAME)
        return [(resolve(env[Env.ENDPOINT_NAME]), resolve(component) if component else None)]
    return []


def queued_inputs(resolve: Resolver, env: dict[str, Any]) -> dict[str, Text]:
    """``BATCH_ASYNC``: each asynchronous model's input folder."""
    if Env.BATCH_ASYNC not in env:
        return {}
    return dict(resolve.json(env[Env.BATCH_ASYNC]))


def _queued_routes(resolve: Resolver, env: dict[str, Any]) -> list[tuple[Text, Text]]:
    """(endpoint name, input folder) of each route the function queues on."""
    if Env.ROUTES not in env:
        return []
    inputs = queued_inputs(resolve, env)
    return [
        (route["endpoint"], inputs[render(route["model"])])
        for route in resolve.json(env[Env.ROUTES])
        if render(route["model"]) in inputs
    ]


def walk_invokers(name: str, template: dict[str, Any]) -> Walk:
    walk = Walk(name)
    resolve = Resolver(template)
    for function_id, function in of_type(template, "AWS::Lambda::Function").items():
        env = function["Properties"].get("Environment", {}).get("Variables", {})
        called = targets(resolve, env)
        queued = _queued_routes(resolve, env)
        if not called and not queued:
            continue  # not an invoker
        (role,) = set(references(function["Properties"]["Role"]))
        policy = identity_policy(resolve, role)
        who = f"invoker {function_id}'s role {role}"
        for endpoint, component in called:
            resources = [sagemaker_arn("endpoint", endpoint)]
            if component is not None:
                resources.append(sagemaker_arn("inference-component", component))
            for resource in resources:
                for action in INVOKE:
                    walk.need(who, policy, Request(action, resource), "a target it calls")
        for endpoint, inputs in queued:
            walk_async_lines(walk, resolve, function_id, role, endpoint, inputs)
        if Env.API_KEYS_SECRET_ID in env:
            _secret(walk, who, resolve, role, env[Env.API_KEYS_SECRET_ID])
        _logs(walk, who, resolve, policy, function_id, function["Properties"])
        walk.walked.append(function_id)
        if Env.BATCH_STATE_MACHINE_ARN in env:
            _batch_workers(walk, resolve, function_id, env)
    return walk


def _batch_workers(walk: Walk, resolve: Resolver, invoker_id: str, env: dict[str, Any]) -> None:
    """The functions the invoker's batch state machine invokes (its definition's references
    to a Lambda function) call the invoker's own targets, and queue on the asynchronous
    models the invoker's ``BATCH_ASYNC`` names."""
    resources = resolve.resources
    (machine_id,) = set(references(env[Env.BATCH_STATE_MACHINE_ARN]))
    definition = resources[machine_id]["Properties"]["DefinitionString"]
    workers = sorted(
        {r for r in references(definition) if resources[r]["Type"] == "AWS::Lambda::Function"}
    )
    if not workers:
        walk.problems.append(f"{walk.template}: {machine_id} of {invoker_id} invokes no function")
    wanted = _rendered(targets(resolve, env))
    wanted_queued = {m: render(i) for m, i in queued_inputs(resolve, env).items()}
    for worker_id in workers:
        worker_env = resources[worker_id]["Properties"].get("Environment", {}).get("Variables", {})
        found = _rendered(targets(resolve, worker_env))
        if found != wanted:
            walk.problems.append(
                f"{walk.template}: batch worker {worker_id} of invoker {invoker_id} calls "
                f"{sorted(found)}, not the invoker's targets {sorted(wanted)}"
            )
        found_queued = {m: render(i) for m, i in queued_inputs(resolve, worker_env).items()}
        if found_queued != wanted_queued or len(_queued_routes(resolve, worker_env)) != len(
            wanted_queued
        ):
            walk.problems.append(
                f"{walk.template}: batch worker {worker_id} of invoker {invoker_id} queues on "
                f"{sorted(found_queued)}, not the invoker's asynchronous models "
                f"{sorted(wanted_queued)} (each a route of its ROUTES)"
            )
        walk.walked.append(f"{worker_id} (batch worker of {invoker_id})")


def _rendered(called: list[tuple[Text, Text | None]]) -> set[tuple[str, str | None]]:
    return {(render(e), None if c is None else render(c)) for e, c in called}


def _logs(
    walk: Walk, who: str, resolve: Resolver, policy: Any, function_id: str, props: Any
) -> None:
    """The function writes its output to its log group: the one ``LoggingConfig`` names, else
    ``/aws/lambda/<function name>`` ("Sending Lambda function logs to CloudWatch Logs")."""
    configured = props.get("LoggingConfig", {}).get("LogGroup")
    group = resolve(configured) if configured else text("/aws/lambda/", resolve.name(function_id))
    stream = arn("logs", text("log-group:", group, ":log-stream:2026/12/01/[$LATEST]0123abcd"))
    for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
        walk.need(who, policy, Request(action, stream), "its own log group")


def _secret(walk: Walk, who: str, resolve: Resolver, role: str, value: Any) -> None:
    secret = resolve(value)
    if not render(secret).startswith("arn:"):
        secret = arn("secretsmanager", text("secret:", secret, SECRET_SUFFIX))
    policy = identity_policy(resolve, role)
    walk.need(who, policy, Request("secretsmanager:GetSecretValue", secret), "the API keys")
    for secret_id in references(value):
        key = resolve.resources[secret_id]["Properties"].get("KmsKeyId")
        if key is None:
            continue
        (key_id,) = set(references(key))
        request = Request(
            "kms:Decrypt",
            resolve.attribute(key_id, "Arn"),
            {"kms:ViaService": region_service("secretsmanager")},
        )
        allowed, why = key_allows(resolve, key_id, role, request)
        if not allowed:
            walk.problems.append(
                f"{walk.template}: {who} may not kms:Decrypt on {key_id} (the key of "
                f"{secret_id}): {why}"
            )
