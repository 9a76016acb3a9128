"""One OpenAI-compatible URL in front of three models on one inference-component endpoint:
Llama-3.1-8B-Instruct on the vLLM DLC, Qwen2.5-7B-Instruct on LMI, and a LoRA adapter of the
Llama model. The request's ``model`` picks one: ``llama``, ``qwen`` or ``support-bot``.

The Llama model turns adapters on (the vLLM DLC's LoRA env); the adapter has no compute of its
own: it runs on the Llama component's copies, from one ``.tar.gz`` in S3.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from constructs_llm import (
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
ADAPTERS_BUCKET = "llm-adapters"  # holds support-bot.tar.gz (adapter_config.json + weights)


class ModelGatewayStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        adapters = s3.Bucket.from_bucket_name(self, "Adapters", ADAPTERS_BUCKET)
        self.endpoint = InferenceComponentEndpoint(
            self, "Endpoint", instance_type=INSTANCE_TYPE, min_instances=1, max_instances=2
        )
        llama_model = LlmModel(
            self,
            "LlamaModel",
            source=ModelSource.hugging_face("meta-llama/Llama-3.1-8B-Instruct", token=token),
            engine=Engine.vllm(),
            instance_type=INSTANCE_TYPE,
            max_total_tokens=8192,
            # The vLLM DLC registers SageMaker adapter components only with both.
            env={"SM_VLLM_ENABLE_LORA": "true", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"},
        )
        self.llama = InferenceComponent(
            self,
            "Llama",
            endpoint=self.endpoint,
            model=llama_model,
            accelerators=1,
            min_memory_mib=32 * 1024,
            served_model_name="llama",
        )
        qwen_model = LlmModel(
            self,
            "QwenModel",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.lmi(),
            instance_type=INSTANCE_TYPE,
            max_total_tokens=8192,
        )
        self.qwen = InferenceComponent(
            self,
            "Qwen",
            endpoint=self.endpoint,
            model=qwen_model,
            accelerators=1,
            min_memory_mib=32 * 1024,
            served_model_name="qwen",
        )
        self.support_bot = self.llama.add_adapter(
            "support-bot", source=ModelSource.s3_archive(adapters, "support-bot.tar.gz")
        )
        # 8,192 tokens from one A10G take about 6 minutes: room for a full-length answer.
        self.invoker = StreamingInvoker(
            self,
            "Gateway",
            targets=[self.llama, self.qwen, self.support_bot],
            timeout=Duration.minutes(10),
        )
        self.dashboard = LlmDashboard(
            self, "Dashboard", components=[self.llama, self.qwen], invokers=[self.invoker]
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
