"""Synth warnings: one helper, and the one table of their ids.

A warning says something may work but deserves a look, and what to verify. Each goes through
:func:`warn`, as a CDK warning annotation with an id users can acknowledge once they have
checked (``Annotations.of(construct).acknowledge_warning("constructs-llm:...", reason)``; in
the validation report it is ``Annotation::constructs-llm:...``, which the stack's
``Validations`` acknowledge). Bad input is not a warning: it raises
(``constructs_llm.problems``). Facts a reviewer should see (memory plans, quotas) are notes
(``constructs_llm.notes.add_note``).

Every id starts with ``constructs-llm:``:

| id | raised for |
| --- | --- |
| ``constructs-llm:adapter-engine-unverified`` | a LoRA adapter on a custom engine |
| ``constructs-llm:async-alarms`` | default alarms on an async endpoint |
| ``constructs-llm:autoscaled-fleet:<fleet>`` | an autoscaled fleet (per fleet) |
| ``constructs-llm:component-fleet:<fleet>`` | a fleet hosting components (per fleet) |
| ``constructs-llm:component-env-size`` | a component env above SageMaker's size |
| ``constructs-llm:engine-setting`` | an engine setting to check |
| ``constructs-llm:guarded-rollout-hardware`` | a rollout that cannot guard a new instance |
| ``constructs-llm:hf-token-in-model-env`` | a Hub token in the Model's env |
| ``constructs-llm:hub-id-typo`` | a model id that looks like a typo of a known one |
| ``constructs-llm:invoker-timeout-decode`` | an invoker timeout shorter than a full generation |
| ``constructs-llm:min-instances-zero-region`` | min_instances=0 (some regions refuse it) |
| ``constructs-llm:model-id-guess`` | a model's kind or quantization guessed from its id |
| ``constructs-llm:openai-route-stream`` | SageMaker's OpenAI route, unreadable streams |
| ``constructs-llm:openai-route-unknown`` | SageMaker's OpenAI route, unknown framing |
| ``constructs-llm:pools-autoscaling`` | autoscaling a variant with instance pools |
| ``constructs-llm:scale-to-zero`` | a component scaling its copies to zero |
| ``constructs-llm:scale-to-zero-metric`` | scale to zero on a metric zero copies lack |
| ``constructs-llm:sizing-estimate`` | a memory plan to verify |
| ``constructs-llm:unknown-instance-type`` | an instance family the catalog lacks |
| ``constructs-llm:unknown-model-size`` | a model of unknown size |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from constructs import IConstruct

__all__ = ["PREFIX", "WARNINGS", "warn"]

PREFIX = "constructs-llm:"

#: Every warning id, with what raises it (the table above).
WARNINGS: Mapping[str, str] = {
    f"{PREFIX}adapter-engine-unverified": "a LoRA adapter on a custom engine",
    f"{PREFIX}async-alarms": "default alarms on an async endpoint",
    f"{PREFIX}autoscaled-fleet": "an autoscaled fleet (per fleet)",
    f"{PREFIX}component-fleet": "a fleet hosting components (per fleet)",
    f"{PREFIX}component-env-size": "a component env above SageMaker's size",
    f"{PREFIX}engine-setting": "an engine setting to check",
    f"{PREFIX}guarded-rollout-hardware": "a rollout that cannot guard a new instance",
    f"{PREFIX}hf-token-in-model-env": "a Hub token in the Model's env",
    f"{PREFIX}hub-id-typo": "a model id that looks like a typo of a known one",
    f"{PREFIX}invoker-timeout-decode": "an invoker timeout shorter than a full generation",
    f"{PREFIX}min-instances-zero-region": "min_instances=0 (some regions refuse it)",
    f"{PREFIX}model-id-guess": "a model's kind or quantization guessed from its id",
    f"{PREFIX}openai-route-stream": "SageMaker's OpenAI route, unreadable streams",
    f"{PREFIX}openai-route-unknown": "SageMaker's OpenAI route, unknown framing",
    f"{PREFIX}pools-autoscaling": "autoscaling a variant with instance pools",
    f"{PREFIX}scale-to-zero": "a component scaling its copies to zero",
    f"{PREFIX}scale-to-zero-metric": "scale to zero on a metric zero copies lack",
    f"{PREFIX}sizing-estimate": "a memory plan to verify",
    f"{PREFIX}unknown-instance-type": "an instance family the catalog lacks",
    f"{PREFIX}unknown-model-size": "a model of unknown size",
}


def warn(scope: IConstruct, id: str, message: str) -> None:
    """Adds the warning ``message`` to ``scope`` under ``id`` (one of :data:`WARNINGS`, or one of
    them followed by ``:<detail>`` where the id names what was checked, such as a fleet), which
    users pass to ``Annotations.of(scope).acknowledge_warning`` once they have checked."""
    if ":".join(id.split(":")[:2]) not in WARNINGS:
        raise KeyError(f"warning id {id!r} is not in constructs_llm.reporting.WARNINGS")
    from aws_cdk import Annotations  # only where a warning is raised

    Annotations.of(scope).add_warning_v2(id, message)
