"""OpenAI batches on a model that scales to zero: Qwen2.5-7B-Instruct as an inference component
that keeps no copy while idle, behind a StreamingInvoker with the Batch API, and the same model
on an asynchronous endpoint at zero instances (``qwen-overnight``), served in batches only.

- the component's copies go from 0 to 2 (AWS's scale-to-zero recipe: one invocation per copy,
  5-minute cooldowns), on an endpoint that may release its last instance (``min_instances=0``);
- ``invoker.add_batch_api()`` adds ``/v1/files`` and ``/v1/batches``: a batch is one execution of
  a Step Functions state machine whose distributed map calls the component once per line, at
  most 16 at once here, retrying while the first copy starts (the refusal of a component at
  zero copies is what scales it out);
- ``Overnight`` is an asynchronous endpoint (``async_inference=``) of the same model, from 0 to
  1 instance on its backlog; ``add_batch_api(async_targets=[...])`` serves it in
  ``/v1/chat/completions`` batches whose lines name ``model="qwen-overnight"``: each line is
  queued with ``InvokeEndpointAsync`` and its answer read from ``Answers`` while the state
  machine waits, so nothing runs while the endpoint starts;
- ``Client`` is the role batch jobs assume: it may call the function URL (SigV4). With its
  credentials, an unchanged ``openai`` client runs a batch (``docs/batch.md``)::

      batch_file = client.files.create(file=open("requests.jsonl", "rb"), purpose="batch")
      batch = client.batches.create(input_file_id=batch_file.id,
                                    endpoint="/v1/chat/completions", completion_window="24h")
      while client.batches.retrieve(batch.id).status not in ("completed", "failed", ...): ...
      answers = client.files.content(client.batches.retrieve(batch.id).output_file_id).text
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_llm import (
    AsyncInference,
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    dashboard_url,
)
from constructs_llm.compliance import CheckovSkip, NagAcknowledgment, waive

INSTANCE_TYPE = "ml.g5.2xlarge"
#: Lines in flight at once: two copies, eight requests each.
CONCURRENCY = 16


class OpenAiBatchStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        endpoint = InferenceComponentEndpoint(
            self, "Endpoint", instance_type=INSTANCE_TYPE, min_instances=0, max_instances=2
        )
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.vllm(),
            instance_type=INSTANCE_TYPE,
            max_total_tokens=8192,
        )
        self.component = InferenceComponent(
            self,
            "Qwen",
            endpoint=endpoint,
            model=model,
            accelerators=1,
            min_memory_mib=24 * 1024,
            copies=1,
            autoscaling=Autoscaling(
                min_capacity=0,
                max_capacity=2,
                target_invocations_per_instance=1,
                scale_in_cooldown=Duration.minutes(5),
                scale_out_cooldown=Duration.minutes(5),
            ),
        )
        answers = s3.Bucket(
            self,
            "Answers",
            encryption_key=kms.Key(self, "AnswersKey", enable_key_rotation=True),
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            versioned=True,
            lifecycle_rules=[
                s3.LifecycleRule(
                    expiration=Duration.days(30), noncurrent_version_expiration=Duration.days(1)
                )
            ],
        )
        _waive_access_logs(answers)
        self.overnight = LlmEndpoint(
            self,
            "Overnight",
            model=model,
            served_model_name="qwen-overnight",
            async_inference=AsyncInference(output=answers),
            autoscaling=Autoscaling(
                min_capacity=0, max_capacity=1, target_backlog_per_instance=CONCURRENCY
            ),
        )
        self.invoker = StreamingInvoker(self, "Api", target=self.component)
        self.batch = self.invoker.add_batch_api(
            max_concurrency=CONCURRENCY, async_targets=[self.overnight]
        )
        self.client = iam.Role(
            self,
            "Client",
            assumed_by=iam.AccountPrincipal(self.account),
            description="Batch jobs assume this role to call the OpenAI-compatible URL",
        )
        self.invoker.grant_invoke_url(self.client)
        self.dashboard = LlmDashboard(
            self, "Dashboard", components=[self.component], invokers=[self.invoker]
        )
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        CfnOutput(self, "BaseUrl", value=self.invoker.url)
        CfnOutput(self, "BatchBucket", value=self.batch.bucket.bucket_name)
        CfnOutput(self, "StateMachineArn", value=self.batch.state_machine.state_machine_arn)
        CfnOutput(self, "ClientRoleArn", value=self.client.role_arn)
        for ack_id, reason in (
            ("min-instances-zero-region", "Deployed to us-east-1, which accepts 0."),
            ("scale-to-zero", "The model serves batches, whose lines retry while it starts."),
            ("component-fleet:g5-2xlarge", "New hardware gets a new endpoint and component."),
            (
                "async-alarms",
                "A line the overnight endpoint fails is written to the batch's error file, which "
                "the batch owner reads; the 5xx alarm covers the container.",
            ),
            (
                "invoker-timeout-decode",
                "Long answers go through batches, whose worker runs up to 15 minutes a line.",
            ),
        ):
            Validations.of(self).acknowledge(
                Acknowledgment(id=f"Annotation::constructs-llm:{ack_id}", reason=reason)
            )


def _waive_access_logs(bucket: s3.Bucket) -> None:
    reason = (
        "Holds the asynchronous endpoint's requests and answers, written and read by SageMaker "
        "and the batch worker only, whose calls CloudTrail records."
    )
    waive(bucket.node.default_child, CheckovSkip("CKV_AWS_18", reason))
    waive(bucket, NagAcknowledgment("AwsSolutions-S1", reason=reason))
