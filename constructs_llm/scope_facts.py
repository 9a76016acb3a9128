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

import weakref
from typing import Any

from aws_cdk import Stack
from constructs import IConstruct, Node

from constructs_llm.values import is_unresolved

_nodes: weakref.WeakKeyDictionary[IConstruct, Node] = weakref.WeakKeyDictionary()
_stacks: weakref.WeakKeyDictionary[IConstruct, Stack] = weakref.WeakKeyDictionary()
_paths: weakref.WeakKeyDictionary[IConstruct, str] = weakref.WeakKeyDictionary()
_regions: weakref.WeakKeyDictionary[Stack, tuple[str, bool]] = weakref.WeakKeyDictionary()
_scopes: weakref.WeakKeyDictionary[IConstruct, IConstruct] = weakref.WeakKeyDictionary()
_contexts: weakref.WeakKeyDictionary[IConstruct, dict[str, Any]] = weakref.WeakKeyDictionary()


def place(construct: IConstruct, scope: IConstruct) -> None:
    """Records that ``construct`` was created under ``scope``: its stack is ``scope`` when that
    is a stack, else ``scope``'s own (when known here already; else asked on first use)."""
    _scopes[construct] = scope
    stack = scope if isinstance(scope, Stack) else _stacks.get(scope)
    if stack is not None:
        _stacks[construct] = stack


def known_stack(construct: IConstruct) -> Stack | None:
    """``construct``'s stack when it is known here already (nothing is asked)."""
    return _stacks.get(construct)


def stack_of(construct: IConstruct) -> Stack:
    """``Stack.of(construct)``, asked once per construct."""
    stack = _stacks.get(construct)
    if stack is None:
        stack = _stacks[construct] = Stack.of(construct)
    return stack


def node_of(construct: IConstruct) -> Node:
    """``construct.node``, asked once per construct."""
    node = _nodes.get(construct)
    if node is None:
        node = _nodes[construct] = construct.node
    return node


def path_of(construct: IConstruct) -> str:
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
