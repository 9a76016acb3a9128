"""dashboard_url: the console address of a dashboard, resolved by CloudFormation in the
stack's own partition and region."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk.assertions import Template

from constructs_llm import LlmDashboard, LlmEndpoint, dashboard_url
from constructs_llm.dashboards.console_url import MAPPING_ID
from tests.matrix.builders import model as llama3
from tests.support.intrinsics import evaluate


def _dashboard(stack: Stack, id: str = "Board") -> cloudwatch.Dashboard:
    board = cloudwatch.Dashboard(stack, id)
    board.add_widgets(cloudwatch.TextWidget(markdown="# LLM"))
    return board


def _template(stack: Stack) -> dict[str, Any]:
    return dict(Template.from_stack(stack).to_json())


def _url(template: dict[str, Any], output: str, partition: str, region: str) -> str:
    (board,) = [
        k for k, r in template["Resources"].items() if r["Type"] == "AWS::CloudWatch::Dashboard"
    ]
    return evaluate(
        template["Outputs"][output]["Value"],
        template,
        partition=partition,
        region=region,
        physical_ids={board: "llm-board"},
    )


@pytest.fixture(scope="module")
def agnostic(new_stack: Callable[..., Stack]) -> dict[str, Any]:
    """An environment-agnostic stack outputting a dashboard's URL."""
    stack = new_stack()
    CfnOutput(stack, "DashboardUrl", value=dashboard_url(_dashboard(stack)))
    return _template(stack)


@pytest.mark.parametrize(
    ("partition", "region", "url"),
    [
        (
            "aws",
            "us-east-1",
            "https://console.aws.amazon.com/cloudwatch/home?region=us-east-1"
            "#dashboards:name=llm-board",
        ),
        (
            "aws-cn",
            "cn-north-1",
            "https://console.amazonaws.cn/cloudwatch/home?region=cn-north-1"
            "#dashboards:name=llm-board",
        ),
        (
            "aws-us-gov",
            "us-gov-west-1",
            "https://console.amazonaws-us-gov.com/cloudwatch/home?region=us-gov-west-1"
            "#dashboards:name=llm-board",
        ),
    ],
)
def test_an_environment_agnostic_stack_resolves_the_url_where_it_deploys(
    agnostic: dict[str, Any], partition: str, region: str, url: str
) -> None:
    assert _url(agnostic, "DashboardUrl", partition, region) == url


def test_the_llm_dashboard_s_url_names_its_dashboard(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    endpoint = LlmEndpoint(stack, "Endpoint", model=llama3(stack, bound=False))
    board = LlmDashboard(stack, "Dashboard", endpoints=[endpoint])
    CfnOutput(stack, "DashboardUrl", value=dashboard_url(board))
    template = _template(stack)
    assert _url(template, "DashboardUrl", "aws", "eu-west-1").endswith(
        "?region=eu-west-1#dashboards:name=llm-board"
    )


def test_one_mapping_per_stack_and_none_without_a_url(new_stack: Callable[..., Stack]) -> None:
    without = new_stack()
    _dashboard(without)
    assert "Mappings" not in _template(without)

    stack = new_stack()
    CfnOutput(stack, "FirstUrl", value=dashboard_url(_dashboard(stack, "First")))
    CfnOutput(stack, "SecondUrl", value=dashboard_url(_dashboard(stack, "Second")))
    template = _template(stack)
    assert list(template["Mappings"]) == [MAPPING_ID]


def test_a_stack_that_knows_its_partition_gets_the_host_itself(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(region="cn-north-1")
    CfnOutput(stack, "DashboardUrl", value=dashboard_url(_dashboard(stack)))
    template = _template(stack)
    assert "Mappings" not in template
    assert _url(template, "DashboardUrl", "unused", "unused") == (
        "https://console.amazonaws.cn/cloudwatch/home?region=cn-north-1#dashboards:name=llm-board"
    )
