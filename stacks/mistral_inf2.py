"""Mistral-7B on Inferentia2 (TGI NeuronX, ml.inf2.xlarge), EBS volume encrypted with a
customer-managed key (inf2 has no local NVMe, so a volume and a key are allowed)."""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Stack, Validations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from constructs_llm import Engine, LlmDashboard, LlmEndpoint, LlmModel, ModelSource, dashboard_url


class MistralInf2Stack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        # A gated repository: the token of an account that accepted its terms.
        token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("mistralai/Mistral-7B-Instruct-v0.2", token=token),
            engine=Engine.tgi_neuronx(),
            instance_type="ml.inf2.xlarge",
            max_input_tokens=2048,
            max_total_tokens=4096,
        )
        key = kms.Key(self, "VolumeKey", enable_key_rotation=True)
        self.endpoint = LlmEndpoint(self, "Endpoint", model=model, kms_key=key)
        self.dashboard = LlmDashboard(self, "Dashboard", endpoints=[self.endpoint])
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:hf-token-in-model-env",
                reason="Only the platform team may call sagemaker:DescribeModel in this account.",
            ),
            Acknowledgment(
                id="Annotation::constructs-llm:sizing-estimate",
                reason="Neuron KV cache is sized at compile time; checked at start-up.",
            ),
        )
