"""What the contract walks share: the record of one walk (what it walked, what AWS would
refuse), the parsing of the values a walk starts from (an ECR image URI, an S3 URI), and the
mutants the walks are tested against (a template with one permission dropped or narrowed).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.iam_policy import Policy, Principal, Request, resource_policy
from tests.support.symbolic import PARTITION, REGION, Text, render, split, text

__all__ = [
    "Walk",
    "drop_action",
    "ecr_repository_arn",
    "guards_of",
    "narrow_action",
    "of_type",
    "s3_location",
]


@dataclass
class Walk:
    """One walk over one template: the instances it walked and the problems it found."""

    template: str
    walked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def need(
        self,
        who: str,
        policy: Policy,
        request: Request,
        what: str,
        *,
        guards: Sequence[tuple[Policy, Principal]] = (),
    ) -> None:
        """Records a problem unless ``policy`` allows ``request`` and no resource-based policy
        of ``guards`` (a bucket's or topic's policy, with the caller as its principal) denies
        it. Every request is made over TLS (``aws:SecureTransport`` true), as the AWS SDKs
        make them."""
        request = Request(
            request.action,
            request.resource,
            {"aws:SecureTransport": text("true"), **request.context},
            request.principal,
        )
        decision = policy.evaluate(request)
        if not decision.allowed:
            self.problems.append(
                f"{self.template}: {who} may not {request.action} on "
                f"{render(request.resource)} ({what}): {decision.why()}"
            )
        for guard, principal in guards:
            guarded = guard.evaluate(
                Request(request.action, request.resource, request.context, principal)
            )
            if guarded.denied_by or any(s.effect == "Deny" for s, _ in guarded.unevaluated):
                self.problems.append(
                    f"{self.template}: {who} may not {request.action} on "
                    f"{render(request.resource)} ({what}): {guarded.why()}"
                )


def guards_of(
    resolve: Any, logical_id: str, principal: Principal
) -> list[tuple[Policy, Principal]]:
    """The resource-based policies the template attaches to its bucket or topic
    ``logical_id`` (``AWS::S3::BucketPolicy``, ``AWS::SNS::TopicPolicy``), each with the
    principal to evaluate it for."""
    found = []
    for policy_id, resource in resolve.resources.items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::S3::BucketPolicy":
            targets = [props["Bucket"]]
        elif resource["Type"] == "AWS::SNS::TopicPolicy":
            targets = props["Topics"]
        else:
            continue
        if {"Ref": logical_id} in targets:
            found.append((resource_policy(policy_id, props["PolicyDocument"], resolve), principal))
    return found


def of_type(template: Mapping[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def ecr_repository_arn(image: Text) -> Text | None:
    """The repository ARN of an ECR image URI
    (``<account>.dkr.ecr.<region>.<domain>/<repository>[:tag|@digest]``), None for an image
    outside ECR. A repository's ARN is ``arn:<partition>:ecr:<region>:<account>:repository/
    <name>`` (Amazon ECR User Guide, "Private repository policies")."""
    host, _, path = _partition(image, "/")
    labels = split(host, ".")
    if len(labels) < 5 or labels[1:3] != [("dkr",), ("ecr",)]:
        return None
    repository = split(split(path, "@", 1)[0], ":", 1)[0]
    return text("arn:", PARTITION, ":ecr:", labels[3], ":", labels[0], ":repository/", repository)


def s3_location(uri: Text) -> tuple[Text, Text]:
    """``s3://bucket/key`` as (bucket, key)."""
    rest = split(uri, "s3://", 1)
    if len(rest) != 2 or rest[0]:
        raise ValueError(f"not an S3 URI: {render(uri)}")
    bucket, _, key = _partition(rest[1], "/")
    return bucket, key


def _partition(value: Text, separator: str) -> tuple[Text, str, Text]:
    pieces = split(value, separator, 1)
    if len(pieces) == 1:
        return pieces[0], "", ()
    return pieces[0], separator, pieces[1]


def region_service(service: str) -> Text:
    """A regional service principal's host, as ``kms:ViaService`` names it."""
    return text(f"{service}.", REGION, ".amazonaws.com")


# -- mutants --------------------------------------------------------------------------------


def _mutate(
    template: Mapping[str, Any],
    action: str,
    change: Callable[[dict[str, Any]], list[dict[str, Any]]],
    policies: set[str] | None,
) -> dict[str, Any]:
    mutant = copy.deepcopy(dict(template))
    found = False
    for logical_id, resource in mutant["Resources"].items():
        if resource["Type"] not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            continue
        if policies is not None and logical_id not in policies:
            continue
        document = resource["Properties"]["PolicyDocument"]
        statements = []
        for statement in document["Statement"]:
            actions = statement.get("Action", [])
            actions = actions if isinstance(actions, list) else [actions]
            if action in actions:
                found = True
                statements += change(statement)
            else:
                statements.append(statement)
        document["Statement"] = statements
    assert found, f"no policy statement grants {action}: the mutant would change nothing"
    return mutant


def drop_action(
    template: Mapping[str, Any], action: str, *, policies: set[str] | None = None
) -> dict[str, Any]:
    """``template`` with ``action`` removed from every statement granting it (a statement
    left with no action removed), in ``policies`` (logical ids) or every policy."""

    def change(statement: dict[str, Any]) -> list[dict[str, Any]]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else []
        rest = [a for a in actions if a != action]
        return [{**statement, "Action": rest}] if rest else []

    return _mutate(template, action, change, policies)


def narrow_action(
    template: Mapping[str, Any],
    action: str,
    resource: Any,
    *,
    policies: set[str] | None = None,
) -> dict[str, Any]:
    """``template`` with every statement granting ``action`` granting it on ``resource``
    only (the statement's other actions keep their resources)."""

    def change(statement: dict[str, Any]) -> list[dict[str, Any]]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [action]
        rest = [a for a in actions if a != action]
        narrowed = {**statement, "Action": action, "Resource": resource}
        return [narrowed, {**statement, "Action": rest}] if rest else [narrowed]

    return _mutate(template, action, change, policies)
