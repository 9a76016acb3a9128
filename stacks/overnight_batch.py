"""Overnight batch: Qwen2.5-7B-Instruct on an asynchronous endpoint for long jobs (32k-token
documents summarized, reports drafted) that no one waits on.

- requests queue in SageMaker (``async_inference=``): each may run up to an hour, bodies above
  128,000 bytes go through S3, and each answer (or failure) is written to the jobs bucket;
- the bucket is encrypted with its own rotating key, TLS-only, versioned, logs its access to a
  log bucket, and expires jobs after 30 days;
- an encrypted, TLS-only SNS topic hears of each answer and failure;
- the endpoint scales on its backlog (8 queued requests per instance, the 8 each instance works
  on at once) down to zero instances, and wakes when a request arrives; at most one instance in
  the day, four at night (Berlin time);
- ``Submitter`` is the role batch jobs assume: it may queue requests, put request bodies in
  ``inputs/`` and read ``outputs/`` and ``failures/`` (``grant_invoke_async``). With its
  credentials::

      from constructs_llm.streaming import chat_async

      answer = chat_async(ENDPOINT_NAME, messages, input_location=INPUT_LOCATION,
                          max_tokens=4000, timeout=6 * 3600)
"""

from __future__ import annotations

from typing import Any

from aws_cdk import (
    Acknowledgment,
    CfnOutput,
    Duration,
    Stack,
    TimeZone,
    Validations,
)
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from constructs import Construct

from constructs_llm import (
    AsyncInference,
    Autoscaling,
    Engine,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    ScheduledCapacity,
    dashboard_url,
)
from constructs_llm.compliance import CheckovSkip, NagAcknowledgment, waive

BERLIN = TimeZone.EUROPE_BERLIN
#: Requests each instance's container works on at once, and the backlog per instance held.
PER_INSTANCE = 8


class OvernightBatchStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,  # S3 writes access logs with SSE-S3 only
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            versioned=True,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(90))],
        )
        _waive_log_bucket(access_logs)
        jobs = s3.Bucket(
            self,
            "Jobs",
            encryption_key=kms.Key(self, "JobsKey", enable_key_rotation=True),
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            versioned=True,
            server_access_logs_bucket=access_logs,
            server_access_logs_prefix="jobs/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    expiration=Duration.days(30), noncurrent_version_expiration=Duration.days(1)
                )
            ],
        )
        done = sns.Topic(
            self,
            "Done",
            master_key=kms.Key(self, "DoneKey", enable_key_rotation=True),
            enforce_ssl=True,
        )

        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.vllm(),
            instance_type="ml.g5.2xlarge",
            max_total_tokens=32768,
        )
        queued = AsyncInference(output=jobs, notify=done, max_concurrent_per_instance=PER_INSTANCE)
        self.endpoint = LlmEndpoint(
            self,
            "Endpoint",
            model=model,
            async_inference=queued,
            autoscaling=Autoscaling(
                min_capacity=0,
                max_capacity=4,
                target_backlog_per_instance=PER_INSTANCE,
                schedule=[
                    ScheduledCapacity(
                        schedule=appscaling.Schedule.cron(hour="22", minute="0"),
                        max_capacity=4,
                        time_zone=BERLIN,
                    ),
                    ScheduledCapacity(
                        schedule=appscaling.Schedule.cron(hour="6", minute="0"),
                        max_capacity=1,
                        time_zone=BERLIN,
                    ),
                ],
            ),
        )
        self.submitter = iam.Role(
            self,
            "Submitter",
            assumed_by=iam.AccountPrincipal(self.account),
            description="Batch jobs assume this role to queue requests and read their answers",
        )
        self.endpoint.grant_invoke_async(self.submitter)

        self.dashboard = LlmDashboard(self, "Dashboard", endpoints=[self.endpoint])
        CfnOutput(self, "EndpointName", value=self.endpoint.endpoint_name)
        CfnOutput(self, "InputLocation", value=queued.input_location.uri)
        CfnOutput(self, "OutputLocation", value=queued.output_location.uri)
        CfnOutput(self, "TopicArn", value=done.topic_arn)
        CfnOutput(self, "SubmitterRoleArn", value=self.submitter.role_arn)
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:async-alarms",
                reason="Each failed request is announced on the Done topic (ErrorTopic), which "
                "the batch owners read; the 5xx alarm covers the container.",
            )
        )


def _waive_log_bucket(bucket: s3.Bucket) -> None:
    """The access-log bucket is the end of the logging chain."""
    waive(
        bucket.node.default_child,
        CheckovSkip("CKV_AWS_18", "This is the access-log bucket; it does not log itself."),
        CheckovSkip(
            "CKV_AWS_145",
            "S3 server access logging delivers only to buckets encrypted with SSE-S3, not KMS.",
        ),
    )
    waive(
        bucket,
        NagAcknowledgment(
            "AwsSolutions-S1",
            reason="This is the access-log bucket of the jobs bucket; it does not log itself.",
        ),
    )
