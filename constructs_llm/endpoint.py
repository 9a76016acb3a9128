"""LlmEndpoint: a real-time SageMaker endpoint for one LlmModel."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from aws_cdk import Duration, Size, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm import scaling as _scaling
from constructs_llm._validation import (
    Problems,
    add_quota_note,
    name_problem,
    positive_int_problem,
    timeout_problem,
    type_problem,
)
from constructs_llm.errors import ConfigurationError, ScalingError
from constructs_llm.instance_type import InstanceType
from constructs_llm.invocation_target import ServesModel
from constructs_llm.metrics import InvocationMetrics
from constructs_llm.model import MODEL_FIX, LlmModel
from constructs_llm.notes import add_note
from constructs_llm.scaling import AUTOSCALING_FIX, Autoscaling
from constructs_llm.timeouts import default_download_timeout, default_health_check_timeout

if TYPE_CHECKING:
    from aws_cdk import aws_applicationautoscaling as appscaling
    from aws_cdk import aws_cloudwatch as cloudwatch
    from aws_cdk import aws_kms as kms

INVOKE_ACTIONS = ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]
MAX_VOLUME_GB = 512
VOLUME_KEY_ACTIONS = (
    "kms:CreateGrant",
    "kms:DescribeKey",
    "kms:Decrypt",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
)
# A fixed checkov skip: its check asks for a KMS key that SageMaker cannot use on NVMe types.
NVME_CHECKOV_SKIP = {
    "id": "CKV_AWS_98",
    "comment": "Instance type has local NVMe storage, which is hardware-encrypted; SageMaker "
    "does not accept KmsKeyId for instance storage (it only encrypts EBS ML volumes).",
}


class EndpointAttributes:
    """``endpoint_name`` and ``endpoint_arn`` of a construct whose ``resource`` is the Endpoint."""

    resource: sagemaker.CfnEndpoint

    @property
    def endpoint_name(self) -> str:
        return self.resource.attr_endpoint_name

    @property
    def endpoint_arn(self) -> str:
        """The Endpoint's ARN (its ``Ref``)."""
        return self.resource.ref


class LlmEndpoint(EndpointAttributes, ServesModel, InvocationMetrics, Construct):
    """An EndpointConfig and Endpoint serving one ``LlmModel`` on GPU or Inferentia instances.

    Only the Endpoint may carry a physical name; the EndpointConfig is replaced on every change,
    so model, image, env and instance-type changes deploy in one ``cdk deploy``. The variant is
    named after the instance type, so with autoscaling a new instance type brings a new variant
    and a new scalable target instead of an update SageMaker refuses.

    :param model: the model to serve.
    :param instance_type: @default the model's instance type (must match it).
    :param instance_count: initial instances. @default 1
    :param health_check_timeout: container start-up health check. @default 15 min on GPUs
        (longer for large models), 60 min on Neuron
    :param download_timeout: model download. @default as ``health_check_timeout``
    :param volume_size: ML storage volume; only for instance types without local NVMe.
        @default sized from the model's weights where known, else SageMaker's default
    :param kms_key: encrypts the ML storage volume; not for NVMe instance types. @default none
    :param endpoint_name: physical name of the Endpoint. @default generated
    :param autoscaling: target tracking on the instance count. @default none
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        model: LlmModel,
        instance_type: str | InstanceType | None = None,
        instance_count: int = 1,
        health_check_timeout: Duration | None = None,
        download_timeout: Duration | None = None,
        volume_size: Size | None = None,
        kms_key: kms.IKey | None = None,
        endpoint_name: str | None = None,
        autoscaling: Autoscaling | None = None,
    ) -> None:
        super().__init__(scope, id)
        self._check_kinds(model, autoscaling)
        self.model = model
        self.instance_type = (
            InstanceType.of(instance_type) if instance_type is not None else model.instance_type
        )
        self.autoscaling = autoscaling
        self._validate(instance_count, health_check_timeout, download_timeout, volume_size)
        self._validate_placement(kms_key, endpoint_name)
        arch = model.architecture
        self.health_check_timeout = health_check_timeout or default_health_check_timeout(
            self.instance_type, arch
        )
        self.download_timeout = download_timeout or default_download_timeout(
            self.instance_type, arch
        )
        self.variant_name = variant_name_for(self.instance_type)

        self.config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            production_variants=[self._variant(instance_count, volume_size)],
            kms_key_id=kms_key.key_arn if kms_key else None,
        )
        storage_settings(self.config, self.instance_type, kms_key, model.role)
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
            # Keep the instance count the autoscaler has set across config updates.
            retain_all_variant_properties=True if autoscaling else None,
        )
        self.scalable_target = self._autoscale(autoscaling) if autoscaling else None
        self._annotate(instance_count)

    # -- public API ------------------------------------------------------------------

    @property
    def inference_component_name(self) -> str | None:
        return None

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allows ``InvokeEndpoint`` and ``InvokeEndpointWithResponseStream`` on this endpoint."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=INVOKE_ACTIONS, resource_arns=[self.endpoint_arn]
        )

    def _metric_dimensions(self) -> dict[str, str]:
        return {"EndpointName": self.endpoint_name, "VariantName": self.variant_name}

    def metric_gpu_utilization(self) -> cloudwatch.Metric:
        return self.metric("GPUUtilization", namespace="/aws/sagemaker/Endpoints")

    def metric_gpu_memory_utilization(self) -> cloudwatch.Metric:
        return self.metric("GPUMemoryUtilization", namespace="/aws/sagemaker/Endpoints")

    # -- construction helpers ------------------------------------------------------------

    def _check_kinds(self, model: object, autoscaling: object) -> None:
        problems = Problems(f"LlmEndpoint '{self.node.path}'")
        problems.add(type_problem("model", model, LlmModel, MODEL_FIX))
        problems.add(
            type_problem("autoscaling", autoscaling, Autoscaling, AUTOSCALING_FIX, optional=True)
        )
        problems.raise_if_any()

    def _validate(
        self,
        instance_count: int,
        health_check_timeout: Duration | None,
        download_timeout: Duration | None,
        volume_size: Size | None,
    ) -> None:
        problems = Problems(f"LlmEndpoint '{self.node.path}'")
        if self.instance_type != self.model.instance_type:
            problems.add(
                f"instance_type {self.instance_type.name} differs from the model's "
                f"{self.model.instance_type.name}, which its engine settings were derived for; "
                "pass instance_type to the LlmModel instead"
            )
        problems.add(positive_int_problem("instance_count", instance_count))
        problems.add(timeout_problem("health_check_timeout", health_check_timeout))
        problems.add(timeout_problem("download_timeout", download_timeout))
        problems.add(self._volume_problem(volume_size))
        problems.raise_if_any()
        scaling = Problems(f"LlmEndpoint '{self.node.path}'")
        scaling.add(self._scaling_problem(instance_count))
        scaling.raise_if_any(ScalingError)

    def _validate_placement(self, kms_key: kms.IKey | None, endpoint_name: str | None) -> None:
        problems = Problems(f"LlmEndpoint '{self.node.path}'")
        problems.add(kms_problem(self.instance_type, kms_key))
        problems.add(name_problem("endpoint_name", endpoint_name))
        problems.raise_if_any()

    def _volume_problem(self, volume_size: Size | None) -> str | None:
        return volume_problem(self.instance_type, volume_size)

    def _scaling_problem(self, instance_count: int) -> str | None:
        s = self.autoscaling
        if s is None or not isinstance(instance_count, int):
            return None
        if s.min_capacity < 1:
            return (
                f"autoscaling min_capacity={s.min_capacity}: a real-time endpoint variant "
                "cannot scale to zero; use InferenceComponentEndpoint with an "
                "InferenceComponent for scale to zero, or set min_capacity >= 1"
            )
        if not s.min_capacity <= instance_count <= s.max_capacity:
            return (
                f"instance_count {instance_count} is outside autoscaling's "
                f"[{s.min_capacity}, {s.max_capacity}]; set instance_count within that range"
            )
        return None

    def _variant(
        self, instance_count: int, volume_size: Size | None
    ) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
            variant_name=self.variant_name,
            model_name=self.model.model_name,
            instance_type=self.instance_type.name,
            initial_instance_count=instance_count,
            initial_variant_weight=1,
            container_startup_health_check_timeout_in_seconds=int(
                self.health_check_timeout.to_seconds()
            ),
            model_data_download_timeout_in_seconds=int(self.download_timeout.to_seconds()),
            volume_size_in_gb=self._volume_gb(volume_size),
            inference_ami_version=self.model.inference_ami_version,
            routing_config=sagemaker.CfnEndpointConfig.RoutingConfigProperty(
                routing_strategy="LEAST_OUTSTANDING_REQUESTS"
            ),
        )

    def _volume_gb(self, volume_size: Size | None) -> int | None:
        if volume_size is not None:
            return int(volume_size.to_gibibytes())
        plan = self.model.plan
        if plan is None or not self.instance_type.supports_volume_size:
            return None
        # Weights land on the volume, and some servers copy them once more.
        return min(MAX_VOLUME_GB, max(30, math.ceil(plan.weights_gib * 2.5 + 10)))

    def _autoscale(self, autoscaling: Autoscaling) -> appscaling.ScalableTarget:
        from aws_cdk import aws_applicationautoscaling as appscaling  # only stacks that scale

        target = _scaling.scalable_target(
            self,
            "ScalableTarget",
            resource_id=f"endpoint/{self.endpoint_name}/variant/{self.variant_name}",
            dimension="sagemaker:variant:DesiredInstanceCount",
            min_capacity=autoscaling.min_capacity,
            max_capacity=autoscaling.max_capacity,
        )
        _scaling.track(
            target,
            autoscaling,
            concurrency_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
            invocations_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
        )
        return target

    def _annotate(self, instance_count: int) -> None:
        if self.model.plan is not None:
            add_note(self, f"Memory plan: {self.model.plan.summary()}")
        most = self.autoscaling.max_capacity if self.autoscaling else instance_count
        add_quota_note(self, self.instance_type.name, most)


def storage_settings(
    config: sagemaker.CfnEndpointConfig,
    instance_type: InstanceType,
    kms_key: kms.IKey | None,
    grantee: iam.IGrantable,
) -> None:
    """Records why NVMe types carry no volume key, and lets ``grantee`` use the key there is
    (named actions only: a volume key needs no wildcard actions)."""
    if instance_type.local_nvme:
        config.add_metadata("checkov", {"skip": [NVME_CHECKOV_SKIP]})
    if kms_key is not None:
        kms_key.grant(grantee, *VOLUME_KEY_ACTIONS)


def variant_name_for(instance_type: InstanceType) -> str:
    """Names the variant after the fleet: a new instance type is a new variant."""
    name = instance_type.name.removeprefix("ml.").replace(".", "-")
    problem = name_problem("the variant name derived from the instance type", name)
    if problem:
        raise ConfigurationError(f"instance type {instance_type.name!r}: {problem}")
    return name


def kms_problem(instance_type: InstanceType, kms_key: kms.IKey | None) -> str | None:
    """KmsKeyId is rejected on instance types with local NVMe storage."""
    if kms_key is None or not instance_type.known or instance_type.supports_kms:
        return None
    return (
        f"kms_key cannot be used with {instance_type.name}: it has local NVMe "
        "storage, which SageMaker encrypts with a hardware key and for which "
        "CreateEndpointConfig rejects KmsKeyId; drop kms_key or pick an EBS-backed type"
    )


def volume_problem(instance_type: InstanceType, volume_size: Size | None) -> str | None:
    """VolumeSizeInGB: a Size, 1-512 GiB, and only on instance types without local NVMe."""
    if volume_size is None:
        return None
    if not isinstance(volume_size, Size):
        return f"volume_size must be a Size, got {volume_size!r}; use Size.gibibytes(...)"
    if instance_type.known and not instance_type.supports_volume_size:
        return (
            f"volume_size cannot be set on {instance_type.name}: it has local NVMe "
            f"storage ({instance_type.local_nvme_gb} GB) and SageMaker rejects "
            "VolumeSizeInGB there; drop volume_size"
        )
    gib = volume_size.to_gibibytes()
    if not Token.is_unresolved(gib) and not 1 <= gib <= MAX_VOLUME_GB:
        return f"volume_size must be 1-{MAX_VOLUME_GB} GiB, got {gib:g} GiB"
    return None
