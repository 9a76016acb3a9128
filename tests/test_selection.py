"""Choosing example stacks with `-c constructs-llm:stacks=...` (`make synth STACKS=...`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stacks import EXAMPLES
from stacks.selection import EXAMPLE_NAMES, select_examples


@pytest.mark.parametrize("value", [None, "", "all"])
def test_default_selects_every_example(value: object) -> None:
    assert select_examples(value, EXAMPLES) == list(EXAMPLES)


def test_a_comma_separated_list_selects_those(value: str = " phi3-lmi , mistral-inf2") -> None:
    assert select_examples(value, EXAMPLES) == ["phi3-lmi", "mistral-inf2"]


def test_an_unknown_name_fails_listing_the_choices() -> None:
    with pytest.raises(ValueError, match=r"\['phi3-lmx'\].*'falcon40b-lmi'"):
        select_examples("phi3-lmx", EXAMPLES)


def test_the_light_name_list_matches_the_stacks() -> None:
    assert tuple(EXAMPLES) == EXAMPLE_NAMES


def test_make_synth_rejects_a_bad_name_before_touching_cdk_out(tmp_path: Path) -> None:
    """`make synth STACKS=typo` runs this check first (no CDK import), then synthesizes into
    a fresh directory that replaces cdk.out only on success."""
    script = Path(__file__).resolve().parent.parent / "stacks" / "selection.py"
    bad = subprocess.run(
        [sys.executable, str(script), "typo"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 1
    assert "make synth STACKS=typo: unknown example stack(s) ['typo']" in bad.stderr
    assert "'phi3-lmi'" in bad.stderr
    mixed = subprocess.run(
        [sys.executable, str(script), "phi3-lmi,all-x"], capture_output=True, check=False
    )
    assert mixed.returncode == 1
    ok = subprocess.run([sys.executable, str(script), "phi3-lmi, llama2-tgi"], check=False)
    assert ok.returncode == 0


def test_make_synth_with_a_bad_name_keeps_the_previous_output(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "out"
    out.mkdir()
    (out / "Previous.template.json").write_text("{}")
    # -o: treat the installs as done; this checks the recipe, not the installers.
    installed = ["-o", ".venv/.synth", "-o", "node_modules/.bin/cdk"]
    result = subprocess.run(
        ["make", "--no-print-directory", *installed, "synth", "STACKS=typo", f"CDK_OUT={out}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "unknown example stack(s) ['typo']" in result.stderr
    assert (out / "Previous.template.json").exists()
    assert not Path(f"{out}.previous").exists()
