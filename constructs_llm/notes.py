"""Synth notes: facts a reviewer should see (memory plan, Service Quotas), printed short.

A note is construct metadata of its own type, which the cloud assembly keeps
(``<stack>.metadata.json``), added with :func:`add_note`; the functions below only word the
library's recurring notes. At each synthesis the library prints each construct's notes as one
line, ``path: note; note``, on standard error (a report of ``constructs_llm.synth_hook``, after
the renders that add notes): the CDK CLI passes the app's output through, so the line shows in
any app's ``cdk synth`` (and ``cdk deploy``) without the app doing anything, and on standard
error it never mixes with the template ``cdk synth`` writes to standard output.

Why not CDK ``info`` annotations: the CDK CLI 2.1148 prints each of them as a block of three
or four lines (with the JavaScript source location of the call), and under the recommended
feature flag ``@aws-cdk/core:annotationsInValidationReport`` it does not print them at all
(only warnings and errors reach the validation report).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from constructs import IConstruct, Node

from constructs_llm.scope_facts import node_of, path_of
from constructs_llm.synth_hook import report_at_synth, reported

if TYPE_CHECKING:
    from constructs_llm.operations.deployment import Surge
    from constructs_llm.sizing.memory import MemoryPlan

_NOTE_METADATA_TYPE = "constructs-llm:note"
"""Metadata type of a note in the construct tree and the cloud assembly manifest."""


# What each construct's notes print, kept on this side as they are added (its path, then its
# notes in order), so that a synthesis prints them without reading each construct's metadata
# back through jsii (one round trip to the Node.js process per property of each entry).
# (Its node too, which each note's metadata goes on.)
_added: weakref.WeakKeyDictionary[IConstruct, tuple[Node, str, list[str]]] = (
    weakref.WeakKeyDictionary()
)


def add_note(scope: IConstruct, text: str) -> None:
    """Attach a note to ``scope`` (no stack trace is recorded); the synth prints it."""
    report_at_synth(scope, _NOTE_METADATA_TYPE, _print_note_lines)
    added = _added.get(scope)
    if added is None:
        added = _added[scope] = (node_of(scope), path_of(scope), [])
    added[0].add_metadata(_NOTE_METADATA_TYPE, text)
    added[2].append(text)


def notes_of(scope: IConstruct) -> list[str]:
    """The notes attached to ``scope`` itself, in the order they were added."""
    return [str(entry.data) for entry in scope.node.metadata if entry.type == _NOTE_METADATA_TYPE]


def _note_line(scope: IConstruct) -> str | None:
    """``path: note; note`` for ``scope``, or None when it has no notes."""
    added = _added.get(scope)
    path, notes = added[1:] if added is not None else (scope.node.path, notes_of(scope))
    return f"{path}: {'; '.join(notes)}" if notes else None


def note_lines(stage: IConstruct) -> list[str]:
    """One line per construct of ``stage`` that has notes, in construct-tree order."""
    return _lines(stage, reported(stage, _NOTE_METADATA_TYPE))


def _lines(stage: IConstruct, noted: Sequence[IConstruct]) -> list[str]:
    """The note lines of ``noted``, the constructs notes were added to, in construct-tree order.
    Only their notes are read, as added: reading every construct's metadata through jsii (each
    CloudFormation resource's holds the stack trace of its creation) took a tenth of a small
    app's synth."""
    ids = {id(construct) for construct in noted}
    found = (c for c in stage.node.find_all() if id(c) in ids)
    return [line for c in found if (line := _note_line(c)) is not None]


def _print_note_lines(stage: IConstruct, noted: Sequence[IConstruct]) -> None:
    """Prints the note lines of the stage's constructs that have notes."""
    for line in _lines(stage, noted):
        print(line, file=sys.stderr, flush=True)


def quota_note(instance_type: str, instances: int, surge: Surge | None = None) -> str:
    """Service Quotas are per account and region; only a deploy sees them, so say what to check:
    the most ``instances`` in service, plus what an update runs beside them (``surge``), as the
    quota counts every instance of the type in the region, old fleet and new alike."""
    extra = surge.instances if surge is not None else 0
    why = f": {instances} in service at most, and {extra} more {surge.how}" if surge else ""
    return (
        f"Service Quotas: '{instance_type} for endpoint usage' must allow at least "
        f"{instances + extra} instance(s) in the target region (new accounts often have 0)"
        f"{why}"
    )


def memory_plan_note(
    plan: MemoryPlan, *, per_copy: bool, pool: tuple[int, int] | None = None, own: bool = False
) -> str:
    """What the planner found for one model copy (an endpoint's instance, or one
    inference-component copy); with instance pools, on the pool ``(index, count)``, whose own
    SageMaker Model (``own``) says so."""
    label = "Memory plan per copy" if per_copy else "Memory plan"
    if pool is not None:
        label += f", pool {pool[0] + 1} of {pool[1]}"
        label += " (own Model: ModelNameOverride)" if own else ""
    return f"{label}: {plan.summary()}"
