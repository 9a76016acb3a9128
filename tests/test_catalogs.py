"""Every packaged catalog goes through one schema-checked loader into typed records, and a
malformed catalog fails loudly, naming the file, the place in it and the value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack

from constructs_llm import catalogs
from constructs_llm.catalogs import (
    CatalogError,
    DlcCatalog,
    InstanceCatalog,
    LwaLayers,
    ModelCatalog,
    ParserCatalog,
    RegionCatalog,
    load_catalog,
    parse_catalog,
)
from constructs_llm.hardware.instance_type import InstanceType, sizes_of

SCHEMAS: dict[tuple[str, str], type] = {
    ("constructs_llm", "instances.json"): InstanceCatalog,
    ("constructs_llm", "dlc_images.json"): DlcCatalog,
    ("constructs_llm", "models.json"): ModelCatalog,
    ("constructs_llm", "tool_parsers.json"): ParserCatalog,
    ("constructs_llm", "reasoning_parsers.json"): ParserCatalog,
    ("constructs_llm", "regions.json"): RegionCatalog,
    ("constructs_llm.streaming", "lwa_layers.json"): LwaLayers,
}


def test_every_packaged_catalog_has_a_schema_and_loads() -> None:
    packaged = {
        (package, entry.name)
        for package in ("constructs_llm", "constructs_llm.streaming")
        for entry in resources.files(package).joinpath("data").iterdir()
        if entry.name.endswith(".json")
    }
    assert packaged == set(SCHEMAS)
    for (package, name), schema in SCHEMAS.items():
        assert isinstance(load_catalog(package, name, schema), schema)


@dataclass(frozen=True, kw_only=True)
class _Row:
    name: str
    count: int
    share: float | None = None


@dataclass(frozen=True, kw_only=True)
class _Table:
    rows: dict[str, _Row]
    tags: tuple[str, ...]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"rows": {"a": {"name": "x"}}, "tags": []},
            r"t\.json\.rows\.a: missing field\(s\) \['count'\]",
        ),
        (
            {"rows": {"a": {"name": "x", "count": "4"}}, "tags": []},
            r"t\.json\.rows\.a\.count: expected int, got '4'",
        ),
        (
            {"rows": {"a": {"name": "x", "count": True}}, "tags": []},
            r"rows\.a\.count: expected int, got True",
        ),
        (
            {"rows": {"a": {"name": "x", "count": 1, "cuont": 2}}, "tags": []},
            r"rows\.a: unknown field\(s\) \['cuont'\] for _Row",
        ),
        ({"rows": [], "tags": []}, r"t\.json\.rows: expected an object, got \[\]"),
        ({"rows": {}, "tags": "a,b"}, r"t\.json\.tags: expected a list, got 'a,b'"),
        ({"rows": {}, "tags": [1]}, r"t\.json\.tags\[0\]: expected str, got 1"),
        (
            {"rows": {"a": {"name": "x", "count": 1, "share": "half"}}, "tags": []},
            r"rows\.a\.share: expected float, got 'half'",
        ),
    ],
)
def test_a_malformed_catalog_fails_naming_the_place_and_the_value(
    raw: dict[str, Any], message: str
) -> None:
    with pytest.raises(CatalogError, match=message):
        parse_catalog(raw, _Table, "t.json")


def test_comments_are_skipped_and_defaults_apply() -> None:
    table = parse_catalog(
        {"_source": "x", "rows": {"a": {"name": "x", "count": 1, "_note": "y"}}, "tags": ["t"]},
        _Table,
    )
    assert table == _Table(rows={"a": _Row(name="x", count=1)}, tags=("t",))


def test_a_bad_literal_in_the_real_schema_is_named() -> None:
    raw = {
        "families": {
            "g5": {
                "accelerator": "amd",
                "accelerator_model": None,
                "accelerator_memory_mib": None,
                "source": "s",
                "sizes": {},
            }
        },
        "hosting": {"botocore": "1", "instance_types": []},
    }
    with pytest.raises(CatalogError, match=r"families\.g5\.accelerator: expected one of"):
        parse_catalog(raw, InstanceCatalog, "instances.json")


def test_a_file_that_is_not_json_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "broken_catalog_pkg"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data" / "models.json").write_text('{"models": [,]}')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        CatalogError, match=r"broken_catalog_pkg/data/models\.json is not valid JSON"
    ):
        load_catalog("broken_catalog_pkg", "models.json", ModelCatalog)


# -- what the catalogs hold ------------------------------------------------------------------


def test_every_hosting_instance_type_has_hardware_figures() -> None:
    catalog = catalogs.instances()
    assert len(catalog.hosting.instance_types) == 277  # botocore 1.44.5
    for name in catalog.hosting.instance_types:
        assert InstanceType(name).known, name


def test_every_accelerated_family_has_gpu_data_and_a_source() -> None:
    families = catalogs.instances().families
    accelerated = {name: f for name, f in families.items() if f.accelerator is not None}
    assert {"g7", "g7e", "p6-b200", "p6-b300", "p6e-gb200", "dl1", "p2"} <= set(accelerated)
    for name, family in accelerated.items():
        assert family.accelerator_model and family.accelerator_memory_mib, name
        assert all(size.accelerators > 0 for size in family.sizes.values()), name
    assert all(f.source for f in families.values())


def test_every_family_lists_its_sizes_smallest_first() -> None:
    # sizes_of() promises smallest first: by vCPUs, then memory (t2.medium and t2.large share
    # 2 vCPUs). The refresh script keeps the families as written, so the order is checked here.
    for name, family in catalogs.instances().families.items():
        figures = [(size.vcpus, size.memory_gib) for size in family.sizes.values()]
        assert figures == sorted(figures) and len(set(figures)) == len(figures), (
            name,
            list(family.sizes),
        )
    assert sizes_of("p5") == ["4xlarge", "48xlarge"]


@pytest.mark.parametrize(
    ("name", "accelerator", "count", "gib_per_device", "nvme"),
    [
        ("ml.g7.2xlarge", "nvidia", 1, 32.0, True),
        ("ml.g7e.48xlarge", "nvidia", 8, 96.0, True),
        ("ml.p6-b200.48xlarge", "nvidia", 8, 179.1, True),
        ("ml.p6-b300.48xlarge", "nvidia", 8, 268.6, True),
        ("ml.p6e-gb200.36xlarge", "nvidia", 4, 185.0, True),
        ("ml.dl1.24xlarge", "habana", 8, 32.0, True),
        ("ml.p2.16xlarge", "nvidia", 16, 12.0, False),
    ],
)
def test_the_newest_and_oldest_accelerated_families(
    name: str, accelerator: str, count: int, gib_per_device: float, nvme: bool
) -> None:
    it = InstanceType(name)
    assert it.accelerator == accelerator
    assert it.accelerator_count == count
    assert it.accelerator_memory_gib == pytest.approx(gib_per_device, abs=0.05)
    assert it.local_nvme is nvme


def test_cpu_families_from_the_hosting_list_are_known() -> None:
    for name in ("ml.m4.xlarge", "ml.c6in.32xlarge", "ml.r7gd.medium", "ml.m8g.48xlarge"):
        it = InstanceType(name)
        assert it.known and it.accelerator is None and it.accelerator_count == 0


@pytest.mark.parametrize(
    ("model_id", "gated"),
    [
        ("meta-llama/Meta-Llama-3-8B-Instruct", True),
        ("META-LLAMA/Llama-3.1-8B-Instruct", True),
        ("google/gemma-2-9b-it", True),
        ("mistralai/Mistral-7B-Instruct-v0.2", True),
        ("Qwen/Qwen2.5-7B-Instruct", False),
        ("microsoft/Phi-3-mini-4k-instruct", False),
        ("acme/unknown-model", False),
    ],
)
def test_gated_flags(model_id: str, gated: bool) -> None:
    assert catalogs.is_gated(model_id) is gated


@pytest.mark.parametrize(
    ("model_id", "context"),
    [
        ("Qwen/Qwen2.5-3B", 32768),
        ("Qwen/Qwen2.5-3B-Instruct", 32768),
        ("Qwen/Qwen2.5-7B", 131072),
        ("Qwen/Qwen2.5-7B-Instruct", 32768),
        ("Qwen/Qwen2.5-72B", 131072),
        ("Qwen/Qwen2.5-72B-Instruct", 32768),
    ],
)
def test_qwen25_contexts_follow_the_model_cards(model_id: str, context: int) -> None:
    rows = {r.id: r for r in catalogs.models().models}
    aliases = {a: r for r in rows.values() for a in r.aliases}
    assert (rows.get(model_id) or aliases[model_id]).context_length == context


def test_a_gpu_engine_on_gaudi_is_refused_naming_the_hardware(
    new_stack: Callable[..., Stack],
) -> None:
    from constructs_llm import Engine, LlmModel, ModelSource
    from constructs_llm.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"ml\.dl1\.24xlarge has Habana Gaudi.*custom"):
        LlmModel(
            new_stack(),
            "Model",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.tgi(),
            instance_type="ml.dl1.24xlarge",
        )


# -- tool_parsers.json: a parser per model family, checked against the engines' registries ------


def test_every_model_family_has_a_tool_parser_row_and_every_row_a_model() -> None:
    families = {row.family for row in catalogs.models().models if row.kind == "chat"}
    assert families == set(catalogs.tool_parsers().families)
    # embedding models call no tools: they have no family, and are found by none
    embedders = [row for row in catalogs.models().models if row.kind == "embedding"]
    assert embedders and all(row.family is None for row in embedders)
    assert catalogs.model_family(embedders[0].id) is None


@pytest.mark.parametrize("table", [catalogs.tool_parsers, catalogs.reasoning_parsers])
def test_every_family_parser_is_one_its_engine_registers_and_cites_its_source(
    table: Callable[[], ParserCatalog],
) -> None:
    for family, parsers in table().families.items():
        for engine in ("vllm", "sglang"):
            parser = getattr(parsers, engine)
            assert parser is None or parser in table().engines[engine].parsers, (family, parser)
        assert "@" in parsers.source or "model card" in parsers.source, family
    assert all(" @ " in e.source for e in table().engines.values())


@pytest.mark.parametrize(
    ("model_id", "family", "vllm", "sglang"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1", "llama3_json", "llama3"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1", "llama3_json", "llama3"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3", "llama3_json", "llama3"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3", "mistral", "mistral"),
        ("mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b-v0.2", None, None),
        ("mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b", "mistral", "mistral"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5", "hermes", "qwen25"),
        ("qwen/qwen3-8b", "qwen3", "hermes", "qwen25"),
        ("microsoft/Phi-3-mini-4k-instruct", "phi-3", None, None),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3", None, None),
    ],
)
def test_a_hub_id_finds_its_family_and_parsers(
    model_id: str, family: str, vllm: str | None, sglang: str | None
) -> None:
    assert catalogs.model_family(model_id) == family
    parsers = catalogs.tool_parsers().families[family]
    assert (parsers.vllm, parsers.sglang) == (vllm, sglang)


def test_an_unknown_model_has_no_family() -> None:
    assert catalogs.model_family("my-org/my-finetune") is None
    assert catalogs.model_family(None) is None
