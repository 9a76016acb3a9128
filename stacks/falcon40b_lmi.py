"""Seed 4: Falcon-40B on LMI, tensor parallel 8 on ml.g5.48xlarge, continuous batching."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from constructs_llm import Engine, LlmDashboard, LlmEndpoint, LlmModel, ModelSource, dashboard_url


class Falcon40bLmiStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("tiiuae/falcon-40b-instruct"),
            engine=Engine.lmi(
                backend="vllm",
                tensor_parallel_degree=8,
                max_rolling_batch_size=32,
                max_rolling_batch_prefill_tokens=1024,
            ),
            instance_type="ml.g5.48xlarge",
            max_input_tokens=1024,
            max_total_tokens=2048,
        )
        self.endpoint = LlmEndpoint(self, "Endpoint", model=model)
        self.dashboard = LlmDashboard(self, "Dashboard", endpoints=[self.endpoint])
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
