"""Single-stream decode rates: memory bandwidth over the bytes each token reads, from the
catalog's datasheet bandwidths and the memory plan's weights."""

from __future__ import annotations

import pytest

from constructs_llm import InstanceType, catalogs
from constructs_llm.errors import ConfigurationError
from constructs_llm.sizing.decode import DECODE_EFFICIENCY, DecodeRate, decode_rate
from constructs_llm.sizing.memory import ModelArchitecture, plan_memory

#: Datasheet bandwidths per device (GB/s): NVIDIA's A10, L4, L40S, A100, H100, H200, V100 and
#: T4 datasheets; the AWS Neuron architecture pages for Inferentia2, Trainium and Trainium2.
DATASHEETS = {
    "ml.g5.2xlarge": 600,
    "ml.g6.2xlarge": 300,
    "ml.g6e.2xlarge": 864,
    "ml.p4d.24xlarge": 1555,
    "ml.p4de.24xlarge": 2039,
    "ml.p5.48xlarge": 3350,
    "ml.p5e.48xlarge": 4800,
    "ml.p3.2xlarge": 900,
    "ml.g4dn.xlarge": 320,
    "ml.inf2.xlarge": 820,
    "ml.trn1.32xlarge": 820,
    "ml.trn2.48xlarge": 2900,
}


def _arch(model_id: str) -> ModelArchitecture:
    arch = ModelArchitecture.lookup(model_id)
    assert arch is not None
    return arch


def _rate(model_id: str, instance: str, **plan: object) -> DecodeRate | None:
    arch, inst = _arch(model_id), InstanceType(instance)
    return decode_rate(plan_memory(arch, instance=inst, **plan), arch, inst)  # type: ignore[arg-type]


@pytest.mark.parametrize(("instance", "bandwidth"), DATASHEETS.items())
def test_the_catalog_carries_each_device_s_datasheet_bandwidth(
    instance: str, bandwidth: int
) -> None:
    assert InstanceType(instance).memory_bandwidth_gbs == bandwidth


def test_every_bandwidth_has_a_source_and_cpu_or_unverified_devices_have_none() -> None:
    families = catalogs.instances().families
    with_bandwidth = {n for n, f in families.items() if f.memory_bandwidth_gbs is not None}
    assert {InstanceType(i).family for i in DATASHEETS} <= with_bandwidth
    for name in with_bandwidth:
        family = families[name]
        assert family.accelerator is not None, name
        assert "B/s" in (family.memory_bandwidth_source or ""), name
    assert InstanceType("ml.m5.xlarge").memory_bandwidth_gbs is None  # CPU
    assert InstanceType("ml.g7e.2xlarge").memory_bandwidth_gbs is None  # no verified figure
    new = InstanceType("ml.g8.2xlarge", allow_unknown_family=True)
    assert new.memory_bandwidth_gbs is None


def test_one_stream_reads_every_weight_once_per_token() -> None:
    # Llama-3-8B in bf16 (15.0 GiB = 16.1 GB) on one A10G (600 GB/s)
    rate = _rate("meta-llama/Meta-Llama-3-8B-Instruct", "ml.g5.2xlarge")
    assert rate is not None
    assert rate.read_gb == pytest.approx(16.1, abs=0.05)
    assert rate.tokens_per_s == pytest.approx(DECODE_EFFICIENCY * 600 / rate.read_gb)
    assert rate.tokens_per_s == pytest.approx(22.4, abs=0.1)
    assert rate.seconds_for(8192) == pytest.approx(366, abs=1)
    assert rate.describe() == (
        "one stream decoding 16.1 GB of bf16 weights per token on 1 \u00d7 NVIDIA A10G "
        "(ml.g5.2xlarge) at 600 GB/s each, 60% of peak"
    )


def test_tensor_parallel_devices_add_their_bandwidth() -> None:
    one = _rate("meta-llama/Meta-Llama-3-8B-Instruct", "ml.g5.12xlarge", accelerators=1)
    four = _rate("meta-llama/Meta-Llama-3-8B-Instruct", "ml.g5.12xlarge")
    assert one is not None and four is not None
    assert (one.devices, four.devices) == (1, 4)
    assert four.tokens_per_s == pytest.approx(4 * one.tokens_per_s)


def test_a_mixture_of_experts_reads_only_its_active_parameters() -> None:
    # Mixtral-8x7B keeps 46.7B parameters in memory, but each token reads 12.9B of them
    arch = _arch("mistralai/Mixtral-8x7B-Instruct-v0.1")
    assert (arch.params_billion, arch.active_params_billion) == (46.7, 12.9)
    rate = _rate("mistralai/Mixtral-8x7B-Instruct-v0.1", "ml.p4d.24xlarge")
    assert rate is not None
    assert rate.read_gb == pytest.approx(87.0 * 1024**3 / 1e9 * 12.9 / 46.7, rel=1e-3)
    assert rate.tokens_per_s == pytest.approx(0.6 * 8 * 1555 / rate.read_gb)


def test_neuron_chips_decode_at_their_hbm_bandwidth() -> None:
    rate = _rate("mistralai/Mistral-7B-Instruct-v0.2", "ml.inf2.xlarge")
    assert rate is not None
    assert (rate.devices, rate.accelerator, rate.bandwidth_gbs) == (1, "AWS Inferentia2", 820)


def test_quantized_weights_read_fewer_bytes() -> None:
    bf16 = _rate("meta-llama/Meta-Llama-3-8B-Instruct", "ml.g5.2xlarge")
    int8 = _rate("meta-llama/Meta-Llama-3-8B-Instruct", "ml.g5.2xlarge", dtype="int8")
    assert bf16 is not None and int8 is not None
    assert int8.tokens_per_s == pytest.approx(2 * bf16.tokens_per_s, rel=0.01)


def test_no_rate_without_a_bandwidth() -> None:
    assert _rate("meta-llama/Meta-Llama-3-8B-Instruct", "ml.g7e.2xlarge") is None


def test_active_parameters_are_checked() -> None:
    with pytest.raises(ConfigurationError, match=r"active_params_billion must be above 0 and at"):
        ModelArchitecture(
            params_billion=7,
            active_params_billion=8,
            layers=32,
            kv_heads=8,
            head_dim=128,
            hidden_size=4096,
            context_length=8192,
        )
