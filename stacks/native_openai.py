"""SageMaker's own OpenAI route as the front door: no Lambda, no function URL.

Qwen2.5-7B-Instruct on the vLLM DLC (which answers Chat Completions, streaming included, as
OpenAI does), and a role that applications assume to call it: ``grant_openai`` gives it
``sagemaker:InvokeEndpoint`` on this endpoint and ``sagemaker:CallWithBearerToken``. A client
with that role's credentials mints short-lived bearer tokens (renewed before they expire) and
uses the unchanged ``openai`` SDK::

    from openai import OpenAI
    from constructs_llm.streaming import bearer_token_provider

    client = OpenAI(base_url=OPENAI_BASE_URL, api_key=bearer_token_provider(region=REGION))
    client.chat.completions.create(model="", messages=[...], stream=True)
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm import Engine, LlmDashboard, LlmEndpoint, LlmModel, ModelSource, dashboard_url


class NativeOpenAiStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.vllm(),
            instance_type="ml.g5.2xlarge",
            max_input_tokens=6144,
            max_total_tokens=8192,
        )
        self.endpoint = LlmEndpoint(self, "Endpoint", model=model)
        self.caller = iam.Role(
            self,
            "ChatCaller",
            assumed_by=iam.AccountPrincipal(self.account),
            description="Applications assume this role to call the chat endpoint's OpenAI route",
        )
        self.endpoint.grant_openai(self.caller)
        self.dashboard = LlmDashboard(self, "Dashboard", endpoints=[self.endpoint])
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        CfnOutput(self, "OpenAiBaseUrl", value=self.endpoint.openai_base_url)
        CfnOutput(self, "CallerRoleArn", value=self.caller.role_arn)
