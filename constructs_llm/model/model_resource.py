"""The SageMaker Model of a model binding, rendered by the construct that hosts it.

A model is a definition; an ``LlmEndpoint`` or ``InferenceComponent`` that serves it on a
placement renders the ``AWS::SageMaker::Model`` for that placement when the app synthesizes
(``constructs_llm.synth_hook``, in construct-path order). The Model is created in the model's
scope, under the binding's id (``Resource`` for the model's default placement, else one
derived from the placement), so its logical id is the model's whoever renders it, and two
hosts of one placement share it. It has no physical name, so any change deploys as a
replacement in one update.
"""

from __future__ import annotations

from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.compliance import HUB_DOWNLOAD, waive
from constructs_llm.execution_role import depend_on_policies
from constructs_llm.model.llm_model import ModelBinding
from constructs_llm.reporting import warn


def prepare_model(binding: ModelBinding) -> None:
    """What a host does with a binding when it plans to serve it: resolve its image in the
    stack at once, so a region without the image fails while the app is built (the Model
    itself is rendered at synth)."""
    binding.model.image_uri(binding.placement)


def render_model(binding: ModelBinding) -> sagemaker.CfnModel:
    """The SageMaker Model of ``binding``: created on the first render that needs it (the
    model's role then gets pull on the placement's image), the same one afterwards."""
    model = binding.model
    found = model.node.try_find_child(binding.construct_id)
    if isinstance(found, sagemaker.CfnModel):
        return found
    source = model.source_binding
    image = model.pull_image(binding.placement)
    resource = sagemaker.CfnModel(
        model,
        binding.construct_id,
        execution_role_arn=model.role.role_arn,
        enable_network_isolation=model.network_isolation or None,
        vpc_config=model.network.vpc_config if model.network else None,
        primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
            image=image,
            environment=binding.environment,
            model_data_url=source.model_data_url,
            model_data_source=source.model_data_source,
        ),
    )
    # The role's policy must exist before SageMaker pulls the image and weights, and must
    # outlive the model on delete.
    depend_on_policies(resource, model.role, model)
    if not model.network_isolation:
        waive(resource, HUB_DOWNLOAD)
    for warning in binding.derivation.warnings:
        warn(resource, warning)
    return resource
