"""The SageMaker Model of one placement of a model, rendered by the model itself.

A model is a definition; an ``LlmEndpoint`` or ``InferenceComponent`` that serves it on a
placement records the placement (``model.add_placement``) once it is built, and the model
renders that placement's ``AWS::SageMaker::Model`` when the app synthesizes
(``constructs_llm.synth_hook``, at the model's path among the other renders), in its own
scope, under the binding's id (``Resource`` for the model's default placement, else one derived from
the placement), so its logical id is the model's whichever host records it, and two hosts of
one placement share it. Hosts name it through ``binding.model_name``. It has no physical name,
so any change deploys as a replacement in one update.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.compliance import HUB_DOWNLOAD, waive
from constructs_llm.execution_role import depend_on_policies
from constructs_llm.reporting import warn

if TYPE_CHECKING:
    from aws_cdk import aws_iam as iam
    from constructs import Construct

    from constructs_llm.model.source import SourceBinding
    from constructs_llm.reporting import SynthWarning


def render_model(
    model: Construct,
    id: str,
    *,
    role: iam.IRole,
    image: str,
    environment: Mapping[str, str],
    source: SourceBinding,
    network_isolation: bool,
    vpc_config: sagemaker.CfnModel.VpcConfigProperty | None,
    warnings: Sequence[SynthWarning],
) -> sagemaker.CfnModel:
    """The SageMaker Model ``id`` of one placement, created in ``model``'s scope (the
    ``LlmModel`` renders each recorded placement once, after granting ``role`` pull on
    ``image``), with the placement's ``environment`` and ``warnings``."""
    resource = sagemaker.CfnModel(
        model,
        id,
        execution_role_arn=role.role_arn,
        enable_network_isolation=network_isolation or None,
        vpc_config=vpc_config,
        primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
            image=image,
            environment=dict(environment),
            model_data_url=source.model_data_url,
            model_data_source=source.model_data_source,
        ),
    )
    # The role's policies granted so far (the image pull and weight reads, and what the hosts
    # rendered before the model granted) must exist before SageMaker pulls the image and
    # weights, and must outlive the model on delete.
    depend_on_policies(resource, role, model)
    if not network_isolation:
        waive(resource, HUB_DOWNLOAD, new=True)
    for warning in warnings:
        warn(resource, warning)
    return resource
