"""Default startup timeouts by hardware and model size.

SageMaker's defaults are far too short for LLMs: loading shards onto GPUs, or compiling for
Neuron, routinely takes longer than the ping health check allows. Defaults grow with the
model's size where it is known, within SageMaker's 60-3600 s range.
"""

from __future__ import annotations

import functools

from aws_cdk import Duration

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import Problem
from constructs_llm.sizing.memory import ModelArchitecture
from constructs_llm.values import duration_problem

_GPU_FLOOR_S = 900  # 15 minutes: a 7-8B model on one GPU, with headroom
_NEURON_S = 3600  # Neuron may compile at start-up; use the maximum
_MAX_S = 3600
_SECONDS_PER_BILLION = 30  # observed load rates are roughly 1-2 GB/s; 2 bytes per parameter

_MIN_TIMEOUT_S = 60
MAX_TIMEOUT_S = 3600


def default_health_check_timeout(
    instance: InstanceType, architecture: ModelArchitecture | None
) -> Duration:
    return _seconds(_scaled(instance, architecture, base=600))


def default_download_timeout(
    instance: InstanceType, architecture: ModelArchitecture | None
) -> Duration:
    return _seconds(_scaled(instance, architecture, base=600))


@functools.cache
def _seconds(seconds: int) -> Duration:
    """One Duration per length, shared by every host that defaults to it (a Duration does not
    change; each new one is a jsii call)."""
    return Duration.seconds(seconds)


def _scaled(instance: InstanceType, architecture: ModelArchitecture | None, *, base: int) -> int:
    if instance.accelerator == "neuron":
        return _NEURON_S
    if architecture is None:
        return _GPU_FLOOR_S
    seconds = base + _SECONDS_PER_BILLION * architecture.params_billion
    return int(min(_MAX_S, max(_GPU_FLOOR_S, round(seconds / 60) * 60)))


def timeout_problem(prop: str, value: Duration | None) -> Problem | None:
    """SageMaker accepts 60-3600 s for both startup timeouts."""
    return duration_problem(
        prop,
        value,
        minimum_s=_MIN_TIMEOUT_S,
        maximum_s=MAX_TIMEOUT_S,
        bounds=f"{_MIN_TIMEOUT_S} and {MAX_TIMEOUT_S} seconds",
        why="SageMaker rejects other values",
    )
