"""CloudFormation's 500 resources per stack, told in the library's terms before aws-cdk-lib's
generic ``TooManyResourcesInStack`` error.

"Resources: 500 per stack" (CloudFormation user guide, "Understand CloudFormation quotas").
aws-cdk-lib stops the synth above it, listing counts by type; a platform team hosting dozens
of models needs to know what each endpoint brings and what to change. The first host of a
stack adds one validation to it (the hosts are kept beside the stack, not as constructs in
it); it runs after the renders (every Model exists by then) and before aws-cdk-lib writes the
template, and counts the stack's CloudFormation resources.
"""

from __future__ import annotations

import weakref
from collections import Counter

import jsii
from aws_cdk import CfnResource, Stack
from constructs import Construct, IConstruct, IValidation

from constructs_llm.scope_facts import stack_of

#: CloudFormation's quota of resources in one stack.
MAX_RESOURCES = 500
_Hosts = list[tuple[Construct, tuple[IConstruct, ...]]]
_WATCHED: weakref.WeakKeyDictionary[Stack, _Hosts] = weakref.WeakKeyDictionary()


def watch_stack_size(host: Construct, *owned: IConstruct) -> None:
    """Counts ``host`` (an endpoint) and ``owned`` (the constructs whose resources it brings,
    such as its models) toward its stack's size, checked when the app synthesizes."""
    stack = stack_of(host)
    hosts = _WATCHED.get(stack)
    if hosts is None:
        hosts = _WATCHED[stack] = []
        stack.node.add_validation(_StackSize(stack, hosts))
    hosts.append((host, owned))


@jsii.implements(IValidation)
class _StackSize:
    def __init__(self, stack: Stack, hosts: _Hosts) -> None:
        self._stack = stack
        self._hosts = hosts

    def validate(self) -> list[str]:
        resources = [c for c in self._stack.node.find_all() if isinstance(c, CfnResource)]
        if len(resources) <= MAX_RESOURCES:
            return []
        return [too_many_resources(self._stack.node.path, resources, self._hosts)]


def too_many_resources(
    stack: str,
    resources: list[CfnResource],
    hosts: _Hosts,
) -> str:
    """What the stack holds, what each endpoint brings, and the ways out."""
    paths = {id(r): r.node.path for r in resources}
    brought: Counter[str] = Counter()
    for host, owned in hosts:
        prefixes = tuple(f"{c.node.path}/" for c in (host, *owned))
        mine = [r for r in resources if paths[id(r)].startswith(prefixes)]
        brought.update(r.cfn_resource_type for r in mine)
    per_host = sum(brought.values()) / max(len(hosts), 1)
    alarms = brought["AWS::CloudWatch::Alarm"] / max(len(hosts), 1)
    fits = max(MAX_RESOURCES // max(round(per_host), 1), 1)
    return (
        f"stack '{stack}' holds {len(resources)} CloudFormation resources, above the "
        f"{MAX_RESOURCES} CloudFormation allows in one stack; its {len(hosts)} endpoints bring "
        f"{per_host:.1f} each on average ({alarms:.1f} of them default alarms), so about {fits} "
        "fit. Host the models as InferenceComponents on a shared InferenceComponentEndpoint "
        "(one endpoint, its alarms and scaling shared), turn the per-endpoint alarms off "
        "(alarms=False) and watch the group with one LlmDashboard, or split the endpoints "
        "across several stacks of one app (each stack has its own 500)"
    )
