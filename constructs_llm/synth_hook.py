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
later step sees the rendered resources: other aspects (this one has the mutating priority and
visits the stage itself, before any resource), validations, and validation plugins such as
cdk-nag, which read the synthesized templates. It is added to the construct's stage (the app,
or a nested ``Stage``), which is what a synthesis of the stage applies.

After the renders, at every synthesis, the hook runs each report registered for the stage,
with the constructs registered under its key (``constructs_llm.notes`` prints the note lines of
the constructs that have notes there, once the renders have added theirs).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import jsii
from aws_cdk import AspectPriority, Aspects, IAspect, Stage
from constructs import IConstruct

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


def _found_hook(stage: IConstruct) -> _SynthHook | None:
    hook = _hooks.get(stage)
    if hook is None:  # a stage object jsii made here, not the one first seen: ask its aspects
        hook = next((a for a in Aspects.of(stage).all if isinstance(a, _SynthHook)), None)
        if hook is not None:
            _hooks[stage] = hook
    return hook


def _hook(construct: IConstruct) -> _SynthHook:
    stage = _stage_of(construct)
    hook = _found_hook(stage)
    if hook is None:
        hook = _SynthHook(stage)
        Aspects.of(stage).add(hook, priority=AspectPriority.MUTATING)
        _hooks[stage] = hook
    return hook


@jsii.implements(IAspect)
class _SynthHook:
    """Visits the stage itself, before any of its children: renders, then references, once;
    reports at each synthesis."""

    def __init__(self, stage: IConstruct) -> None:
        self._stage = stage
        self.renders: list[tuple[str, Render]] = []
        self.references: list[tuple[str, Render]] = []
        self.reports: dict[str, Report] = {}
        #: Under each key, the constructs registered (by identity), in the order they came.
        self.subjects: dict[str, dict[int, IConstruct]] = {}

    def visit(self, node: IConstruct) -> None:
        if node is not self._stage:
            return
        renders, self.renders = self.renders, []
        references, self.references = self.references, []
        for pending in (renders, references):
            for _, render in sorted(pending, key=lambda each: each[0]):
                render()
        for key, report in self.reports.items():
            report(self._stage, list(self.subjects[key].values()))
