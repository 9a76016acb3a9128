"""What an endpoint construct offers its users, whether it serves a model or hosts
components: the Endpoint's name and ARN, and the grant to invoke it."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.cdk_values import grantee_problem
from constructs_llm.problems import fail

INVOKE_ACTIONS = ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]


class EndpointAttributes:
    """``endpoint_name`` and ``endpoint_arn`` of a construct whose ``resource`` is the Endpoint."""

    resource: sagemaker.CfnEndpoint

    @property
    def endpoint_name(self) -> str:
        # The GetAtt token is made once, with the resource; each metric and alarm reads it, and
        # each read through jsii is a round trip to the Node.js process.
        name: str | None = getattr(self, "_endpoint_name_token", None)
        if name is None:
            name = self._endpoint_name_token = self.resource.attr_endpoint_name
        return name

    @property
    def endpoint_arn(self) -> str:
        """The Endpoint's ARN (its ``Ref``)."""
        return self.resource.ref


def grant_invoke(grantee: iam.IGrantable, *resource_arns: str) -> iam.Grant:
    """``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on these resources."""
    problem = grantee_problem("grantee", grantee)
    if problem:
        fail("grant_invoke", problem)
    return iam.Grant.add_to_principal(
        grantee=grantee, actions=INVOKE_ACTIONS, resource_arns=list(resource_arns)
    )
