"""Seed 2: Meta-Llama-3-8B-Instruct on TGI with inference components: 4 copies of 1 GPU each,
copy autoscaling on concurrency, and managed instance scaling between 1 and 2 instances.

The seed asked for ml.p3.8xlarge. Its V100s have 16 GiB each: the model's 8B parameters take
15.0 GiB in 16-bit, and after the engine's reserve one V100 leaves 13.4 GiB, so a one-GPU copy
cannot even load the weights (InferenceComponent fails the synth saying so). The nearest
instance that fits is ml.g5.12xlarge: 4 x A10G with 22.4 GiB each, so every copy holds the
weights plus ~4.2 GiB of KV cache (about 34,000 tokens, 8 full 4,096-token sequences).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Stack, Validations
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from constructs_llm import (
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    dashboard_url,
)

INSTANCE_TYPE = "ml.g5.12xlarge"


class Llama3ComponentsStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", token=token),
            engine=Engine.tgi(),
            instance_type=INSTANCE_TYPE,
            max_input_tokens=2048,
            max_total_tokens=4096,
        )
        # Managed instance scaling adds the second instance when copies no longer fit on one.
        self.endpoint = InferenceComponentEndpoint(
            self, "Endpoint", instance_type=INSTANCE_TYPE, min_instances=1, max_instances=2
        )
        # Four copies fill one instance (one GPU each); concurrency adds up to four more,
        # which brings the second instance.
        self.component = InferenceComponent(
            self,
            "Llama3",
            endpoint=self.endpoint,
            model=model,
            accelerators=1,
            min_memory_mib=32 * 1024,
            copies=4,
            autoscaling=Autoscaling(min_capacity=4, max_capacity=8, target_concurrent_requests=4),
        )
        self.invoker = StreamingInvoker(self, "Stream", target=self.component)
        self.dashboard = LlmDashboard(
            self, "Dashboard", components=[self.component], invokers=[self.invoker]
        )
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:hf-token-in-model-env",
                reason="Only the platform team may call sagemaker:DescribeModel.",
            )
        )
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:component-fleet:g5-12xlarge",
                reason="Deployed on ml.g5.12xlarge; new hardware gets a new endpoint and "
                "components.",
            )
        )
