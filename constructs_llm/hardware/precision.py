"""Which precisions a GPU runs, by its CUDA compute capability (the catalog's, from NVIDIA's
list), and the message when a model is asked for one it cannot run.

- **bf16** needs compute capability 8.0 (Ampere) or above: vLLM refuses it below ("Bfloat16
  is only supported on GPUs with compute capability of at least 8.0 ... You can use float16
  instead", ``_check_if_gpu_supports_dtype`` in vllm-project/vllm), and so does every CUDA
  kernel the engines use for it. The V100 (7.0) and the T4 (7.5) run fp16.
- **FP8** arithmetic needs 8.9 (Ada Lovelace, Hopper, Blackwell). Below it the engines fall
  back to weight-only FP8 (W8A16: FP8 weights, 16-bit compute), down to a floor each engine
  states (its ``fp8_from``): vLLM's FP8 Marlin kernels from 7.5 ("FP8 models will run on
  compute capability >= 7.5 (Turing) as weight-only W8A16, utilizing FP8 Marlin",
  vllm-project/vllm ``docs/features/quantization/fp8.md``), TGI's from 8.0 (``get_fp8_linear``
  in huggingface/text-generation-inference ``server/text_generation_server/layers/fp8.py``
  picks ``GPTQMarlinFP8Linear`` on compute capability 8.x and torch's FP8 matmul otherwise).
  Below the floor an FP8 setting fails at start-up; between it and 8.9 it only saves memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, TypeVar

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import Problem

_BF16_FROM = (8, 0)
_FP8_NATIVE_FROM = (8, 9)

#: The spellings engines take for bf16 and FP8, by the precision they name.
_SPELLINGS = {
    "bf16": frozenset({"bf16", "bfloat16"}),
    "fp8": frozenset({"fp8", "fp8_e4m3", "fp8_e5m2", "fbgemm_fp8", "fp8-kv"}),
}

Precision = tuple[str, str, str]
"""A precision asked for: (the env name, its value, the precision it names: bf16 or fp8)."""


_Found = TypeVar("_Found", covariant=True)


class PrecisionCheck(Protocol[_Found]):
    """``precision_problem`` (a Problem) or ``precision_warning`` (a warning's text)."""

    def __call__(
        self, asked: Precision, instance: InstanceType, *, factory: str, fp8_from: tuple[int, int]
    ) -> _Found | None: ...


def precision_of(env: Mapping[str, str], keys: Iterable[str]) -> list[Precision]:
    """The bf16 and FP8 settings among ``keys`` of the container ``env`` (dtype and
    quantization names, whichever spelling the engine takes)."""
    found = []
    for key in keys:
        value = env.get(key)
        if value is None:
            continue
        spelt = value.strip().lower()
        for name, spellings in _SPELLINGS.items():
            if spelt in spellings:
                found.append((key, value, name))
    return found


def _version(capability: tuple[int, int]) -> str:
    return f"{capability[0]}.{capability[1]}"


def precision_problem(
    asked: Precision, instance: InstanceType, *, factory: str, fp8_from: tuple[int, int]
) -> Problem | None:
    """What stops ``instance``'s GPUs running ``asked`` under ``Engine.<factory>()``, if
    anything (unknown GPUs pass)."""
    key, value, name = asked
    capability = instance.compute_capability
    if capability is None:
        return None
    gpu = (
        f"{instance.name} has {instance.accelerator_model} GPUs (compute capability "
        f"{_version(capability)})"
    )
    native = _version(_FP8_NATIVE_FROM)
    # What each precision needs: (the lowest compute capability, the need, the fix).
    needs = {
        "bf16": (
            _BF16_FROM,
            f"bf16, which needs a GPU of CUDA compute capability {_version(_BF16_FROM)} or above",
            f"use fp16 (Engine.{factory}(dtype='fp16')) or a GPU of the Ampere generation or "
            "later (ml.g5, ml.g6, ml.p4d, ml.p5)",
        ),
        "fp8": (
            fp8_from,
            f"FP8, which Engine.{factory}() runs from compute capability {_version(fp8_from)} "
            f"(weight-only below {native})",
            "serve fp16, or an AWQ or GPTQ checkpoint, or choose a GPU of compute capability "
            f"{native} or above (ml.g6, ml.g6e, ml.p5)",
        ),
    }
    lowest, need, fix = needs[name]
    if capability >= lowest:
        return None
    return Problem.of(f"env[{key!r}]", value, f"{key}={value} asks for {need}, but {gpu};", fix)


def precision_warning(
    asked: Precision, instance: InstanceType, *, factory: str, fp8_from: tuple[int, int]
) -> str | None:
    """FP8 that runs weight-only on ``instance``'s GPUs: it halves the weights' memory but
    computes in 16 bits."""
    key, value, name = asked
    capability = instance.compute_capability
    if name != "fp8" or capability is None or not fp8_from <= capability < _FP8_NATIVE_FROM:
        return None
    return (
        f"{key}={value}: {instance.name} has {instance.accelerator_model} GPUs (compute "
        f"capability {_version(capability)}), below the {_version(_FP8_NATIVE_FROM)} FP8 "
        f"arithmetic needs, so Engine.{factory}() runs FP8 weight-only (W8A16): the weights "
        "take half the memory but compute stays 16-bit; verify the speed, or choose ml.g6, "
        "ml.g6e or ml.p5 for FP8 arithmetic"
    )
