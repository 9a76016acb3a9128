"""Which instance types of the catalog can serve a model: the memory plan of one copy on all
of each type's accelerators (as an ``LlmEndpoint`` places it by default), the instances a
number of concurrent full-length sequences needs, and, for the types a price is given for,
what that count costs per hour and per month. No price ships with the library: prices change
by region and over time, so the caller states them.

Pure Python (no ``aws_cdk``): ``python -m constructs_llm.sizing`` prints the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from constructs_llm import catalogs
from constructs_llm.errors import ConfigurationError, ConstructsLlmError
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.problems import Problem, Problems
from constructs_llm.sizing.instance_prices import usd_per_hour_problem
from constructs_llm.sizing.memory import MemoryPlan, ModelArchitecture, plan_memory

__all__ = ["HOURS_PER_MONTH", "InstanceFit", "fit_instances"]

#: Hours in an average month (365 days x 24 hours / 12), as the capacity note counts them.
HOURS_PER_MONTH = 730
_SUBJECT = "fit_instances"


@dataclass(frozen=True, kw_only=True)
class InstanceFit:
    """One instance type for one model: its memory plan and what a deployment of it costs.

    :param instance_type: e.g. ``"ml.g5.2xlarge"``.
    :param plan: the memory plan of one copy on every accelerator of the type.
    :param count: the instances that hold the concurrency asked for, at one copy each (1
        when none was asked, or for an embedding model, which keeps no KV cache); 0 when the
        model does not fit.
    :param usd_per_hour: the price of one instance, as given. @default None (no price given)
    """

    instance_type: str
    plan: MemoryPlan
    count: int
    usd_per_hour: float | None = None

    @property
    def fits(self) -> bool:
        return self.plan.fits and self.count > 0

    @property
    def usd_per_hour_total(self) -> float | None:
        """The price of ``count`` instances per hour, when a price was given."""
        if self.usd_per_hour is None or not self.fits:
            return None
        return self.usd_per_hour * self.count

    @property
    def usd_per_month(self) -> float | None:
        """The price of ``count`` instances for a month of 730 hours."""
        hourly = self.usd_per_hour_total
        return None if hourly is None else hourly * HOURS_PER_MONTH


def fit_instances(
    model_id: str,
    *,
    max_total_tokens: int | None = None,
    concurrency: int | None = None,
    prices: Mapping[str, float] | None = None,
) -> tuple[InstanceFit, ...]:
    """Every accelerated instance type of the catalog, planned for ``model_id``: those the
    model fits first (cheapest first where priced, then by total accelerator memory), then
    those it does not fit (``fits`` False, the reasons in ``plan.problems``).

    :param model_id: a Hugging Face model id of the packaged model table
        (``ModelArchitecture.known_models()``).
    :param max_total_tokens: the longest sequence (prompt + generation) to plan for.
        @default the model's context length
    :param concurrency: full-length sequences to serve at once; sets each type's ``count``.
        @default None (one instance)
    :param prices: USD per instance-hour by instance type (``{"ml.g6e.2xlarge": 2.24}``).
        @default None (no prices: no library price table exists)
    :raises ConfigurationError: the model is not in the table, or a value is invalid (a
        count below 1, ``max_total_tokens`` beyond the model's context, a price that is not
        a positive number, a priced type the catalog lacks or that has no accelerators).
    """
    problems = Problems(_SUBJECT)
    arch = ModelArchitecture.lookup(model_id)
    if arch is None:
        known = len(ModelArchitecture.known_models())
        problems.add(
            Problem.of(
                "model_id",
                model_id,
                f"model {model_id!r} is not in the packaged model table ({known} models, "
                "ModelArchitecture.known_models());",
                "pass a Hugging Face id it lists, or plan a model it lacks with "
                "plan_memory(ModelArchitecture(...), instance=...)",
            )
        )
    for name, value in (("max_total_tokens", max_total_tokens), ("concurrency", concurrency)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            problems.add(
                Problem.of(name, value, f"{name} must be a whole number >= 1, got {value!r}")
            )
    priced = _check_prices(prices or {}, problems)
    problems.raise_if_any()
    arch = problems.require(arch)
    if max_total_tokens is not None and max_total_tokens > arch.context_length:
        problems.fail(
            Problem.of(
                "max_total_tokens",
                max_total_tokens,
                f"max_total_tokens {max_total_tokens:,} exceeds the context of {arch.name} "
                f"({arch.context_length:,} tokens);",
                f"plan for at most {arch.context_length:,}",
            )
        )
    fits = [
        _fit(arch, instance, max_total_tokens, concurrency, priced.get(instance.name))
        for instance in _accelerated()
    ]
    return tuple(sorted(fits, key=_order))


def _accelerated() -> list[InstanceType]:
    types = [InstanceType(name) for name in catalogs.instances().hosting.instance_types]
    return [t for t in types if t.accelerator in ("nvidia", "neuron")]


def _check_prices(prices: Mapping[str, float], problems: Problems) -> dict[str, float]:
    checked = {}
    for name, price in prices.items():
        try:
            instance = InstanceType(name)
        except ConstructsLlmError as error:
            problems.add(Problem.of("prices", name, f"price for {name!r}: {error}"))
            continue
        if instance.accelerator not in ("nvidia", "neuron"):
            problems.add(
                Problem.of(
                    "prices",
                    name,
                    f"price for {name!r}: the type has no GPUs or Neuron devices, so no plan uses "
                    "it;",
                    "price an accelerated type",
                )
            )
        elif (wrong := usd_per_hour_problem(f"price for {name!r}", price, "prices")) is not None:
            problems.add(wrong)
        else:
            checked[instance.name] = float(price)
    return checked


def _fit(
    arch: ModelArchitecture,
    instance: InstanceType,
    max_total_tokens: int | None,
    concurrency: int | None,
    price: float | None,
) -> InstanceFit:
    try:
        plan = plan_memory(arch, instance=instance, max_total_tokens=max_total_tokens, strict=False)
    except ConfigurationError as error:  # a type the planner cannot size (no device memory)
        plan = _unplanned(arch, instance, error.problems)
    count = 0
    if plan.fits:
        if concurrency is None or arch.is_embedding:
            count = 1
        elif plan.max_concurrent_sequences > 0:
            count = math.ceil(concurrency / plan.max_concurrent_sequences)
    return InstanceFit(instance_type=instance.name, plan=plan, count=count, usd_per_hour=price)


def _unplanned(
    arch: ModelArchitecture, instance: InstanceType, reasons: tuple[Problem, ...]
) -> MemoryPlan:
    return MemoryPlan(
        model=arch.name,
        instance=instance.name,
        devices=instance.accelerator_count or 0,
        device_memory_gib=0.0,
        usable_gib=0.0,
        dtype=arch.default_dtype,
        weights_gib=0.0,
        kv_bytes_per_token=0,
        kv_bytes_per_token_per_device=0,
        kv_budget_gib=0.0,
        max_total_tokens=0,
        max_batch_total_tokens=0,
        max_concurrent_sequences=0,
        typical_request_tokens=0,
        typical_concurrent_sequences=0,
        fits=False,
        problems=reasons,
    )


def _order(fit: InstanceFit) -> tuple[bool, float, float, str]:
    total = fit.usd_per_hour_total
    memory = fit.plan.devices * fit.plan.device_memory_gib * max(fit.count, 1)
    return (not fit.fits, math.inf if total is None else total, memory, fit.instance_type)
