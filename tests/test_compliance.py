"""cdk-nag's finding ids for the library's wildcard resources (``constructs_llm/compliance.py``):
answered without asking the stack when an ARN's only tokens are pseudo parameters, and always
as cdk-nag prints the resolved ARN."""

from __future__ import annotations

import pytest
from aws_cdk import App, Aws, Environment, Stack
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_llm.compliance import _flatten, _flattened_here, _nag_resource
from constructs_llm.scope_facts import arn_in_stack


@pytest.mark.parametrize("env", [None, Environment(region="eu-west-1", account="123456789012")])
def test_a_pseudo_parameter_arn_is_flattened_here_as_the_stack_resolves_it(
    env: Environment | None,
) -> None:
    stack = Stack(App(), "Nag", env=env)
    scope = Construct(stack, "Scope")
    group = arn_in_stack(scope, "logs", "log-group", "/aws/sagemaker/Endpoints/*")
    arns = [
        group,
        f"{group}:log-stream:*",
        f"arn:{Aws.PARTITION}:s3:::bucket-${{literal}}/*",  # a literal "${...}" as cdk-nag prints it
        f"arn:{Aws.PARTITION}:execute-api:{Aws.REGION}:{Aws.ACCOUNT_ID}:*.{Aws.URL_SUFFIX}",
        "*",
    ]
    for arn in arns:
        here = _flattened_here(arn)
        assert here is not None, arn
        assert here == _flatten(stack.resolve(arn)), arn
    assert _flattened_here(group) == (
        "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:"
        "/aws/sagemaker/Endpoints/*"
        if env is None
        else "arn:<AWS::Partition>:logs:eu-west-1:123456789012:log-group:/aws/sagemaker/Endpoints/*"
    )


def test_an_arn_with_any_other_token_is_asked_of_the_stack() -> None:
    stack = Stack(App(), "Nag")
    bucket = s3.Bucket(stack, "Weights")
    objects = bucket.arn_for_objects("llama/*")
    assert _flattened_here(objects) is None
    assert _nag_resource(bucket, objects) == _flatten(stack.resolve(objects))
    assert _nag_resource(bucket, objects).startswith("<Weights")
