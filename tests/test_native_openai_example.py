"""The native-openai example: the caller role trusts one named principal, never the account,
and may call with bearer tokens as AWS's guide grants it (on *, no condition), in a policy of
the endpoint's own."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import App, Environment
from aws_cdk.assertions import Template

from stacks.native_openai import CALLER_CONTEXT, NativeOpenAiStack
from tests.conftest import cdk_context

ACCOUNT = "123456789012"
APP_ROLE = "arn:aws:iam::210987654321:role/chat-frontend"


def _template(**context: Any) -> Template:
    app = App(context={**cdk_context(), **context})
    stack = NativeOpenAiStack(
        app, "NativeOpenai", env=Environment(account=ACCOUNT, region="us-east-1")
    )
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def default() -> Template:
    return _template()


def _caller(template: Template) -> dict[str, Any]:
    roles = template.find_resources("AWS::IAM::Role")
    (role,) = [r for name, r in roles.items() if name.startswith("ChatCaller")]
    return dict(role["Properties"])


def test_the_caller_role_trusts_the_application_role_not_the_account(default: Template) -> None:
    # GIVEN the example as deployed without context
    (trust,) = _caller(default)["AssumeRolePolicyDocument"]["Statement"]
    # THEN only the account's llm-chat-app role may assume it; no :root principal
    assert trust["Principal"] == {"AWS": f"arn:aws:iam::{ACCOUNT}:role/llm-chat-app"}
    assert ":root" not in str(trust)


def test_the_context_names_another_application_role() -> None:
    (trust,) = _caller(_template(**{CALLER_CONTEXT: APP_ROLE}))["AssumeRolePolicyDocument"][
        "Statement"
    ]
    assert trust["Principal"] == {"AWS": APP_ROLE}


def test_bearer_tokens_are_granted_as_the_guide_grants_them(default: Template) -> None:
    policies = {
        name: policy
        for name, policy in default.find_resources("AWS::IAM::Policy").items()
        if any(
            s["Action"] == "sagemaker:CallWithBearerToken"
            for s in policy["Properties"]["PolicyDocument"]["Statement"]
        )
    }
    ((name, policy),) = policies.items()
    # alone in the endpoint's BearerTokenCalls policy, with no condition the guide lacks
    assert name.startswith("EndpointBearerTokenCalls")
    assert policy["Properties"]["PolicyDocument"]["Statement"] == [
        {"Action": "sagemaker:CallWithBearerToken", "Effect": "Allow", "Resource": "*"}
    ]
    (role,) = policy["Properties"]["Roles"]
    assert role["Ref"].startswith("ChatCaller")
