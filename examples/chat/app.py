#!/usr/bin/env python3
"""Llama 3 8B Instruct on a SageMaker endpoint, streamed to OpenAI clients with an API key."""

from aws_cdk import App, CfnOutput, Stack
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from constructs_llm import (Alarms, Engine, InvokerAuth, LlmDashboard, LlmEndpoint, LlmModel,
                            ModelSource, StreamingInvoker, dashboard_url)


class ChatStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs) -> None:
        super().__init__(scope, id, **kwargs)
        # Both secrets exist before the deploy (see "Deploy it and call it").
        hf_token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        api_keys = secretsmanager.Secret.from_secret_name_v2(self, "ApiKeys", "llm/api-keys")

        model = LlmModel(self, "Model",
            source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", token=hf_token),
            engine=Engine.vllm(),
            instance_type="ml.g5.2xlarge",
            max_input_tokens=2048, max_total_tokens=4096)
        # cdk deploy -c alarm-email=you@example.com: the default alarms mail you (confirm the
        # subscription in the e-mail AWS sends first).
        email = self.node.try_get_context("alarm-email")
        endpoint = LlmEndpoint(self, "Endpoint", model=model,
            alarms=Alarms(email=email) if email else True)
        invoker = StreamingInvoker(self, "Chat", target=endpoint,
            auth=InvokerAuth.api_keys(api_keys))   # or InvokerAuth.iam(): SigV4 callers
        # invoker.add_distribution(rate_limit=600) # CloudFront + WAF in front (us-east-1)
        # Traffic, latency, errors, GPUs, time to first token and the alarms, in one place.
        dashboard = LlmDashboard(self, "Dashboard", endpoints=[endpoint], invokers=[invoker])

        CfnOutput(self, "Url", value=invoker.url)
        CfnOutput(self, "EndpointName", value=endpoint.endpoint_name)
        CfnOutput(self, "DashboardUrl", value=dashboard_url(dashboard))
        CfnOutput(self, "InvokerLogGroup", value=invoker.function.log_group.log_group_name)


app = App()
ChatStack(app, "ChatStack")
app.synth()
