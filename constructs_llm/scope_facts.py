"""What the library reads of a construct's place in the tree, asked of aws-cdk-lib once: its
stack, its path, and its stack's region (and whether that region is concrete).

Each jsii call is a round trip to the Node.js process, and every host, model, alarm set, rule
and grant of a stack asks the same questions of the same constructs. The answers never change
once a construct exists (a construct's scope and id are fixed), so they are kept on this side
for as long as the Python objects live (jsii keeps the objects created in Python for the life
of the process). A construct created in Python under a ``Stack`` (its ``scope``) is in that
stack: :func:`place` records that without asking aws-cdk-lib (``Stack.of`` walks the scopes
up to the first stack, as a nested stack is a stack too).
"""

from __future__ import annotations

import re
import weakref
from typing import Any, Protocol

from aws_cdk import Stack
from constructs import IConstruct, Node

from constructs_llm.values import is_unresolved


class HasNode(Protocol):
    """A construct, or anything the library records by its construct node (a host's components,
    a dashboard's targets)."""

    @property
    def node(self) -> Node: ...


_nodes: weakref.WeakKeyDictionary[HasNode, Node] = weakref.WeakKeyDictionary()
_stacks: weakref.WeakKeyDictionary[IConstruct, Stack] = weakref.WeakKeyDictionary()
_paths: weakref.WeakKeyDictionary[HasNode, str] = weakref.WeakKeyDictionary()
_regions: weakref.WeakKeyDictionary[Stack, tuple[str, bool]] = weakref.WeakKeyDictionary()
_arn_parts: weakref.WeakKeyDictionary[Stack, tuple[str, str, str]] = weakref.WeakKeyDictionary()
_scopes: weakref.WeakKeyDictionary[IConstruct, IConstruct] = weakref.WeakKeyDictionary()
_contexts: weakref.WeakKeyDictionary[IConstruct, dict[str, Any]] = weakref.WeakKeyDictionary()


def place(construct: IConstruct, scope: IConstruct, id: str | None = None) -> None:
    """Records that ``construct`` was created under ``scope``: its stack is ``scope`` when that
    is a stack, else ``scope``'s own (when known here already; else asked on first use); with
    its ``id``, its path too, derived from ``scope``'s as constructs derives it (``Node``: the
    scope's path, ``/``, the id with each ``/`` and newline written ``--``; the id alone under
    the root, whose path is empty)."""
    _scopes[construct] = scope
    stack = scope if isinstance(scope, Stack) else _stacks.get(scope)
    if stack is not None:
        _stacks[construct] = stack
    if id is not None:
        own = _PATH_SEPARATORS.sub("--", id)
        above = path_of(scope)
        _paths[construct] = f"{above}/{own}" if above else own


#: What constructs writes ``--`` for in an id (``Node.PATH_SEP`` and ``ADDR_SEP``).
_PATH_SEPARATORS = re.compile("[/\n]")


def known_stack(construct: IConstruct) -> Stack | None:
    """``construct``'s stack when it is known here already (nothing is asked)."""
    return _stacks.get(construct)


def stack_of(construct: IConstruct) -> Stack:
    """``Stack.of(construct)``, asked once per construct."""
    stack = _stacks.get(construct)
    if stack is None:
        stack = _stacks[construct] = Stack.of(construct)
    return stack


def node_of(construct: HasNode) -> Node:
    """``construct.node``, asked once per construct."""
    node = _nodes.get(construct)
    if node is None:
        node = _nodes[construct] = construct.node
    return node


def path_of(construct: HasNode) -> str:
    """``construct.node.path``, asked once per construct."""
    path = _paths.get(construct)
    if path is None:
        path = _paths[construct] = node_of(construct).path
    return path


def context_of(construct: IConstruct, key: str) -> Any:
    """``construct.node.try_get_context(key)``, asked once per scope the library creates
    constructs in: a construct placed by :func:`place` has no context of its own (nothing sets
    any on it), so it reads its scope's, and a scope's context is fixed once it has a child
    (``Node.setContext`` refuses it then)."""
    owner = _scopes.get(construct, construct)
    found = _contexts.setdefault(owner, {})
    if key not in found:
        found[key] = node_of(owner).try_get_context(key)
    return found[key]


def region_of(construct: IConstruct) -> tuple[str, bool]:
    """The region of ``construct``'s stack (a token in an environment-agnostic stack), and
    whether it is concrete; asked once per stack."""
    stack = stack_of(construct)
    found = _regions.get(stack)
    if found is None:
        region = stack.region
        found = _regions[stack] = (region, not is_unresolved(region))
    return found


def arn_in_stack(construct: IConstruct, service: str, resource: str, name: str) -> str:
    """``stack.format_arn(service=, resource=, resource_name=name,
    arn_format=ArnFormat.COLON_RESOURCE_NAME)`` for ``construct``'s stack: the stack's partition,
    region and account (literals, or the pseudo parameters of an environment-agnostic stack) are
    asked once per stack, and joined here as aws-cdk-lib's ``Arn.format`` joins them
    (``arn:<partition>:<service>:<region>:<account>:<resource>:<name>``)."""
    stack = stack_of(construct)
    parts = _arn_parts.get(stack)
    if parts is None:
        parts = _arn_parts[stack] = (stack.partition, region_of(stack)[0], stack.account)
    partition, region, account = parts
    return f"arn:{partition}:{service}:{region}:{account}:{resource}:{name}"
