"""A checker of CloudWatch Embedded Metric Format records, written from the specification's
MUST rules (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
CloudWatch_Embedded_Metric_Format_Specification.html): a JSON object whose ``_aws`` member
holds an integer ``Timestamp`` (ms) and ``CloudWatchMetrics``, an array of directives with a
``Namespace`` (1-255 characters), ``Dimensions`` (at least one dimension set, each at most 9
references to root members with string values: the stricter limit the page has stated) and ``Metrics`` (at most 100 definitions, each
a ``Name`` referring to a root member that is a number or an array of at most 100 numbers,
and an optional CloudWatch ``Unit``). Objects the specification defines have no other members.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["check", "emf_metrics", "parse_emf_line"]

UNITS = frozenset(
    {
        "Seconds",
        "Microseconds",
        "Milliseconds",
        "Bytes",
        "Kilobytes",
        "Megabytes",
        "Gigabytes",
        "Terabytes",
        "Bits",
        "Kilobits",
        "Megabits",
        "Gigabits",
        "Terabits",
        "Percent",
        "Count",
        "Bytes/Second",
        "Kilobytes/Second",
        "Megabytes/Second",
        "Gigabytes/Second",
        "Terabytes/Second",
        "Bits/Second",
        "Kilobits/Second",
        "Megabits/Second",
        "Gigabits/Second",
        "Terabits/Second",
        "Count/Second",
        "None",
    }
)
MAX_DIMENSIONS = 9
MAX_METRICS = 100
MAX_VALUES = 100


def parse_emf_line(line: str) -> dict[str, Any]:
    """A log line that must be an EMF document: a JSON object and nothing around it."""
    record = json.loads(line)
    assert isinstance(record, dict), line
    check(record)
    return record


def check(record: dict[str, Any]) -> None:
    meta = record["_aws"]
    assert isinstance(meta, dict) and set(meta) <= {"Timestamp", "CloudWatchMetrics"}, meta
    assert isinstance(meta["Timestamp"], int) and not isinstance(meta["Timestamp"], bool)
    directives = meta["CloudWatchMetrics"]
    assert isinstance(directives, list) and directives, directives
    for directive in directives:
        assert set(directive) == {"Namespace", "Dimensions", "Metrics"}, directive
        namespace = directive["Namespace"]
        assert isinstance(namespace, str) and 1 <= len(namespace) <= 255, namespace
        dimension_sets = directive["Dimensions"]
        assert isinstance(dimension_sets, list) and dimension_sets, dimension_sets
        for dimension_set in dimension_sets:
            assert isinstance(dimension_set, list) and len(dimension_set) <= MAX_DIMENSIONS
            for key in dimension_set:
                assert isinstance(key, str) and 1 <= len(key) <= 255, key
                value = record[key]  # a target member on the root node
                assert isinstance(value, str) and value, (key, value)
        metrics = directive["Metrics"]
        assert isinstance(metrics, list) and len(metrics) <= MAX_METRICS, metrics
        for definition in metrics:
            assert set(definition) <= {"Name", "Unit", "StorageResolution"}, definition
            name = definition["Name"]
            assert isinstance(name, str) and 1 <= len(name) <= 255, name
            assert definition.get("Unit", "None") in UNITS, definition
            _check_value(name, record[name])


def _check_value(name: str, value: Any) -> None:
    values = value if isinstance(value, list) else [value]
    assert len(values) <= MAX_VALUES, (name, value)
    for number in values:
        ok = isinstance(number, int | float) and not isinstance(number, bool)
        assert ok and math.isfinite(number), (name, value)


def emf_metrics(record: dict[str, Any]) -> dict[tuple[str, ...], dict[str, float]]:
    """The metrics a record yields, by dimension set: ``{("Target", "Model"): {...}}``."""
    found: dict[tuple[str, ...], dict[str, float]] = {}
    for directive in record["_aws"]["CloudWatchMetrics"]:
        for dimension_set in directive["Dimensions"]:
            bucket = found.setdefault(tuple(dimension_set), {})
            for definition in directive["Metrics"]:
                bucket[definition["Name"]] = record[definition["Name"]]
    return found
