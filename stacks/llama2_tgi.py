"""Seed 5: Llama-2-13b-chat on TGI, ml.g5.12xlarge (4 GPUs), Hugging Face token from
Secrets Manager, autoscaling on concurrency."""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Stack, Validations
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from constructs_llm import (
    Autoscaling,
    Engine,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    dashboard_url,
)


class Llama2TgiStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("meta-llama/Llama-2-13b-chat-hf", token=token),
            engine=Engine.tgi(),
            instance_type="ml.g5.12xlarge",
            max_input_tokens=2048,
            max_total_tokens=4096,
        )
        self.endpoint = LlmEndpoint(
            self,
            "Endpoint",
            model=model,
            autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8),
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
            )
        )
