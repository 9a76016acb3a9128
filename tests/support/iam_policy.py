"""A small IAM policy evaluator for the policies of a synthesized template, after the IAM
User Guide's "Policy evaluation logic" (an explicit Deny wins; else an Allow that matches the
action, the resource, the principal and every condition; else the implicit deny).

- Actions match case-insensitively, with ``*`` and ``?`` ("IAM JSON policy elements: Action").
- Resources match segment by segment of the ARN (the parts separated by colons), ``*`` and
  ``?`` inside a segment, and a ``*`` that ends a segment matching across the colons after it
  ("IAM JSON policy elements: Resource", "Using wildcards in resource ARNs",
  https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_resource.html).
  Values are :mod:`tests.support.symbolic` texts: a token (a generated name, the region) is
  matched by a wildcard or by the same token, never by a literal.
- Conditions are evaluated when the request gives their key (``StringEquals``, ``StringLike``,
  ``ArnEquals``, ``ArnLike``, ``Bool`` and their negations and ``IfExists`` forms); any other
  condition is reported on the decision as unevaluated, and an Allow that depends on one does
  not count as allowing.
- ``NotAction``, ``NotResource`` and ``NotPrincipal`` are honoured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.symbolic import (
    ACCOUNT,
    PARTITION,
    Part,
    Resolver,
    Text,
    Token,
    is_literal,
    literal,
    render,
    split,
    text,
)

__all__ = [
    "Condition",
    "Decision",
    "Policy",
    "Principal",
    "Request",
    "Statement",
    "account_root",
    "arn_matches",
    "identity_policy",
    "key_allows",
    "lambda_permissions",
    "resource_policy",
    "wildcard_matches",
]

#: A principal: ("AWS", an ARN), ("Service", a service principal) or ("*", "*").
Principal = tuple[str, Text]


@dataclass(frozen=True)
class Condition:
    operator: str
    key: str
    values: tuple[Text, ...]

    def __str__(self) -> str:
        values = ", ".join(render(v) for v in self.values)
        return f"{self.operator} {self.key} = [{values}]"


@dataclass(frozen=True)
class Statement:
    """One statement, its values resolved; ``source`` names the policy and its index."""

    source: str
    effect: str
    actions: tuple[str, ...]
    not_action: bool
    resources: tuple[Text, ...]
    not_resource: bool
    principals: tuple[Principal, ...] | None
    not_principal: bool
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class Request:
    """An API call: its action, the resource it is authorized against, its request context
    (condition key -> value) and, for a resource-based policy, the calling principal."""

    action: str
    resource: Text
    context: Mapping[str, Text] = field(default_factory=dict)
    principal: Principal | None = None


@dataclass(frozen=True)
class Decision:
    request: Request
    allowed_by: tuple[Statement, ...]
    denied_by: tuple[Statement, ...]
    #: statements that would apply but for conditions this evaluator could not decide
    unevaluated: tuple[tuple[Statement, tuple[Condition, ...]], ...]
    #: what the policy could not show (managed policies it cannot read)
    unknown: tuple[str, ...] = ()
    #: Allow statements that match but for conditions the request does not meet
    unmet: tuple[tuple[Statement, tuple[Condition, ...]], ...] = ()

    @property
    def allowed(self) -> bool:
        return bool(self.allowed_by) and not self.denied_by and not self._may_deny

    @property
    def _may_deny(self) -> bool:
        return any(s.effect == "Deny" for s, _ in self.unevaluated)

    def why(self) -> str:
        """Why the request is not allowed, for a walk's message."""
        if self.denied_by:
            return "denied by " + ", ".join(s.source for s in self.denied_by)
        reasons = []
        for statement, conditions in self.unevaluated:
            names = "; ".join(str(c) for c in conditions)
            reasons.append(f"{statement.effect} in {statement.source} only if {names}")
        for statement, conditions in self.unmet:
            names = "; ".join(str(c) for c in conditions)
            reasons.append(f"Allow in {statement.source} needs {names}, which the request fails")
        if not self.allowed_by and not reasons:
            reasons.append("no statement allows it")
        reasons += [f"not evaluated: {u}" for u in self.unknown]
        return "; ".join(reasons)


# -- matching -------------------------------------------------------------------------------

_STAR = object()
_ONE = object()


def _atoms(value: Text, *, pattern: bool) -> list[object]:
    atoms: list[object] = []
    for part in value:
        if isinstance(part, Token):
            atoms.append(part)
            continue
        for char in part:
            if pattern and char == "*":
                atoms.append(_STAR)
            elif pattern and char == "?":
                atoms.append(_ONE)
            else:
                atoms.append(char)
    return atoms


def _glob(pattern: Sequence[object], value: Sequence[object]) -> bool:
    """Whether ``value`` matches ``pattern``: a star matches any atoms, ``?`` one character
    (never a token, whose length is unknown), anything else itself."""
    p, v, star, mark = 0, 0, -1, 0
    while v < len(value):
        if p < len(pattern) and pattern[p] is _STAR:
            star, mark = p, v
            p += 1
        elif p < len(pattern) and (
            pattern[p] == value[v] or (pattern[p] is _ONE and isinstance(value[v], str))
        ):
            p += 1
            v += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            v = mark
        else:
            return False
    while p < len(pattern) and pattern[p] is _STAR:
        p += 1
    return p == len(pattern)


def wildcard_matches(pattern: Text, value: Text, *, ignore_case: bool = False) -> bool:
    """``pattern`` (with ``*`` and ``?``) against ``value``, as one string."""
    if ignore_case:
        pattern = tuple(p.lower() if isinstance(p, str) else p for p in pattern)
        value = tuple(p.lower() if isinstance(p, str) else p for p in value)
    return _glob(_atoms(pattern, pattern=True), _atoms(value, pattern=False))


def arn_matches(pattern: Text, value: Text) -> bool:
    """``pattern`` against the ARN ``value``, segment by segment (see the module's docstring)."""
    patterns = split(pattern, ":", 5)
    values = split(value, ":", 5)
    if len(patterns) > len(values):
        return False
    if len(patterns) < len(values):
        last = patterns[-1]
        if not last or not (isinstance(last[-1], str) and last[-1].endswith("*")):
            return False
        rest = values[len(patterns) - 1 :]
        joined: list[Part | Text] = []
        for index, piece in enumerate(rest):
            joined += [":", piece] if index else [piece]
        values = [*values[: len(patterns) - 1], text(*joined)]
    return all(wildcard_matches(p, v) for p, v in zip(patterns, values, strict=True))


# -- conditions -----------------------------------------------------------------------------


def _condition_holds(condition: Condition, context: Mapping[str, Text]) -> bool | None:
    """True or False when decided from ``context``; None when this evaluator cannot decide."""
    operator = condition.operator
    if ":" in operator:  # ForAnyValue:/ForAllValues: over multivalued keys
        return None
    if_exists = operator.endswith("IfExists")
    operator = operator.removesuffix("IfExists")
    keys = {k.lower(): v for k, v in context.items()}
    if condition.key.lower() not in keys:
        return True if if_exists else None
    value = keys[condition.key.lower()]
    negated = "Not" in operator
    base = operator.replace("Not", "")
    if base in ("StringEquals", "ArnEquals"):
        hit = any(render(v) == render(value) for v in condition.values)
    elif base == "StringEqualsIgnoreCase":
        hit = any(render(v).lower() == render(value).lower() for v in condition.values)
    elif base == "StringLike":
        hit = any(wildcard_matches(v, value) for v in condition.values)
    elif base == "ArnLike":
        hit = any(arn_matches(v, value) for v in condition.values)
    elif base == "Bool" and not negated:
        hit = any(render(v).lower() == render(value).lower() for v in condition.values)
    else:
        return None
    return not hit if negated else hit


# -- policies -------------------------------------------------------------------------------


def _as_list(node: Any) -> list[Any]:
    return node if isinstance(node, list) else [node]


def _principals(node: Any, resolve: Resolver) -> tuple[Principal, ...]:
    if node == "*":
        return (("*", ("*",)),)
    principals: list[Principal] = []
    for kind, values in node.items():
        for value in _as_list(values):
            resolved = resolve(value)
            if kind == "AWS" and (resolved == (ACCOUNT,) or _is_account_id(resolved)):
                resolved = text("arn:", PARTITION, ":iam::", resolved, ":root")
            principals.append((kind, resolved))
    return tuple(principals)


def _is_account_id(value: Text) -> bool:
    return is_literal(value) and literal(value).isdigit() and len(literal(value)) == 12


def _statement(source: str, node: Mapping[str, Any], resolve: Resolver) -> Statement:
    action_key = "NotAction" if "NotAction" in node else "Action"
    resource_key = "NotResource" if "NotResource" in node else "Resource"
    principal_key = "NotPrincipal" if "NotPrincipal" in node else "Principal"
    conditions = tuple(
        Condition(operator, key, tuple(resolve(v) for v in _as_list(values)))
        for operator, block in node.get("Condition", {}).items()
        for key, values in block.items()
    )
    return Statement(
        source=source,
        effect=node["Effect"],
        actions=tuple(literal(resolve(a)) for a in _as_list(node[action_key])),
        not_action=action_key == "NotAction",
        resources=tuple(resolve(r) for r in _as_list(node.get(resource_key, "*"))),
        not_resource=resource_key == "NotResource",
        principals=(_principals(node[principal_key], resolve) if principal_key in node else None),
        not_principal=principal_key == "NotPrincipal",
        conditions=conditions,
    )


def _principal_matches(statement: Statement, principal: Principal | None) -> bool:
    if statement.principals is None:
        return True  # an identity policy: its principal is the role it is attached to
    if principal is None:
        return False
    hit = any(
        kind == "*"
        or (kind == principal[0] and (value == ("*",) or render(value) == render(principal[1])))
        for kind, value in statement.principals
    )
    return not hit if statement.not_principal else hit


@dataclass(frozen=True)
class Policy:
    """The statements that apply to one principal or resource, and what could not be read."""

    statements: tuple[Statement, ...]
    unknown: tuple[str, ...] = ()

    def evaluate(self, request: Request) -> Decision:
        allowed: list[Statement] = []
        denied: list[Statement] = []
        unevaluated: list[tuple[Statement, tuple[Condition, ...]]] = []
        unmet: list[tuple[Statement, tuple[Condition, ...]]] = []
        for statement in self.statements:
            action = any(
                wildcard_matches(text(a), text(request.action), ignore_case=True)
                for a in statement.actions
            )
            resource = any(arn_matches(r, request.resource) for r in statement.resources)
            if action == statement.not_action or resource == statement.not_resource:
                continue
            if not _principal_matches(statement, request.principal):
                continue
            outcomes = [(c, _condition_holds(c, request.context)) for c in statement.conditions]
            failed = tuple(c for c, held in outcomes if held is False)
            if failed:
                if statement.effect == "Allow":
                    unmet.append((statement, failed))
                continue
            open_conditions = tuple(c for c, held in outcomes if held is None)
            if open_conditions:
                unevaluated.append((statement, open_conditions))
            elif statement.effect == "Deny":
                denied.append(statement)
            else:
                allowed.append(statement)
        return Decision(
            request,
            tuple(allowed),
            tuple(denied),
            tuple(unevaluated),
            self.unknown,
            tuple(unmet),
        )

    def without(self, source: str) -> Policy:
        return Policy(tuple(s for s in self.statements if s.source != source), self.unknown)


def _document(source: str, document: Mapping[str, Any], resolve: Resolver) -> list[Statement]:
    return [
        _statement(f"{source}[{index}]", node, resolve)
        for index, node in enumerate(_as_list(document["Statement"]))
    ]


def identity_policy(resolve: Resolver, role: str) -> Policy:
    """Every statement attached to the template's role ``role`` (a logical id): its inline
    policies and every ``AWS::IAM::Policy`` or ``AWS::IAM::ManagedPolicy`` of the template
    naming it; managed policies given by ARN are reported as unknown."""
    resources = resolve.resources
    props = resources[role].get("Properties", {})
    statements: list[Statement] = []
    unknown = [f"managed policy {render(resolve(a))}" for a in props.get("ManagedPolicyArns", [])]
    for policy in props.get("Policies", []):
        statements += _document(f"{role}/{policy['PolicyName']}", policy["PolicyDocument"], resolve)
    for logical_id, resource in resources.items():
        if resource["Type"] not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            continue
        attached = resource["Properties"].get("Roles", [])
        if {"Ref": role} in attached:
            statements += _document(logical_id, resource["Properties"]["PolicyDocument"], resolve)
    return Policy(tuple(statements), tuple(unknown))


def resource_policy(source: str, document: Mapping[str, Any], resolve: Resolver) -> Policy:
    return Policy(tuple(_document(source, document, resolve)))


def account_root() -> Text:
    return text("arn:", PARTITION, ":iam::", ACCOUNT, ":root")


def key_allows(resolve: Resolver, key: str, role: str, request: Request) -> tuple[bool, str]:
    """Whether the template's role ``role`` may make ``request`` on the template's KMS key
    ``key``: the key policy allows the role itself, or allows the account (which lets the
    account's IAM policies decide) and the role's policies allow it; a Deny in either wins
    ("Default key policy", "Allows access to the AWS account and enables IAM policies",
    https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html)."""
    key_policy = resource_policy(key, resolve.resources[key]["Properties"]["KeyPolicy"], resolve)
    role_arn = resolve.attribute(role, "Arn")
    direct = key_policy.evaluate(_with(request, ("AWS", role_arn)))
    account = key_policy.evaluate(_with(request, ("AWS", account_root())))
    identity = identity_policy(resolve, role).evaluate(request)
    if direct.denied_by or identity.denied_by:
        return False, direct.why() if direct.denied_by else identity.why()
    if direct.allowed or (account.allowed and identity.allowed):
        return True, ""
    if not account.allowed:
        return (
            False,
            f"the key policy of {key} neither allows the role nor the account: {direct.why()}",
        )
    return False, identity.why()


def _with(request: Request, principal: Principal) -> Request:
    return Request(request.action, request.resource, request.context, principal)


def lambda_permissions(resolve: Resolver, function_arn: Text) -> Policy:
    """The function's resource-based policy, as CloudFormation writes it from the template's
    ``AWS::Lambda::Permission`` resources: each becomes a statement whose conditions are the
    ones Lambda adds (``AWS:SourceArn``, ``AWS:SourceAccount``, ``lambda:FunctionUrlAuthType``,
    and ``lambda:InvokedViaFunctionUrl``), per the AddPermission API."""
    statements = []
    for logical_id, resource in resolve.resources.items():
        if resource["Type"] != "AWS::Lambda::Permission":
            continue
        props = resource["Properties"]
        function = resolve(props["FunctionName"])
        if render(function) not in (render(function_arn), render(_function_name(function_arn))):
            continue
        conditions = []
        if "SourceArn" in props:
            conditions.append(Condition("ArnLike", "AWS:SourceArn", (resolve(props["SourceArn"]),)))
        if "SourceAccount" in props:
            conditions.append(
                Condition("StringEquals", "AWS:SourceAccount", (resolve(props["SourceAccount"]),))
            )
        if "FunctionUrlAuthType" in props:
            conditions.append(
                Condition(
                    "StringEquals",
                    "lambda:FunctionUrlAuthType",
                    (resolve(props["FunctionUrlAuthType"]),),
                )
            )
        if props.get("InvokedViaFunctionUrl") is True:
            conditions.append(Condition("Bool", "lambda:InvokedViaFunctionUrl", (text("true"),)))
        principal = resolve(props["Principal"])
        kind = "*" if principal == ("*",) else ("Service" if "." in render(principal) else "AWS")
        statements.append(
            Statement(
                source=logical_id,
                effect="Allow",
                actions=(literal(resolve(props["Action"])),),
                not_action=False,
                resources=(function_arn,),
                not_resource=False,
                principals=((kind, principal),),
                not_principal=False,
                conditions=tuple(conditions),
            )
        )
    return Policy(tuple(statements))


def _function_name(function_arn: Text) -> Text:
    return split(function_arn, ":", 6)[-1]


def statements_granting(policy: Policy, actions: Iterable[str]) -> list[str]:
    """The sources of ``policy``'s Allow statements that name one of ``actions``."""
    wanted = {a.lower() for a in actions}
    return [
        s.source
        for s in policy.statements
        if s.effect == "Allow" and wanted & {a.lower() for a in s.actions}
    ]
