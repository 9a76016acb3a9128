"""Synth warnings: one payload, one helper, and the one table of their ids.

A warning says something may work but deserves a look, and what to verify. Each is a
:class:`SynthWarning` (an id from :class:`WarningId`, the message, and optionally what was
checked, such as a fleet) added through :func:`warn`, as a CDK warning annotation with an id
users can acknowledge once they have checked
(``Annotations.of(construct).acknowledge_warning("constructs-llm:...", reason)``; in the
validation report it is ``Annotation::constructs-llm:...``, which the stack's ``Validations``
acknowledge). Bad input is not a warning: it raises (``constructs_llm.problems``). Facts a
reviewer should see (memory plans, quotas) are notes (``constructs_llm.notes.add_note``).

Every id starts with ``constructs-llm:``:

| id | raised for |
| --- | --- |
| ``constructs-llm:adapter-engine-unverified`` | a LoRA adapter on a custom engine |
| ``constructs-llm:async-alarms`` | default alarms on an async endpoint |
| ``constructs-llm:async-toggle`` | an async endpoint whose name does not follow its mode |
| ``constructs-llm:autoscaled-fleet:<fleet>`` | a fleet that changes in two deploys (per fleet) |
| ``constructs-llm:component-fleet:<fleet>`` | a fleet hosting components (per fleet) |
| ``constructs-llm:component-env-size`` | a component env above SageMaker's size |
| ``constructs-llm:engine-setting`` | an engine setting to check |
| ``constructs-llm:guarded-rollout-hardware`` | a rollout that cannot guard a new instance |
| ``constructs-llm:hf-token-in-model-env`` | a Hub token in the Model's env |
| ``constructs-llm:hub-id-typo`` | a model id that looks like a typo of a known one |
| ``constructs-llm:imported-log-key`` | an imported invoker log key, whose policy is not changed |
| ``constructs-llm:invoker-timeout-decode`` | an invoker timeout shorter than a full generation |
| ``constructs-llm:min-instances-zero-region`` | min_instances=0 (some regions refuse it) |
| ``constructs-llm:model-id-guess`` | a model's kind or quantization guessed from its id |
| ``constructs-llm:openai-route-unknown`` | SageMaker's OpenAI route, a container not known |
| ``constructs-llm:openai-route-unlisted`` | SageMaker's OpenAI route, an engine AWS does not list |
| ``constructs-llm:pools-autoscaling`` | autoscaling a variant with instance pools |
| ``constructs-llm:reserved-concurrency`` | an invoker reserving Lambda concurrency |
| ``constructs-llm:routing-schema`` | a routing strategy CloudFormation's schema does not list |
| ``constructs-llm:scale-to-zero`` | a component scaling its copies to zero |
| ``constructs-llm:scale-to-zero-metric`` | scale to zero on a metric zero copies lack |
| ``constructs-llm:sizing-estimate`` | a memory plan to verify |
| ``constructs-llm:unknown-instance-type`` | an instance family the catalog lacks |
| ``constructs-llm:unknown-model-size`` | a model of unknown size |
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from constructs import IConstruct

PREFIX = "constructs-llm:"


class WarningId(str, Enum):
    """Every warning's id (the table above); a warning cannot carry any other."""

    ADAPTER_ENGINE_UNVERIFIED = "constructs-llm:adapter-engine-unverified"
    ASYNC_ALARMS = "constructs-llm:async-alarms"
    ASYNC_TOGGLE = "constructs-llm:async-toggle"
    AUTOSCALED_FLEET = "constructs-llm:autoscaled-fleet"
    COMPONENT_FLEET = "constructs-llm:component-fleet"
    COMPONENT_ENV_SIZE = "constructs-llm:component-env-size"
    ENGINE_SETTING = "constructs-llm:engine-setting"
    GUARDED_ROLLOUT_HARDWARE = "constructs-llm:guarded-rollout-hardware"
    HF_TOKEN_IN_MODEL_ENV = "constructs-llm:hf-token-in-model-env"
    HUB_ID_TYPO = "constructs-llm:hub-id-typo"
    IMPORTED_LOG_KEY = "constructs-llm:imported-log-key"
    INVOKER_TIMEOUT_DECODE = "constructs-llm:invoker-timeout-decode"
    MIN_INSTANCES_ZERO_REGION = "constructs-llm:min-instances-zero-region"
    MODEL_ID_GUESS = "constructs-llm:model-id-guess"
    OPENAI_ROUTE_UNKNOWN = "constructs-llm:openai-route-unknown"
    OPENAI_ROUTE_UNLISTED = "constructs-llm:openai-route-unlisted"
    POOLS_AUTOSCALING = "constructs-llm:pools-autoscaling"
    RESERVED_CONCURRENCY = "constructs-llm:reserved-concurrency"
    ROUTING_SCHEMA = "constructs-llm:routing-schema"
    SCALE_TO_ZERO = "constructs-llm:scale-to-zero"
    SCALE_TO_ZERO_METRIC = "constructs-llm:scale-to-zero-metric"
    SIZING_ESTIMATE = "constructs-llm:sizing-estimate"
    UNKNOWN_INSTANCE_TYPE = "constructs-llm:unknown-instance-type"
    UNKNOWN_MODEL_SIZE = "constructs-llm:unknown-model-size"


_RAISED_FOR = {
    WarningId.ADAPTER_ENGINE_UNVERIFIED: "a LoRA adapter on a custom engine",
    WarningId.ASYNC_ALARMS: "default alarms on an async endpoint",
    WarningId.ASYNC_TOGGLE: "an async endpoint whose name does not follow its mode",
    WarningId.AUTOSCALED_FLEET: "a fleet that changes in two deploys (per fleet)",
    WarningId.COMPONENT_FLEET: "a fleet hosting components (per fleet)",
    WarningId.COMPONENT_ENV_SIZE: "a component env above SageMaker's size",
    WarningId.ENGINE_SETTING: "an engine setting to check",
    WarningId.GUARDED_ROLLOUT_HARDWARE: "a rollout that cannot guard a new instance",
    WarningId.HF_TOKEN_IN_MODEL_ENV: "a Hub token in the Model's env",
    WarningId.HUB_ID_TYPO: "a model id that looks like a typo of a known one",
    WarningId.IMPORTED_LOG_KEY: "an imported invoker log key, whose policy is not changed",
    WarningId.INVOKER_TIMEOUT_DECODE: "an invoker timeout shorter than a full generation",
    WarningId.MIN_INSTANCES_ZERO_REGION: "min_instances=0 (some regions refuse it)",
    WarningId.MODEL_ID_GUESS: "a model's kind or quantization guessed from its id",
    WarningId.OPENAI_ROUTE_UNKNOWN: "SageMaker's OpenAI route, a container not known",
    WarningId.OPENAI_ROUTE_UNLISTED: "SageMaker's OpenAI route, an engine AWS does not list",
    WarningId.POOLS_AUTOSCALING: "autoscaling a variant with instance pools",
    WarningId.RESERVED_CONCURRENCY: "an invoker reserving Lambda concurrency",
    WarningId.ROUTING_SCHEMA: "a routing strategy CloudFormation's schema does not list",
    WarningId.SCALE_TO_ZERO: "a component scaling its copies to zero",
    WarningId.SCALE_TO_ZERO_METRIC: "scale to zero on a metric zero copies lack",
    WarningId.SIZING_ESTIMATE: "a memory plan to verify",
    WarningId.UNKNOWN_INSTANCE_TYPE: "an instance family the catalog lacks",
    WarningId.UNKNOWN_MODEL_SIZE: "a model of unknown size",
}

#: Every warning id, with what raises it (the table above).
WARNINGS: Mapping[str, str] = {warning.value: _RAISED_FOR[warning] for warning in WarningId}


@dataclass(frozen=True)
class SynthWarning:
    """One warning: its id, its message (what to verify), and what was checked.

    :param id: the warning's kind.
    :param message: what may be wrong and what to verify.
    :param detail: what was checked, such as a fleet (``g5-2xlarge``), appended to the id
        (``constructs-llm:autoscaled-fleet:g5-2xlarge``), so an acknowledgment covers that one
        thing and a new one warns again. @default none
    """

    id: WarningId
    message: str
    detail: str | None = None

    @property
    def acknowledgment_id(self) -> str:
        """What users pass to ``Annotations.of(scope).acknowledge_warning``."""
        return f"{self.id.value}:{self.detail}" if self.detail else self.id.value


def warn(scope: IConstruct, warning: SynthWarning) -> None:
    """Adds ``warning`` to ``scope`` under its acknowledgment id."""
    from aws_cdk import Annotations  # only where a warning is raised

    Annotations.of(scope).add_warning_v2(warning.acknowledgment_id, warning.message)
