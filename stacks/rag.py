"""Retrieval-augmented generation behind one URL and one key: a chat model (Qwen2.5-7B-Instruct
on the vLLM DLC) and an embedding model (BAAI/bge-large-en-v1.5 on Text Embeddings Inference)
share one inference-component endpoint, each on one GPU of an ml.g5.12xlarge.

The invoker routes by the request's ``model``: ``chat`` answers ``POST /v1/chat/completions``
(and ``/v1/responses``), ``embed`` answers ``POST /v1/embeddings``; a request of the other
kind gets a 400 naming the model's kind. Clients send an API key from the ``rag/api-keys``
secret.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from constructs_llm import (
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    InvokerAuth,
    LlmDashboard,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    dashboard_url,
)

INSTANCE_TYPE = "ml.g5.12xlarge"  # 4 x A10G: one GPU each for the chat and embedding copies
CHAT_MODEL = "chat"
EMBEDDING_MODEL = "embed"


class RagStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        self.endpoint = InferenceComponentEndpoint(
            self, "Endpoint", instance_type=INSTANCE_TYPE, min_instances=1, max_instances=2
        )
        chat_model = LlmModel(
            self,
            "ChatModel",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.vllm(),
            max_total_tokens=8192,
        )
        self.chat = InferenceComponent(
            self,
            "Chat",
            endpoint=self.endpoint,
            model=chat_model,
            accelerators=1,
            min_memory_mib=32 * 1024,
            served_model_name=CHAT_MODEL,
        )
        # TEI runs a copy on one GPU; its batches of up to 32 inputs per call are the invoker's
        # to split (a client may send up to 2048 inputs in one request).
        embedding_model = LlmModel(
            self,
            "EmbeddingModel",
            source=ModelSource.hugging_face("BAAI/bge-large-en-v1.5"),
            engine=Engine.tei(),
        )
        self.embedder = InferenceComponent(
            self,
            "Embedder",
            endpoint=self.endpoint,
            model=embedding_model,
            accelerators=1,
            min_memory_mib=4 * 1024,
            served_model_name=EMBEDDING_MODEL,
        )
        api_keys = secretsmanager.Secret.from_secret_name_v2(self, "ApiKeys", "rag/api-keys")
        self.invoker = StreamingInvoker(
            self,
            "Api",
            targets=[self.chat, self.embedder],
            auth=InvokerAuth.api_keys(api_keys),
            # a full 8,192-token answer at one A10G's decode rate takes about 6 minutes
            timeout=Duration.minutes(10),
        )
        CfnOutput(self, "Url", value=self.invoker.url)
        self.dashboard = LlmDashboard(
            self, "Dashboard", components=[self.chat, self.embedder], invokers=[self.invoker]
        )
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:component-fleet:g5-12xlarge",
                reason="Deployed on ml.g5.12xlarge; new hardware gets a new endpoint and "
                "components.",
            )
        )
