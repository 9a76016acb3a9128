"""The AWS console's address of a CloudWatch dashboard, for a stack output.

The console has a host per partition: ``console.aws.amazon.com`` (``aws``),
``console.amazonaws.cn`` (``aws-cn``) and ``console.amazonaws-us-gov.com`` (``aws-us-gov``),
each taking the region as the ``region`` query parameter; the CloudWatch console opens a
dashboard at ``/cloudwatch/home?region=<region>#dashboards:name=<name>``. An
environment-agnostic stack knows neither its partition nor its region at synth, so the host
comes from a CloudFormation mapping keyed by ``AWS::Partition``
(``ConstructsLlmConsoleHosts``, one per stack, rendered only once a URL uses it; a stack
whose partition is known gets the host itself) and the region from ``AWS::Region``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import CfnMapping, Stack
from aws_cdk import aws_cloudwatch as cloudwatch

from constructs_llm.problems import Problem, fail
from constructs_llm.values import describe

if TYPE_CHECKING:
    from constructs_llm.dashboards.dashboard import LlmDashboard

#: The AWS console's host in each partition.
_CONSOLE_HOSTS = {
    "aws": "console.aws.amazon.com",
    "aws-cn": "console.amazonaws.cn",
    "aws-us-gov": "console.amazonaws-us-gov.com",
}

MAPPING_ID = "ConstructsLlmConsoleHosts"
"""Construct id (and logical id) of the per-stack partition -> console host mapping."""


def dashboard_url(dashboard: LlmDashboard | cloudwatch.Dashboard) -> str:
    """The console URL of ``dashboard`` (an ``LlmDashboard`` or a ``cloudwatch.Dashboard``),
    a string token that resolves in the dashboard's own partition and region, for a
    ``CfnOutput``. The first URL of a stack adds its ``ConstructsLlmConsoleHosts`` mapping."""
    resource = getattr(dashboard, "dashboard", dashboard)
    if not isinstance(resource, cloudwatch.Dashboard):
        fail(
            "dashboard_url",
            Problem.of(
                "dashboard",
                dashboard,
                "dashboard must be an LlmDashboard or a cloudwatch.Dashboard, got "
                f"{describe(dashboard)};",
                "pass the dashboard construct",
            ),
        )
    stack = Stack.of(resource)
    return (
        f"https://{_console_host(stack)}/cloudwatch/home?region={stack.region}"
        f"#dashboards:name={resource.dashboard_name}"
    )


def _console_host(stack: Stack) -> str:
    """The console's host in ``stack``'s partition: the host itself where the partition is
    known at synth, else a lookup in the stack's ``ConstructsLlmConsoleHosts`` mapping."""
    if stack.partition in _CONSOLE_HOSTS:
        return _CONSOLE_HOSTS[stack.partition]
    existing = stack.node.try_find_child(MAPPING_ID)
    mapping = (
        existing
        if isinstance(existing, CfnMapping)
        else CfnMapping(
            stack,
            MAPPING_ID,
            mapping={partition: {"Host": host} for partition, host in _CONSOLE_HOSTS.items()},
            lazy=True,
        )
    )
    return mapping.find_in_map(stack.partition, "Host")
