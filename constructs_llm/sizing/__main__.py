"""``python -m constructs_llm.sizing MODEL_ID [--max-total-tokens N] [--concurrency N]
[--price TYPE=USD_PER_HOUR ...] [--all]``: the instance types of the catalog a model fits,
with their devices, weights, KV budget and concurrent full-length sequences, and, for the
types priced, dollars per hour and per month at the count the concurrency needs
(:func:`constructs_llm.sizing.instance_fit.fit_instances`).

Exit status: 0 when a type fits, 1 when none does, 2 for bad input (an unknown model, a bad
``--price``), with the message on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from constructs_llm.errors import ConstructsLlmError
from constructs_llm.sizing.instance_fit import HOURS_PER_MONTH, InstanceFit, fit_instances

_HEADER = ("instance type", "devices", "weights", "KV budget", "sequences", "count")


def _price(value: str) -> tuple[str, float]:
    name, sep, usd = value.partition("=")
    try:
        price = float(usd)
    except ValueError:
        price = None
    if not sep or not name or price is None:
        raise argparse.ArgumentTypeError(
            f"--price takes TYPE=USD_PER_HOUR, e.g. ml.g6e.2xlarge=2.24; got {value!r}"
        )
    return name, price


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m constructs_llm.sizing",
        description="The SageMaker instance types a model fits, from the packaged model table "
        "and instance catalog (memory plans per type; no prices ship: give them with --price).",
    )
    parser.add_argument("model_id", metavar="MODEL_ID", help="a Hugging Face model id")
    parser.add_argument(
        "--max-total-tokens",
        type=int,
        metavar="N",
        help="the longest sequence, prompt + generation (default: the model's context)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="full-length sequences served at once: sets the instance count",
    )
    parser.add_argument(
        "--price",
        type=_price,
        action="append",
        default=[],
        metavar="TYPE=USD_PER_HOUR",
        help="the on-demand price of one instance of TYPE (repeat for several types)",
    )
    parser.add_argument("--all", action="store_true", help="also list the types that do not fit")
    return parser


def _row(fit: InstanceFit, priced: bool) -> tuple[str, ...]:
    plan = fit.plan
    cells = (
        fit.instance_type,
        f"{plan.devices} x {plan.device_memory_gib:.1f} GiB",
        f"{plan.weights_gib:.1f} GiB",
        f"{plan.kv_budget_gib:.1f} GiB",
        f"{plan.max_concurrent_sequences:,}",
        str(fit.count),
    )
    if not priced:
        return cells
    hourly, monthly = fit.usd_per_hour_total, fit.usd_per_month
    if hourly is None or monthly is None:
        return (*cells, "", "")
    return (*cells, f"{hourly:,.2f}", f"{monthly:,.0f}")


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    prices: dict[str, float] = {}
    for name, price in args.price:
        prices[name] = price
    try:
        fits = fit_instances(
            args.model_id,
            max_total_tokens=args.max_total_tokens,
            concurrency=args.concurrency,
            prices=prices,
        )
    except ConstructsLlmError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    fitting = [f for f in fits if f.fits]
    priced = bool(prices)
    header = (*_HEADER, "USD/hour", f"USD/month ({HOURS_PER_MONTH} h)") if priced else _HEADER
    plan = fits[0].plan
    tokens = f"{plan.max_total_tokens:,}-token sequences" if plan.max_total_tokens else "sequences"
    wanted = f", {args.concurrency:,} at once" if args.concurrency else ""
    print(f"{args.model_id}: {tokens}{wanted}; one copy on every device of each type")
    if fitting:
        print(_table([header, *(_row(f, priced) for f in fitting)]))
    else:
        print("no instance type of the catalog fits it")
    unfit = [f for f in fits if not f.fits]
    if args.all and unfit:
        print("\ndoes not fit:")
        for fit in unfit:
            reason = (
                str(fit.plan.problems[0]) if fit.plan.problems else "no instance holds one sequence"
            )
            print(f"  {fit.instance_type}: {reason}")
    elif unfit:
        print(f"({len(unfit)} accelerated types do not fit; --all lists them with the reason)")
    return 0 if fitting else 1


if __name__ == "__main__":
    sys.exit(main())
