"""The packaged catalogs agree with their pinned sources: the SageMaker SDK image config
(sagemaker-core, a dev dependency), botocore's service model and cfn-lint's CloudFormation
schemas by region. Bumping either pin makes
this fail with the diff; `make refresh-catalogs` rewrites the files."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from scripts import refresh_catalogs as refresh

FIX = "the packaged catalog is stale: run `make refresh-catalogs`, review and commit the diff"


def _diff(name: str, expected: str) -> str:
    current = (refresh.DATA / name).read_text("utf-8")
    lines = difflib.unified_diff(
        current.splitlines(), expected.splitlines(), f"packaged {name}", "pinned sources", n=1
    )
    return "\n".join(lines)


def test_dlc_images_match_the_pinned_sagemaker_sdk() -> None:
    diff = _diff("dlc_images.json", refresh.render(refresh.build_dlc_images()))
    assert not diff, f"{FIX}\n{diff}"


def test_hosting_instance_types_match_the_pinned_botocore() -> None:
    current = json.loads((refresh.DATA / "instances.json").read_text("utf-8"))
    diff = _diff("instances.json", refresh.render(refresh.build_instances(current)))
    assert not diff, f"{FIX}\n{diff}"


def test_region_availability_matches_the_pinned_cfn_lint() -> None:
    current = json.loads((refresh.DATA / "regions.json").read_text("utf-8"))
    diff = _diff("regions.json", refresh.render(refresh.build_regions(current)))
    assert not diff, f"{FIX}\n{diff}"


def test_a_type_dropped_from_a_region_s_schemas_shows_up_as_a_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table is computed from the installed schemas, not copied: a copy of them without
    function URLs in eu-west-1 gives a table that lists it as lacking there."""
    source = refresh._cfn_lint_schemas()
    (tmp_path / "resources").symlink_to(source / "resources")
    (tmp_path / "version.json").symlink_to(source / "version.json")
    (tmp_path / "providers").mkdir()
    for path in (source / "providers").glob("*.json"):
        types = json.loads(path.read_text("utf-8"))
        if path.stem == "eu-west-1":
            del types["AWS::Lambda::Url"]
        (tmp_path / "providers" / path.name).write_text(json.dumps(types), "utf-8")
    monkeypatch.setattr(refresh, "_cfn_lint_schemas", lambda: tmp_path)
    current = json.loads((refresh.DATA / "regions.json").read_text("utf-8"))
    url = refresh.build_regions(current)["features"]["AWS::Lambda::Url"]
    assert "eu-west-1" in url["lacking"] and "eu-west-1" not in url["regions"]


def test_every_hosting_type_has_hardware_figures() -> None:
    current = json.loads((refresh.DATA / "instances.json").read_text("utf-8"))
    assert refresh.missing_hardware(current) == []


def test_the_newest_images_are_the_defaults() -> None:
    families = refresh.build_dlc_images()["families"]
    assert families["lmi"]["tag"] == "0.38.0-lmi29.0.0-cu130"
    assert families["vllm"]["tag"] == "0.30.0-gpu-py312-cu130-ubuntu24.04-sagemaker"
    assert families["sglang"]["tag"] == "0.5.20-gpu-py312-cu130-ubuntu24.04-sagemaker"
    assert "me-west-1" in families["vllm"]["regions"]
    assert all(f["reason"] for f in families.values())


def test_tei_images_come_from_registries_of_their_own() -> None:
    """TEI's images live in other accounts than the shared DLC registries ("hosted in a
    different ECR account in each region", aws.github.io/deep-learning-containers/tei), so the
    refresh writes them as a registry group of their own instead of failing on two accounts
    for one region."""
    catalog = refresh.build_dlc_images()
    families, group = catalog["families"], catalog["registries"]["tei"]
    assert families["tei"]["tag"] == "2.0.1-tei1.8.2-gpu-py310-cu122-ubuntu22.04"
    assert families["tei-cpu"]["tag"] == "2.0.1-tei1.8.2-cpu-py310-ubuntu22.04"
    assert (families["tei"]["repository"], families["tei-cpu"]["repository"]) == ("tei", "tei-cpu")
    assert families["tei"]["registry"] == families["tei-cpu"]["registry"] == "tei"
    assert families["tei"]["regions"] == families["tei-cpu"]["regions"] == sorted(group)
    assert group["us-east-1"] == {"account": "683313688378", "domain": "amazonaws.com"}
    assert catalog["regions"]["us-east-1"]["account"] == "763104351884"  # shared ones unchanged
    assert all(families[name]["registry"] is None for name in ("tgi", "lmi", "vllm", "sglang"))


def test_a_changed_source_shows_up_as_a_diff() -> None:
    stale = refresh.build_dlc_images()
    stale["families"]["lmi"]["tag"] = "0.36.0-lmi27.0.0-cu130"
    diff = "\n".join(
        difflib.unified_diff(
            refresh.render(stale).splitlines(),
            refresh.render(refresh.build_dlc_images()).splitlines(),
        )
    )
    assert '-   "tag": "0.36.0-lmi27.0.0-cu130",' in diff
    assert '+   "tag": "0.38.0-lmi29.0.0-cu130",' in diff
