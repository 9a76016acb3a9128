"""How much of an accelerator's memory a serving engine can size from.

Engines size their KV cache from the device total that CUDA reports
(``torch.cuda.mem_get_info``), not from the figure EC2 lists per GPU: vLLM's budget is
``gpu_memory_utilization`` x that total, minus the weights, the activation peak of its profile
run, non-torch memory and the CUDA graphs. The two differ: on an H100 80GB HBM3, EC2 lists
81,920 MiB, nvidia-smi reports 81,559 MiB and CUDA 79.18 GiB (measured 2026-11-26; the catalog
records it as the H100's ``cuda_memory_mib`` with its source).

Where no device was measured, the figure is derived conservatively from the catalog's:

- GPUs whose EC2 figure is the nominal size of GDDR memory with ECC on by default
  (``gddr_ecc`` in the catalog: the T4 lists 16,384 MiB where nvidia-smi shows 15,360, the
  K80, and the RTX PRO Blackwell GPUs, whose ECC reserve is not verified) first lose the
  sixteenth ECC takes;
- then every unmeasured GPU loses :data:`UNMEASURED_RESERVE` (3 %), the largest gap seen
  between nvidia-smi's total and CUDA's: a T4 reporting 14.56 GiB of nvidia-smi's 15 GiB
  (2.9 %). The H100's measured gap is 0.6 %.

The result is at or below every CUDA total reported for these GPUs that the tests list
(``tests/test_device_memory.py``), so a plan never promises memory an engine will not find.
Neuron and Habana devices keep their nominal HBM per chip (no CUDA).
"""

from __future__ import annotations

from constructs_llm.catalogs import InstanceFamily

#: The share of GDDR memory ECC takes when it is on (a sixteenth: the T4's 16 GiB show as
#: 15,360 MiB in nvidia-smi, the A10G's 24 GiB as 23,028 MiB).
ECC_SHARE = 1 / 16
#: What an unmeasured GPU loses between its device total and CUDA's: the largest gap seen
#: (a T4 at 14.56 GiB of 15 GiB, 2.9 %), rounded up.
UNMEASURED_RESERVE = 0.03


def engine_visible_mib(family: InstanceFamily) -> float | None:
    """The memory per device (MiB) an engine sizes from: CUDA's total where it was measured,
    else the conservative estimate above; the nominal figure on Neuron and Habana; None where
    the catalog has no figure."""
    listed = family.accelerator_memory_mib
    if listed is None:
        return None
    if family.accelerator != "nvidia":
        return float(listed)
    if family.cuda_memory_mib is not None:
        return float(family.cuda_memory_mib)
    figure = listed * (1 - ECC_SHARE) if family.gddr_ecc else float(listed)
    return figure * (1 - UNMEASURED_RESERVE)
