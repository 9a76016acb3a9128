"""How fast one stream decodes on its hardware: an estimate for timeouts, not a benchmark.

Generating a token reads every weight the token uses once, and a single stream does almost no
arithmetic per byte read, so its decode is bound by memory bandwidth (the roofline of a
matrix-vector product):

    tokens/s = efficiency x device bandwidth x devices / bytes read per token

The bytes are the weights in the plan's dtype (a mixture-of-experts model reads only its
active parameters); the devices are the copy's tensor-parallel group; the bandwidth is the
datasheet figure of one device (``InstanceType.memory_bandwidth_gbs``). Serving stacks reach
roughly 60-85 % of peak bandwidth in single-stream decode, less across GPUs joined by PCIe
and less again under load (continuous batching shares each step among the streams), so
:data:`DECODE_EFFICIENCY` takes the low end: the estimate is a plausible rate for one stream,
and the KV cache a long context reads besides is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.sizing.memory import MemoryPlan, ModelArchitecture

#: The share of peak memory bandwidth single-stream decode is taken to reach.
DECODE_EFFICIENCY = 0.6

_GIB = 1024**3


@dataclass(frozen=True, kw_only=True)
class DecodeRate:
    """One stream's decode rate on one placement, with the figures it comes from.

    :param tokens_per_s: the estimated rate.
    :param read_gb: bytes read per token, in GB (10^9).
    :param dtype: the weights' dtype or quantization.
    :param devices: devices of the copy's tensor-parallel group.
    :param accelerator: the device's name, e.g. "NVIDIA A10G".
    :param bandwidth_gbs: peak bandwidth of one device, GB/s.
    :param instance_type: the instance type.
    """

    tokens_per_s: float
    read_gb: float
    dtype: str
    devices: int
    accelerator: str
    bandwidth_gbs: float
    instance_type: str

    def seconds_for(self, tokens: int) -> float:
        """How long ``tokens`` generated tokens take at this rate."""
        return tokens / self.tokens_per_s

    def describe(self) -> str:
        """``one stream decoding 16.1 GB of bf16 weights on 1 x NVIDIA A10G at 600 GB/s``."""
        return (
            f"one stream decoding {self.read_gb:.1f} GB of {self.dtype} weights per token on "
            f"{self.devices} \u00d7 {self.accelerator} ({self.instance_type}) at "
            f"{self.bandwidth_gbs:g} GB/s each, {DECODE_EFFICIENCY:.0%} of peak"
        )


def decode_rate(
    plan: MemoryPlan, arch: ModelArchitecture, instance: InstanceType
) -> DecodeRate | None:
    """The single-stream decode rate of ``arch`` as ``plan`` places it on ``instance``; None
    when the device's bandwidth is not in the catalog (or the plan has no devices)."""
    bandwidth = instance.memory_bandwidth_gbs
    if bandwidth is None or plan.devices < 1 or plan.weights_gib <= 0:
        return None
    active = (arch.active_params_billion or arch.params_billion) / arch.params_billion
    read_gb = plan.weights_gib * _GIB / 1e9 * active
    return DecodeRate(
        tokens_per_s=DECODE_EFFICIENCY * bandwidth * plan.devices / read_gb,
        read_gb=read_gb,
        dtype=plan.dtype,
        devices=plan.devices,
        accelerator=instance.accelerator_model or instance.family,
        bandwidth_gbs=bandwidth,
        instance_type=instance.name,
    )
