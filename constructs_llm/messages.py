"""The text of the constructs' problems and warnings; the checks that use them stay short.

Each function names the bad value and the fix (problems) or what to verify (warnings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_llm.hardware.instance_type import InstanceType

if TYPE_CHECKING:
    from constructs_llm.model.source import ModelSource

__all__ = [
    "AUTOSCALING_FIX",
    "ENGINE_FIX",
    "IC_ENDPOINT_FIX",
    "MODEL_FIX",
    "accelerators_above_instance",
    "accelerators_on_cpu",
    "accelerators_required",
    "component_env_size",
    "copies_outside_scaling",
    "cpu_above_instance",
    "fleet_too_small",
    "fleet_total_too_small",
    "host_ami_conflict",
    "hub_download_blocked",
    "hub_isolated",
    "imported_name_unknown",
    "instance_count_outside_scaling",
    "instance_type_required",
    "kms_on_nvme",
    "memory_above_instance",
    "min_instances_above_max",
    "min_instances_zero_region",
    "no_default_placement",
    "no_egress_subnets",
    "scale_to_zero",
    "scale_to_zero_metric",
    "scale_to_zero_needs_release",
    "source_fix",
    "unknown_instance_type",
    "unknown_model_size",
    "variant_scale_to_zero",
    "volume_on_nvme",
]

#: How to build the right kind of value, for messages about the wrong kind.
MODEL_FIX = "create it with LlmModel(self, 'Model', source=..., engine=..., instance_type=...)"
AUTOSCALING_FIX = "use Autoscaling(max_capacity=..., target_concurrent_requests=...)"
ENGINE_FIX = (
    "use Engine.tgi(), Engine.tgi_neuronx(), Engine.lmi(), Engine.vllm(), Engine.sglang() or "
    "Engine.custom(image=..., stream_format=...)"
)
IC_ENDPOINT_FIX = (
    "create one with InferenceComponentEndpoint(self, 'Shared', instance_type=...); an "
    "LlmEndpoint serves one model on its variant and cannot host components"
)


def source_fix(given: object) -> str:
    hub = repr(given) if isinstance(given, str) else "'org/name'"
    return (
        f"use ModelSource.hugging_face({hub}), ModelSource.s3(bucket, prefix) or "
        "ModelSource.s3_archive(bucket, key)"
    )


# -- models and placements ----------------------------------------------------------------------


def hub_isolated(model_id: str | None) -> str:
    return (
        f"network_isolation=True blocks the download of Hub model '{model_id}'; stage the "
        "weights in S3 and use ModelSource.s3(bucket, prefix), or drop network_isolation"
    )


_STAGE_IN_S3 = "stage the weights in S3 with ModelSource.s3(bucket, prefix)"


def no_egress_subnets(vpc_path: str, source: ModelSource) -> str:
    if source.is_hub:
        return (
            f"Hub model '{source.model_id}' needs private subnets with egress (a NAT route) to "
            f"download, but vpc '{vpc_path}' has no subnets with egress "
            f"(SubnetType.PRIVATE_WITH_EGRESS, the default selection); add a NAT gateway or "
            f"{_STAGE_IN_S3}"
        )
    return (
        f"vpc '{vpc_path}' has no private subnets with egress (SubnetType.PRIVATE_WITH_EGRESS, "
        "the default selection); pass vpc_subnets=ec2.SubnetSelection(subnet_type="
        "ec2.SubnetType.PRIVATE_ISOLATED) for isolated subnets (with an S3 gateway endpoint "
        "for the weights)"
    )


def hub_download_blocked(model_id: str | None, isolated: bool) -> str:
    why = (
        "isolated subnets (no route to the Hub)"
        if isolated
        else "public subnets (SageMaker's network interfaces get no public IP)"
    )
    return (
        f"Hub model '{model_id}' cannot download from {why}; use private subnets with egress "
        f"or {_STAGE_IN_S3}"
    )


def unknown_instance_type(instance: InstanceType, *, for_components: bool = False) -> str:
    if for_components:
        return (
            f"{instance.name} is not in the packaged hardware catalog, so the components' "
            "accelerators, CPU cores and memory were not checked against it; verify that each "
            "copy fits one instance"
        )
    return (
        f"{instance.name} is not in the packaged hardware catalog, so GPU count, memory fit and "
        "volume rules were not checked; verify tensor parallel degree and memory by hand"
    )


def unknown_model_size(model_id: str | None) -> str:
    return (
        f"the size of '{model_id or 'this model'}' is unknown, so memory fit was not checked; "
        "pass architecture=ModelArchitecture(...) to check it"
    )


def no_default_placement(path: str) -> str:
    return (
        f"LlmModel '{path}' has no default placement (it was created without instance_type); "
        "pass instance_type=... to the LlmModel, or read the binding of the hosting construct "
        "(endpoint.binding, component.binding, or model.bind(Placement(...)))"
    )


def instance_type_required(model_path: str, who: str = "LlmEndpoint") -> str:
    return (
        f"instance_type is required: model '{model_path}' has no default instance type; pass "
        f"{who}(instance_type=...) or LlmModel(instance_type=...)"
    )


# -- endpoints ----------------------------------------------------------------------------------


def variant_scale_to_zero(min_capacity: int) -> str:
    return (
        f"autoscaling min_capacity={min_capacity}: a real-time endpoint variant cannot scale "
        "to zero; use InferenceComponentEndpoint with an InferenceComponent for scale to "
        "zero, or set min_capacity >= 1"
    )


def instance_count_outside_scaling(count: int, low: int, high: int) -> str:
    return (
        f"instance_count {count} is outside autoscaling's [{low}, {high}]; set instance_count "
        "within that range"
    )


def kms_on_nvme(instance: InstanceType) -> str:
    return (
        f"kms_key cannot be used with {instance.name}: it has local NVMe storage, which "
        "SageMaker encrypts with a hardware key and for which CreateEndpointConfig rejects "
        "KmsKeyId; drop kms_key or pick an EBS-backed type"
    )


def volume_on_nvme(instance: InstanceType) -> str:
    return (
        f"volume_size cannot be set on {instance.name}: it has local NVMe storage "
        f"({instance.local_nvme_gb} GB) and SageMaker rejects VolumeSizeInGB there; drop "
        "volume_size"
    )


def min_instances_above_max(low: int, high: int) -> str:
    return (
        f"min_instances ({low}) is above max_instances ({high}); lower min_instances or raise "
        "max_instances"
    )


def min_instances_zero_region() -> str:
    return (
        "min_instances=0 (MinInstanceCount 0) is rejected in some regions (reported in "
        "eu-west-3: 'Min instance count needs to be greater than 0 for enabled managed "
        "instance scaling'); if CreateEndpointConfig fails there, use min_instances=1 "
        "(components can still scale their copies to zero)"
    )


def host_ami_conflict(component_path: str, ami: str, endpoint_path: str, current: str) -> str:
    return (
        f"InferenceComponent '{component_path}' needs host AMI {ami}, but endpoint "
        f"'{endpoint_path}' already uses {current} for another component; put images that "
        "need different host AMIs on separate endpoints"
    )


def fleet_total_too_small(
    endpoint_path: str, components: str, over: str, fleet: int, instance: str
) -> str:
    return (
        f"InferenceComponentEndpoint '{endpoint_path}': the initial copies of its components "
        f"({components}) need {over} with max_instances={fleet} x {instance}; raise "
        "max_instances or lower copies"
    )


# -- inference components -----------------------------------------------------------------------


def accelerators_required(instance: InstanceType) -> str:
    return (
        f"accelerators is required on {instance.name}: it is not in the hardware catalog, so "
        "the number of devices per copy cannot be defaulted; pass accelerators=N"
    )


def accelerators_on_cpu(value: object, instance: InstanceType) -> str:
    return (
        f"accelerators={value} but {instance.name} has no accelerators (CPU only); drop "
        "accelerators, or use a GPU (ml.g5, ml.g6, ...) or Neuron (ml.inf2) endpoint"
    )


def accelerators_above_instance(value: int, instance: InstanceType) -> str:
    return (
        f"accelerators={value} per copy but {instance.name} has {instance.accelerator_count}; "
        "a copy must fit on one instance: lower accelerators or choose a larger instance type"
    )


def memory_above_instance(value: int, have_mib: int, instance: InstanceType) -> str:
    return (
        f"min_memory_mib={value} per copy but {instance.name} has {have_mib} MiB of host memory "
        f"({instance.memory_gib:g} GiB); lower min_memory_mib or choose a larger instance type"
    )


def cpu_above_instance(value: float, have: float, instance: InstanceType) -> str:
    return (
        f"cpu_cores={value:g} per copy but {instance.name} has {have:g} vCPUs; lower cpu_cores "
        "or choose a larger instance type"
    )


def fleet_too_small(
    prop: str,
    count: int,
    what: str,
    needed: object,
    instance: str,
    per: int,
    demand: str,
    most: int,
) -> str:
    return (
        f"{prop}={count} {what} need {needed} instances of {instance} ({per} "
        f"cop{'y' if per == 1 else 'ies'} of {demand} fit on one) but the endpoint's "
        f"max_instances is {most}; raise max_instances or lower {prop}"
    )


def copies_outside_scaling(copies: int, low: int, high: int) -> str:
    return (
        f"copies {copies} is outside autoscaling's [{low}, {high}]; set copies within that range "
        "(copies start at 1 or more even when scaling to zero)"
    )


def scale_to_zero_needs_release(endpoint_path: str, min_instances: int) -> str:
    return (
        "autoscaling min_capacity=0 (scale to zero) needs an endpoint that can release its "
        f"instances, but endpoint '{endpoint_path}' has min_instances={min_instances}; create "
        "the InferenceComponentEndpoint with min_instances=0"
    )


def component_env_size(env: dict[str, str], limit: int) -> str:
    return (
        f"the model's container environment has {len(env)} entries ({', '.join(sorted(env))}); "
        f"SageMaker documents at most {limit} for an inference component's container. This "
        "component references the model by name, where the model's limit applies; if "
        "CreateInferenceComponent rejects the environment, drop entries from env"
    )


def scale_to_zero(copies: int, instance: str) -> str:
    return (
        f"scale to zero: the first deploy starts {copies} copy(ies) on at least one {instance} "
        "and bills for them until target tracking scales in (SageMaker rejects CopyCount 0 at "
        "creation). Once at zero, the next request waits minutes for an instance and a copy to "
        "start, and requests fail with NoCapacityInvocationFailures meanwhile (the first one "
        "triggers the scale-out alarm); clients should retry with backoff"
    )


def scale_to_zero_metric() -> str:
    return (
        "scale to zero with target_concurrent_requests: AWS's documented recipe tracks "
        "invocations per copy (target_invocations_per_instance=1); verify that "
        "ConcurrentRequestsPerCopy reaches 0 when idle so the last copy is released, or use "
        "the invocations target"
    )


def imported_name_unknown() -> str:
    return (
        "endpoint_name is not known at synth (an import or a parameter), so it cannot be the "
        "name clients send as 'model'; pass served_model_name='...'"
    )
