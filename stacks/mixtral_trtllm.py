"""Seed 3: Mixtral-8x7B on LMI TensorRT-LLM, ml.p4d.24xlarge, 1800 s health check."""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
from aws_cdk import aws_secretsmanager as secretsmanager
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


class MixtralTrtLlmStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        # A gated repository: the token of an account that accepted its terms.
        token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("mistralai/Mixtral-8x7B-Instruct-v0.1", token=token),
            engine=Engine.lmi(backend="trtllm"),
            instance_type="ml.p4d.24xlarge",
            max_input_tokens=4096,
            max_total_tokens=8192,
        )
        self.endpoint = LlmEndpoint(
            self,
            "Endpoint",
            model=model,
            health_check_timeout=Duration.seconds(1800),
        )
        self.invoker = StreamingInvoker(self, "Stream", target=self.endpoint)
        self.dashboard = LlmDashboard(
            self, "Dashboard", endpoints=[self.endpoint], invokers=[self.invoker]
        )
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        CfnOutput(self, "StreamUrl", value=self.invoker.url)
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:hf-token-in-model-env",
                reason="Only the platform team may call sagemaker:DescribeModel in this account.",
            ),
            Acknowledgment(
                id="Annotation::constructs-llm:sizing-estimate",
                reason="The plan counts all 46.7B parameters: every expert stays in memory.",
            ),
        )
