"""One physical endpoint name per account and region in an app.

SageMaker endpoint names are unique per account and region ("The name must be unique within an
AWS Region in your AWS account", CreateEndpoint's ``EndpointName``), so two stacks of one app
that give the same ``endpoint_name`` and deploy to the same account and region cannot both
deploy: the second fails with "Cannot create already existing endpoint", after its models and
configs were created. Two environment-agnostic stacks count as the same place: nothing keeps
them apart. Names the library derives from construct paths are unique by construction, so only
literal names are compared.

A check that spans endpoints: each endpoint claims its name when it is created, and the claims
are compared at synth, once every endpoint exists, in construct-path order: of two endpoints
that share a name, the one whose path sorts later fails, naming the other, whatever order they
were created in.
"""

from __future__ import annotations

import weakref

from aws_cdk import Stack, Stage, Token
from constructs import Construct, IConstruct

from constructs_llm.problems import Problem, fail
from constructs_llm.synth_hook import render_at_synth

#: Per stage, the paths of the endpoints that claimed each (name, account, region).
_CLAIMS: weakref.WeakKeyDictionary[IConstruct, dict[tuple[str, str, str], list[str]]] = (
    weakref.WeakKeyDictionary()
)


def claim_endpoint_name(host: Construct, endpoint_name: str | None, subject: str) -> None:
    """Records that ``host`` names its endpoint ``endpoint_name`` (a literal; a token or None
    claims nothing); at synth, ``host`` fails as ``subject`` when an endpoint whose path sorts
    before its own claimed the same name for the same account and region."""
    if endpoint_name is None or Token.is_unresolved(endpoint_name):
        return
    stack = Stack.of(host)
    place = (endpoint_name, _part(stack.account), _part(stack.region))
    stage = Stage.of(host) or host.node.root
    claims = _CLAIMS.setdefault(stage, {}).setdefault(place, [])
    path = host.node.path
    claims.append(path)

    def check() -> None:
        first = min(claims)
        if first != path:
            fail(subject, _name_clash(place, first))

    render_at_synth(host, check, path=path)


def _name_clash(place: tuple[str, str, str], other: str) -> Problem:
    endpoint_name, account, region = place
    where = (
        "an environment-agnostic account and region"
        if (account, region) == ("*", "*")
        else f"account {account}, region {region}"
    )
    return Problem.of(
        "endpoint_name",
        endpoint_name,
        f"endpoint_name {endpoint_name!r} is also the name of '{other}', and both deploy to "
        f"{where}, where SageMaker endpoint names are unique: the second deploy would fail "
        "with 'Cannot create already existing endpoint';",
        "give each endpoint its own name, or leave endpoint_name unset for a generated one",
    )


def _part(value: str) -> str:
    return "*" if Token.is_unresolved(value) else value
