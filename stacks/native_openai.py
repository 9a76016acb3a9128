"""SageMaker's own OpenAI route as the front door: no Lambda, no function URL.

Qwen2.5-7B-Instruct on the vLLM DLC (which answers Chat Completions, streaming included, as
OpenAI does), and a role that the application assumes to call it: ``grant_openai`` gives it
``sagemaker:InvokeEndpoint`` on this endpoint and ``sagemaker:CallWithBearerToken`` (on
``*``, as AWS's guide grants it). The role trusts one principal, never the whole account: the
application's own role, named with ``-c native-openai:caller=<role ARN>``, or by default the role
``llm-chat-app`` of the stack's account, which must exist before the deploy (IAM refuses a
trust policy naming a role it does not know). A client with the application role's
credentials assumes this role, mints short-lived bearer tokens (renewed before they expire)
and uses the unchanged ``openai`` SDK::

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

#: The context key naming the application role that may assume the caller role.
CALLER_CONTEXT = "native-openai:caller"
#: The application role trusted when the context names none.
APPLICATION_ROLE = "llm-chat-app"


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
            assumed_by=iam.ArnPrincipal(self._application_role()),
            description="Applications assume this role to call the chat endpoint's OpenAI route",
        )
        self.endpoint.grant_openai(self.caller)
        self.dashboard = LlmDashboard(self, "Dashboard", endpoints=[self.endpoint])
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        CfnOutput(self, "OpenAiBaseUrl", value=self.endpoint.openai_base_url)
        CfnOutput(self, "CallerRoleArn", value=self.caller.role_arn)

    def _application_role(self) -> str:
        """The one principal the caller role trusts: ``native-openai:caller`` from the context,
        else the account's ``llm-chat-app`` role."""
        given = self.node.try_get_context(CALLER_CONTEXT)
        if isinstance(given, str) and given:
            return given
        return self.format_arn(
            service="iam", region="", resource="role", resource_name=APPLICATION_ROLE
        )
