"""The memory an engine sizes from: CUDA's total, measured on the H100 and estimated
conservatively elsewhere; and the memory plan against what vLLM's profiler measured on a
real H100 (vLLM 0.25, 2026-11-26)."""

from __future__ import annotations

import pytest

from constructs_llm import InstanceType, catalogs
from constructs_llm.hardware.device_memory import ECC_SHARE, UNMEASURED_RESERVE
from constructs_llm.sizing.memory import ModelArchitecture, plan_memory
from constructs_llm.sizing.planner import GIB, large_step_gpu, overhead_per_device


def _arch(model_id: str) -> ModelArchitecture:
    arch = ModelArchitecture.lookup(model_id)
    assert arch is not None, model_id
    return arch


LLAMA31 = _arch("meta-llama/Llama-3.1-8B-Instruct")
PHI3 = _arch("microsoft/Phi-3-mini-4k-instruct")

#: vLLM 0.25's memory profiler on an H100 80GB HBM3 (Llama-3.1-8B, 32,768 tokens,
#: gpu_memory_utilization 0.9, the server's defaults, CUDA graphs on).
H100_KV_GIB = 54.93
H100_KV_TOKENS = 449_968
#: The same profiler under an A10G's budget (0.9 x 23,028 MiB, nvidia-smi's A10G total),
#: Phi-3-mini-4k at 4,096 tokens.
A10G_BUDGET_KV_TOKENS = 34_632

#: CUDA totals (GiB) public reports show for GPUs the catalog lists, each where the GPU is
#: named: an estimate must not exceed them. The H100's is the catalog's own measurement.
REPORTED_CUDA_GIB = {
    # "GPU 0; 22.20 GiB total capacity" on a g5.12xlarge (XavierXiao/Dreambooth-Stable-Diffusion#18)
    "ml.g5.12xlarge": 22.20,
    # "GPU 0 has a total capacity of 14.56 GiB" on a Tesla T4 (Zheng-Chong/CatVTON#133)
    "ml.g4dn.xlarge": 14.56,
    # "GPU 0; 39.59 GiB total capacity" on a 40 GB A100 (raoyongming/DenseCLIP#52)
    "ml.p4d.24xlarge": 39.59,
    # "GPU 0 has a total capacity of 79.15 GiB" on an A100 80GB (vllm-project/vllm#4408)
    "ml.p4de.24xlarge": 79.15,
    # "GPU 0 has a total capacity of 44.68 GiB" on a G6e (vladmandic/sdnext#3656)
    "ml.g6e.xlarge": 44.68,
}


def test_the_h100_is_planned_with_the_memory_cuda_reports() -> None:
    h100 = InstanceType("ml.p5.4xlarge")
    assert h100.accelerator_memory_gib == 80.0  # what EC2 lists
    assert h100.engine_memory_gib == pytest.approx(79.18, abs=0.005)  # what CUDA reports
    source = catalogs.instances().families["p5"].cuda_memory_source
    assert source is not None and "79.18 GiB" in source and "nvidia-smi 81,559 MiB" in source


@pytest.mark.parametrize(("instance", "reported"), sorted(REPORTED_CUDA_GIB.items()))
def test_an_unmeasured_gpu_is_planned_at_or_below_what_cuda_reports(
    instance: str, reported: float
) -> None:
    estimate = InstanceType(instance).engine_memory_gib
    assert estimate is not None and estimate <= reported


def test_the_rule_for_unmeasured_gpus_is_ec2_s_figure_less_the_reserve_and_ecc() -> None:
    a10g, t4 = InstanceType("ml.g5.2xlarge"), InstanceType("ml.g4dn.xlarge")
    assert a10g.engine_memory_gib == pytest.approx(22888 * (1 - UNMEASURED_RESERVE) / 1024)
    # the T4's 16,384 MiB is GDDR6's nominal size: ECC takes a sixteenth first
    assert t4.engine_memory_gib == pytest.approx(
        16384 * (1 - ECC_SHARE) * (1 - UNMEASURED_RESERVE) / 1024
    )
    # Neuron devices keep their HBM per chip
    assert InstanceType("ml.inf2.xlarge").engine_memory_gib == 32.0


def test_h100_plan_says_13_full_length_sequences_within_79_2_gib() -> None:
    # GIVEN Llama-3.1-8B on one H100 at 32,768 tokens (utilization 0.9, vLLM's defaults)
    plan = plan_memory(LLAMA31, instance="ml.p5.4xlarge", max_total_tokens=32768)
    # THEN the note says 13 full-length sequences within 79.2 GiB
    assert "on 1 x 79.2 GiB (ml.p5.4xlarge)" in plan.summary()
    assert "13 concurrent 32,768-token sequences" in plan.summary()
    # AND the KV cache it promises is at most what vLLM's profiler found (13.73 sequences,
    # rounded down), within 1 %
    assert plan.max_batch_total_tokens <= H100_KV_TOKENS
    assert plan.max_batch_total_tokens == pytest.approx(H100_KV_TOKENS, rel=0.01)
    assert plan.kv_budget_gib <= H100_KV_GIB
    assert plan.max_concurrent_sequences == H100_KV_TOKENS // 32768 == 13


def test_the_h100_reserves_what_vllm_s_larger_step_takes() -> None:
    # vLLM batches 8,192 tokens per step on the H100 (1,024 sequences): its activation peak,
    # non-torch memory and graphs measured 1.37 GiB, which the 1.5 GiB reserve covers
    h100, a100, a10g = (
        InstanceType(n) for n in ("ml.p5.4xlarge", "ml.p4de.24xlarge", "ml.g5.2xlarge")
    )
    assert large_step_gpu(h100) and not large_step_gpu(a100) and not large_step_gpu(a10g)
    assert (overhead_per_device(h100), overhead_per_device(a10g)) == (1.5, 1.0)
    assert overhead_per_device(h100) >= 1.1 + 0.22 + 0.05


def test_the_a10g_plan_stays_under_what_vllm_found_in_an_a10g_budget() -> None:
    plan = plan_memory(PHI3, instance="ml.g5.2xlarge", max_total_tokens=4096)
    under = 1 - plan.max_batch_total_tokens / A10G_BUDGET_KV_TOKENS
    # the budget measured used nvidia-smi's 23,028 MiB; a real A10G reports less to CUDA
    assert 0 < under < 0.15
    assert round(under * 100, 1) == 10.1  # the figure docs/sizing.md gives
    assert plan.kv_budget_gib * GIB < 12.73 * GIB
