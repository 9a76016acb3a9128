"""Synth notes: facts a reviewer should see (memory plan, Service Quotas), printed short.

CDK ``info`` annotations are printed by the CDK CLI as one block each, with the JavaScript
source location of the call; a synth of the examples printed 18 of them. A note is instead
construct metadata of its own type, which the cloud assembly keeps (``manifest.json``) and
the CLI does not print; ``note_lines`` gathers the notes into one line per construct, which
``app.py`` prints after the synth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs import Construct, IConstruct

if TYPE_CHECKING:
    from constructs_llm.sizing.memory import MemoryPlan

__all__ = [
    "NOTE_METADATA_TYPE",
    "add_memory_plan_note",
    "add_note",
    "add_quota_note",
    "note_lines",
    "notes_of",
]

NOTE_METADATA_TYPE = "constructs-llm:note"
"""Metadata type of a note in the construct tree and the cloud assembly manifest."""


def add_note(scope: IConstruct, text: str) -> None:
    """Attach a note to ``scope`` (no stack trace is recorded)."""
    scope.node.add_metadata(NOTE_METADATA_TYPE, text)


def notes_of(scope: IConstruct) -> list[str]:
    """The notes attached to ``scope`` itself, in the order they were added."""
    return [str(entry.data) for entry in scope.node.metadata if entry.type == NOTE_METADATA_TYPE]


def note_lines(root: IConstruct) -> list[str]:
    """One line per construct under ``root`` that has notes: ``path: note; note``."""
    lines = []
    for construct in root.node.find_all():
        notes = notes_of(construct)
        if notes:
            lines.append(f"{construct.node.path}: {'; '.join(notes)}")
    return lines


def add_quota_note(scope: Construct, instance_type: str, instances: int) -> None:
    """Service Quotas are per account and region; only a deploy sees them, so say what to check."""
    add_note(
        scope,
        f"Service Quotas: '{instance_type} for endpoint usage' must allow at least {instances} "
        "instance(s) in the target region (new accounts often have 0)",
    )


def add_memory_plan_note(scope: Construct, plan: MemoryPlan | None, *, per_copy: bool) -> None:
    """What the planner found for the model copy ``scope`` serves (an endpoint's instance, or
    one inference-component copy)."""
    if plan is None:
        return
    label = "Memory plan per copy" if per_copy else "Memory plan"
    add_note(scope, f"{label}: {plan.summary()}")
