"""Run it in production: Llama-3-8B on vLLM, ml.g5.12xlarge, behind an API-key invoker, with

- a canary rollout (10 % of the fleet for 10 minutes) rolled back by the endpoint's alarms;
- the default alarms (errors, model errors, a 60 s p90 model latency, GPU memory, disk), vLLM's
  KV cache and queue as PromQL alarms (asked for: a CloudWatch preview in some regions only, so
  a rule stops a deploy to a region without them) and an alarm on the invoker's time to first
  token, all notifying an encrypted SNS topic;
- one dashboard row with SageMaker's metrics and the invoker's;
- a weekday schedule: three to six instances in office hours (Berlin time), two to three at
  night and at weekends (two is the smallest fleet a canary can be taken from).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, TimeZone, Validations
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from constructs import Construct

from constructs_llm import (
    Alarms,
    Autoscaling,
    Deployment,
    Engine,
    InvokerAuth,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    ScheduledCapacity,
    StreamingInvoker,
    dashboard_url,
)

BERLIN = TimeZone.EUROPE_BERLIN


class ProductionStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        hf_token = secretsmanager.Secret.from_secret_name_v2(self, "HfToken", "hugging-face/token")
        api_keys = secretsmanager.Secret.from_secret_name_v2(self, "ApiKeys", "llm/api-keys")
        # The on-call topic's policy (TLS only) replaces SNS's default one, so CloudWatch may
        # publish only where it allows cloudwatch.amazonaws.com, and use the key only where
        # the key's policy does: the endpoint's alarms add both statements, through the
        # topic's and the key's own add_to_resource_policy (the SlowFirstToken alarm below
        # notifies the same topic under the same account-wide condition).
        key = kms.Key(self, "OncallKey", enable_key_rotation=True)
        oncall = sns.Topic(self, "Oncall", master_key=key, enforce_ssl=True)

        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-8B-Instruct", token=hf_token),
            engine=Engine.vllm(),
            instance_type="ml.g5.12xlarge",
            max_input_tokens=2048,
            max_total_tokens=4096,
        )
        self.endpoint = LlmEndpoint(
            self,
            "Endpoint",
            model=model,
            instance_count=3,
            deployment=Deployment.canary(percent=10, bake=Duration.minutes(10)),
            alarms=Alarms(model_latency=Duration.seconds(60), topic=oncall, promql_alarms=True),
            autoscaling=Autoscaling(
                min_capacity=3,
                max_capacity=6,
                target_concurrent_requests=8,
                schedule=[
                    ScheduledCapacity(
                        schedule=appscaling.Schedule.cron(hour="8", minute="0", week_day="MON-FRI"),
                        min_capacity=3,
                        max_capacity=6,
                        time_zone=BERLIN,
                    ),
                    ScheduledCapacity(
                        schedule=appscaling.Schedule.cron(
                            hour="19", minute="0", week_day="MON-FRI"
                        ),
                        min_capacity=2,
                        max_capacity=3,
                        time_zone=BERLIN,
                    ),
                ],
            ),
        )
        self.invoker = StreamingInvoker(
            self,
            "Api",
            target=self.endpoint,
            auth=InvokerAuth.api_keys(api_keys),
            max_concurrency=50,
        )
        Validations.of(self.invoker).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:reserved-concurrency",
                reason="This account's Lambda concurrency limit is raised well above 150.",
            )
        )
        slow_start = cloudwatch.Alarm(
            self,
            "SlowFirstToken",
            metric=self.invoker.metric_time_to_first_token(),
            threshold=5000,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="p90 time to first token through the invoker above 5 s in 3 of "
            "5 minutes: the endpoint is saturated or cold",
        )
        slow_start.add_alarm_action(actions.SnsAction(oncall))
        self.dashboard = LlmDashboard(
            self, "Dashboard", endpoints=[self.endpoint], invokers=[self.invoker]
        )

        CfnOutput(self, "Url", value=self.invoker.url)
        CfnOutput(self, "EndpointName", value=self.endpoint.endpoint_name)
        CfnOutput(self, "DashboardName", value=self.dashboard.dashboard_name)
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:hf-token-in-model-env",
                reason="Only the platform team may call sagemaker:DescribeModel in this account.",
            )
        )
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:guarded-rollout-hardware",
                reason="Hardware moves get a new LlmEndpoint and a client switch; this one "
                "changes models and settings only.",
            )
        )
