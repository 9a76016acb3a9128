"""Two models sharing one inference-component endpoint: an always-on Llama-3.1-8B chat model
and a Qwen2.5-7B model that scales to zero copies when idle.

With ``min_instances=0`` the endpoint can release every instance once no component keeps a
copy; here the chat model keeps at least one, so the fleet shrinks to one instance and the
Qwen copies come and go on the GPUs beside it.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
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
    dashboard_url,
)

INSTANCE_TYPE = "ml.g5.12xlarge"


class SharedEndpointStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        self.endpoint = InferenceComponentEndpoint(
            self, "Endpoint", instance_type=INSTANCE_TYPE, min_instances=0, max_instances=2
        )
        chat_model = LlmModel(
            self,
            "ChatModel",
            source=ModelSource.hugging_face("meta-llama/Llama-3.1-8B-Instruct", token=token),
            engine=Engine.tgi(),
            instance_type=INSTANCE_TYPE,
            max_input_tokens=4096,
            max_total_tokens=8192,
        )
        self.chat = InferenceComponent(
            self,
            "Chat",
            endpoint=self.endpoint,
            model=chat_model,
            accelerators=1,
            min_memory_mib=32 * 1024,
            copies=1,
            autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=4),
        )
        qwen_model = LlmModel(
            self,
            "QwenModel",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.tgi(),
            instance_type=INSTANCE_TYPE,
            max_input_tokens=4096,
            max_total_tokens=8192,
        )
        # min_capacity=0: target tracking releases the last copy when idle, and the first
        # request afterwards (a NoCapacityInvocationFailures) brings one back.
        self.qwen = InferenceComponent(
            self,
            "Qwen",
            endpoint=self.endpoint,
            model=qwen_model,
            accelerators=1,
            min_memory_mib=32 * 1024,
            copies=1,
            # AWS's scale-to-zero recipe: track invocations per copy, target 1, 5-minute cooldowns.
            autoscaling=Autoscaling(
                min_capacity=0,
                max_capacity=2,
                target_invocations_per_instance=1,
                scale_in_cooldown=Duration.minutes(5),
                scale_out_cooldown=Duration.minutes(5),
            ),
        )
        self.dashboard = LlmDashboard(self, "Dashboard", components=[self.chat, self.qwen])
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
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:min-instances-zero-region",
                reason="Deployed to us-east-1, which accepts 0.",
            )
        )
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:scale-to-zero",
                reason="Qwen serves batch jobs that retry; cold starts are fine.",
            )
        )
