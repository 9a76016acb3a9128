"""Every checkov skip and cdk-nag acknowledgment of the library, each with its reason, and the
one helper that records them (:func:`waive`).

checkov reads skips from a resource's ``Metadata.checkov.skip`` list; cdk-nag 3 runs as a CDK
validation plugin and honours ``Validations.of(scope).acknowledge(...)`` for the scope and its
children, with the finding id ``AwsSolutions::<rule>[<finding>]``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from aws_cdk import Acknowledgment, Aws, CfnResource, Validations
from constructs import IConstruct

from constructs_llm.problems import Problem, fail
from constructs_llm.scope_facts import stack_of
from constructs_llm.values import token_parts


@dataclass(frozen=True)
class CheckovSkip:
    """A checkov check that does not apply, and why."""

    id: str
    comment: str


@dataclass(frozen=True)
class NagAcknowledgment:
    """A cdk-nag ``AwsSolutions`` finding accepted on purpose, and why.

    :param rule: e.g. ``"AwsSolutions-IAM5"``.
    :param finding: the finding's detail, e.g. ``"Resource::*"``. @default the whole rule
    """

    rule: str
    reason: str
    finding: str | None = None

    @property
    def id(self) -> str:
        detail = f"[{self.finding}]" if self.finding else ""
        return f"AwsSolutions::{self.rule}{detail}"


def waive(
    scope: IConstruct | None, *waivers: CheckovSkip | NagAcknowledgment, new: bool = False
) -> None:
    """Records each waiver on ``scope``: checkov skips in the resource's metadata (added to
    those already there), cdk-nag acknowledgments on the construct and its children.

    :param new: the caller created ``scope``, a resource, just before: it holds no checkov
        metadata yet, so none is read back (a round trip to the Node.js process)."""
    skips = [w for w in waivers if isinstance(w, CheckovSkip)]
    if skips:
        resource = scope if isinstance(scope, CfnResource) else _default_resource(scope)
        existing: dict[str, Any] = {} if new else resource.get_metadata("checkov") or {}
        recorded = list(existing.get("skip", []))
        recorded += [{"id": s.id, "comment": s.comment} for s in skips]
        resource.add_metadata("checkov", {**existing, "skip": recorded})
    acks = [w for w in waivers if isinstance(w, NagAcknowledgment)]
    if acks and scope is not None:  # one call for all: each jsii call is a round trip
        Validations.of(scope).acknowledge(
            *(Acknowledgment(id=ack.id, reason=ack.reason) for ack in acks)
        )


def _default_resource(scope: IConstruct | None) -> CfnResource:
    """Where a checkov skip on ``scope`` goes: the resource itself, or its default child."""
    child = scope.node.default_child if scope is not None else None
    if not isinstance(child, CfnResource):
        wrong = f"checkov skips go on a CloudFormation resource, got {scope!r}"
        fail("waive", Problem.of("scope", scope, wrong))
    return child


def _nag_resource(scope: IConstruct, arn: str) -> str:
    """A resource as cdk-nag prints it in a finding id (its ``flattenCfnReference``)."""
    flattened = _flattened_here(arn)
    if flattened is not None:
        return flattened
    # The scope's stack is asked once (scope_facts.py): a role is waived for each of its log
    # groups and streams, by each host that renders its grants.
    return _flatten(stack_of(scope).resolve(arn))


@functools.cache
def _pseudo_parameters() -> dict[str, str]:
    """The encoded token of each pseudo parameter an ARN of a stack holds (``Aws.REGION`` and
    the others: fixed strings, and a stack's own ``region``, ``account`` and ``partition`` in an
    environment-agnostic stack), and how cdk-nag prints its ``Ref``."""
    return {
        Aws.PARTITION: "<AWS::Partition>",
        Aws.REGION: "<AWS::Region>",
        Aws.ACCOUNT_ID: "<AWS::AccountId>",
        Aws.URL_SUFFIX: "<AWS::URLSuffix>",
    }


def _flattened_here(arn: str) -> str | None:
    """``_flatten(stack.resolve(arn))``, answered without a round trip to the Node.js process
    when ``arn``'s only tokens are pseudo parameters (what ARNs the library formats hold): a
    stack resolves such a string to the ``Fn::Join`` of its literals and the parameters'
    ``Ref``s, which cdk-nag prints joined. None for any other token (asked of the stack)."""
    parts = token_parts(arn)
    if len(parts) == 1:
        return _flatten(arn)
    pseudo = _pseudo_parameters()
    flattened = []
    for index, part in enumerate(parts):
        if index % 2 == 0:
            flattened.append(_flatten(part))
        elif part in pseudo:
            flattened.append(pseudo[part])
        else:
            return None
    return "".join(flattened)


def resource_wildcard(scope: IConstruct, arn: str, reason: str) -> NagAcknowledgment:
    """cdk-nag's ``AwsSolutions-IAM5`` finding on the wildcard ``arn`` as it prints it for
    ``scope``'s stack (partition and region literal or not), accepted for ``reason``."""
    return NagAcknowledgment(
        "AwsSolutions-IAM5", finding=f"Resource::{_nag_resource(scope, arn)}", reason=reason
    )


#: Why the object wildcard of an S3 weights prefix is granted.
WEIGHTS_PREFIX_OBJECTS = (
    "SageMaker reads every object under the model's weights prefix; the grant covers that "
    "prefix only"
)
#: Why the log groups of an endpoint with a generated name are granted by prefix.
GENERATED_ENDPOINT_LOG_GROUPS = (
    "SageMaker names an endpoint's log group after the endpoint, whose name CloudFormation "
    "generates when it creates the endpoint, after the execution role's policy (which the model "
    "waits for); the grant stays inside /aws/sagemaker/Endpoints/. endpoint_name= scopes it to "
    "the one group."
)
#: Why the log groups of an endpoint named after its fleet are granted by prefix.
FLEET_ENDPOINT_LOG_GROUPS = (
    "The endpoint is named after its path and fleet, and a new fleet replaces it: the old "
    "endpoint's containers serve and log until CloudFormation deletes it in the cleanup, so the "
    "grant covers every name the endpoint's path derives, not the current one alone; it stays "
    "inside /aws/sagemaker/Endpoints/<the path-derived prefix>."
)
#: Why the streams of a log group are granted by wildcard.
RUN_TIME_LOG_STREAMS = (
    "SageMaker creates the log streams at run time, one per variant and instance "
    "(<variant>/<instance id>); the grant stays inside the host's own log groups."
)


def _flatten(node: Any) -> str:
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict) and len(node) == 1:
        ((fn, arg),) = node.items()
        if fn == "Fn::Join":
            delimiter, items = arg
            return str(delimiter).join(_flatten(i) for i in items)
        if fn in ("Fn::Sub", "Fn::ImportValue"):
            return _flatten(arg)
        if fn == "Fn::GetAtt":
            return f"<{_flatten(arg[0])}.{_flatten(arg[1])}>"
        if fn == "Ref":
            return f"<{_flatten(arg)}>"
    return json.dumps(node, separators=(",", ":"))


# -- checkov ---------------------------------------------------------------------------------

NVME_VOLUME_KEY = CheckovSkip(
    "CKV_AWS_98",
    "Instance type has local NVMe storage, which is hardware-encrypted; SageMaker does not "
    "accept KmsKeyId for instance storage (it only encrypts EBS ML volumes).",
)
HUB_DOWNLOAD = CheckovSkip(
    "CKV_AWS_370",
    "The container downloads its Hub weights at start-up, which network isolation blocks; "
    "ModelSource.s3(...) sources get network isolation by default.",
)
# -- cdk-nag -----------------------------------------------------------------------------------

# Each is recorded on a policy of the library's own that holds only the statements it names
# (``wildcard_policy.py``), never on a role or a caller's grantee.

PUT_METRIC_DATA = NagAcknowledgment(
    "AwsSolutions-IAM5",
    finding="Resource::*",
    reason="cloudwatch:PutMetricData has no resource-level permissions; it is limited to the "
    "host's own namespaces (/aws/sagemaker/Endpoints, and /aws/sagemaker/InferenceComponents "
    "for inference components) by a cloudwatch:namespace condition. The policy holds only "
    "what the host's containers write.",
)
NETWORK_INTERFACES = NagAcknowledgment(
    "AwsSolutions-IAM5",
    finding="Resource::*",
    reason="The ec2 network-interface actions SageMaker needs to attach a container to a VPC "
    "(create, describe and delete its interfaces) take no resource of their own; AWS's VPC "
    "guide for hosting grants them on *. The policy holds those actions only.",
)
ECR_AUTHORIZATION_TOKEN = NagAcknowledgment(
    "AwsSolutions-IAM5",
    finding="Resource::*",
    reason="ecr:GetAuthorizationToken does not support resource-level permissions; image "
    "pulls themselves are scoped to the image's repository ARN",
)
BEARER_TOKEN_CALLS = NagAcknowledgment(
    "AwsSolutions-IAM5",
    finding="Resource::*",
    reason="sagemaker:CallWithBearerToken (SageMaker's OpenAI route) requires Resource * and "
    "does not support resource-level restrictions (the guide 'Invoke endpoints with "
    "OpenAI-compatible APIs', section IAM permissions); what a token reaches is scoped by "
    "sagemaker:InvokeEndpoint on the endpoint's (and component's) ARN. The policy holds that "
    "one statement only.",
)
