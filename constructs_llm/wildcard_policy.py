"""The wildcard statements the library needs, each kind in an ``iam.Policy`` of the library's
own, with its cdk-nag acknowledgment on that policy alone (:func:`grant_in_own_policy`).

cdk-nag's ``AwsSolutions-IAM5`` flags a statement whose resource has a wildcard; an
acknowledgment covers the construct it is recorded on and its children. Recorded on a role,
it covers the role's default policy, and so every statement anyone adds there later:
``model.role.add_to_policy(PolicyStatement(actions=["secretsmanager:GetSecretValue"],
resources=["*"]))`` would pass unflagged. So the library never acknowledges a finding on a
role or on a caller's grantee: what must stay a wildcard (``ecr:GetAuthorizationToken``,
``cloudwatch:PutMetricData``, the network-interface actions, ``sagemaker:CallWithBearerToken``,
log streams, object prefixes) goes in a policy that holds only the library's statements of one
kind, attached to the identity, and the finding is acknowledged on that policy.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import cast

from aws_cdk import Names, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct, IConstruct

from constructs_llm.compliance import NagAcknowledgment, waive
from constructs_llm.scope_facts import path_of, stack_of


def grant_in_own_policy(
    home: Construct,
    id: str,
    grantee: iam.IGrantable,
    statements: Sequence[iam.PolicyStatement],
    *acknowledgments: NagAcknowledgment,
    per_identity: bool = False,
) -> iam.Policy | None:
    """Adds ``statements`` to the policy ``id`` under ``home`` (created on first use), attaches
    it to ``grantee``'s identity, and acknowledges ``acknowledgments`` on that policy only.

    ``home`` is a construct of the library's own (the execution role it created, the model, the
    host). A grantee in another stack gets the policy in its own stack instead, with an id
    taken from ``home``'s path, so no reference crosses stacks the other way. A principal that
    is not a role, user or group of this app (a service or account principal) has no policy to
    attach: the statements go where ``add_to_principal_policy`` puts them, and nothing is
    acknowledged. Returns the policy, or None in that case.

    One policy is attached to every identity given the same ``id`` under ``home``, which suits
    statements that are the same for all (the ECR token, the bearer token). With
    ``per_identity`` each identity gets a policy of its own (``id`` followed by the
    identity's unique id), for statements that differ between the identities granted
    under one ``home`` (the weights prefixes one role reads and another does not).
    """
    # A role of this app is its own principal (``Role.grantPrincipal`` is the role): not asked.
    principal = grantee if isinstance(grantee, iam.Role) else grantee.grant_principal
    # jsii hands an imported role back as a plain IPrincipal: the grantee itself is the role.
    identity = next((x for x in (principal, grantee) if hasattr(x, "attach_inline_policy")), None)
    if identity is None or not (isinstance(identity, Construct) or hasattr(identity, "node")):
        for statement in statements:
            principal.add_to_principal_policy(statement)
        return None
    member = cast(IConstruct, identity)  # a role, user or group: a construct
    own_stack, own_path = _where(member)
    if per_identity:
        id = f"{id}{_unique_id(member)}"
    scope, policy_id = home, id
    if own_path != _where(home)[1]:
        scope, policy_id = own_stack, f"{id}{_unique_id(home)}"
    # Every policy of ``scope`` made here is kept here: jsii hands back the same Python object
    # for the same construct for the life of the process, so nothing is asked.
    made = _policies.setdefault(scope, {})
    policy = made.get(policy_id)
    if policy is None:
        policy = made[policy_id] = iam.Policy(scope, policy_id)
    policy.add_statements(*statements)
    done = _acknowledged.setdefault(policy, [])
    waive(policy, *(a for a in acknowledgments if a.id not in done))
    done += [a.id for a in acknowledgments]
    # Attached again when already attached (kept once, by policy name): each call is recorded
    # in the template's CDK metadata (aws-cdk-lib's method analytics), which stays as is. (A
    # policy created with its statements and role as props makes two calls fewer, and changes
    # that metadata: aws-cdk-lib records the props each L2 construct was given.)
    identity.attach_inline_policy(policy)
    return policy


# Each jsii call is a round trip to the Node.js process, and a stack of many models grants into
# the same policies again and again (a shared role's token, an endpoint role's weights reads):
# what never changes is kept on this side: each construct's stack and its path, unique ids,
# the policies made under each scope, and per policy the acknowledgments recorded on it.
_unique_ids: weakref.WeakKeyDictionary[IConstruct, str] = weakref.WeakKeyDictionary()
_policies: weakref.WeakKeyDictionary[IConstruct, dict[str, iam.Policy]] = (
    weakref.WeakKeyDictionary()
)
_acknowledged: weakref.WeakKeyDictionary[iam.Policy, list[str]] = weakref.WeakKeyDictionary()


def _where(construct: IConstruct) -> tuple[Stack, str]:
    """``construct``'s stack and that stack's path."""
    stack = stack_of(construct)
    return stack, path_of(stack)


def _unique_id(construct: IConstruct) -> str:
    found = _unique_ids.get(construct)
    if found is None:
        found = _unique_ids[construct] = Names.unique_id(construct)
    return found


def own_policies(scope: IConstruct) -> list[iam.Policy]:
    """The policies :func:`grant_in_own_policy` created directly under ``scope``, for the
    resources that must wait for them."""
    return list(_policies.get(scope, {}).values())
