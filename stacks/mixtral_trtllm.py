"""Seed 3: Mixtral-8x7B on LMI TensorRT-LLM, ml.p4d.24xlarge, 1800 s health check."""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
from constructs import Construct

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, StreamingInvoker


class MixtralTrtLlmStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("mistralai/Mixtral-8x7B-Instruct-v0.1"),
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
        CfnOutput(self, "StreamUrl", value=self.invoker.url)
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:sizing-estimate",
                reason="The plan counts all 46.7B parameters: every expert stays in memory.",
            )
        )
