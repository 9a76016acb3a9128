"""One physical endpoint name per account and region in an app.

SageMaker endpoint names are unique per account and region ("The name must be unique within an
AWS Region in your AWS account", CreateEndpoint's ``EndpointName``), so two stacks of one app
that give the same ``endpoint_name`` and deploy to the same account and region cannot both
deploy: the second fails with "Cannot create already existing endpoint", after its models and
configs were created. Two environment-agnostic stacks count as the same place: nothing keeps
them apart. Names the library derives from construct paths are unique by construction, so only
literal names are compared.
"""

from __future__ import annotations

import weakref

from aws_cdk import Stack, Stage, Token
from constructs import Construct, IConstruct

from constructs_llm.problems import Problem

_NAMED: weakref.WeakKeyDictionary[IConstruct, dict[tuple[str, str, str], str]] = (
    weakref.WeakKeyDictionary()
)


def name_clash_problem(host: Construct, endpoint_name: str | None) -> Problem | None:
    """A problem when another endpoint of the app already took ``endpoint_name`` for the same
    account and region; records the name otherwise."""
    if endpoint_name is None or Token.is_unresolved(endpoint_name):
        return None
    stack = Stack.of(host)
    place = (endpoint_name, _part(stack.account), _part(stack.region))
    stage = Stage.of(host) or host.node.root
    taken = _NAMED.setdefault(stage, {})
    other = taken.get(place)
    if other is not None and other != host.node.path:
        where = (
            "an environment-agnostic account and region"
            if place[1:] == ("*", "*")
            else f"account {place[1]}, region {place[2]}"
        )
        return Problem.of(
            "endpoint_name",
            endpoint_name,
            f"endpoint_name {endpoint_name!r} is also the name of '{other}', and both deploy to "
            f"{where}, where SageMaker endpoint names are unique: the second deploy would fail "
            "with 'Cannot create already existing endpoint';",
            "give each endpoint its own name, or leave endpoint_name unset for a generated one",
        )
    taken[place] = host.node.path
    return None


def _part(value: str) -> str:
    return "*" if Token.is_unresolved(value) else value
