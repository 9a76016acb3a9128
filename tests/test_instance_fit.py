"""fit_instances and ``python -m constructs_llm.sizing``: a model planned on every accelerated
type of the catalog, the count a concurrency needs, prices only as given, and bad input
refused naming the value."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from constructs_llm import ConfigurationError, InstanceFit, fit_instances
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.sizing.__main__ import main
from constructs_llm.sizing.memory import ModelArchitecture, plan_memory
from tests.conftest import ROOT

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"


@pytest.fixture(scope="module")
def fits() -> tuple[InstanceFit, ...]:
    return fit_instances(
        LLAMA3,
        max_total_tokens=8192,
        concurrency=64,
        prices={"ml.g5.2xlarge": 1.52, "ml.g6e.2xlarge": 2.24},
    )


def _by_type(fits: tuple[InstanceFit, ...]) -> dict[str, InstanceFit]:
    return {f.instance_type: f for f in fits}


def test_every_accelerated_type_is_planned_as_the_planner_plans_it(
    fits: tuple[InstanceFit, ...],
) -> None:
    arch = ModelArchitecture.lookup(LLAMA3)
    assert arch is not None
    by_type = _by_type(fits)
    for name in ("ml.g5.2xlarge", "ml.g5.12xlarge", "ml.p2.xlarge", "ml.inf2.xlarge"):
        assert by_type[name].plan == plan_memory(
            arch, instance=name, max_total_tokens=8192, strict=False
        )
    assert all(InstanceType(f.instance_type).accelerator in ("nvidia", "neuron") for f in fits)
    assert "ml.m5.xlarge" not in by_type


def test_types_the_model_does_not_fit_come_last_and_say_why(
    fits: tuple[InstanceFit, ...],
) -> None:
    p2 = _by_type(fits)["ml.p2.xlarge"]  # one 12 GiB K80: 15 GiB of weights cannot load
    assert not p2.fits and p2.count == 0 and "weights need 15.0 GiB" in str(p2.plan.problems[0])
    flags = [f.fits for f in fits]
    assert flags == sorted(flags, reverse=True) and flags[0] and not flags[-1]


def test_the_count_holds_the_concurrency(fits: tuple[InstanceFit, ...]) -> None:
    for fit in fits:
        if fit.fits:
            assert fit.count == math.ceil(64 / fit.plan.max_concurrent_sequences)
            assert fit.count * fit.plan.max_concurrent_sequences >= 64
    assert fit_instances(LLAMA3, max_total_tokens=8192)[0].count == 1


def test_priced_types_cost_their_count_cheapest_first(fits: tuple[InstanceFit, ...]) -> None:
    g5, g6e = _by_type(fits)["ml.g5.2xlarge"], _by_type(fits)["ml.g6e.2xlarge"]
    for fit, price in ((g5, 1.52), (g6e, 2.24)):
        assert fit.usd_per_hour_total == pytest.approx(price * fit.count)
        assert fit.usd_per_month == pytest.approx(price * fit.count * 730)
    # g6e's 48 GiB GPU holds more sequences: fewer instances, cheaper at 64 at once
    assert g6e.count < g5.count and [f.instance_type for f in fits[:2]] == [
        "ml.g6e.2xlarge",
        "ml.g5.2xlarge",
    ]
    unpriced = _by_type(fits)["ml.g5.12xlarge"]
    assert unpriced.usd_per_hour_total is None and unpriced.usd_per_month is None


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"model_id": "acme/no-such-model"}, "'acme/no-such-model' is not in the packaged"),
        ({"concurrency": 0}, "concurrency must be a whole number >= 1, got 0"),
        ({"max_total_tokens": -5}, "max_total_tokens must be a whole number >= 1, got -5"),
        ({"max_total_tokens": 100_000}, "max_total_tokens 100,000 exceeds the context of"),
        ({"prices": {"ml.g5.45xlarge": 2.0}}, "price for 'ml.g5.45xlarge'"),
        ({"prices": {"ml.m5.xlarge": 0.2}}, "'ml.m5.xlarge': the type has no GPUs"),
        ({"prices": {"ml.g5.2xlarge": 0}}, "must be a positive number of USD per hour, got 0"),
        ({"prices": {"ml.g5.2xlarge": float("nan")}}, "got nan"),
    ],
)
def test_bad_input_fails_naming_the_value(kwargs: dict[str, object], named: str) -> None:
    args: dict[str, object] = {"model_id": LLAMA3, **kwargs}
    with pytest.raises(ConfigurationError, match="fit_instances") as raised:
        fit_instances(**args)  # type: ignore[arg-type]
    assert named in str(raised.value)


def test_the_command_prints_the_types_that_fit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([LLAMA3, "--max-total-tokens", "8192", "--price", "ml.g5.2xlarge=1.52"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("ml.")}
    assert "ml.p2.xlarge" not in rows and "ml.g5.12xlarge" in rows
    g5 = rows["ml.g5.2xlarge"].split()
    assert g5[1:5] == ["1", "x", "21.7", "GiB"] and g5[-2:] == ["1.52", "1,110"]
    assert "accelerated types do not fit; --all lists them" in out


def test_all_lists_the_types_that_do_not_fit_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([LLAMA3, "--all"]) == 0
    out = capsys.readouterr().out.split("does not fit:")[1]
    assert "ml.p2.xlarge: meta-llama/Meta-Llama-3-8B-Instruct weights need 15.0 GiB" in out


def test_an_unknown_model_exits_2_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["acme/no-such-model"]) == 2
    captured = capsys.readouterr()
    assert "error: fit_instances: model 'acme/no-such-model'" in captured.err
    assert "Traceback" not in captured.err and not captured.out


@pytest.mark.parametrize(
    ("price", "named"),
    [
        ("ml.g5.2xlarge", "got 'ml.g5.2xlarge'"),
        ("ml.g5.2xlarge=cheap", "got 'ml.g5.2xlarge=cheap'"),
        ("ml.g5.2xlarge=-1", "got -1.0"),
        ("ml.gg5.2xlarge=1", "price for 'ml.gg5.2xlarge'"),
    ],
)
def test_a_bad_price_exits_2_naming_it(
    price: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main([LLAMA3, "--price", price])
    except SystemExit as exit:  # argparse refuses what is not TYPE=USD
        status = int(str(exit.code))
    assert status == 2
    assert named in capsys.readouterr().err


def test_no_type_fitting_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every model of the table fits some type (the 405B one the 8-GPU H200 and B200 types),
    so the command is given only the types Llama-3-8B does not fit."""
    unfit = tuple(f for f in fit_instances(LLAMA3) if not f.fits)
    monkeypatch.setattr("constructs_llm.sizing.__main__.fit_instances", lambda *a, **k: unfit)
    assert main([LLAMA3]) == 1
    assert "no instance type of the catalog fits it" in capsys.readouterr().out


def test_python_m_runs_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "constructs_llm.sizing", LLAMA3, "--price", "ml.g6e.2xlarge=2.24"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("ml.g6e.2xlarge ")]
    assert row.split()[-2:] == ["2.24", "1,635"]
