"""Asynchronous inference: ``LlmEndpoint(async_inference=AsyncInference(...))`` renders the
AsyncInferenceConfig SageMaker documents, gives the model's role and the callers exactly the
S3, SNS and KMS permissions the queue needs, scales on the backlog down to zero instances, and
refuses what SageMaker does not offer an asynchronous endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    AsyncInference,
    Autoscaling,
    Deployment,
    Engine,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    Variant,
)
from constructs_llm.errors import ConfigurationError, ScalingError
from constructs_llm.operations.autoscaling import DEFAULT_BACKLOG_PER_INSTANCE
from constructs_llm.operations.schedule import ScheduledCapacity

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"


def _model(stack: Stack, id: str = "Model") -> LlmModel:
    return LlmModel(
        stack,
        id,
        source=ModelSource.hugging_face(LLAMA3, needs_token=False),
        engine=Engine.tgi(),
        instance_type="ml.g5.2xlarge",
    )


def _endpoint(stack: Stack, async_inference: AsyncInference, **props: Any) -> LlmEndpoint:
    return LlmEndpoint(
        stack, "Endpoint", model=_model(stack), async_inference=async_inference, **props
    )


def _config(template: Template) -> dict[str, Any]:
    (config,) = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    found: dict[str, Any] = config["Properties"]["AsyncInferenceConfig"]
    return found


def _s3_uri(bucket: str, prefix: str) -> dict[str, Any]:
    return {"Fn::Join": ["", ["s3://", {"Ref": bucket}, f"/{prefix}"]]}


def _objects(bucket: str, prefix: str) -> dict[str, Any]:
    return {"Fn::Join": ["", [{"Fn::GetAtt": [bucket, "Arn"]}, f"/{prefix}*"]]}


def _statements(template: Template, role_id: str) -> list[dict[str, Any]]:
    """Every statement of the policies attached to the role ``role_id``."""
    found = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def _logical_id(template: Template, type_: str, path_part: str) -> str:
    resources: dict[str, Any] = template.to_json()["Resources"]
    (found,) = [k for k, v in resources.items() if v["Type"] == type_ and path_part in k]
    return found


@pytest.fixture(scope="module")
def queued(new_stack: Callable[..., Stack]) -> tuple[Stack, Template]:
    """An asynchronous endpoint with every option: an encrypted bucket, an encrypted topic, a
    key for the answers, a concurrency limit, scale to zero, and a caller."""
    stack = new_stack()
    bucket = s3.Bucket(stack, "Jobs", encryption_key=kms.Key(stack, "BucketKey"))
    topic = sns.Topic(stack, "Done", master_key=kms.Key(stack, "TopicKey"))
    endpoint = _endpoint(
        stack,
        AsyncInference(
            output=AsyncInference.s3_prefix(bucket, "batch/answers/"),
            notify=topic,
            notify_with_response=True,
            max_concurrent_per_instance=8,
            kms_key=kms.Key(stack, "AnswerKey"),
        ),
        autoscaling=Autoscaling(min_capacity=0, max_capacity=3),
    )
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    endpoint.grant_invoke_async(caller)
    return stack, Template.from_stack(stack)


# -- AsyncInferenceConfig --------------------------------------------------------------------


def test_a_bucket_alone_gets_output_and_failure_folders_side_by_side(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an asynchronous endpoint given only a bucket
    stack = new_stack()
    bucket = s3.Bucket(stack, "Jobs")
    endpoint = _endpoint(stack, AsyncInference(output=bucket))
    template = Template.from_stack(stack)
    bucket_id = stack.get_logical_id(bucket.node.default_child)  # type: ignore[arg-type]
    # THEN answers and failures get folders of their own, and nothing else is configured
    assert _config(template) == {
        "OutputConfig": {
            "S3OutputPath": _s3_uri(bucket_id, "outputs/"),
            "S3FailurePath": _s3_uri(bucket_id, "failures/"),
        }
    }
    assert endpoint.is_async
    assert endpoint.async_inference is not None
    assert endpoint.async_inference.input_location.prefix == "inputs/"


def test_every_option_renders_as_sagemaker_documents_it(queued: tuple[Stack, Template]) -> None:
    _stack, template = queued
    config = _config(template)
    bucket = _logical_id(template, "AWS::S3::Bucket", "Jobs")
    topic = _logical_id(template, "AWS::SNS::Topic", "Done")
    answer_key = _logical_id(template, "AWS::KMS::Key", "AnswerKey")
    assert config == {
        "OutputConfig": {
            "S3OutputPath": _s3_uri(bucket, "batch/answers/"),
            "S3FailurePath": _s3_uri(bucket, "batch/failures/"),  # next to the answers
            "KmsKeyId": {"Fn::GetAtt": [answer_key, "Arn"]},
            "NotificationConfig": {
                "SuccessTopic": {"Ref": topic},
                "ErrorTopic": {"Ref": topic},
                "IncludeInferenceResponseIn": [
                    "SUCCESS_NOTIFICATION_TOPIC",
                    "ERROR_NOTIFICATION_TOPIC",
                ],
            },
        },
        "ClientConfig": {"MaxConcurrentInvocationsPerInstance": 8},
    }


# -- permissions -----------------------------------------------------------------------------


def test_the_model_role_may_read_requests_write_answers_and_notify(
    queued: tuple[Stack, Template],
) -> None:
    _, template = queued
    bucket = _logical_id(template, "AWS::S3::Bucket", "Jobs")
    role = _logical_id(template, "AWS::IAM::Role", "ModelRole")
    statements = _statements(template, role)
    s3_or_sns = [s for s in statements if "s3:" in json.dumps(s["Action"]) or "sns:" in str(s)]
    assert sorted(s3_or_sns, key=json.dumps) == sorted(
        [
            {
                "Action": ["s3:AbortMultipartUpload", "s3:PutObject"],
                "Effect": "Allow",
                "Resource": [
                    _objects(bucket, "batch/answers/"),
                    _objects(bucket, "batch/failures/"),
                ],
            },
            {
                "Action": "s3:GetObject",
                "Effect": "Allow",
                "Resource": _objects(bucket, "batch/inputs/"),
            },
            {
                "Action": "sns:Publish",
                "Effect": "Allow",
                "Resource": {"Ref": _logical_id(template, "AWS::SNS::Topic", "Done")},
            },
        ],
        key=json.dumps,
    )
    # AND the keys it writes with (bucket, answers) and publishes with (topic)
    keys = [s for s in statements if "kms:GenerateDataKey" in json.dumps(s["Action"])]
    assert len(keys) == 1 and keys[0]["Action"] == ["kms:Decrypt", "kms:GenerateDataKey"]
    assert {r["Fn::GetAtt"][0] for r in keys[0]["Resource"]} == {
        _logical_id(template, "AWS::KMS::Key", name)
        for name in ("BucketKey", "TopicKey", "AnswerKey")
    }


def test_the_model_waits_for_the_policy_sagemaker_checks_at_create_endpoint(
    queued: tuple[Stack, Template],
) -> None:
    # SageMaker sends a test notification when the endpoint is created, so sns:Publish must be
    # in force first: the Model (which the config and the endpoint follow) depends on the policy
    _, template = queued
    role = _logical_id(template, "AWS::IAM::Role", "ModelRole")
    (policy_id,) = [
        k
        for k, v in template.find_resources("AWS::IAM::Policy").items()
        if {"Ref": role} in v["Properties"]["Roles"] and "sns:Publish" in json.dumps(v)
    ]
    (model,) = template.find_resources("AWS::SageMaker::Model").values()
    assert policy_id in model["DependsOn"]


def test_grant_invoke_async_covers_the_queue_and_the_folders_only(
    queued: tuple[Stack, Template],
) -> None:
    _, template = queued
    bucket = _logical_id(template, "AWS::S3::Bucket", "Jobs")
    endpoint = _logical_id(template, "AWS::SageMaker::Endpoint", "Endpoint")
    caller = _logical_id(template, "AWS::IAM::Role", "Caller")
    statements = _statements(template, caller)
    keys = [s for s in statements if "kms:" in json.dumps(s["Action"])]
    others = [s for s in statements if s not in keys]
    # the folder wildcards sit in a policy of the endpoint's own, attached to the caller
    folders = [
        k
        for k, p in template.find_resources("AWS::IAM::Policy").items()
        if "AsyncFolders" in k and {"Ref": caller} in p["Properties"]["Roles"]
    ]
    assert len(folders) == 1
    assert sorted(others, key=json.dumps) == sorted(
        [
            {
                "Action": "sagemaker:InvokeEndpointAsync",
                "Effect": "Allow",
                "Resource": {"Ref": endpoint},
            },
            {
                "Action": ["s3:AbortMultipartUpload", "s3:PutObject"],
                "Effect": "Allow",
                "Resource": _objects(bucket, "batch/inputs/"),
            },
            {
                "Action": "s3:GetObject",
                "Effect": "Allow",
                "Resource": [
                    _objects(bucket, "batch/answers/"),
                    _objects(bucket, "batch/failures/"),
                ],
            },
            {  # so that an answer not written yet reads as missing (404), not forbidden (403)
                "Action": "s3:ListBucket",
                "Condition": {"StringLike": {"s3:prefix": ["batch/answers/*", "batch/failures/*"]}},
                "Effect": "Allow",
                "Resource": {"Fn::GetAtt": [bucket, "Arn"]},
            },
        ],
        key=json.dumps,
    )
    # the bucket key to write requests and read answers, the answers' key to read them
    assert [s["Action"] for s in keys] == [["kms:Decrypt", "kms:GenerateDataKey"], "kms:Decrypt"]
    assert not [s for s in statements if s["Action"] == "sagemaker:InvokeEndpoint"]


def test_grant_invoke_async_on_a_real_time_endpoint_names_the_fix(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint = LlmEndpoint(stack, "Endpoint", model=_model(stack))
    role = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    with pytest.raises(ConfigurationError, match=r"grant_invoke_async needs an asynchronous.*"):
        endpoint.grant_invoke_async(role)


# -- scale to zero ---------------------------------------------------------------------------


def test_scale_to_zero_tracks_the_backlog_and_wakes_on_a_request(
    queued: tuple[Stack, Template],
) -> None:
    _, template = queued
    endpoint = _logical_id(template, "AWS::SageMaker::Endpoint", "Endpoint")
    # named after its path, fleet and mode (FleetChange.NEW_ENDPOINT, from cdk.json): its
    # metrics name it as it is
    name = template.to_json()["Resources"][endpoint]["Properties"]["EndpointName"]
    assert name.endswith("-g5-2xlarge-async")
    by_name = [{"Name": "EndpointName", "Value": name}]
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget",
        {
            "MinCapacity": 0,
            "MaxCapacity": 3,
            "ScalableDimension": "sagemaker:variant:DesiredInstanceCount",
        },
    )
    # THEN target tracking holds the documented metric at the default backlog per instance
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": {
                "TargetValue": DEFAULT_BACKLOG_PER_INSTANCE,
                "CustomizedMetricSpecification": {
                    "MetricName": "ApproximateBacklogSizePerInstance",
                    "Namespace": "AWS/SageMaker",
                    "Dimensions": by_name,
                    "Statistic": "Average",
                },
            },
        },
    )
    # AND one step adds an instance when requests wait with none, cooling down for as long as
    # an instance may take to start (download + health check: 15 + 15 minutes on a g5)
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "StepScaling",
            "StepScalingPolicyConfiguration": {
                "AdjustmentType": "ChangeInCapacity",
                "Cooldown": 1800,
                "MetricAggregationType": "Average",
                "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
            },
        },
    )
    alarms = [
        a["Properties"]
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "HasBacklogWithoutCapacity"
    ]
    (alarm,) = alarms
    assert {k: alarm[k] for k in ("Namespace", "Statistic", "Period", "Threshold")} == {
        "Namespace": "AWS/SageMaker",
        "Statistic": "Average",
        "Period": 60,
        "Threshold": 1,
    }
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert (alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"]) == (1, 1)
    assert alarm["Dimensions"] == by_name


def test_a_backlog_target_and_a_floor_above_zero(new_stack: Callable[..., Stack]) -> None:
    # GIVEN an asynchronous endpoint that keeps one instance and holds 20 requests per instance
    stack = new_stack()
    _endpoint(
        stack,
        AsyncInference(output=s3.Bucket(stack, "Jobs")),
        autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_backlog_per_instance=20),
    )
    template = Template.from_stack(stack)
    # THEN it tracks 20, and never sits at zero, so it needs no way back from there
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {"TargetTrackingScalingPolicyConfiguration": Match.object_like({"TargetValue": 20})},
    )
    template.resource_properties_count_is(
        "AWS::ApplicationAutoScaling::ScalingPolicy", {"PolicyType": "StepScaling"}, 0
    )


def test_a_schedule_may_close_an_asynchronous_endpoint_for_the_day(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN requests processed at night only: the day's schedule allows no instance
    stack = new_stack()
    night = appscaling.Schedule.cron(hour="20", minute="0")
    day = appscaling.Schedule.cron(hour="6", minute="0")
    _endpoint(
        stack,
        AsyncInference(output=s3.Bucket(stack, "Jobs")),
        autoscaling=Autoscaling(
            min_capacity=1,
            max_capacity=2,
            schedule=[
                ScheduledCapacity(schedule=night, min_capacity=0, max_capacity=2),
                ScheduledCapacity(schedule=day, min_capacity=0, max_capacity=0),
            ],
        ),
    )
    template = Template.from_stack(stack)
    # THEN the schedule is rendered and, reaching zero, the endpoint can wake again
    target = template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget")
    (props,) = [t["Properties"] for t in target.values()]
    assert [a["ScalableTargetAction"] for a in props["ScheduledActions"]] == [
        {"MinCapacity": 0, "MaxCapacity": 2},
        {"MinCapacity": 0, "MaxCapacity": 0},
    ]
    template.resource_properties_count_is(
        "AWS::ApplicationAutoScaling::ScalingPolicy", {"PolicyType": "StepScaling"}, 1
    )


def test_deployment_guardrails_apply_to_asynchronous_endpoints(
    new_stack: Callable[..., Stack],
) -> None:
    # SageMaker's guardrails "only apply to Asynchronous inference and Real-time inference
    # endpoint types": a guarded update is rendered as for a real-time endpoint
    stack = new_stack()
    _endpoint(
        stack,
        AsyncInference(output=s3.Bucket(stack, "Jobs")),
        deployment=Deployment.all_at_once(bake=Duration.minutes(10)),
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {"DeploymentConfig": Match.object_like({"BlueGreenUpdatePolicy": Match.any_value()})},
    )


# -- bad input -------------------------------------------------------------------------------


def _bucket(stack: Stack) -> s3.IBucket:
    return s3.Bucket.from_bucket_name(stack, "Jobs", "my-jobs")


@pytest.mark.parametrize(
    ("props", "message"),
    [
        pytest.param(
            {},
            r"output is required: SageMaker writes each answer to the output location "
            r"\(AsyncInferenceConfig OutputConfig.S3OutputPath.*pass output=bucket",
            id="no-output",
        ),
        pytest.param(
            {"output": "s3://my-jobs/answers/"},
            r"output must be an S3 bucket or AsyncInference.s3_prefix\(bucket, 'folder/'\), got "
            r"str 's3://my-jobs/answers/'; give the bucket and the folder apart",
            id="output-a-string",
        ),
        pytest.param(
            {"max_concurrent_per_instance": 0},
            r"max_concurrent_per_instance must be an integer from 1 to 1000 "
            r"\(MaxConcurrentInvocationsPerInstance, botocore min 1, max 1000\), got 0",
            id="concurrency-zero",
        ),
        pytest.param(
            {"max_concurrent_per_instance": 1001},
            r"max_concurrent_per_instance must be an integer from 1 to 1000.*got 1001",
            id="concurrency-above-1000",
        ),
        pytest.param(
            {"max_concurrent_per_instance": True},
            r"max_concurrent_per_instance must be an integer.*got True",
            id="concurrency-a-bool",
        ),
        pytest.param(
            {"notify_with_response": True},
            r"notify_with_response=True puts answers in notifications, but notify= names no "
            r"topic; pass notify=topic",
            id="response-without-topic",
        ),
        pytest.param(
            {"notify": "arn:aws:sns:us-east-1:123456789012:done"},
            r"notify must be an SNS topic \(sns.ITopic\), got str",
            id="topic-an-arn",
        ),
    ],
)
def test_bad_values_fail_naming_the_rule(
    new_stack: Callable[..., Stack], props: dict[str, Any], message: str
) -> None:
    stack = new_stack()
    if props and "output" not in props:  # each problem on its own
        props = {"output": _bucket(stack), **props}
    with pytest.raises(ConfigurationError, match=message):
        AsyncInference(**props)


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        ("answers", r"prefix must end with '/', got 'answers'; use 'answers/'"),
        ("/answers/", r"prefix must not start with '/', got '/answers/'; use 'answers/'"),
        ("s3://my-jobs/answers/", r"prefix is the key prefix inside the bucket, got the URI"),
        ("a*/", r"prefix must not hold '\*' or '\?' \(IAM wildcards\)"),
        ("a/" * 250, r"prefix is 500 characters; S3OutputPath and S3FailurePath take at most 512"),
    ],
)
def test_bad_prefixes_fail_naming_the_fix(
    new_stack: Callable[..., Stack], prefix: str, message: str
) -> None:
    stack = new_stack()
    with pytest.raises(ConfigurationError, match=message):
        AsyncInference.s3_prefix(_bucket(stack), prefix)


def test_folders_that_overlap_fail(new_stack: Callable[..., Stack]) -> None:
    # GIVEN failures written into the answers' folder: a caller polling for its answer would
    # take a failure for one
    stack = new_stack()
    bucket = _bucket(stack)
    with pytest.raises(
        ConfigurationError,
        match=r"output \(jobs/\) and failure \(jobs/failed/\) overlap in one bucket",
    ):
        AsyncInference(
            output=AsyncInference.s3_prefix(bucket, "jobs/"),
            failure=AsyncInference.s3_prefix(bucket, "jobs/failed/"),
        )


def test_several_production_variants_are_refused(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    with pytest.raises(
        ConfigurationError,
        match=r"async_inference= takes one production variant, got 2 variants: SageMaker's "
        r"features table lists multiple production variants for real-time inference only; .* "
        r"\(https://docs.aws.amazon.com/sagemaker/latest/dg/model-deploy-feature-matrix.html\)",
    ):
        LlmEndpoint(
            stack,
            "Endpoint",
            variants=[
                Variant(model=_model(stack, "A"), weight=1),
                Variant(model=_model(stack, "B"), weight=1),
            ],
            async_inference=AsyncInference(output=_bucket(stack)),
        )


def test_one_variant_given_as_a_list_is_fine(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    endpoint = LlmEndpoint(
        stack,
        "Endpoint",
        variants=[Variant(model=_model(stack, "A"))],
        async_inference=AsyncInference(output=_bucket(stack)),
    )
    assert endpoint.is_async


def test_a_shadow_variant_is_refused(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    with pytest.raises(
        ConfigurationError,
        match=r"async_inference= cannot take a shadow variant: SageMaker's features table lists "
        r"shadow testing for real-time inference only",
    ):
        LlmEndpoint(
            stack,
            "Endpoint",
            variants=[Variant(model=_model(stack, "A"))],
            shadow=Variant(model=_model(stack, "B")),
            async_inference=AsyncInference(output=_bucket(stack)),
        )


def test_async_inference_of_another_kind_names_the_fix(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    with pytest.raises(
        ConfigurationError,
        match=r"async_inference must be an AsyncInference, got dict .*; use "
        r"AsyncInference\(output=bucket\)",
    ):
        _endpoint(stack, {"output": "my-jobs"})  # type: ignore[arg-type]


def test_a_real_time_target_cannot_steer_an_asynchronous_endpoint(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    with pytest.raises(
        ScalingError,
        match=r"autoscaling target_concurrent_requests= cannot steer an asynchronous endpoint: "
        r"SageMaker publishes no concurrency or invocation metrics for it.*use "
        r"target_backlog_per_instance=\.\.\., or leave the target out for 5 requests",
    ):
        _endpoint(
            stack,
            AsyncInference(output=_bucket(stack)),
            autoscaling=Autoscaling(min_capacity=0, max_capacity=2, target_concurrent_requests=4),
        )


def test_a_backlog_target_on_a_real_time_endpoint_names_the_fix(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    with pytest.raises(
        ScalingError,
        match=r"target_backlog_per_instance= applies to an asynchronous endpoint only.*pass "
        r"LlmEndpoint\(async_inference=AsyncInference\(\.\.\.\)\)",
    ):
        LlmEndpoint(
            stack,
            "Endpoint",
            model=_model(stack),
            autoscaling=Autoscaling(max_capacity=2, target_backlog_per_instance=10),
        )


def test_the_streaming_invoker_refuses_an_asynchronous_endpoint(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint = _endpoint(stack, AsyncInference(output=_bucket(stack)))
    with pytest.raises(
        ConfigurationError,
        match=r"target LlmEndpoint 'Test/Endpoint' is an asynchronous endpoint "
        r"\(async_inference=\.\.\.\), which answers InvokeEndpointAsync only \(\"the presence "
        r"of an asynchronous inference configuration.*submit requests with "
        r"constructs_llm.streaming.submit_chat",
    ):
        StreamingInvoker(stack, "Stream", target=endpoint)


def test_the_alarm_on_a_metric_async_endpoints_lack_is_named(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an asynchronous endpoint with its default alarms, and one without alarms
    stack = new_stack()
    _endpoint(stack, AsyncInference(output=_bucket(stack)))
    quiet = new_stack()
    _endpoint(quiet, AsyncInference(output=_bucket(quiet)), alarms=False)
    # THEN the first is warned that InvocationModelErrors is not published there
    Annotations.from_stack(stack).has_warning(
        "/Test/Endpoint",
        Match.string_like_regexp(
            r"ModelErrors alarm watches InvocationModelErrors, which SageMaker does not publish "
            r"for an asynchronous endpoint.*InvocationFailures.*constructs-llm:async-alarms"
        ),
    )
    assert Annotations.from_stack(quiet).find_warning("/Test/Endpoint", Match.any_value()) == []
