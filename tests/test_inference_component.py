"""Inference components: the model-less endpoint config, per-copy resources checked against the
hardware, wiring that orders creation and deletion, grants, copy autoscaling and scale to zero."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any, cast

import pytest
from aws_cdk import App, CfnElement, Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    Autoscaling,
    ContainerImage,
    CopyPlacement,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmModel,
    ModelSource,
    Placement,
    StreamFormat,
    StreamingInvoker,
)
from constructs_llm.errors import ConfigurationError
from constructs_llm.hosting.components.endpoint_rules import RULES, HostedPlan, HostingPlan
from constructs_llm.hosting.components.plan import ComponentEndpointPlan, ComponentPlan
from constructs_llm.notes import notes_of
from tests.support.synth_errors import synthesize

G5 = "ml.g5.12xlarge"  # 4 x A10G (22.4 GiB), 48 vCPU, 192 GiB
LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"
INVOKE_ACTIONS = ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]
QWEN = "Qwen/Qwen2.5-7B-Instruct"


def _model(
    stack: Stack, id: str = "Model", model_id: str = LLAMA3, instance_type: str = G5
) -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(model_id, needs_token=False),
        engine=Engine.tgi(),
        instance_type=instance_type,
        max_input_tokens=2048,
        max_total_tokens=4096,
    )


def _logical_id(stack: Stack, construct: Any) -> str:
    element = construct if isinstance(construct, CfnElement) else construct.node.default_child
    return str(stack.get_logical_id(element))


def _invoke_resources(template: Template, role_id: str) -> list[set[str]]:
    """The resources of each InvokeEndpoint statement in the policies of one role."""
    found: list[set[str]] = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        if {"Ref": role_id} not in policy["Properties"]["Roles"]:
            continue
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Action"] == INVOKE_ACTIONS and statement["Effect"] == "Allow":
                found.append({json.dumps(r, sort_keys=True) for r in statement["Resource"]})
    return found


def _resource(template: Template, type_: str, logical_id: str) -> Mapping[str, Any]:
    return template.find_resources(type_)[logical_id]


class Shared:
    """One endpoint (min 0, max 2 instances) with an always-on chat component, a component
    that scales to zero, a caller granted the chat component, and a streaming invoker."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.endpoint = InferenceComponentEndpoint(
            stack,
            "Shared",
            instance_type=G5,
            min_instances=0,
            max_instances=2,
            endpoint_name="shared-llms",
        )
        self.chat = InferenceComponent(
            stack,
            "Chat",
            endpoint=self.endpoint,
            model=_model(stack, "ChatModel"),
            accelerators=1,
            cpu_cores=4,
            min_memory_mib=24 * 1024,
            copies=2,
            autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=4),
        )
        self.zero = InferenceComponent(
            stack,
            "Batch",
            endpoint=self.endpoint,
            model=_model(stack, "BatchModel", QWEN),
            accelerators=1,
            min_memory_mib=16 * 1024,
            autoscaling=Autoscaling(
                min_capacity=0, max_capacity=2, target_invocations_per_instance=1
            ),
        )
        self.caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
        self.chat.grant_invoke(self.caller)
        self.invoker = StreamingInvoker(stack, "Stream", target=self.chat)
        self.template = Template.from_stack(stack)
        self.endpoint_id = _logical_id(stack, self.endpoint)
        self.chat_id = _logical_id(stack, self.chat)
        self.zero_id = _logical_id(stack, self.zero)


@pytest.fixture(scope="module")
def shared(new_stack: Callable[..., Stack]) -> Shared:
    return Shared(new_stack())


# -- the endpoint ---------------------------------------------------------------------------


def test_config_is_model_less_with_a_role_and_managed_instance_scaling(shared: Shared) -> None:
    config = next(iter(shared.template.find_resources("AWS::SageMaker::EndpointConfig").values()))
    props = config["Properties"]
    assert "EndpointConfigName" not in props
    role_id = _logical_id(shared.stack, shared.endpoint.role)
    assert props["ExecutionRoleArn"] == {"Fn::GetAtt": [role_id, "Arn"]}
    assert props["ProductionVariants"] == [
        {
            "VariantName": "g5-12xlarge",
            "InstanceType": G5,
            "InitialInstanceCount": 1,  # the API minimum, although scaling may go to 0
            "ManagedInstanceScaling": {
                "Status": "ENABLED",
                "MinInstanceCount": 0,
                "MaxInstanceCount": 2,
            },
            "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
        }
    ]
    # The config waits for the role's policies (its default policy and the ones that hold its
    # wildcards); the role itself is already ordered by GetAtt.
    role_policies = {
        k
        for k, p in shared.template.find_resources("AWS::IAM::Policy").items()
        if {"Ref": role_id} in p["Properties"]["Roles"]
    }
    assert set(config["DependsOn"]) == role_policies
    assert [d for d in role_policies if "DefaultPolicy" in d]
    assert [d for d in role_policies if "ContainerWrites" in d]


def _role_statements(template: Template, prefix: str) -> list[dict[str, Any]]:
    """The statements of every policy of the role whose logical id starts with ``prefix``."""
    return [
        statement
        for p in template.find_resources("AWS::IAM::Policy").values()
        if any(r["Ref"].startswith(prefix) for r in p["Properties"]["Roles"])
        for statement in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_endpoint_role_gets_logs_metrics_and_its_models_image_pulls(shared: Shared) -> None:
    statements = _role_statements(shared.template, "SharedRole")
    actions = {
        action
        for statement in statements
        for action in (
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        )
    }
    # Which role pulls a component's image is undocumented, so the endpoint role may too:
    # on the components' repositories only (their Hub weights need no AWS reads).
    assert actions == {
        "logs:CreateLogGroup",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "logs:DescribeLogStreams",
        "cloudwatch:PutMetricData",
        "ecr:BatchCheckLayerAvailability",
        "ecr:GetDownloadUrlForLayer",
        "ecr:BatchGetImage",
        "ecr:GetAuthorizationToken",
    }
    pulls = [
        statement["Resource"]
        for statement in statements
        if "ecr:BatchGetImage" in statement["Action"]
    ]
    assert "repository/huggingface-pytorch-tgi-inference" in json.dumps(pulls)


def test_endpoint_takes_the_user_name_and_the_generated_config(shared: Shared) -> None:
    shared.template.has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {
            "EndpointName": "shared-llms",
            "EndpointConfigName": {"Fn::GetAtt": [Match.any_value(), "EndpointConfigName"]},
        },
    )


def test_endpoint_annotates_quota_and_the_min_instances_zero_region_caveat(
    shared: Shared,
) -> None:
    annotations = Annotations.from_stack(shared.stack)
    quota, capacity = notes_of(shared.stack.node.find_child("Shared"))
    # max_instances (2), and as many again while an update of the endpoint's config runs a new
    # fleet beside the old
    assert re.search(
        r"ml.g5.12xlarge for endpoint usage' must allow at least 4 .*: 2 in service at most, "
        r"and 2 more while an update of the endpoint's config runs a new fleet",
        quota,
    )
    assert capacity.startswith("Capacity: at minimum ")
    annotations.has_warning("/Test/Shared", Match.string_like_regexp("eu-west-3"))


# -- the components -------------------------------------------------------------------------


def test_component_spec_requests_the_copy_resources_and_llm_timeouts(shared: Shared) -> None:
    chat = _resource(shared.template, "AWS::SageMaker::InferenceComponent", shared.chat_id)
    props = chat["Properties"]
    assert props["EndpointName"] == {"Fn::GetAtt": [shared.endpoint_id, "EndpointName"]}
    assert props["VariantName"] == "g5-12xlarge"
    assert props["RuntimeConfig"] == {"CopyCount": 2}
    spec = props["Specification"]
    model_id = _logical_id(shared.stack, shared.chat.binding.resource)
    assert spec["ModelName"] == {"Fn::GetAtt": [model_id, "ModelName"]}
    assert spec["ComputeResourceRequirements"] == {
        "NumberOfAcceleratorDevicesRequired": 1,
        "NumberOfCpuCoresRequired": 4,
        "MinMemoryRequiredInMb": 24 * 1024,
    }
    startup = spec["StartupParameters"]
    assert startup["ContainerStartupHealthCheckTimeoutInSeconds"] == 900  # the GPU floor
    assert startup["ModelDataDownloadTimeoutInSeconds"] == 900


def test_component_has_a_valid_stable_name_used_everywhere(shared: Shared) -> None:
    name = shared.chat.inference_component_name
    assert re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", name)
    assert name != shared.zero.inference_component_name
    chat = _resource(shared.template, "AWS::SageMaker::InferenceComponent", shared.chat_id)
    assert chat["Properties"]["InferenceComponentName"] == name


def test_engine_is_sharded_over_the_devices_of_one_copy(shared: Shared) -> None:
    # ml.g5.12xlarge has 4 GPUs, but each copy gets 1: TGI must shard over 1.
    binding = shared.chat.binding
    assert binding.environment["SM_NUM_GPUS"] == "1"
    model = _resource(
        shared.template, "AWS::SageMaker::Model", _logical_id(shared.stack, binding.resource)
    )
    assert model["Properties"]["PrimaryContainer"]["Environment"]["SM_NUM_GPUS"] == "1"
    assert binding.plan is not None and binding.plan.devices == 1
    # The model's own default (the whole instance) is never bound, so no Model exists for it.
    assert set(shared.template.find_resources("AWS::SageMaker::Model")) == {
        _logical_id(shared.stack, shared.chat.binding.resource),
        _logical_id(shared.stack, shared.zero.binding.resource),
    }


def test_two_components_share_the_endpoint_and_each_depends_on_it(shared: Shared) -> None:
    components = shared.template.find_resources("AWS::SageMaker::InferenceComponent")
    assert set(components) == {shared.chat_id, shared.zero_id}
    for component in components.values():
        # GetAtt orders creation after, and deletion before, the endpoint and the model.
        assert component["Properties"]["EndpointName"] == {
            "Fn::GetAtt": [shared.endpoint_id, "EndpointName"]
        }
        assert component["Properties"]["Specification"]["ModelName"]["Fn::GetAtt"][1] == (
            "ModelName"
        )
    shared.template.resource_count_is("AWS::SageMaker::Endpoint", 1)
    shared.template.resource_count_is("AWS::SageMaker::EndpointConfig", 1)


def test_models_wait_for_their_role_policies(shared: Shared) -> None:
    for model in shared.template.find_resources("AWS::SageMaker::Model").values():
        assert any("DefaultPolicy" in d for d in model["DependsOn"])


def _endpoint_and_chat(shared: Shared) -> set[str]:
    return {
        json.dumps({"Ref": shared.endpoint_id}, sort_keys=True),
        json.dumps({"Fn::GetAtt": [shared.chat_id, "InferenceComponentArn"]}, sort_keys=True),
    }


def test_grant_invoke_names_the_endpoint_and_this_component(shared: Shared) -> None:
    # IAM lists the endpoint (required) and the inference component (optional) as the
    # resources of both invoke actions; there is no condition key for the component name.
    caller_id = _logical_id(shared.stack, shared.caller)
    assert _invoke_resources(shared.template, caller_id) == [_endpoint_and_chat(shared)]


def test_invocation_target_attributes(shared: Shared) -> None:
    chat = shared.chat
    assert chat.endpoint_name == shared.endpoint.endpoint_name
    assert chat.stream_format is chat.model.engine.stream_format
    assert isinstance(chat.stream_format, StreamFormat)
    assert chat.request_format is chat.model.engine.request_format
    assert chat.served_model_name == LLAMA3


def test_metrics_use_the_component_dimension(shared: Shared) -> None:
    metric = shared.chat.metric_concurrent_requests()
    assert metric.namespace == "AWS/SageMaker"
    assert metric.metric_name == "ConcurrentRequestsPerCopy"
    assert metric.dimensions == {"InferenceComponentName": shared.chat.inference_component_name}
    failures = shared.chat.metric_no_capacity_invocation_failures()
    assert (failures.metric_name, failures.statistic) == ("NoCapacityInvocationFailures", "Sum")
    assert shared.chat.metric_invocations().statistic == "Sum"


def test_streaming_invoker_calls_the_component(shared: Shared) -> None:
    role_id = _logical_id(shared.stack, shared.invoker.role)
    shared.template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Environment": {
                "Variables": Match.object_like(
                    {
                        "ENDPOINT_NAME": {"Fn::GetAtt": [shared.endpoint_id, "EndpointName"]},
                        "INFERENCE_COMPONENT_NAME": shared.chat.inference_component_name,
                        "MODEL_NAME": LLAMA3,
                        "STREAM_FORMAT": shared.chat.model.engine.stream_format.value,
                    }
                )
            }
        },
    )
    assert _invoke_resources(shared.template, role_id) == [_endpoint_and_chat(shared)]


# -- copy autoscaling and scale to zero -----------------------------------------------------


def _targets(shared: Shared) -> dict[str, Mapping[str, Any]]:
    targets = shared.template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget")
    return {t["Properties"]["ResourceId"]: t for t in targets.values()}


def test_copy_autoscaling_targets_the_component_and_waits_for_it(shared: Shared) -> None:
    target = _targets(shared)[f"inference-component/{shared.chat.inference_component_name}"]
    assert target["Properties"]["ScalableDimension"] == (
        "sagemaker:inference-component:DesiredCopyCount"
    )
    assert target["Properties"]["ServiceNamespace"] == "sagemaker"
    assert (target["Properties"]["MinCapacity"], target["Properties"]["MaxCapacity"]) == (1, 4)
    assert shared.chat_id in target["DependsOn"]
    shared.template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": Match.object_like(
                {
                    "TargetValue": 4,
                    "PredefinedMetricSpecification": {
                        "PredefinedMetricType": (
                            "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
                        )
                    },
                }
            ),
        },
    )


def test_scale_to_zero_tracks_invocations_per_copy_down_to_zero(shared: Shared) -> None:
    target = _targets(shared)[f"inference-component/{shared.zero.inference_component_name}"]
    assert (target["Properties"]["MinCapacity"], target["Properties"]["MaxCapacity"]) == (0, 2)
    assert shared.zero_id in target["DependsOn"]
    shared.template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": Match.object_like(
                {
                    "TargetValue": 1,
                    "PredefinedMetricSpecification": {
                        "PredefinedMetricType": "SageMakerInferenceComponentInvocationsPerCopy"
                    },
                }
            ),
        },
    )


def test_scale_out_from_zero_is_one_step_policy_on_one_alarm(shared: Shared) -> None:
    steps = shared.template.find_resources(
        "AWS::ApplicationAutoScaling::ScalingPolicy", {"Properties": {"PolicyType": "StepScaling"}}
    )
    assert len(steps) == 1  # only the component that scales to zero gets one
    ((policy_id, policy),) = steps.items()
    assert policy["Properties"]["StepScalingPolicyConfiguration"] == {
        "AdjustmentType": "ChangeInCapacity",
        "Cooldown": 60,
        "MetricAggregationType": "Maximum",
        "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
    }
    # (the components' default alarms notify nobody: only the scaling alarm has an action)
    alarms = [
        a["Properties"]
        for a in shared.template.find_resources("AWS::CloudWatch::Alarm").values()
        if "AlarmActions" in a["Properties"]
    ]
    assert len(alarms) == 1
    alarm = alarms[0]
    assert alarm["AlarmActions"] == [{"Ref": policy_id}]
    assert {k: alarm[k] for k in alarm if k not in ("AlarmActions", "AlarmDescription")} == {
        "Namespace": "AWS/SageMaker",
        "MetricName": "NoCapacityInvocationFailures",
        "Dimensions": [
            {"Name": "InferenceComponentName", "Value": shared.zero.inference_component_name}
        ],
        "Statistic": "Sum",
        "Period": 60,
        "EvaluationPeriods": 1,
        "DatapointsToAlarm": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "Threshold": 1,
    }


def test_scale_to_zero_warns_about_first_deploy_billing_and_cold_starts(shared: Shared) -> None:
    annotations = Annotations.from_stack(shared.stack)
    annotations.has_warning(
        "/Test/Batch",
        Match.string_like_regexp(
            "first deploy.*bills.*waits minutes.*NoCapacityInvocationFailures"
        ),
    )
    assert not annotations.find_warning("/Test/Chat", Match.string_like_regexp("scale to zero"))
    (plan,) = notes_of(shared.stack.node.find_child("Chat"))
    assert re.match("Memory plan per copy: .* 1 x", plan)


# -- bad input fails at synth, naming the value and the fix -------------------------------


def _cpu_model(stack: Stack) -> LlmModel:
    return LlmModel(
        stack,
        "CpuModel",
        source=ModelSource.hugging_face("Qwen/Qwen2.5-0.5B-Instruct"),
        engine=Engine.custom(
            image=ContainerImage.from_uri(
                "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm-server:1.0"
            ),
            stream_format=StreamFormat.OPENAI,
        ),
        instance_type="ml.m5.xlarge",
    )


def _component(stack: Stack, endpoint: dict[str, Any], **props: Any) -> InferenceComponent:
    endpoint_props: dict[str, Any] = {"instance_type": G5, "max_instances": 2, **endpoint}
    ic_endpoint = InferenceComponentEndpoint(stack, "Endpoint", **endpoint_props)
    component_props: dict[str, Any] = {
        "accelerators": 1,
        "min_memory_mib": 16 * 1024,
        **props,
    }
    if "model" not in component_props:
        component_props["model"] = _model(stack)
    return InferenceComponent(stack, "Component", endpoint=ic_endpoint, **component_props)


def test_a_model_for_another_instance_type_is_bound_to_the_endpoint_s(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a model whose default placement is ml.g5.2xlarge (one GPU)
    stack = new_stack()
    model = _model(stack, instance_type="ml.g5.2xlarge")
    # WHEN a component on ml.g5.12xlarge gives each copy 2 GPUs
    component = _component(stack, {}, model=model, accelerators=2)
    # THEN the copy's Model is derived for 2 GPUs of ml.g5.12xlarge
    assert component.placement == Placement("ml.g5.12xlarge", accelerators=2)
    assert component.binding.environment["SM_NUM_GPUS"] == "2"
    (model_id,) = Template.from_stack(stack).find_resources("AWS::SageMaker::Model")
    assert model_id.startswith("ModelG512xlarge2Devices")


def test_cpu_component_requests_no_accelerators(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    _component(
        stack,
        {"instance_type": "ml.m5.xlarge"},
        model=_cpu_model(stack),
        accelerators=None,
        min_memory_mib=2048,
        cpu_cores=2,
    )
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {
            "Specification": Match.object_like(
                {
                    "ComputeResourceRequirements": {
                        "NumberOfCpuCoresRequired": 2,
                        "MinMemoryRequiredInMb": 2048,
                    }
                }
            )
        },
    )


def test_the_same_copies_fit_on_a_g5_12xlarge(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    component = _component(stack, {}, copies=4)
    assert component.binding.plan is not None and component.binding.plan.fits


def test_components_that_only_fit_alone_fail_together() -> None:
    # GIVEN one instance of 4 GPUs, and a component of 3 one-GPU copies on it
    app = App()
    stack = Stack(app, "Test")
    endpoint = InferenceComponentEndpoint(stack, "Endpoint", instance_type=G5, max_instances=1)

    def add(name: str, model_id: str) -> InferenceComponent:
        return InferenceComponent(
            stack,
            name,
            endpoint=endpoint,
            model=_model(stack, f"{name}Model", model_id),
            accelerators=1,
            min_memory_mib=16 * 1024,
            copies=3,
        )

    # WHEN a second one, which fits alone, is added (created first) THEN the synth fails,
    # naming both in path order (their copies only add up)
    add("B", QWEN)
    add("A", LLAMA3)
    with pytest.raises(
        ConfigurationError,
        match=r"^InferenceComponentEndpoint 'Test/Endpoint': the "
        r"initial copies of its components \(A \(3 x .*\), B \(3 x .*\)\) need 6 accelerators "
        r"\(the fleet has 4\)",
    ):
        synthesize(stack)


def test_the_fleet_check_sums_every_component_already_hosted() -> None:
    # GIVEN one instance of 4 GPUs, with two one-copy components that fit together
    app = App()
    stack = Stack(app, "Test")
    endpoint = InferenceComponentEndpoint(stack, "Endpoint", instance_type=G5, max_instances=1)

    def add(name: str, copies: int) -> InferenceComponent:
        return InferenceComponent(
            stack,
            name,
            endpoint=endpoint,
            model=_model(stack, f"{name}Model", LLAMA3),
            accelerators=1,
            min_memory_mib=16 * 1024,
            copies=copies,
        )

    add("B", 1)
    add("A", 1)
    # WHEN a third needs 3 copies THEN the sum of all three overflows (1 + 1 + 3 = 5 > 4),
    # naming each in path order
    add("C", 3)
    with pytest.raises(
        ConfigurationError,
        match=r"^InferenceComponentEndpoint 'Test/Endpoint': .*\(A \(1 x .*\), B \(1 x .*\), "
        r"C \(3 x .*\)\) need 5 accelerators \(the fleet has 4\)",
    ):
        synthesize(stack)


def test_components_that_need_other_host_amis_fail_naming_the_later_path() -> None:
    # GIVEN three components (registered in no particular order), two of whose images need
    # different host AMIs; one needs none
    def hosted(path: str, ami: str | None) -> HostedPlan:
        binding = SimpleNamespace(inference_ami_version=ami)
        return HostedPlan(path, cast(ComponentPlan, SimpleNamespace(binding=binding)))

    plans = {
        "S/Coder": hosted("S/Coder", "al2023-ami-sagemaker-inference-gpu-3-1").plan,
        "S/Embed": hosted("S/Embed", None).plan,
        "S/Chat": hosted("S/Chat", "al2023-ami-sagemaker-inference-gpu-4-1").plan,
    }
    endpoint = cast(ComponentEndpointPlan, None)
    # WHEN the host-AMI rule reads them THEN the first by path with an AMI is the reference
    # and the other is named, whatever order they came in
    found = RULES["host AMI"](HostingPlan.of("S/Endpoint", endpoint, plans))
    assert [str(problem) for problem in found] == [
        "InferenceComponent 'S/Coder' needs host AMI al2023-ami-sagemaker-inference-gpu-3-1, "
        "but InferenceComponent 'S/Chat' on the same endpoint needs "
        "al2023-ami-sagemaker-inference-gpu-4-1, and the endpoint's variant has one host AMI; "
        "put images that need different host AMIs on separate endpoints"
    ]
    del plans["S/Coder"]
    found = RULES["host AMI"](HostingPlan.of("S/Endpoint", endpoint, plans))
    assert [str(problem) for problem in found] == []


def test_a_model_env_above_the_component_limit_warns_with_the_names(
    new_stack: Callable[..., Stack],
) -> None:
    # SageMaker documents 16 entries for a component's container; the component names the
    # model, so this can only warn.
    stack = new_stack()
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(LLAMA3, needs_token=False),
        engine=Engine.tgi(),
        instance_type=G5,
        env={f"EXTRA_{i:02d}": "1" for i in range(16)},
    )
    _component(stack, {}, model=model)
    Annotations.from_stack(stack).has_warning(
        "/Test/Component",
        Match.string_like_regexp(r"environment has \d+ entries \(EXTRA_00, .*at most 16"),
    )


def test_cuda13_component_sets_the_endpoint_host_ami(new_stack: Any) -> None:
    stack = new_stack()
    endpoint = InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")
    model = LlmModel(
        stack,
        "Phi",
        source=ModelSource.hugging_face("microsoft/Phi-3-mini-4k-instruct"),
        engine=Engine.lmi(),  # a CUDA 13 image
        instance_type="ml.g5.12xlarge",
    )
    InferenceComponent(
        stack, "Chat", endpoint=endpoint, model=model, accelerators=1, min_memory_mib=8192
    )
    config = next(
        iter(Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values())
    )
    variant = config["Properties"]["ProductionVariants"][0]
    assert variant["InferenceAmiVersion"] == "al2023-ami-sagemaker-inference-gpu-4-1"


def test_endpoint_role_may_read_s3_weights_of_its_components(new_stack: Any) -> None:
    from aws_cdk import aws_s3 as s3

    stack = new_stack()
    endpoint = InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")
    bucket = s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")
    model = LlmModel(
        stack,
        "Llama",
        source=ModelSource.s3(bucket, "llama3/", model_id="meta-llama/Meta-Llama-3-8B-Instruct"),
        engine=Engine.tgi(),
        instance_type="ml.g5.12xlarge",
    )
    InferenceComponent(
        stack, "Chat", endpoint=endpoint, model=model, accelerators=1, min_memory_mib=8192
    )
    dumped = json.dumps(_role_statements(Template.from_stack(stack), "SharedRole"))
    assert "s3:GetObject" in dumped and "llama3/*" in dumped


# -- 2026 options: enhanced metrics, reservations, data caching, copy placement ---------------

RESERVATION = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/g5-fleet-endpoint"


def _spec(stack: Stack) -> dict[str, Any]:
    (component,) = (
        Template.from_stack(stack).find_resources("AWS::SageMaker::InferenceComponent").values()
    )
    spec: dict[str, Any] = component["Properties"]["Specification"]
    return spec


def test_by_default_no_new_option_is_rendered(shared: Shared) -> None:
    config = next(iter(shared.template.find_resources("AWS::SageMaker::EndpointConfig").values()))
    # detailed observability is always rendered, on by default; nothing else of MetricsConfig
    assert config["Properties"]["MetricsConfig"] == {"EnableDetailedObservability": True}
    (variant,) = config["Properties"]["ProductionVariants"]
    assert "CapacityReservationConfig" not in variant
    for component in shared.template.find_resources("AWS::SageMaker::InferenceComponent").values():
        spec = component["Properties"]["Specification"]
        assert "DataCacheConfig" not in spec and "SchedulingConfig" not in spec


def test_the_endpoint_renders_enhanced_metrics_and_a_reservation(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    _component(
        stack,
        {
            "enhanced_metrics": True,
            "metric_publish_frequency": Duration.seconds(30),
            "capacity_reservation": RESERVATION,
        },
    )
    (config,) = Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values()
    assert config["Properties"]["MetricsConfig"] == {
        "EnableDetailedObservability": True,
        "EnableEnhancedMetrics": True,
        "MetricPublishFrequencyInSeconds": 30,
    }
    (variant,) = config["Properties"]["ProductionVariants"]
    assert variant["CapacityReservationConfig"] == {
        "CapacityReservationPreference": "capacity-reservations-only",
        "MlReservationArn": RESERVATION,
    }


def test_a_component_caches_its_data_and_places_its_copies(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    _component(stack, {}, data_cache=True, copy_placement=CopyPlacement.spread(max_az_imbalance=1))
    spec = _spec(stack)
    assert spec["DataCacheConfig"] == {"EnableCaching": True}
    assert spec["SchedulingConfig"] == {
        "PlacementStrategy": "SPREAD",
        "AvailabilityZoneBalance": {"EnforcementMode": "PERMISSIVE", "MaxImbalance": 1},
    }


def test_binpack_keeps_sagemaker_s_zone_balance(new_stack: Callable[..., Stack]) -> None:
    # CloudFormation requires the zone balance with the strategy; its imbalance stays SageMaker's
    stack = new_stack()
    _component(stack, {}, data_cache=False, copy_placement=CopyPlacement.binpack())
    spec = _spec(stack)
    assert spec["DataCacheConfig"] == {"EnableCaching": False}
    assert spec["SchedulingConfig"] == {
        "PlacementStrategy": "BINPACK",
        "AvailabilityZoneBalance": {"EnforcementMode": "PERMISSIVE"},
    }


@pytest.mark.parametrize(
    ("endpoint", "props", "message"),
    [
        ({}, {"data_cache": "yes"}, r"data_cache must be True, False or None, got str 'yes'"),
        ({}, {"data_cache": "True"}, r"got str 'True'; pass the bool True, not a string"),
        (
            {},
            {"copy_placement": "SPREAD"},
            r"copy_placement must be a CopyPlacement, got str 'SPREAD'; use CopyPlacement\.spread\(\)",
        ),
        (
            {"metric_publish_frequency": Duration.seconds(90)},
            {},
            r"metric_publish_frequency must be 10, 30, 60, 120, 180, 240 or 300 seconds, got 90 s; use Duration\.seconds\(60\)",
        ),
        ({"enhanced_metrics": 1}, {}, r"enhanced_metrics must be True or False, got int 1"),
        (
            {
                "capacity_reservation": "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-1"
            },
            {},
            r"capacity_reservation must be a training plan's ARN, got 'arn:aws:ec2:",
        ),
    ],
)
def test_bad_options_name_the_value_and_the_fix(
    new_stack: Callable[..., Stack], endpoint: dict[str, Any], props: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        _component(new_stack(), endpoint, **props)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: CopyPlacement.spread(max_az_imbalance=101), r"from 0 to 100, got 101"),
        (lambda: CopyPlacement.binpack(max_az_imbalance=-1), r"from 0 to 100, got -1"),
        (lambda: CopyPlacement.spread(max_az_imbalance=1.5), r"got 1\.5"),  # type: ignore[arg-type]
        (
            lambda: CopyPlacement(strategy="PACK"),  # type: ignore[arg-type]
            r"strategy must be 'SPREAD' or 'BINPACK', got 'PACK'",
        ),
    ],
)
def test_a_bad_copy_placement_names_the_value(
    build: Callable[[], CopyPlacement], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=rf"CopyPlacement: .*{message}"):
        build()
