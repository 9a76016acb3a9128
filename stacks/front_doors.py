"""Front doors: one endpoint behind two invokers, one per auth mode.

- ``Keys``: API keys from a generated, KMS-encrypted Secrets Manager secret, behind CloudFront;
  unchanged OpenAI clients call the distribution with ``api_key=``. The function URL answers
  the distribution alone (its origin secret header), a WAF rate rule blocks an IP address
  above 600 requests in 5 minutes (CloudFront web ACLs exist only in us-east-1, so this stack
  deploys there: a CloudFormation rule stops it anywhere else), and reserved concurrency caps
  what a flood can run.
- ``Signed``: IAM auth on the function URL; callers sign with SigV4 and need
  ``grant_invoke_url``. No distribution: behind one, origin access control would sign every
  viewer's request and make it a public API (``add_distribution(public=True)`` says so).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Stack, Validations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from constructs_llm import (
    Engine,
    InvokerAuth,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    dashboard_url,
)


class FrontDoorsStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("microsoft/Phi-3-mini-4k-instruct"),
            engine=Engine.tgi(),
            instance_type="ml.g5.2xlarge",
            max_input_tokens=3072,
            max_total_tokens=4096,
        )
        endpoint = LlmEndpoint(self, "Endpoint", model=model)

        key = kms.Key(self, "ApiKeysKey", enable_key_rotation=True)
        keys = secretsmanager.Secret(
            self,
            "ApiKeys",
            encryption_key=key,
            generate_secret_string=secretsmanager.SecretStringGenerator(
                exclude_punctuation=True, password_length=48
            ),
        )
        Validations.of(keys).acknowledge(
            Acknowledgment(
                id="AwsSolutions::AwsSolutions-SMG4",
                reason='Keys rotate by hand with overlap: put {"api_keys": [old, new]}, move '
                "clients, then drop the old key; the invoker picks changes up within a minute.",
            )
        )
        self.keyed = StreamingInvoker(
            self, "Keys", target=endpoint, auth=InvokerAuth.api_keys(keys), max_concurrency=20
        )
        Validations.of(self.keyed).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:reserved-concurrency",
                reason="This account's Lambda concurrency limit is raised well above 120.",
            )
        )
        self.keyed.add_distribution(rate_limit=600)

        self.signed = StreamingInvoker(self, "Signed", target=endpoint)

        self.dashboard = LlmDashboard(
            self, "Dashboard", endpoints=[endpoint], invokers=[self.keyed, self.signed]
        )
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        CfnOutput(self, "KeysUrl", value=self.keyed.url)
        CfnOutput(self, "KeysDistributionUrl", value=self.keyed.distribution_url or "")
        CfnOutput(self, "ApiKeysSecret", value=keys.secret_name)
        CfnOutput(self, "SignedUrl", value=self.signed.url)
