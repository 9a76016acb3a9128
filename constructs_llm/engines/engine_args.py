"""Engine arguments checked against the engine's own limits, whatever sets them (an engine
setting or ``env``): the LoRA ranks vLLM accepts, and tensor x pipeline parallelism against
the GPUs a copy gets.

- vLLM's ``--max-lora-rank`` is typed ``MaxLoRARanks = Literal[1, 8, 16, 32, 64, 128, 256,
  320, 512]`` (vllm-project/vllm: ``vllm/config/lora.py``); any other value stops the engine
  at start with a pydantic validation error.
- vLLM runs ``tensor_parallel_size x pipeline_parallel_size`` workers, one per GPU
  (vllm-project/vllm: ``vllm/config/parallel.py``, ``world_size``); LMI's
  ``option.pipeline_parallel_degree`` and SGLang's ``--pp-size`` multiply the same way. More
  workers than GPUs never start.
"""

from __future__ import annotations

from collections.abc import Mapping

from constructs_llm.engines._support import int_value
from constructs_llm.engines.context import EngineContext
from constructs_llm.engines.env_rules import env_entry_problem
from constructs_llm.problems import Problem

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def lora_rank_problem(env: Mapping[str, str], key: str) -> Problem | None:
    """vLLM refuses a ``max_lora_rank`` outside :data:`VLLM_LORA_RANKS`."""
    if key not in env:
        return None
    rank = int_value(env, key)
    if rank in VLLM_LORA_RANKS:
        return None
    allowed = ", ".join(map(str, VLLM_LORA_RANKS))
    above = [r for r in VLLM_LORA_RANKS if rank is not None and r >= rank]
    fix = f"use {above[0]}, the next rank vLLM accepts" if above else "use one of them"
    return env_entry_problem(
        key,
        env[key],
        f" is a LoRA rank vLLM does not accept (max_lora_rank is one of {allowed}; vLLM stops "
        "at start otherwise);",
        f"{fix}, at least your adapters' rank",
    )


def parallel_product_problem(
    env: Mapping[str, str], tensor_key: str, pipeline_key: str, ctx: EngineContext
) -> Problem | None:
    """Tensor x pipeline parallel workers above the GPUs of the copy."""
    pipeline = int_value(env, pipeline_key)
    if pipeline is None or pipeline < 1 or not ctx.instance.known or not ctx.devices:
        return None
    given = env.get(tensor_key, "")
    tensor = ctx.devices if given.strip().lower() == "max" else int_value(env, tensor_key)
    tensor = tensor or 1
    if tensor * pipeline <= ctx.devices:
        return None
    fit = max(ctx.devices // pipeline, 1)
    return Problem.of(
        f"env[{tensor_key!r}]",
        tensor,
        f"{tensor_key}={tensor} x {pipeline_key}={pipeline} needs {tensor * pipeline} GPUs, "
        f"but there are {ctx.devices} {ctx.where}; the engine runs one worker per GPU and "
        "would not start:",
        f"set the tensor parallel degree to {fit} with "
        f"{pipeline_key}={pipeline}, or drop {pipeline_key}",
    )
