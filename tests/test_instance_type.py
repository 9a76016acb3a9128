"""InstanceType: catalog facts, name validation, and the unknown-type escape hatches."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources

import pytest

from constructs_llm.errors import InstanceTypeError
from constructs_llm.hardware.instance_type import InstanceType, sizes_of

G5_SIZES = [
    "xlarge",
    "2xlarge",
    "4xlarge",
    "8xlarge",
    "12xlarge",
    "16xlarge",
    "24xlarge",
    "48xlarge",
]
CPU_FAMILIES = ["m5", "m6i", "m7i", "c5", "c6i", "c7i", "r5", "r6i", "r7i", "t2"]


def _all_catalog_types() -> list[str]:
    raw = json.loads(resources.files("constructs_llm").joinpath("data/instances.json").read_text())
    return [
        f"ml.{family}.{size}" for family, spec in raw["families"].items() for size in spec["sizes"]
    ]


# -- catalog facts ----------------------------------------------------------------------------


def test_g5_12xlarge_has_four_a10g_gpus_and_nvme() -> None:
    it = InstanceType("ml.g5.12xlarge")

    assert (it.name, it.family, it.size, str(it)) == (
        "ml.g5.12xlarge",
        "g5",
        "12xlarge",
        "ml.g5.12xlarge",
    )
    assert it.known and it.family_known
    assert it.accelerator == "nvidia"
    assert it.accelerator_model == "NVIDIA A10G"
    assert it.accelerator_count == 4
    assert it.accelerator_memory_gib == pytest.approx(22888 / 1024)  # EC2-reported, not 24
    assert it.total_accelerator_memory_gib == pytest.approx(4 * 22888 / 1024)
    assert it.neuron_cores is None
    assert (it.vcpus, it.memory_gib) == (48, 192.0)
    assert (it.local_nvme, it.local_nvme_gb) == (True, 3800)
    assert not it.supports_volume_size
    assert not it.supports_kms


def test_inf2_48xlarge_has_12_chips_and_24_neuron_cores() -> None:
    it = InstanceType("ml.inf2.48xlarge")

    assert it.accelerator == "neuron"
    assert it.accelerator_count == 12
    assert it.neuron_cores == 24
    assert it.accelerator_memory_gib == 32.0
    assert it.total_accelerator_memory_gib == 384.0
    assert (it.vcpus, it.memory_gib) == (192, 768.0)
    assert it.supports_volume_size  # Inferentia2 is EBS only


def test_inf2_xlarge_has_one_chip_with_two_cores() -> None:
    it = InstanceType("ml.inf2.xlarge")

    assert (it.accelerator_count, it.neuron_cores, it.memory_gib) == (1, 2, 16.0)


def test_p4d_has_nvme_so_no_volume_size_and_no_kms() -> None:
    it = InstanceType("ml.p4d.24xlarge")

    assert (it.accelerator_count, it.accelerator_memory_gib) == (8, 40.0)
    assert it.local_nvme_gb == 8000
    assert not it.supports_volume_size
    assert not it.supports_kms


@pytest.mark.parametrize("size", G5_SIZES)
def test_every_g5_size_has_local_nvme(size: str) -> None:
    it = InstanceType(f"ml.g5.{size}")

    assert it.local_nvme and it.local_nvme_gb and it.local_nvme_gb > 0
    assert not it.supports_volume_size


def test_p3_is_ebs_only_with_v100s_and_float_host_memory() -> None:
    it = InstanceType("ml.p3.8xlarge")

    assert (it.accelerator_count, it.accelerator_memory_gib) == (4, 16.0)
    assert it.supports_volume_size and it.supports_kms
    assert isinstance(it.memory_gib, float) and it.memory_gib == 244.0


@pytest.mark.parametrize("family", CPU_FAMILIES)
def test_cpu_families_have_no_accelerators(family: str) -> None:
    sizes = sizes_of(family)
    assert sizes, f"no sizes for {family}"
    for size in sizes:
        it = InstanceType(f"ml.{family}.{size}")
        assert it.known
        assert it.accelerator is None
        assert it.accelerator_count == 0
        assert it.accelerator_memory_gib is None and it.total_accelerator_memory_gib is None
        assert it.vcpus and it.vcpus > 0 and it.memory_gib and it.memory_gib > 0
        assert it.supports_volume_size and not it.local_nvme


@pytest.mark.parametrize(
    ("name", "vcpus", "memory_gib"),
    [
        ("ml.c5.9xlarge", 36, 72.0),
        ("ml.m5.xlarge", 4, 16.0),
        ("ml.r7i.48xlarge", 192, 1536.0),
        ("ml.t2.medium", 2, 4.0),
    ],
)
def test_cpu_vcpus_and_memory(name: str, vcpus: int, memory_gib: float) -> None:
    it = InstanceType(name)

    assert (it.vcpus, it.memory_gib) == (vcpus, memory_gib)


def test_catalog_is_self_consistent() -> None:
    for name in _all_catalog_types():
        it = InstanceType(name)
        assert it.known, name
        assert (it.accelerator is None) == (it.accelerator_count == 0), name
        assert (it.accelerator == "neuron") == (it.neuron_cores is not None), name
        assert it.vcpus and it.vcpus > 0, name
        assert isinstance(it.memory_gib, float), name


def test_data_file_names_its_sources() -> None:
    raw = json.loads(resources.files("constructs_llm").joinpath("data/instances.json").read_text())

    assert all(family["source"] for family in raw["families"].values())
    assert "karpenter" in raw["families"]["g7e"]["source"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("ml.g5.12xlarge", "4 \u00d7 NVIDIA A10G 22.4 GiB, 48 vCPU, 192 GiB, local NVMe 3800 GB"),
        (
            "ml.inf2.48xlarge",
            "12 \u00d7 AWS Inferentia2 32 GiB (24 NeuronCores), 192 vCPU, 768 GiB",
        ),
        ("ml.m5.xlarge", "no accelerators, 4 vCPU, 16 GiB"),
        ("ml.g8.2xlarge", "unknown hardware (ml.g8.2xlarge is not in the instance catalog)"),
    ],
)
def test_describe(name: str, text: str) -> None:
    assert InstanceType(name, allow_unknown_family=True).describe() == text


def test_sizes_of_lists_catalog_sizes_smallest_first() -> None:
    assert sizes_of("g5") == G5_SIZES
    assert sizes_of("no-such-family") == []


# -- malformed names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("g5.2xlarge", "start with 'ml.': use 'ml.g5.2xlarge'"),
        ("ml.g5", "size is missing. Sizes of ml.g5: xlarge, 2xlarge"),
        ("ML.G5.2XLARGE", "must be lower case: use 'ml.g5.2xlarge'"),
        (" ml.g5.2xlarge", "contains whitespace: use 'ml.g5.2xlarge'"),
        ("ml.g5.2xlarge\n", "contains whitespace: use 'ml.g5.2xlarge'"),
        ("ml.g5.2x large", "contains whitespace"),
        ("", ""),
        ("ml..2xlarge", ""),
        ("ml.g5.2xlarge.x", ""),
        ("ml.g5_2xlarge", ""),
        ("sagemaker", ""),
    ],
)
def test_malformed_names_are_rejected_with_the_expected_form(name: str, hint: str) -> None:
    with pytest.raises(InstanceTypeError) as caught:
        InstanceType(name)

    message = str(caught.value)
    assert f"got {name!r}" in message
    assert "ml.<family>.<size>" in message
    assert hint in message


def test_cdk_token_is_rejected_with_the_reason() -> None:
    token = "${Token[TOKEN.123]}"

    with pytest.raises(InstanceTypeError, match=re.escape(token)) as caught:
        InstanceType(token)

    assert "concrete" in str(caught.value)
    assert "validates the hardware" in str(caught.value)


@pytest.mark.parametrize("value", [None, 5, ["ml.g5.2xlarge"]])
def test_non_strings_are_rejected(value: object) -> None:
    with pytest.raises(InstanceTypeError, match=re.escape(repr(value))):
        InstanceType.of(value)  # type: ignore[arg-type]


# -- unknown sizes and families -----------------------------------------------------------------


def test_typo_size_in_known_family_lists_sizes_and_the_opt_out() -> None:
    # GIVEN the seed's typo ml.g5.45xlarge (g5 has no such size)
    with pytest.raises(InstanceTypeError) as caught:
        InstanceType("ml.g5.45xlarge")

    # THEN the message names the value, lists the family's sizes and shows the opt-out
    message = str(caught.value)
    assert "got 'ml.g5.45xlarge'" in message
    assert "Sizes of ml.g5: " + ", ".join(G5_SIZES) in message
    assert "Did you mean" in message and "'ml.g5.48xlarge'" in message
    assert "InstanceType('ml.g5.45xlarge', allow_unknown_size=True)" in message


def test_allow_unknown_size_opts_out_and_keeps_family_facts() -> None:
    it = InstanceType("ml.g5.96xlarge", allow_unknown_size=True)

    assert not it.known
    assert it.family_known
    assert it.accelerator == "nvidia"
    assert it.accelerator_count == 0  # unknown: constructs skip hardware checks
    assert it.vcpus is None and it.accelerator_memory_gib is None and it.local_nvme_gb is None
    assert it.local_nvme  # every g5 size has NVMe
    assert InstanceType.of("ml.m5.96xlarge", allow_unknown_size=True).supports_volume_size


@pytest.mark.parametrize(
    ("name", "closest"),
    [
        ("ml.gg5.2xlarge", "'ml.g5.2xlarge'"),  # a doubled letter
        ("ml.g5e.48xlarge", "'ml.g5.48xlarge'"),  # a family that does not exist
        ("ml.inf3.xlarge", "'ml.inf2.xlarge'"),  # a Neuron typo stays on Neuron
        ("ml.m55.large", "'ml.m5.large'"),
    ],
)
def test_an_unknown_family_fails_with_the_closest_types_and_the_opt_out(
    name: str, closest: str
) -> None:
    # GIVEN the catalog holds every type SageMaker hosting accepts (botocore's enum)
    with pytest.raises(InstanceTypeError) as caught:
        InstanceType(name)

    # THEN the message names the value, the closest hosting types and the opt-out
    message = str(caught.value)
    family = name.split(".")[1]
    assert f"Unknown instance family ml.{family}: got {name!r}" in message
    assert f"Did you mean {closest}" in message
    assert "botocore 1." in message and ", g5, g6, g6e," in message
    assert f"InstanceType({name!r}, allow_unknown_family=True)" in message
    # the same for InstanceType.of, which the constructs call with strings
    with pytest.raises(InstanceTypeError, match="allow_unknown_family=True"):
        InstanceType.of(name)
    assert not InstanceType.of(name, allow_unknown_family=True).known


@pytest.mark.parametrize(
    ("name", "family", "accelerator", "nvme"),
    [
        ("ml.g8.2xlarge", "g8", "nvidia", False),
        ("ml.g7x.48xlarge", "g7x", "nvidia", True),
        ("ml.p6-b400.48xlarge", "p6-b400", "nvidia", True),
        ("ml.trn3.48xlarge", "trn3", "neuron", False),
        ("ml.c6id.large", "c6id", None, True),
        ("ml.x9.large", "x9", None, False),
    ],
)
def test_an_opted_in_unknown_family_is_accepted_without_hardware_data(
    name: str, family: str, accelerator: str | None, nvme: bool
) -> None:
    it = InstanceType(name, allow_unknown_family=True)

    assert it.family == family
    assert not it.known and not it.family_known
    assert it.accelerator == accelerator  # a guess from the family name
    assert it.accelerator_count == 0
    assert it.vcpus is None and it.memory_gib is None and it.neuron_cores is None
    assert it.local_nvme is nvme
    assert it.supports_volume_size is (not nvme)


# -- identity -------------------------------------------------------------------------------------


def test_of_accepts_a_string_or_an_instance_type() -> None:
    it = InstanceType("ml.g5.2xlarge")

    assert InstanceType.of(it) is it
    assert InstanceType.of("ml.g5.2xlarge") == it
    assert hash(InstanceType.of("ml.g5.2xlarge")) == hash(it)
    assert InstanceType("ml.g5.4xlarge") != it
    assert it != "ml.g5.2xlarge"  # compare InstanceTypes, not strings
    assert len({it, InstanceType("ml.g5.2xlarge")}) == 1
    assert repr(it) == "InstanceType('ml.g5.2xlarge')"


def test_module_does_not_import_aws_cdk() -> None:
    code = "import sys, constructs_llm.hardware.instance_type; sys.exit('aws_cdk' in sys.modules)"

    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
