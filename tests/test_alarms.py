"""Default alarms of endpoints and inference components: SageMaker's namespaces, metric names
and dimensions, thresholds, missing data, and SNS notifications."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Match, Template

from constructs_llm import (
    Alarms,
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Variant,
)
from tests.matrix.builders import model as llama3

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"


def _by_metric(template: Template) -> dict[str, dict[str, Any]]:
    alarms = template.find_resources("AWS::CloudWatch::Alarm").values()
    return {a["Properties"]["MetricName"]: a["Properties"] for a in alarms}


def _without(props: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in keys}


@pytest.fixture(scope="module")
def endpoint(new_stack: Callable[..., Stack]) -> tuple[LlmEndpoint, Template]:
    stack = new_stack()
    model = llama3(stack, instance_type="ml.g5.12xlarge", bound=False)
    served = LlmEndpoint(stack, "Endpoint", model=model, endpoint_name="chat")
    return served, Template.from_stack(stack)


ENDPOINT_DIMENSIONS = [
    {"Name": "EndpointName", "Value": "chat"},
    {"Name": "VariantName", "Value": "g5-12xlarge"},
]


def test_an_endpoint_gets_error_gpu_memory_and_disk_alarms_by_default(
    endpoint: tuple[LlmEndpoint, Template],
) -> None:
    served, template = endpoint
    alarms = _by_metric(template)
    # no latency alarm unless a threshold is given
    assert set(alarms) == {
        "Invocation5XXErrors",
        "InvocationModelErrors",
        "GPUMemoryUtilization",
        "DiskUtilization",
    }
    assert served.alarms is not None and len(list(served.alarms)) == 4
    # every alarm says how missing data counts, and what it is for
    for props in alarms.values():
        assert props["TreatMissingData"] == "notBreaching"
        assert props["AlarmDescription"].startswith("Test/Endpoint: ")
        assert props["Dimensions"] == ENDPOINT_DIMENSIONS
        assert "AlarmActions" not in props  # no topic: nobody is notified


def test_error_alarms_watch_the_share_of_failed_requests(
    endpoint: tuple[LlmEndpoint, Template],
) -> None:
    # Invocation5XXErrors and InvocationModelErrors send 1 per failure and 0 otherwise: their
    # Average is the share of requests that failed
    alarms = _by_metric(template=endpoint[1])
    for metric in ("Invocation5XXErrors", "InvocationModelErrors"):
        assert _without(alarms[metric], "AlarmDescription", "Dimensions", "MetricName") == {
            "Namespace": "AWS/SageMaker",
            "Statistic": "Average",
            "Period": 60,
            "EvaluationPeriods": 3,
            "DatapointsToAlarm": 2,
            "Threshold": 0.05,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "TreatMissingData": "notBreaching",
        }


def test_instance_alarms_read_the_endpoints_namespace_scaled_to_the_gpus(
    endpoint: tuple[LlmEndpoint, Template],
) -> None:
    alarms = _by_metric(template=endpoint[1])
    gpu, disk = alarms["GPUMemoryUtilization"], alarms["DiskUtilization"]
    assert (gpu["Namespace"], disk["Namespace"]) == ("/aws/sagemaker/Endpoints",) * 2
    # GPUMemoryUtilization sums the 4 GPUs of an ml.g5.12xlarge (0-400 %)
    assert (gpu["Statistic"], gpu["Threshold"], gpu["EvaluationPeriods"]) == ("Maximum", 392, 5)
    assert (disk["Statistic"], disk["Period"], disk["Threshold"]) == ("Maximum", 300, 90)


def test_thresholds_a_latency_alarm_and_an_sns_topic(new_stack: Callable[..., Stack]) -> None:
    # GIVEN custom thresholds, a latency limit and a topic encrypted with its own key
    stack = new_stack()
    key = kms.Key(stack, "TopicKey", enable_key_rotation=True)
    topic = sns.Topic(stack, "Oncall", master_key=key)
    model = llama3(stack, instance_type=None, bound=False)
    served = LlmEndpoint(
        stack,
        "Endpoint",
        model=model,
        instance_type="ml.g5.2xlarge",
        alarms=Alarms(
            error_rate=0.02,
            model_latency=Duration.seconds(30),
            gpu_memory_percent=95,
            disk_percent=80,
            topic=topic,
        ),
    )
    template = Template.from_stack(stack)
    alarms = _by_metric(template)
    # THEN the latency alarm watches the p90 ModelLatency in microseconds
    latency = alarms["ModelLatency"]
    assert (latency["ExtendedStatistic"], latency["Threshold"]) == ("p90", 30_000_000)
    assert alarms["Invocation5XXErrors"]["Threshold"] == 0.02
    assert alarms["GPUMemoryUtilization"]["Threshold"] == 95  # one GPU on ml.g5.2xlarge
    assert alarms["DiskUtilization"]["Threshold"] == 80
    # AND every alarm notifies the topic, whose key lets CloudWatch publish
    topic_ref = stack.resolve(topic.topic_arn)
    assert all(a["AlarmActions"] == [topic_ref] for a in alarms.values())
    assert served.alarms is not None and served.alarms.latency is not None
    assert served.alarms.rollback == [
        served.alarms.errors,
        served.alarms.model_errors,
        served.alarms.latency,
    ]
    (policy,) = [
        k["Properties"]["KeyPolicy"]["Statement"]
        for k in template.find_resources("AWS::KMS::Key").values()
    ]
    cloudwatch = [
        s for s in policy if s.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}
    ]
    assert cloudwatch == [
        {
            "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
            "Effect": "Allow",
            "Principal": {"Service": "cloudwatch.amazonaws.com"},
            "Resource": "*",
        }
    ]


def test_alarms_false_creates_none(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    model = llama3(stack, instance_type="ml.g5.2xlarge", bound=False)
    served = LlmEndpoint(stack, "Endpoint", model=model, alarms=False)
    assert served.alarms is None
    Template.from_stack(stack).resource_count_is("AWS::CloudWatch::Alarm", 0)


def test_neuron_endpoints_get_no_gpu_memory_alarm(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("mistralai/Mistral-7B-Instruct-v0.2", needs_token=False),
        engine=Engine.tgi_neuronx(),
        instance_type="ml.inf2.xlarge",
        max_total_tokens=4096,
    )
    served = LlmEndpoint(stack, "Endpoint", model=model)
    assert served.alarms is not None and served.alarms.gpu_memory is None
    assert "GPUMemoryUtilization" not in _by_metric(Template.from_stack(stack))


# -- inference components ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def components(new_stack: Callable[..., Stack]) -> tuple[dict[str, InferenceComponent], Template]:
    stack = new_stack()
    shared = InferenceComponentEndpoint(
        stack, "Shared", instance_type="ml.g5.12xlarge", min_instances=0, max_instances=2
    )
    model = llama3(stack, instance_type=None, bound=False)
    made = {
        name: InferenceComponent(
            stack,
            name,
            endpoint=shared,
            model=model,
            accelerators=1,
            min_memory_mib=16 * 1024,
            inference_component_name=name.lower(),
            autoscaling=Autoscaling(
                min_capacity=low, max_capacity=2, target_invocations_per_instance=1
            ),
        )
        for name, low in (("Chat", 1), ("Batch", 0))
    }
    return made, Template.from_stack(stack)


def _component_alarms(template: Template, name: str) -> dict[str, dict[str, Any]]:
    alarms = template.find_resources("AWS::CloudWatch::Alarm").values()
    return {
        a["Properties"]["MetricName"]: a["Properties"]
        for a in alarms
        if a["Properties"].get("Dimensions") == [{"Name": "InferenceComponentName", "Value": name}]
        and "AlarmActions" not in a["Properties"]  # not the scale-out-from-zero alarm
    }


def test_a_component_alarms_on_errors_its_gpu_memory_and_requests_without_capacity(
    components: tuple[dict[str, InferenceComponent], Template],
) -> None:
    _, template = components
    alarms = _component_alarms(template, "chat")
    assert {m: a["Namespace"] for m, a in alarms.items()} == {
        "Invocation5XXErrors": "AWS/SageMaker",
        "InvocationModelErrors": "AWS/SageMaker",
        "GPUMemoryUtilizationNormalized": "/aws/sagemaker/InferenceComponents",
        "NoCapacityInvocationFailures": "AWS/SageMaker",
    }
    # normalized to the copy's reservation: 0-100 %
    assert alarms["GPUMemoryUtilizationNormalized"]["Threshold"] == 98
    no_capacity = alarms["NoCapacityInvocationFailures"]
    assert (no_capacity["Statistic"], no_capacity["Threshold"]) == ("Sum", 1)
    assert (no_capacity["EvaluationPeriods"], no_capacity["DatapointsToAlarm"]) == (5, 5)
    assert all(a["TreatMissingData"] == "notBreaching" for a in alarms.values())


def test_a_component_that_may_sit_at_zero_waits_out_a_cold_start(
    components: tuple[dict[str, InferenceComponent], Template],
) -> None:
    # Requests to a component at zero copies fail until a copy starts (minutes): the alarm
    # trips only when that lasts 15 minutes
    _, template = components
    no_capacity = _component_alarms(template, "batch")["NoCapacityInvocationFailures"]
    assert (no_capacity["EvaluationPeriods"], no_capacity["DatapointsToAlarm"]) == (15, 15)


# -- e-mail ----------------------------------------------------------------------------------------


def _subscriptions(template: Template) -> list[dict[str, Any]]:
    found = template.find_resources("AWS::SNS::Subscription").values()
    return sorted((s["Properties"] for s in found), key=lambda p: str(p["Endpoint"]))


def test_email_alone_gets_an_encrypted_topic_of_the_endpoint_s_own(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN two addresses and no topic, on an endpoint of two variants
    stack = new_stack()
    a = llama3(stack, id="A", instance_type="ml.g5.2xlarge", bound=False)
    b = llama3(stack, id="B", instance_type="ml.g5.2xlarge", bound=False)
    LlmEndpoint(
        stack,
        "Endpoint",
        variants=[Variant(model=a), Variant(model=b)],
        alarms=Alarms(email=["oncall@example.com", "lead@example.com"]),
    )
    template = Template.from_stack(stack)
    # THEN one topic for the endpoint, encrypted with a rotated key and refusing plain HTTP
    (topic_id,) = template.find_resources("AWS::SNS::Topic")
    (topic,) = template.find_resources("AWS::SNS::Topic").values()
    (key_id,) = template.find_resources("AWS::KMS::Key")
    assert topic["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    template.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    template.has_resource("AWS::KMS::Key", {"DeletionPolicy": "Delete"})
    template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "PolicyDocument": Match.object_like(
                {
                    "Statement": Match.array_with(
                        [
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                }
                            )
                        ]
                    )
                }
            )
        },
    )
    # AND each address subscribed once, whichever variant's alarms asked
    assert _subscriptions(template) == [
        {"Endpoint": address, "Protocol": "email", "TopicArn": {"Ref": topic_id}}
        for address in ("lead@example.com", "oncall@example.com")
    ]
    # AND every alarm of both variants notifies it, the key letting CloudWatch use it
    alarms = template.find_resources("AWS::CloudWatch::Alarm").values()
    assert alarms and all(a["Properties"]["AlarmActions"] == [{"Ref": topic_id}] for a in alarms)
    (key,) = template.find_resources("AWS::KMS::Key").values()
    principals = [s.get("Principal") for s in key["Properties"]["KeyPolicy"]["Statement"]]
    assert {"Service": "cloudwatch.amazonaws.com"} in principals


def test_email_subscribes_to_a_given_topic_once(new_stack: Callable[..., Stack]) -> None:
    # GIVEN one topic and one address, for an endpoint and a component
    stack = new_stack()
    topic = sns.Topic(stack, "Oncall", master_key=kms.Key(stack, "Key", enable_key_rotation=True))
    mailed = Alarms(topic=topic, email="oncall@example.com")
    model = llama3(stack, instance_type="ml.g5.12xlarge", bound=False)
    LlmEndpoint(stack, "Endpoint", model=model, alarms=mailed)
    hosts = InferenceComponentEndpoint(stack, "Hosts", instance_type="ml.g5.12xlarge")
    other = llama3(stack, id="Other", instance_type="ml.g5.12xlarge", bound=False)
    InferenceComponent(
        stack,
        "Chat",
        endpoint=hosts,
        model=other,
        accelerators=1,
        min_memory_mib=1024,
        alarms=mailed,
    )
    template = Template.from_stack(stack)
    # THEN no topic of their own, and the address subscribed once, under the topic, keyed by
    # the address (reordering a list replaces nothing)
    assert len(template.find_resources("AWS::SNS::Topic")) == 1
    (subscription,) = template.find_resources("AWS::SNS::Subscription")
    assert subscription.startswith("Oncalloncallexamplecom")
    assert [s["Endpoint"] for s in _subscriptions(template)] == ["oncall@example.com"]


# -- delivery: CloudWatch may publish (tests/contract walks every template) -------------------


def _cloudwatch_allow(template: Template) -> list[dict[str, Any]]:
    return [
        s
        for p in template.find_resources("AWS::SNS::TopicPolicy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}
    ]


def test_a_user_topic_without_a_policy_gets_one_that_lets_cloudwatch_publish(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a topic of the user's, created in the app, with no policy of its own
    stack = new_stack()
    topic = sns.Topic(stack, "Oncall")
    LlmEndpoint(stack, "Endpoint", model=llama3(stack, bound=False), alarms=Alarms(topic=topic))
    template = Template.from_stack(stack)
    # THEN its policy (made through the topic's own API) allows this account's alarms to publish
    (topic_id,) = template.find_resources("AWS::SNS::Topic")
    (allow,) = _cloudwatch_allow(template)
    assert allow["Effect"] == "Allow" and allow["Action"] == "sns:Publish"
    assert allow["Resource"] == {"Ref": topic_id}
    assert allow["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    source = allow["Condition"]["ArnLike"]["aws:SourceArn"]["Fn::Join"][1]
    assert source == [
        "arn:",
        {"Ref": "AWS::Partition"},
        ":cloudwatch:",
        {"Ref": "AWS::Region"},
        ":",
        {"Ref": "AWS::AccountId"},
        ":alarm:*",
    ]


@pytest.mark.parametrize("how", ["alias", "arn", "l1"])
def test_a_topic_under_the_aws_managed_key_is_refused(
    new_stack: Callable[..., Stack], how: str
) -> None:
    from constructs_llm import ConfigurationError

    stack = new_stack()
    if how == "alias":
        topic = sns.Topic(
            stack, "Oncall", master_key=kms.Alias.from_alias_name(stack, "K", "alias/aws/sns")
        )
    elif how == "arn":
        arn = "arn:aws:kms:us-east-1:123456789012:alias/aws/sns"
        topic = sns.Topic(stack, "Oncall", master_key=kms.Key.from_key_arn(stack, "K", arn))
    else:
        topic = sns.Topic(stack, "Oncall")
        cfn = topic.node.default_child
        assert isinstance(cfn, sns.CfnTopic)
        cfn.kms_master_key_id = "alias/aws/sns"
    with pytest.raises(ConfigurationError) as raised:
        Alarms(topic=topic)
    message = str(raised.value)
    assert "topic Test/Oncall is encrypted with the AWS managed key alias/aws/sns" in message
    assert "encrypt the topic with a key of your own (kms.Key(...)" in message
    # a key of the user's own is accepted
    Alarms(topic=sns.Topic(stack, "Mine", master_key=kms.Key(stack, "Mine Key")))


def test_an_imported_topic_or_key_gets_a_note_of_what_to_verify(
    new_stack: Callable[..., Stack],
) -> None:
    from constructs_llm.notes import notes_of

    stack = new_stack()
    imported = sns.Topic.from_topic_arn(
        stack, "Shared", "arn:aws:sns:us-east-1:123456789012:oncall"
    )
    key_arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    keyed = sns.Topic(stack, "Keyed", master_key=kms.Key.from_key_arn(stack, "Key", key_arn))
    first = LlmEndpoint(
        stack, "First", model=llama3(stack, id="M1", bound=False), alarms=Alarms(topic=imported)
    )
    second = LlmEndpoint(
        stack, "Second", model=llama3(stack, id="M2", bound=False), alarms=Alarms(topic=keyed)
    )
    assert [n for n in notes_of(first) if n.startswith("alarm topic")] == [
        "alarm topic arn:aws:sns:us-east-1:123456789012:oncall is imported: verify that its "
        "access policy allows cloudwatch.amazonaws.com sns:Publish (a topic policy replaces "
        "SNS's default one), or no alarm notification is delivered"
    ]
    assert [n for n in notes_of(second) if n.startswith("alarm topic key")] == [
        f"alarm topic key {key_arn} is imported: verify that its key policy allows "
        "cloudwatch.amazonaws.com kms:GenerateDataKey* and kms:Decrypt, or CloudWatch cannot "
        "publish to the encrypted topic"
    ]


# -- a shared topic: the order targets are created in changes nothing -------------------------


def _two_endpoints_sharing_a_topic(order: tuple[str, str]) -> str:
    from aws_cdk import App, CfnParameter

    from tests.conftest import cdk_context
    from tests.support.templates import normalized

    app = App(context=cdk_context())
    stack = Stack(app, "Test")
    topic = sns.Topic(stack, "Oncall", master_key=kms.Key(stack, "Key"))
    pager = {n: CfnParameter(stack, f"{n}Pager").value_as_string for n in ("Chat", "Code")}
    for name in order:
        LlmEndpoint(
            stack,
            name,
            model=llama3(stack, id=f"{name}Model", bound=False),
            alarms=Alarms(topic=topic, email=[pager[name], f"{name.lower()}@example.com"]),
        )
    return normalized(dict(Template.from_stack(stack).to_json()))


def test_two_endpoints_sharing_a_topic_render_the_same_template_in_either_order() -> None:
    # GIVEN two endpoints whose alarms mail a parameter's address and a literal one each
    forward = _two_endpoints_sharing_a_topic(("Chat", "Code"))
    backward = _two_endpoints_sharing_a_topic(("Code", "Chat"))
    # THEN the templates are byte-identical: no subscription is numbered by arrival
    assert forward == backward
    # AND each of the four addresses is subscribed once (a parameter by what it resolves to)
    subscriptions = [
        k
        for k, r in json.loads(forward)["Resources"].items()
        if r["Type"] == "AWS::SNS::Subscription"
    ]
    assert len(subscriptions) == 4
