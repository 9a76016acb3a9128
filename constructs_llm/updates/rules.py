"""RULES: what CloudFormation and SageMaker do with a change to each property of the hosting
resources, one row per property group, each with the source it rests on.

Two columns, two owners:

- **CloudFormation.** A property listed in its resource type's ``createOnlyProperties`` (the
  CloudFormation registry schema, which cfn-lint 1.58.0 ships per region) cannot change in
  place: CloudFormation creates a replacement, points every reference at it, and deletes the old
  resource in the cleanup. Any other property is updated in place. ``tests/test_update_rules.py``
  reads the schemas and fails when a row disagrees or a create-only property has no row.
- **SageMaker.** What the API call CloudFormation makes does: UpdateEndpoint swaps the fleet
  (blue/green, or rolling with ``DeploymentConfig.RollingUpdatePolicy``), UpdateInferenceComponent
  updates a component, Application Auto Scaling registers or deregisters a target; and what
  SageMaker refuses.

``python -m constructs_llm.check_update`` (``constructs_llm/check_update/``) cites these rows
in its findings, and the synth-time guards (``hosting/fleet_change.py``, ``hosting/endpoint.py``)
word their warnings from the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

#: SageMaker's guide: "Update endpoints that use auto scaling".
SCALING_UPDATE_GUIDE = (
    "https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html"
)
#: SageMaker's guide on deployment guardrails (blue/green and rolling updates).
GUARDRAILS_GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails.html"
#: SageMaker's guide on rolling deployments.
ROLLING_GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-rolling.html"
#: CloudFormation's guide: "Update behaviors of stack resources".
UPDATE_BEHAVIORS = (
    "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/"
    "using-cfn-updating-stacks-update-behaviors.html"
)
#: Where a row's create-only properties come from.
SCHEMA = "CloudFormation registry schema {type}: createOnlyProperties (cfn-lint 1.58.0)"

ENDPOINT = "AWS::SageMaker::Endpoint"
CONFIG = "AWS::SageMaker::EndpointConfig"
MODEL = "AWS::SageMaker::Model"
COMPONENT = "AWS::SageMaker::InferenceComponent"
TARGET = "AWS::ApplicationAutoScaling::ScalableTarget"
POLICY = "AWS::ApplicationAutoScaling::ScalingPolicy"


class CfnAction(str, Enum):
    """What CloudFormation does with a changed property."""

    UPDATE = "updated in place"
    REPLACE = "replaced"


class SageMakerAction(str, Enum):
    """What SageMaker (or Application Auto Scaling) does with the call CloudFormation makes."""

    #: No new fleet: the resource's settings change where it runs.
    IN_PLACE = "updated in place"
    #: UpdateEndpoint onto a new config: blue/green by default, rolling with a
    #: ``RollingUpdatePolicy`` (the Endpoint's ``DeploymentConfig``).
    UPDATE_ENDPOINT = "UpdateEndpoint"
    #: CreateEndpoint under a new name, the old endpoint deleted in the cleanup.
    NEW_ENDPOINT = "a new endpoint"
    #: Nothing at once: a new Model or config is created, and used by what references it.
    NEW_RESOURCE = "created for the update"
    #: UpdateInferenceComponent: new copies replace the old ones.
    UPDATE_COMPONENT = "UpdateInferenceComponent"
    #: The scalable target is registered anew, the old one deregistered in the cleanup.
    REGISTER_TARGET = "registered anew"
    #: SageMaker refuses the call: the deploy fails and CloudFormation rolls it back.
    REFUSED = "refused"


@dataclass(frozen=True, kw_only=True)
class UpdateRule:
    """One row: a change, what CloudFormation does, what SageMaker does, and why.

    :param id: the row's id, which findings and warnings name.
    :param resource: the CloudFormation resource type.
    :param properties: the top-level properties of ``resource`` the row is about.
    :param change: the change, in a user's words.
    :param cloudformation: what CloudFormation does with it (from the schema).
    :param sagemaker: what SageMaker does with the call that follows.
    :param why: what SageMaker does, said plainly.
    :param citation: the source of the SageMaker column (a guide page, a botocore shape, an
        issue with the error text); the CloudFormation column's is the schema.
    :param verified: whether the source shows the behaviour itself (an error message, the
        guide's words), rather than the library inferring it. @default True
    """

    id: str
    resource: str
    properties: tuple[str, ...]
    change: str
    cloudformation: CfnAction
    sagemaker: SageMakerAction
    why: str
    citation: str
    verified: bool = True

    @property
    def schema(self) -> str:
        """Where the CloudFormation column comes from."""
        return SCHEMA.format(type=self.resource)


RULES: tuple[UpdateRule, ...] = (
    UpdateRule(
        id="endpoint-name",
        resource=ENDPOINT,
        properties=("EndpointName",),
        change="the Endpoint's name (given, or following its fleet or async mode)",
        cloudformation=CfnAction.REPLACE,
        sagemaker=SageMakerAction.NEW_ENDPOINT,
        why=(
            "CloudFormation creates the new endpoint and waits for it to be in service, points "
            "every reference at it, then deletes the old one in the cleanup: both fleets run "
            "meanwhile, and UpdateEndpoint never runs"
        ),
        citation=UPDATE_BEHAVIORS,
    ),
    UpdateRule(
        id="endpoint-config",
        resource=ENDPOINT,
        properties=("EndpointConfigName",),
        change="the config the Endpoint runs (a new EndpointConfig)",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.UPDATE_ENDPOINT,
        why=(
            "UpdateEndpoint: a new fleet beside the old, traffic shifted to it and the old one "
            "terminated (blue/green, SageMaker's default), or in batches of the fleet with the "
            "Endpoint's DeploymentConfig.RollingUpdatePolicy (rolling); no downtime"
        ),
        citation=GUARDRAILS_GUIDE,
    ),
    UpdateRule(
        id="endpoint-settings",
        resource=ENDPOINT,
        properties=(
            "DeploymentConfig",
            "RetainAllVariantProperties",
            "ExcludeRetainedVariantProperties",
            "RetainDeploymentConfig",
            "Tags",
        ),
        change="how the Endpoint is updated, or its tags",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.IN_PLACE,
        why="no new fleet: the settings apply to the next update",
        citation=(
            "botocore sagemaker UpdateEndpointInput: DeploymentConfig, RetainAllVariantProperties"
        ),
    ),
    UpdateRule(
        id="config",
        resource=CONFIG,
        properties=(
            "ProductionVariants",
            "ShadowProductionVariants",
            "KmsKeyId",
            "DataCaptureConfig",
            "AsyncInferenceConfig",
            "VpcConfig",
            "ExecutionRoleArn",
            "EnableNetworkIsolation",
            "ExplainerConfig",
            "MetricsConfig",
            "EndpointConfigName",
        ),
        change=(
            "a variant (model, instance type, pools, count, timeouts), data capture, the volume "
            "key, async inference, metrics"
        ),
        cloudformation=CfnAction.REPLACE,
        sagemaker=SageMakerAction.NEW_RESOURCE,
        why=(
            "a new EndpointConfig; the Endpoint that names it is updated onto it "
            "(UpdateEndpoint), and the old config is deleted in the cleanup"
        ),
        citation="botocore sagemaker: no UpdateEndpointConfig operation exists",
    ),
    UpdateRule(
        id="config-tags",
        resource=CONFIG,
        properties=("Tags",),
        change="the EndpointConfig's tags",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.IN_PLACE,
        why="tags only: no new config, no new fleet",
        citation="botocore sagemaker AddTagsInput, DeleteTagsInput",
    ),
    UpdateRule(
        id="model",
        resource=MODEL,
        properties=(
            "PrimaryContainer",
            "Containers",
            "ExecutionRoleArn",
            "EnableNetworkIsolation",
            "InferenceExecutionConfig",
            "ModelName",
            "VpcConfig",
        ),
        change="the model: weights, image, env, role, VPC, network isolation",
        cloudformation=CfnAction.REPLACE,
        sagemaker=SageMakerAction.NEW_RESOURCE,
        why=(
            "a new Model; the config or component that names it follows (a new config and "
            "UpdateEndpoint, or UpdateInferenceComponent)"
        ),
        citation="botocore sagemaker: no UpdateModel operation exists",
    ),
    UpdateRule(
        id="model-tags",
        resource=MODEL,
        properties=("Tags",),
        change="the Model's tags",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.IN_PLACE,
        why="tags only",
        citation="botocore sagemaker AddTagsInput, DeleteTagsInput",
    ),
    UpdateRule(
        id="async-toggle",
        resource=CONFIG,
        properties=("AsyncInferenceConfig",),
        change="async inference turned on or off on an endpoint that keeps its name",
        cloudformation=CfnAction.REPLACE,
        sagemaker=SageMakerAction.REFUSED,
        why=(
            'UpdateEndpoint fails: "The AsyncInferenceConfig parameter cannot be removed from '
            'this endpoint" (async to real-time). The other way (real-time to async) is not '
            "documented or shown by any source found, and is treated the same. The way through "
            "is a new endpoint: a new name (FleetChange.NEW_ENDPOINT does it), or a new "
            "construct id"
        ),
        citation=(
            "aws/sagemaker-python-sdk PR #3124 (the UpdateEndpoint ValidationException, 2022-05-20)"
        ),
    ),
    UpdateRule(
        id="autoscaled-variant",
        resource=CONFIG,
        properties=("ProductionVariants",),
        change=(
            "the instance type (or instance pools) of a variant registered for autoscaling, or "
            "that variant removed, on an endpoint that keeps its name"
        ),
        cloudformation=CfnAction.REPLACE,
        sagemaker=SageMakerAction.REFUSED,
        why=(
            '"If the update would change the instance type for any model that is a target for '
            'auto scaling, the update fails"; removing such a variant needs the target '
            "deregistered first too, and CloudFormation deregisters the old target only in the "
            "cleanup, after UpdateEndpoint. Changing instance pools is treated as changing the "
            "instance type (the guide does not say)"
        ),
        citation=SCALING_UPDATE_GUIDE,
    ),
    UpdateRule(
        id="component-move",
        resource=COMPONENT,
        properties=("EndpointName", "EndpointArn", "VariantName", "InferenceComponentName"),
        change=(
            "the endpoint, variant or name of a component that keeps its logical id (an "
            "instance-type change of its endpoint renames the variant)"
        ),
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.REFUSED,
        why=(
            "UpdateInferenceComponent takes none of EndpointName and VariantName, and finds "
            "the component by its name: no call moves or renames a component. Give the "
            "component (and its endpoint) new construct ids: a new component, then the old "
            "one deleted"
        ),
        citation=(
            "botocore sagemaker UpdateInferenceComponentInput (members: "
            "InferenceComponentName, Specification, Specifications, RuntimeConfig, "
            "DeploymentConfig)"
        ),
        verified=False,
    ),
    UpdateRule(
        id="component-specification",
        resource=COMPONENT,
        properties=("Specification", "Specifications", "DeploymentConfig"),
        change="a component's model, container, compute or start-up settings",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.UPDATE_COMPONENT,
        why=(
            "UpdateInferenceComponent: new copies start beside the old (all at once, or in "
            "batches with DeploymentConfig.RollingUpdatePolicy) and the old are removed; the "
            "endpoint's instances must hold both meanwhile, or managed instance scaling adds "
            "instances"
        ),
        citation=(
            "botocore sagemaker UpdateInferenceComponentInput, InferenceComponentDeploymentConfig"
        ),
    ),
    UpdateRule(
        id="component-runtime",
        resource=COMPONENT,
        properties=("RuntimeConfig", "Tags"),
        change="a component's copy count, or its tags",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.IN_PLACE,
        why=(
            "copies added or removed where the component runs "
            "(UpdateInferenceComponentRuntimeConfig)"
        ),
        citation="botocore sagemaker UpdateInferenceComponentRuntimeConfigInput",
    ),
    UpdateRule(
        id="target-resource",
        resource=TARGET,
        properties=("ResourceId", "ScalableDimension", "ServiceNamespace"),
        change=("what a scalable target scales (a new endpoint, variant or component name)"),
        cloudformation=CfnAction.REPLACE,
        sagemaker=SageMakerAction.REGISTER_TARGET,
        why=(
            "the new target is registered after what it names exists; the old one is "
            "deregistered in the cleanup"
        ),
        citation=UPDATE_BEHAVIORS,
    ),
    UpdateRule(
        id="target-bounds",
        resource=TARGET,
        properties=(
            "MinCapacity",
            "MaxCapacity",
            "ScheduledActions",
            "SuspendedState",
            "RoleARN",
            "Tags",
        ),
        change="scaling bounds (min and max instances or copies), schedules",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.IN_PLACE,
        why="RegisterScalableTarget again with the new bounds; nothing is redeployed",
        citation="botocore application-autoscaling RegisterScalableTargetRequest",
    ),
    UpdateRule(
        id="policy-resource",
        resource=POLICY,
        properties=(
            "PolicyName",
            "ServiceNamespace",
            "ResourceId",
            "ScalableDimension",
            "ScalingTargetId",
        ),
        change="what a scaling policy is attached to, or its name",
        cloudformation=CfnAction.REPLACE,
        sagemaker=SageMakerAction.REGISTER_TARGET,
        why="a new policy on the target; the old one deleted in the cleanup",
        citation=UPDATE_BEHAVIORS,
    ),
    UpdateRule(
        id="policy-settings",
        resource=POLICY,
        properties=(
            "PolicyType",
            "TargetTrackingScalingPolicyConfiguration",
            "StepScalingPolicyConfiguration",
            "PredictiveScalingPolicyConfiguration",
        ),
        change="a scaling policy's target or steps",
        cloudformation=CfnAction.UPDATE,
        sagemaker=SageMakerAction.IN_PLACE,
        why="PutScalingPolicy with the new settings; nothing is redeployed",
        citation="botocore application-autoscaling PutScalingPolicyRequest",
    ),
)

_BY_ID = {rule.id: rule for rule in RULES}


def rule(id: str) -> UpdateRule:
    """The row named ``id``."""
    return _BY_ID[id]


def rule_for(resource: str, prop: str) -> UpdateRule | None:
    """The row for a change of ``prop`` on ``resource``: the general one where a refusal
    depends on the change, not only on the property (``async-toggle`` refuses only a config
    that gains or loses ``AsyncInferenceConfig``), else the refusal; None for a property the
    rules do not cover."""
    rows = [r for r in RULES if r.resource == resource and prop in r.properties]
    general = [r for r in rows if r.sagemaker is not SageMakerAction.REFUSED]
    found = general or rows
    return found[0] if found else None


def replaced_by(resource: str, prop: str) -> bool:
    """Whether CloudFormation replaces ``resource`` when ``prop`` changes."""
    found = rule_for(resource, prop)
    return found is not None and found.cloudformation is CfnAction.REPLACE
