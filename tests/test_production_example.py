"""The `production` example: what it promises is in its template (cfn-lint, cdk-nag and checkov
run on it with the other examples in tests/test_examples.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk.assertions import Template

from stacks.production import ProductionStack
from tests.conftest import cdk_context


@pytest.fixture(scope="module")
def template() -> Template:
    app = App(context=cdk_context())
    return Template.from_stack(ProductionStack(app, "Production"))


def _one(template: Template, kind: str) -> dict[str, Any]:
    (resource,) = template.find_resources(kind).values()
    props: dict[str, Any] = resource["Properties"]
    return props


def test_the_model_runs_on_the_vllm_dlc_over_all_four_gpus(template: Template) -> None:
    # vLLM, not TGI (archived upstream): vLLM's own batch limits, which admit by free KV blocks
    container = _one(template, "AWS::SageMaker::Model")["PrimaryContainer"]
    env = dict(container["Environment"])
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):  # Secrets Manager references
        assert "{{resolve:secretsmanager:" in json.dumps(env.pop(name))
    assert env == {
        "SM_VLLM_MODEL": "meta-llama/Meta-Llama-3-8B-Instruct",
        "SM_VLLM_TENSOR_PARALLEL_SIZE": "4",
        "SM_VLLM_MAX_MODEL_LEN": "4096",
    }
    assert "/vllm:" in json.dumps(container["Image"])
    (variant,) = _one(template, "AWS::SageMaker::EndpointConfig")["ProductionVariants"]
    assert variant["InferenceAmiVersion"].startswith("al2023-ami-sagemaker-inference-gpu-")


def test_updates_roll_out_as_a_canary_rolled_back_by_the_alarms(template: Template) -> None:
    config = _one(template, "AWS::SageMaker::Endpoint")["DeploymentConfig"]
    routing = config["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]
    assert routing == {
        "Type": "CANARY",
        "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": 10},
        "WaitIntervalInSeconds": 600,
    }
    # errors, model errors and the 60 s latency alarm
    assert len(config["AutoRollbackConfiguration"]["Alarms"]) == 3


def test_every_alarm_notifies_the_encrypted_topic(template: Template) -> None:
    assert "KmsMasterKeyId" in _one(template, "AWS::SNS::Topic")
    (topic_id,) = template.find_resources("AWS::SNS::Topic")
    alarms = template.find_resources("AWS::CloudWatch::Alarm").values()
    metrics = sorted(a["Properties"].get("MetricName", "PromQL") for a in alarms)
    assert metrics == [
        "DiskUtilization",
        "GPUMemoryUtilization",
        "Invocation5XXErrors",
        "InvocationModelErrors",
        "ModelLatency",
        "PromQL",  # vLLM's KV cache
        "PromQL",  # vLLM's queue
        "TimeToFirstToken",  # the invoker's
    ]
    for alarm in alarms:
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]


def test_a_weekday_schedule_in_berlin_time_and_the_dashboard(template: Template) -> None:
    actions = _one(template, "AWS::ApplicationAutoScaling::ScalableTarget")["ScheduledActions"]
    assert [(a["Schedule"], a["Timezone"], a["ScalableTargetAction"]) for a in actions] == [
        ("cron(0 8 ? * MON-FRI *)", "Europe/Berlin", {"MinCapacity": 3, "MaxCapacity": 6}),
        ("cron(0 19 ? * MON-FRI *)", "Europe/Berlin", {"MinCapacity": 2, "MaxCapacity": 3}),
    ]
    body = json.dumps(_one(template, "AWS::CloudWatch::Dashboard")["DashboardBody"])
    assert "TimeToFirstToken" in body and "TokensPerSecond" in body and "ModelLatency" in body
    env = _one(template, "AWS::Lambda::Function")["Environment"]["Variables"]
    assert env["METRICS_NAMESPACE"] == "ConstructsLlm/Invoker"


def test_the_topic_enforces_tls_with_a_rotating_key_and_the_invoker_takes_api_keys(
    template: Template,
) -> None:
    assert _one(template, "AWS::KMS::Key")["EnableKeyRotation"] is True
    (policy,) = template.find_resources("AWS::SNS::TopicPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any(
        s["Effect"] == "Deny"
        and s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
        for s in statements
    )
    assert _one(template, "AWS::Lambda::Url")["AuthType"] == "NONE"
    assert (
        "API_KEYS_SECRET_ID" in _one(template, "AWS::Lambda::Function")["Environment"]["Variables"]
    )


def test_the_example_waives_nothing_of_its_own() -> None:
    from tests.conftest import ROOT

    # it acknowledges three of the library's own warnings (its reserved invoker concurrency among
    # them; its autoscaled fleet raises none: a new instance type is a new endpoint), but no
    # cdk-nag finding or checkov check
    source = (ROOT / "stacks" / "production.py").read_text()
    assert not any(word in source for word in ("waive", "AwsSolutions", "checkov", "CKV_"))
    assert source.count("Annotation::constructs-llm:") == 3


def test_the_quota_note_counts_a_second_fleet_at_the_scheduled_maximum() -> None:
    # up to 6 instances in office hours, and a canary is a blue/green update: the new fleet
    # comes up beside the old, so an update at the maximum needs 12 ml.g5.12xlarge
    from constructs_llm.notes import notes_of

    stack = ProductionStack(App(context=cdk_context()), "Production")
    (quota,) = [n for n in notes_of(stack.endpoint) if n.startswith("Service Quotas")]
    assert quota == (
        "Service Quotas: 'ml.g5.12xlarge for endpoint usage' must allow at least 12 instance(s) "
        "in the target region (new accounts often have 0): 6 in service at most, and 6 more "
        "while a blue/green update runs the new fleet beside the old"
    )
