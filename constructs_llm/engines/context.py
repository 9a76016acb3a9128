"""What an engine is told about one model copy, and how user env may touch derived keys."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hardware.placement import Placement
from constructs_llm.sizing.memory import MemoryPlan

Accelerator = Literal["nvidia", "neuron"]

#: Env names Hugging Face libraries read a Hub token from (huggingface_hub: HF_TOKEN first,
#: then the legacy HUGGING_FACE_HUB_TOKEN; TGI's router reads the legacy name).
HF_TOKEN_ENV_NAMES: tuple[str, ...] = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


class EnvRule(Enum):
    """How user ``env`` may touch a key the engine derives (keys without a rule are free)."""

    MODEL = "model"  # from the model source; never contradicted
    REVISION = "revision"
    PARALLEL = "parallel"  # may be lowered, never beyond the hardware
    LIMIT = "limit"  # from max_input_tokens / max_total_tokens; never contradicted
    PROTOCOL = "protocol"  # request/stream contract; never contradicted
    TOOLS = "tools"  # from tool_calls / tool_call_parser; never contradicted, even when unset
    REASONING = "reasoning"  # from reasoning / reasoning_parser; likewise
    KIND = "kind"  # chat or embedding model (from embedding); likewise


@dataclass(frozen=True, kw_only=True)
class EngineContext:
    """What the engine needs to know about one model copy.

    :param placement: where the copy runs: the instance type, and the devices (GPUs, or
        Neuron chips) the copy gets (inference components give a copy a subset).
    :param model_location: Hub id, or ``/opt/ml/model`` for weights SageMaker downloads.
    :param revision: Hub revision (branch, tag or commit). @default None
    :param max_input_tokens: longest prompt. @default the engine's default
    :param max_total_tokens: longest prompt + generation. @default the engine's default
    :param plan: memory plan for the copy, used to size batch defaults. @default None
    :param model_family: the model's family in the packaged table, which picks the tool-call
        parser. @default None (unknown)
    """

    placement: Placement
    model_location: str
    revision: str | None = None
    max_input_tokens: int | None = None
    max_total_tokens: int | None = None
    plan: MemoryPlan | None = None
    model_family: str | None = None

    @property
    def instance(self) -> InstanceType:
        """The instance type the copy runs on."""
        return self.placement.instance_type

    @property
    def accelerators(self) -> int | None:
        """Devices the copy gets; None = every device of the instance."""
        return self.placement.accelerators

    @property
    def devices(self) -> int:
        """Devices available to the copy (0 when the hardware is unknown): the placement's."""
        return self.placement.devices

    @property
    def where(self) -> str:
        """``"this copy gets on ml.x"`` for a share of the instance, else ``"of ml.x"``."""
        return f"{'this copy gets on' if self.accelerators else 'of'} {self.instance.name}"


def cores_per_chip(instance: InstanceType) -> int | None:
    """NeuronCores per Neuron chip (2 on Inferentia2 and Trainium1); None without data."""
    if not instance.neuron_cores or not instance.accelerator_count:
        return None
    return instance.neuron_cores // instance.accelerator_count


def available_cores(ctx: EngineContext) -> int | None:
    """NeuronCores of the chips the copy gets; None without Neuron data."""
    per_chip = cores_per_chip(ctx.instance)
    if per_chip is None:
        return None
    return ctx.devices * per_chip


def decimal_int(text: str) -> int | None:
    """The whole number ``text`` spells in ASCII digits (spaces around allowed), else None.

    ``str.isdigit`` also passes superscripts such as ``"²"``, which ``int`` refuses.
    """
    digits = text.strip()
    return int(digits) if digits.isascii() and digits.isdecimal() else None
