"""Seed 1: Phi-3-mini-4k-instruct on LMI with vLLM rolling batch, ml.g5.4xlarge, streaming."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from constructs_llm import (
    Engine,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    dashboard_url,
)


class Phi3LmiStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("microsoft/Phi-3-mini-4k-instruct"),
            engine=Engine.lmi(backend="vllm"),
            instance_type="ml.g5.4xlarge",
            max_input_tokens=3072,
            max_total_tokens=4096,
        )
        self.endpoint = LlmEndpoint(self, "Endpoint", model=model)
        self.invoker = StreamingInvoker(self, "Stream", target=self.endpoint)
        self.dashboard = LlmDashboard(
            self, "Dashboard", endpoints=[self.endpoint], invokers=[self.invoker]
        )
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        CfnOutput(self, "StreamUrl", value=self.invoker.url)
