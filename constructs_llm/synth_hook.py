"""The one hook the library runs when an app synthesizes: each construct's render, in
construct-path order, then each host's references, in construct-path order, then the note
lines.

A hosting construct builds and checks its plan when it is created, and creates what belongs to
it alone (its Endpoint, scaling, alarms). What depends on other constructs is rendered here,
once every construct exists. First the renders: each ``LlmModel`` renders the SageMaker Models
of the placements its hosts recorded (in its own scope), and each host asks the owners of
other constructs for the grants its containers need (``model.grant_container_writes(...)``)
and renders what an endpoint hosting components learns from them. Then the references: each
host sets the properties that name its models' Models (an endpoint config's variants, a
component's specification), which every render has created by then. Each pass runs sorted by
the construct's path, so the template does not depend on the order the constructs were
created in, nor on which host of a model comes first.

Why an aspect: ``Lazy`` values with a Python producer fail at synth through jsii
(aws/aws-cdk#37952), and a node validation runs after ``prepare``, too late to create
resources (cross-stack references and dependencies are resolved in ``prepare``). Aspects run
first in every synthesis (``cdk synth``, ``app.synth()``, ``Template.from_stack``), so every
later step sees the rendered resources: other aspects, validations, and validation plugins
such as cdk-nag, which read the synthesized templates.

Where it is added: to a construct of its own with no children, the stage's first
child (the app, or a nested ``Stage``: what a synthesis of the stage applies aspects to). An
aspect visits every construct below the one it is added to, and each visit of a Python aspect
is a jsii callback, a round trip to the Node.js process (22 per endpoint, about a seventh of
an endpoint's synth when the hook was added to the stage itself). Aspects run depth first, in
the order of each construct's children (aws-cdk-lib's ``invokeAspects``), and a node lists its
children in the order of JavaScript's own keys (constructs' ``Node.children`` is
``Object.values`` of its children by id), where an id that is an array index (``"0"``) comes
before every other id, whenever it was added. So the hook's construct, id ``"0"``, is visited
right after the stage itself and before any stack: the other aspects (``Tags.of(stack)``, with
or without ``@aws-cdk/core:aspectStabilization``) visit every construct after the renders, as
when the hook sat on the stage. A stage that has a child ``"0"`` of its own keeps the hook on
the stage itself.

After the renders, at every synthesis, the hook runs each report registered for the stage,
with the constructs registered under its key (``constructs_llm.notes`` prints the note lines of
the constructs that have notes there, once the renders have added theirs).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import cast

import jsii
from aws_cdk import AspectPriority, Aspects, IAspect, Stage
from constructs import Construct, IConstruct

from constructs_llm.scope_facts import known_stack, node_of, path_of

Render = Callable[[], None]
Report = Callable[[IConstruct, Sequence[IConstruct]], None]


def render_at_synth(construct: IConstruct, render: Render, *, path: str | None = None) -> None:
    """Runs ``render`` once, when ``construct``'s stage first synthesizes, after every
    construct is built, in construct-path order with the stage's other renders (``path``:
    the construct's path, when the caller has it at hand)."""
    _hook(construct).renders.append((path or path_of(construct), render))


def reference_at_synth(
    construct: IConstruct, reference: Render, *, path: str | None = None
) -> None:
    """Runs ``reference`` once, when ``construct``'s stage first synthesizes, after every
    render of the stage (so every resource it names exists), in construct-path order with the
    stage's other references: a host sets there the properties that name resources other
    constructs render (its models' SageMaker Models)."""
    _hook(construct).references.append((path or path_of(construct), reference))


def report_at_synth(construct: IConstruct, key: str, report: Report) -> None:
    """Runs ``report`` at each synthesis of ``construct``'s stage, after the renders, with the
    stage and the constructs registered under ``key`` (each once, in the order they first
    registered); one report per ``key`` and stage (the first registered)."""
    hook = _hook(construct)
    hook.reports.setdefault(key, report)
    subjects = hook.subjects.setdefault(key, {})
    subjects.setdefault(id(construct), construct)


def reported(stage: IConstruct, key: str) -> list[IConstruct]:
    """The constructs registered under ``key`` for ``stage`` (none when nothing registered)."""
    hook = _found_hook(stage)
    return list(hook.subjects.get(key, {}).values()) if hook is not None else []


# Each jsii call is a round trip to the Node.js process, and a hosting construct registers
# several renders and reports: the stage of each stack (or, outside a stack known here, of each
# construct) the library registers (one ``Stage.of``), and the hook of each stage, are kept on
# this side, for as long as the Python objects live (jsii keeps the objects created in Python
# for the life of the process). A construct's stage is its stack's: a stage holds stacks.
_stages: weakref.WeakKeyDictionary[IConstruct, IConstruct] = weakref.WeakKeyDictionary()
_hooks: weakref.WeakKeyDictionary[IConstruct, _SynthHook] = weakref.WeakKeyDictionary()


def _stage_of(construct: IConstruct) -> IConstruct:
    key = known_stack(construct) or construct
    stage = _stages.get(key)
    if stage is None:
        stage = Stage.of(key) or node_of(key).root
        _stages[key] = stage
    return stage


#: The id of the hook's construct: an array index, so the stage lists it first (see above).
HOOK_ID = "0"


def _found_hook(stage: IConstruct) -> _SynthHook | None:
    hook = _hooks.get(stage)
    if hook is None:  # a stage object jsii made here, not the one first seen: ask its aspects
        holder = node_of(stage).try_find_child(HOOK_ID)
        for where in (holder, stage) if holder is not None else (stage,):
            hook = next((a for a in Aspects.of(where).all if isinstance(a, _SynthHook)), None)
            if hook is not None:
                _hooks[stage] = hook
                break
    return hook


def _hook(construct: IConstruct) -> _SynthHook:
    stage = _stage_of(construct)
    hook = _found_hook(stage)
    if hook is None:
        taken = node_of(stage).try_find_child(HOOK_ID) is not None  # the user's own "0"
        # A stage is a construct (jsii types ``Stage.of``'s root as the interface).
        holder = stage if taken else Construct(cast(Construct, stage), HOOK_ID)
        hook = _SynthHook(stage, holder)
        Aspects.of(holder).add(hook, priority=AspectPriority.MUTATING)
        _hooks[stage] = hook
    return hook


@jsii.implements(IAspect)
class _SynthHook:
    """Visits its own construct (the stage's first child, or the stage), before any other
    child of the stage: renders, then references, once; reports at each synthesis."""

    def __init__(self, stage: IConstruct, holder: IConstruct) -> None:
        self._stage = stage
        self._holder = holder
        self.renders: list[tuple[str, Render]] = []
        self.references: list[tuple[str, Render]] = []
        self.reports: dict[str, Report] = {}
        #: Under each key, the constructs registered (by identity), in the order they came.
        self.subjects: dict[str, dict[int, IConstruct]] = {}

    def visit(self, node: IConstruct) -> None:
        if node is not self._holder:
            return
        renders, self.renders = self.renders, []
        references, self.references = self.references, []
        for pending in (renders, references):
            for _, render in sorted(pending, key=lambda each: each[0]):
                render()
        for key, report in self.reports.items():
            report(self._stage, list(self.subjects[key].values()))
