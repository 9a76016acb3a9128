"""The batch worker's lines on an asynchronous endpoint (``add_batch_api(async_targets=...)``,
``runtime/batches/queued.py``), walked from the worker's own environment: each model of
``BATCH_ASYNC`` is a route of ``ROUTES`` whose endpoint's config has an
``AsyncInferenceConfig``, and

- the worker's role may ``sagemaker:InvokeEndpointAsync`` on the endpoint, and may not call it
  in real time (``InvokeEndpoint``, ``InvokeEndpointWithResponseStream``: "the endpoint can
  only receive asynchronous invocations", SageMaker's asynchronous inference guide);
- it may ``s3:PutObject`` a request body in the input folder ``BATCH_ASYNC`` names, with
  ``kms:GenerateDataKey`` on the bucket's key ("Using server-side encryption with AWS KMS
  keys"), and the role of the model the endpoint runs may ``s3:GetObject`` it there with
  ``kms:Decrypt`` (SageMaker reads the ``InputLocation`` as the execution role);
- it may find and read the answer and the failure where SageMaker writes them (the config's
  ``S3OutputPath`` and ``S3FailurePath``): ``s3:ListBucket`` with the key as ``s3:prefix``,
  ``s3:GetObject``, ``kms:Decrypt``.

What only a deploy proves: SageMaker's own object names under those folders, and its queue.
"""

from __future__ import annotations

from typing import Any

from tests.support.contract_walk import Walk, of_type, s3_location
from tests.support.iam_policy import Policy, Request, identity_policy
from tests.support.symbolic import (
    PARTITION,
    Resolver,
    Text,
    references,
    render,
    sagemaker_arn,
    text,
)
from tests.support.walks.model_access import bucket_key, guards_for, template_bucket, use_key

__all__ = ["walk_async_lines"]

#: A request body the worker writes (``<input><batch id>/<sha-256>.json``).
A_BODY = "batch_0123/line.json"
#: An answer SageMaker writes under an output or failure folder.
AN_ANSWER = "request-id.out"
_REAL_TIME = ("sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream")


def walk_async_lines(
    walk: Walk, resolve: Resolver, worker_id: str, role: str, endpoint: Text, inputs: Text
) -> None:
    """The worker ``worker_id`` (role ``role``) queues lines on ``endpoint`` through the
    input folder ``inputs`` and reads their answers."""
    who = f"batch worker {worker_id}'s role {role}"
    policy = identity_policy(resolve, role)
    config_id = _config_of(resolve, endpoint)
    config = resolve.resources[config_id]["Properties"] if config_id else {}
    if "AsyncInferenceConfig" not in config:
        walk.problems.append(
            f"{walk.template}: {who} queues lines on {render(endpoint)}, which has no "
            "AsyncInferenceConfig"
        )
        return
    endpoint_arn = sagemaker_arn("endpoint", endpoint)
    walk.need(who, policy, Request("sagemaker:InvokeEndpointAsync", endpoint_arn), "its queue")
    for action in _REAL_TIME:
        if policy.evaluate(Request(action, endpoint_arn)).allowed:
            walk.problems.append(
                f"{walk.template}: {who} may {action} on the asynchronous {render(endpoint)}"
            )
    body = _object(walk, who, resolve, role, policy, inputs, A_BODY, "s3:PutObject")
    for model_role in _model_roles(resolve, config):
        reader = f"the execution role {model_role} of {config_id}"
        walk.need(
            reader,
            identity_policy(resolve, model_role),
            Request("s3:GetObject", body),
            f"a line's body {render(body)}",
        )
        use_key(
            walk,
            reader,
            resolve,
            model_role,
            _key(resolve, inputs),
            ("kms:Decrypt",),
            "the input's key",
        )
    output = config["AsyncInferenceConfig"]["OutputConfig"]
    for path in ("S3OutputPath", "S3FailurePath"):
        if path in output:
            found = resolve(output[path])
            _object(walk, who, resolve, role, policy, found, AN_ANSWER, "s3:GetObject")


def _object(
    walk: Walk,
    who: str,
    resolve: Resolver,
    role: str,
    policy: Policy,
    folder: Text,
    name: str,
    action: str,
) -> Text:
    """``action`` on the object ``name`` in ``folder`` (and, to read it, the listing that
    finds it), through the bucket's key; the object's ARN."""
    bucket, prefix = s3_location(folder)
    bucket_id = template_bucket(resolve, bucket)
    guards = guards_for(resolve, bucket_id, role)
    bucket_arn = text("arn:", PARTITION, ":s3:::", bucket)
    key = text(prefix, name)
    object_arn = text(bucket_arn, "/", key)
    what = f"{render(folder)}"
    walk.need(who, policy, Request(action, object_arn), what, guards=guards)
    reading = action == "s3:GetObject"
    if reading:
        listing = Request("s3:ListBucket", bucket_arn, {"s3:prefix": key})
        walk.need(who, policy, listing, what, guards=guards)
    kms = ("kms:Decrypt",) if reading else ("kms:GenerateDataKey",)
    use_key(walk, who, resolve, role, bucket_key(resolve, bucket_id), kms, f"the key of {what}")
    return object_arn


def _key(resolve: Resolver, folder: Text) -> str | None:
    bucket, _ = s3_location(folder)
    return bucket_key(resolve, template_bucket(resolve, bucket))


def _config_of(resolve: Resolver, endpoint: Text) -> str | None:
    """The config of the template's endpoint named ``endpoint``."""
    for endpoint_id, resource in of_type(resolve.template, "AWS::SageMaker::Endpoint").items():
        if render(resolve.attribute(endpoint_id, "EndpointName")) == render(endpoint):
            (config_id,) = set(references(resource["Properties"]["EndpointConfigName"]))
            return config_id
    return None


def _model_roles(resolve: Resolver, config: dict[str, Any]) -> list[str]:
    """The execution roles of the models the config's variants run."""
    roles: list[str] = []
    for variant in config.get("ProductionVariants", []):
        for model_id in references(variant.get("ModelName")):
            role_arn = resolve.resources[model_id]["Properties"]["ExecutionRoleArn"]
            roles.extend(set(references(role_arn)))
    return roles
