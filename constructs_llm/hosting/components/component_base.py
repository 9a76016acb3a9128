"""What an inference component (or adapter component) offers its users: its name, ARN and
endpoint, the grant to invoke it, and the dimensions of its metrics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.hosting.endpoint_base import grant_invoke

if TYPE_CHECKING:
    from constructs_llm.hosting.components.endpoint import InferenceComponentEndpoint
    from constructs_llm.hosting.components.plan import AdapterPlan, ComponentPlan


class ComponentAttributes:
    """Name, ARN, endpoint, invoke grant and metric dimensions of an inference component (or
    adapter component) whose ``resource`` is the component, ``endpoint`` its endpoint and
    ``plan`` its plan."""

    resource: sagemaker.CfnInferenceComponent
    endpoint: InferenceComponentEndpoint
    plan: ComponentPlan | AdapterPlan

    @property
    def inference_component_name(self) -> str:
        """The component's name, passed as ``InferenceComponentName`` on every invocation."""
        return self.plan.component_name

    @property
    def inference_component_arn(self) -> str:
        return self.resource.attr_inference_component_arn

    @property
    def endpoint_name(self) -> str:
        return self.endpoint.endpoint_name

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on this component.

        The IAM Service Authorization Reference lists the endpoint as the required resource
        of both actions and the inference component as an optional one; there is no
        condition key for the component's name. The grant therefore names the endpoint's ARN
        and this component's ARN (``arn:...:inference-component/<name>``).
        """
        return grant_invoke(grantee, self.endpoint.endpoint_arn, self.inference_component_arn)

    def _metric_dimensions(self) -> dict[str, str]:
        return {"InferenceComponentName": self.inference_component_name}
