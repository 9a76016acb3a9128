"""Choosing example stacks with `-c constructs-llm:stacks=...` (`make synth STACKS=...`)."""

from __future__ import annotations

import pytest

from stacks import EXAMPLES
from stacks.selection import select_examples


@pytest.mark.parametrize("value", [None, "", "all"])
def test_default_selects_every_example(value: object) -> None:
    assert select_examples(value, EXAMPLES) == list(EXAMPLES)


def test_a_comma_separated_list_selects_those(value: str = " phi3-lmi , mistral-inf2") -> None:
    assert select_examples(value, EXAMPLES) == ["phi3-lmi", "mistral-inf2"]


def test_an_unknown_name_fails_listing_the_choices() -> None:
    with pytest.raises(ValueError, match=r"\['phi3-lmx'\].*'falcon40b-lmi'"):
        select_examples("phi3-lmx", EXAMPLES)
