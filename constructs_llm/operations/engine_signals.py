"""PromQL over one target's engine signals (``engines/signals.py``): the queries the default
engine alarms evaluate, and those the dashboard lists for CloudWatch's Query Studio.

Where the data is. With detailed observability (``hosting/metrics_config.py``) SageMaker
scrapes the engine's Prometheus endpoint and publishes each series to CloudWatch as an
OpenTelemetry metric, labelled with ``aws.sagemaker.endpoint.name``,
``aws.sagemaker.variant.name``, ``aws.sagemaker.inference_component.name``,
``@resource.host.id`` (the instance), ``@resource.host.type`` (its instance type: the pool)
and ``@resource.cloud.availability_zone`` (guides ``monitoring-cloudwatch-detailed-observability``
and ``inference-monitoring``, "OpenTelemetry metric labels"). They are queried with PromQL,
where a label with dots is quoted (``{"aws.sagemaker.endpoint.name"="..."}``).

Two spellings. AWS's own pages write the same metric as ``vllm:kv_cache_usage_perc`` (its
blog) and ``vllm_kv_cache_usage_perc`` (the guide's PromQL examples), and no source says which
one CloudWatch stores; every query takes both (``A or B``), so whichever exists answers.

What an alarm sees. A PromQL alarm evaluates an instant query; every series it returns is a
breaching contributor, which goes to ALARM once it has been returned for ``PendingPeriod``
(CloudWatch guide "PromQL alarms", ``alarm-promql``). So an alarm's query is the comparison
itself, over the raw series: one contributor per instance and engine (per copy for a
component), labelled with its instance type, whichever pool it runs in. A series that does not
exist returns nothing and breaches never: only a real deploy shows that the names match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from aws_cdk import Duration

from constructs_llm.problems import Problem

if TYPE_CHECKING:
    from constructs_llm.engines.engine import Engine
    from constructs_llm.engines.signals import EngineSignals

_ENDPOINT_LABEL = "aws.sagemaker.endpoint.name"
_VARIANT_LABEL = "aws.sagemaker.variant.name"
_COMPONENT_LABEL = "aws.sagemaker.inference_component.name"
_POOL_LABEL = "@resource.host.type"


class EngineThresholds(Protocol):
    """What the engine alarms read of ``Alarms``: their thresholds (None: no such alarm)."""

    @property
    def kv_cache_percent(self) -> float | None: ...

    @property
    def requests_waiting(self) -> int | None: ...


def spellings(name: str) -> tuple[str, ...]:
    """The metric as the engine writes it and with ``_`` for ``:``, the two spellings AWS's
    pages use."""
    underscored = name.replace(":", "_")
    return (name,) if underscored == name else (name, underscored)


@dataclass(frozen=True)
class EngineAlarm:
    """One default engine alarm: where it goes in ``LlmAlarms``, its construct id, its query,
    how long a contributor must breach (and then recover), and what to do, for its
    description."""

    field: str
    name: str
    query: str
    pending: Duration
    recovery: Duration
    why: str


@dataclass(frozen=True)
class EngineQueries:
    """The engine signals of one target: an endpoint variant (its endpoint and variant labels)
    or an inference component (its component label).

    :param signals: the engine's metric names.
    :param labels: the selector's labels and values, in order.
    :param pooled: the target runs on instance pools (the dashboard's queries split by pool).
    """

    signals: EngineSignals
    labels: tuple[tuple[str, str], ...]
    pooled: bool = False

    @staticmethod
    def of_variant(
        signals: EngineSignals, endpoint_name: str, variant_name: str, *, pooled: bool
    ) -> EngineQueries:
        labels = ((_ENDPOINT_LABEL, endpoint_name), (_VARIANT_LABEL, variant_name))
        return EngineQueries(signals, labels, pooled)

    @staticmethod
    def of_component(signals: EngineSignals, component_name: str) -> EngineQueries:
        return EngineQueries(signals, ((_COMPONENT_LABEL, component_name),))

    @property
    def selector(self) -> str:
        """``{"aws.sagemaker.endpoint.name"="...","aws.sagemaker.variant.name"="..."}``"""
        return "{" + ",".join(f'"{label}"="{value}"' for label, value in self.labels) + "}"

    def series(self, names: Sequence[str]) -> list[str]:
        """Each metric of ``names`` in both spellings, narrowed to this target."""
        return [f"{spelled}{self.selector}" for name in names for spelled in spellings(name)]

    def kv_cache_above(self, percent: float) -> str:
        """The engines whose KV cache is above ``percent`` (the metric is a fraction)."""
        return " or ".join(f"{s} > {percent / 100:g}" for s in self.series(self.signals.kv_cache))

    def waiting_at_least(self, requests: int) -> str:
        """The engines with at least ``requests`` requests waiting for a batch slot."""
        return " or ".join(f"{s} >= {requests}" for s in self.series(self.signals.waiting))

    def alarms(self, settings: EngineThresholds) -> list[EngineAlarm]:
        """The default engine alarms ``settings`` ask for, each saying what to do."""
        engine = self.signals.engine
        found = []
        if settings.kv_cache_percent is not None:
            percent = f"{settings.kv_cache_percent:g} %"
            found.append(
                EngineAlarm(
                    "kv_cache",
                    "KvCache",
                    self.kv_cache_above(settings.kv_cache_percent),
                    Duration.minutes(10),
                    Duration.minutes(5),
                    f"{engine}'s KV cache above {percent} for 10 minutes on an instance (the "
                    "contributor names it and its instance type): the engine queues or "
                    "preempts requests. Scale out (raise max_capacity, lower "
                    "target_concurrent_requests), or let each request hold fewer tokens "
                    "(max_total_tokens)",
                )
            )
        if settings.requests_waiting is not None:
            waiting = settings.requests_waiting
            found.append(
                EngineAlarm(
                    "queue",
                    "Queue",
                    self.waiting_at_least(waiting),
                    Duration.minutes(5),
                    Duration.minutes(5),
                    f"at least {waiting} request{'s' if waiting > 1 else ''} waiting for a "
                    f"batch slot in {engine} for 5 minutes on an instance (the contributor "
                    "names it and its instance type): the endpoint is saturated. Scale out, "
                    "or set target_concurrent_requests below what one instance's engine runs "
                    "at once (the memory plan's concurrent sequences)",
                )
            )
        return found

    def graphs(self) -> list[tuple[str, str]]:
        """What the dashboard lists for Query Studio: (title, PromQL), the fullest engine's KV
        cache and the requests waiting and running (by pool with instance pools), and the
        p90 time to first token and inter-token latency."""
        signals = self.signals
        by = f' by ("{_POOL_LABEL}")' if self.pooled else ""

        def over(aggregate: str, names: Sequence[str]) -> str:
            return " or ".join(f"{aggregate}{by}({s})" for s in self.series(names))

        def p90(names: Sequence[str]) -> str:
            return " or ".join(
                f"histogram_quantile(0.9, sum{by}(rate({s}[5m])))" for s in self.series(names)
            )

        return [
            ("KV cache in use (fraction, fullest engine)", over("max", signals.kv_cache)),
            ("Requests waiting", over("sum", signals.waiting)),
            ("Requests running", over("sum", signals.running)),
            ("Time to first token, p90 (s)", p90(signals.time_to_first_token)),
            ("Inter-token latency, p90 (s)", p90(signals.inter_token_latency)),
        ]


#: The thresholds ``Alarms`` sets when they are not given (what asking for an alarm changes).
DEFAULT_KV_CACHE_PERCENT = 95.0
DEFAULT_REQUESTS_WAITING = 1


def thresholds_asked(settings: EngineThresholds) -> list[str]:
    """The engine-alarm thresholds set to other than their defaults, as ``name=value``: what
    asks for an engine alarm."""
    return [
        f"{name}={value!r}"
        for name, value, default in (
            ("kv_cache_percent", settings.kv_cache_percent, DEFAULT_KV_CACHE_PERCENT),
            ("requests_waiting", settings.requests_waiting, DEFAULT_REQUESTS_WAITING),
        )
        if value is not None and value != default
    ]


def engine_alarm_problem(
    settings: EngineThresholds | None,
    engines: Sequence[Engine],
    *,
    detailed: bool,
    described: bool = True,
) -> Problem | None:
    """Engine alarms asked for (a threshold other than the default) where none can be
    rendered: detailed observability is off, or no engine of the target (``engines``: its
    production variants' or its copies') publishes known signals."""
    if settings is None:
        return None
    if not described:
        why_none = (
            "SageMaker's guide describes detailed observability (the engine metrics) for "
            "real-time endpoints on GPU or CPU instances only, not asynchronous endpoints or "
            "Neuron instances; host the model on a real-time endpoint on GPUs"
        )
    elif not detailed:
        why_none = (
            "detailed_observability=False: SageMaker publishes no engine metrics without it; "
            "pass detailed_observability=True"
        )
    elif any(engine.signals is not None for engine in engines):
        return None
    else:
        named = sorted({f"Engine.{e.factory_name}()" for e in engines})
        why_none = (
            f"{' and '.join(named)} publish no metrics SageMaker's detailed observability is "
            "documented to scrape (it names vLLM and SGLang); serve the model with "
            "Engine.vllm() or Engine.sglang()"
        )
    asked = thresholds_asked(settings)
    if not asked:
        return None
    return Problem.of(
        "alarms",
        settings,
        f"Alarms({', '.join(asked)}) asks for an alarm on the engine's own metrics, but "
        f"{why_none}, or drop the threshold (None)",
    )
