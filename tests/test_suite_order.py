"""How `make test` spreads its work over the xdist workers (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import worker_import_order

MODULES = [Path(f"tests/test_{n}.py") for n in "abcdefg"]


def test_each_worker_imports_every_module_once_starting_at_its_own_share() -> None:
    orders = {w: worker_import_order(MODULES, w, 2) for w in ("gw0", "gw1")}
    assert orders["gw0"] == MODULES
    assert orders["gw1"][0] == MODULES[3]  # the middle: the two compile different halves
    for order in orders.values():
        assert sorted(order) == MODULES


def test_three_workers_start_a_third_apart() -> None:
    starts = [worker_import_order(MODULES, f"gw{i}", 3)[0] for i in range(3)]
    assert starts == [MODULES[0], MODULES[2], MODULES[4]]
