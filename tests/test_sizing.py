"""Memory sizing: the seeds' figures, GQA-aware KV cache, and fits that fail at synth."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from constructs_llm.engines.engine import Engine
from constructs_llm.errors import SizingError
from constructs_llm.sizing.memory import (
    MemoryPlan,
    ModelArchitecture,
    dtype_bytes,
    lmi_seed_kv_estimate,
    plan_memory,
)
from constructs_llm.sizing.planner import GIB


def arch(model_id: str) -> ModelArchitecture:
    found = ModelArchitecture.lookup(model_id)
    assert found is not None, model_id
    return found


# -- the seeds' numbers ---------------------------------------------------------------------


def test_phi3_seed_kv_figure_and_the_real_one() -> None:
    # GIVEN the seed's method (2 x layers x hidden x bytes) for 4 sequences of 4096 tokens
    tokens = 4 * 4096
    seed = lmi_seed_kv_estimate(layers=32, hidden_size=4096, dtype_bytes=2, tokens=tokens)
    real_hidden = lmi_seed_kv_estimate(layers=32, hidden_size=3072, dtype_bytes=2, tokens=tokens)
    # THEN the seed's hidden size 4096 gives ~8.6 GB, Phi-3-mini's real 3072 gives ~6.4 GB
    assert seed == 2 * 32 * 4096 * 2 * 16384 == 8_589_934_592
    assert real_hidden == 6_442_450_944
    # AND the GQA-aware formula agrees, as Phi-3-mini has one KV head per attention head
    phi3 = arch("microsoft/Phi-3-mini-4k-instruct")
    assert phi3.kv_bytes_per_token(2) * tokens == real_hidden
    # AND its weights are 3.8 B x 2 bytes ~ 7.6 GB
    assert phi3.weights_bytes(2) / 1e9 == pytest.approx(7.64, abs=0.01)


def test_phi3_plan_on_one_a10g() -> None:
    plan = plan_memory(
        arch("microsoft/Phi-3-mini-4k-instruct"), instance="ml.g5.4xlarge", max_total_tokens=4096
    )
    assert plan.fits
    assert plan.devices == 1
    assert plan.weights_gib * GIB / 1e9 == pytest.approx(7.64, abs=0.01)
    assert plan.kv_bytes_per_token == 2 * 32 * 32 * 96 * 2  # 384 KiB
    # CUDA's share of EC2's 22,888 MiB (3 % less, unmeasured) x 0.9 - 1 GiB - 7.12 GiB of weights
    assert plan.device_memory_gib == pytest.approx(22888 * 0.97 / 1024, abs=0.01)
    assert plan.kv_budget_gib == pytest.approx(22888 * 0.97 / 1024 * 0.9 - 1 - 7.115, abs=0.01)
    assert plan.max_concurrent_sequences == 7  # 4 x 4096 tokens (the seed's batch) fit, 7 alone
    # AND 22 typical chat requests (1,412 tokens, prompt + reply) fit at once
    assert (plan.typical_request_tokens, plan.typical_concurrent_sequences) == (1412, 22)
    assert plan.typical_concurrent_sequences == plan.max_batch_total_tokens // 1412


def test_typical_request_is_the_median_of_the_benchmark_s_trace() -> None:
    # The note's typical length and the benchmark's request lengths come from one trace.
    from constructs_llm.sizing.memory import TYPICAL_REQUEST_TOKENS
    from tests.conftest import ROOT

    trace = json.loads((ROOT / "bench" / "data" / "azure_llm_conversation_2023.json").read_text())
    assert trace["median"] == {"prompt": 1020, "reply": 129, "total": TYPICAL_REQUEST_TOKENS}
    assert sum(cell[4] for cell in trace["cells"]) == trace["requests"] == 19366
    assert "AzureLLMInferenceTrace_conv.csv" in trace["_source"]


def test_typical_request_is_never_longer_than_the_token_limit() -> None:
    plan = plan_memory(
        arch("microsoft/Phi-3-mini-4k-instruct"), instance="ml.g5.4xlarge", max_total_tokens=1024
    )
    assert plan.typical_request_tokens == 1024
    assert plan.typical_concurrent_sequences == plan.max_concurrent_sequences == 30


def test_seed_formula_overstates_gqa_models_by_heads_over_kv_heads() -> None:
    llama = arch("meta-llama/Llama-3.1-8B-Instruct")
    seed_per_token = lmi_seed_kv_estimate(layers=32, hidden_size=4096, dtype_bytes=2, tokens=1)
    assert seed_per_token == 512 * 1024
    assert llama.kv_bytes_per_token(2) == 128 * 1024
    assert llama.attention_heads is not None
    assert seed_per_token // llama.kv_bytes_per_token(2) == llama.attention_heads // llama.kv_heads


def test_falcon_40b_rejected_on_one_a10g_and_accepted_with_tp8() -> None:
    falcon = arch("tiiuae/falcon-40b")
    with pytest.raises(SizingError, match=r"falcon-40b.*77\.9 GiB.*ml\.g5\.2xlarge"):
        plan_memory(falcon, instance="ml.g5.2xlarge", dtype="fp16")
    plan = plan_memory(
        falcon,
        instance="ml.g5.48xlarge",
        engine=Engine.lmi(tensor_parallel_degree=8, max_rolling_batch_size=32),
        dtype="fp16",
    )
    assert plan.fits
    assert plan.devices == 8
    assert plan.weights_gib == pytest.approx(41.84e9 * 2 / GIB, abs=0.01)
    assert plan.max_concurrent_sequences == 299  # the seed's max rolling batch of 32 fits


def test_llama3_70b_fp16_rejected_on_four_a10g() -> None:
    with pytest.raises(SizingError, match=r"Meta-Llama-3-70B-Instruct weights need 131\.4 GiB"):
        plan_memory(
            arch("meta-llama/Meta-Llama-3-70B-Instruct"), instance="ml.g5.12xlarge", dtype="fp16"
        )


def test_llama3_8b_rejected_on_one_v100_and_fits_on_one_a10g() -> None:
    llama = arch("meta-llama/Meta-Llama-3-8B-Instruct")
    # GIVEN one 16 GiB V100 of an ml.p3.8xlarge per copy (the seed's inference components)
    with pytest.raises(
        SizingError, match=r"15\.0 GiB in fp16 but 1 x 15\.5 GiB \(ml\.p3\.8xlarge\)"
    ):
        plan_memory(
            llama, instance="ml.p3.8xlarge", accelerators=1, dtype="fp16", max_total_tokens=8192
        )
    # THEN one A10G of an ml.g5.12xlarge holds the weights and full-length sequences
    plan = plan_memory(
        llama, instance="ml.g5.12xlarge", accelerators=1, dtype="fp16", max_total_tokens=8192
    )
    assert plan.fits
    assert plan.devices == 1
    assert plan.max_concurrent_sequences == 3  # 3.6 GiB of KV, 1 GiB per 8192-token sequence


# -- errors and warnings --------------------------------------------------------------------


def test_max_total_tokens_beyond_the_context_is_rejected() -> None:
    with pytest.raises(
        SizingError, match=r"max_total_tokens 8,192 exceeds the 4,096-token context"
    ):
        plan_memory(
            arch("meta-llama/Llama-2-13b-chat-hf"), instance="ml.g5.12xlarge", max_total_tokens=8192
        )


def test_kv_budget_below_one_sequence_is_rejected_with_the_limit_that_fits() -> None:
    with pytest.raises(SizingError, match=r"holds 29,129 tokens.*131,072-token.*<= 29,129"):
        plan_memory(
            arch("meta-llama/Llama-3.1-8B-Instruct"),
            instance="ml.g5.2xlarge",
            max_total_tokens=131072,
        )


def test_full_context_that_does_not_fit_only_warns_without_a_token_limit() -> None:
    plan = plan_memory(arch("meta-llama/Llama-3.1-8B-Instruct"), instance="ml.g5.2xlarge")
    assert plan.fits
    assert plan.max_concurrent_sequences == 0
    assert any("set max_total_tokens <= 29,129" in w for w in plan.warnings)


def test_strict_false_returns_the_misfit_with_its_reasons() -> None:
    plan = plan_memory(arch("tiiuae/falcon-40b"), instance="ml.g5.2xlarge", strict=False)
    assert not plan.fits
    assert plan.problems and "falcon-40b" in str(plan.problems[0])
    assert plan.problems[0].property == "instance_type" and plan.problems[0].kind is SizingError
    assert "[DOES NOT FIT]" in plan.summary()


def test_tensor_parallelism_must_split_the_heads_evenly() -> None:
    with pytest.raises(SizingError, match=r"degree 4 does not split the 71 attention heads.*\[1\]"):
        plan_memory(arch("tiiuae/falcon-7b"), instance="ml.g5.12xlarge")
    # Phi-3-medium: its 40 attention heads divide by 4, but its 10 KV heads do not.
    with pytest.raises(SizingError, match=r"and 10 KV heads of .*Phi-3-medium.*\[1, 2\]"):
        plan_memory(arch("microsoft/Phi-3-medium-4k-instruct"), instance="ml.g5.12xlarge")


def test_replicated_kv_heads_are_counted_and_reported() -> None:
    # Gemma 3 1B has a single KV head; over 4 GPUs every GPU holds a copy of it.
    gemma = arch("google/gemma-3-1b-it")
    plan = plan_memory(gemma, instance="ml.g5.12xlarge", max_total_tokens=4096)
    assert plan.kv_bytes_per_token_per_device == gemma.kv_bytes_per_token(2)
    assert any("replicates a head" in w for w in plan.warnings)
    assert any("sliding-window" in w for w in plan.warnings)


def test_moe_models_count_every_expert() -> None:
    plan = plan_memory(arch("mistralai/Mixtral-8x7B-Instruct-v0.1"), instance="ml.p4d.24xlarge")
    assert plan.weights_gib == pytest.approx(46.7e9 * 2 / GIB, abs=0.01)
    assert any("Mixture-of-experts" in w for w in plan.warnings)


def test_neuron_plans_say_the_cache_is_static() -> None:
    plan = plan_memory(
        arch("mistralai/Mistral-7B-Instruct-v0.2"), instance="ml.inf2.xlarge", max_total_tokens=4096
    )
    assert plan.device_memory_gib == 32
    assert any("statically" in w for w in plan.warnings)


# Bad planning input fails naming the value: tests/test_validation_matrix.py (sizing-*).


# -- engines drive devices and dtype ---------------------------------------------------------


def test_engine_quantization_halves_then_quarters_the_weights() -> None:
    llama = arch("meta-llama/Meta-Llama-3-70B-Instruct")
    awq = plan_memory(llama, instance="ml.g5.12xlarge", engine=Engine.tgi(quantize="awq"))
    fp8 = plan_memory(llama, instance="ml.g6e.12xlarge", engine=Engine.vllm(quantization="fp8"))
    assert awq.dtype == "awq"
    assert awq.weights_gib == pytest.approx(70.55e9 * 0.5 / GIB, abs=0.01)
    assert fp8.weights_gib == pytest.approx(70.55e9 / GIB, abs=0.01)
    assert awq.fits and fp8.fits


def test_inference_component_accelerators_limit_the_devices() -> None:
    plan = plan_memory(
        arch("meta-llama/Meta-Llama-3-8B-Instruct"),
        instance="ml.g5.12xlarge",
        accelerators=1,
        engine=Engine.tgi(),
        max_total_tokens=4096,
    )
    assert plan.devices == 1


def test_summary_is_one_line_with_the_key_figures() -> None:
    plan = plan_memory(
        arch("microsoft/Phi-3-mini-4k-instruct"), instance="ml.g5.4xlarge", max_total_tokens=4096
    )
    summary = plan.summary()
    assert "\n" not in summary
    for part in (
        "weights 7.1 GiB (bf16)",
        "KV budget 11.4 GiB",
        "384 KiB per token",
        "7 concurrent 4,096-token",
        "(22 at a typical 1,412-token chat request)",
    ):
        assert part in summary
    assert isinstance(plan, MemoryPlan)


# -- the model table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "layers", "kv_heads", "head_dim", "hidden"),
    [
        ("microsoft/Phi-3-mini-4k-instruct", 32, 32, 96, 3072),
        ("meta-llama/Meta-Llama-3-8B-Instruct", 32, 8, 128, 4096),
        ("tiiuae/falcon-40b", 60, 8, 64, 8192),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", 32, 8, 128, 4096),
        ("meta-llama/Llama-2-13b-chat-hf", 40, 40, 128, 5120),
        ("mistralai/Mistral-7B-Instruct-v0.3", 32, 8, 128, 4096),
    ],
)
def test_table_has_the_configs_of_the_seed_models(
    model_id: str, layers: int, kv_heads: int, head_dim: int, hidden: int
) -> None:
    found = arch(model_id)
    assert (found.layers, found.kv_heads, found.head_dim, found.hidden_size) == (
        layers,
        kv_heads,
        head_dim,
        hidden,
    )


def test_lookup_is_case_insensitive_knows_aliases_and_keeps_the_given_id() -> None:
    upper = arch("META-LLAMA/meta-llama-3-8b-instruct")
    assert upper.params_billion == 8.03
    assert arch("meta-llama/Llama-3.1-8B-Instruct").context_length == 131072
    assert (
        arch("meta-llama/Meta-Llama-3-8B-Instruct").model_id
        == "meta-llama/Meta-Llama-3-8B-Instruct"
    )
    assert "config.json of meta-llama/Meta-Llama-3-8B" in (upper.source or "")
    assert ModelArchitecture.lookup("acme/unknown-model") is None


def test_every_table_row_is_consistent_and_sourced() -> None:
    raw = json.loads(resources.files("constructs_llm").joinpath("data/models.json").read_text())
    assert raw["_source"]
    families = {
        "Llama-2", "Llama-3", "Llama-3.1", "Llama-3.2", "Llama-3.3", "Mistral-7B", "Mixtral",
        "falcon", "Phi-3", "phi-4", "Qwen2.5", "Qwen3", "gemma-2", "gemma-3", "DeepSeek-R1-Distill",
    }  # fmt: skip
    ids = " ".join(row["id"] for row in raw["models"])
    assert all(f in ids for f in families)
    for row in raw["models"]:
        assert f"config.json of {row['id']}" in row["source"]
        assert row["kv_heads"] <= row["attention_heads"]
        assert row["attention_heads"] % row["kv_heads"] == 0, row["id"]
        if row.get("quantization") is None:
            assert dtype_bytes(row["default_dtype"]) == 2
        else:  # a pre-quantized checkpoint is stored in its quantization, with its method
            assert dtype_bytes(row["default_dtype"]) < 2, row["id"]
            assert f"quant_method '{row['quantization']}'" in row["source"], row["id"]
    assert len(ModelArchitecture.known_models()) == len(raw["models"])


def test_a_user_architecture_plans_like_a_packaged_one() -> None:
    custom = ModelArchitecture(
        params_billion=7.6,
        layers=28,
        kv_heads=4,
        head_dim=128,
        hidden_size=3584,
        context_length=32768,
    )
    assert plan_memory(custom, instance="ml.g5.2xlarge", max_total_tokens=8192).fits
