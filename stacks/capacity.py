"""Capacity: Qwen2.5-7B-Instruct on vLLM over instance pools, so a deploy or a scale-out that
finds no capacity on the preferred GPU falls back to the next type instead of failing.

- ml.g6e.2xlarge first (1 x L40S, 44.7 GiB: the most KV cache per instance), then
  ml.g5.4xlarge (1 x A10G) and ml.g6.4xlarge (1 x L4, 22.4 GiB each), which serve the same
  Model; as a last resort ml.g5.12xlarge, whose 4 x A10G get a Model of their own with
  tensor parallel 4 (``ModelNameOverride``);
- SageMaker tries the pools for up to 30 minutes before the deploy (or scale-out) fails;
- autoscaling between 1 and 4 instances on concurrency, with the target set for the smallest
  pools (an A10G or L4 holds 11 full 8,192-token sequences);
- the default alarms, GPU memory watched per pool, and a dashboard row with a line per pool;
- enhanced metrics: the row also graphs each GPU and each instance, and two more alarms watch
  the fullest single GPU (a percent of one GPU reads the same on every pool's type), one on the
  dimension set without ``InstanceType`` and one on the pools' set with it;
- detailed observability, stated explicitly: SageMaker scrapes vLLM's own metrics, two PromQL
  alarms watch a full KV cache and a queue on any instance of any pool, and the dashboard lists
  the PromQL for the KV cache, the queue, time to first token and inter-token latency; PromQL
  alarms are a CloudWatch preview in some regions only, so the stack asks for them
  (``Alarms(promql_alarms=True)``) and a rule stops a deploy to a region without them;
- the dashboard's console URL as an output.

With ``cdk.json``'s ``constructs-llm:newEndpointOnFleetChange``, the Endpoint is named after its
path and its pools, so adding, dropping or reordering pools deploys a new endpoint beside the
old one (then deletes it) in one ``cdk deploy``, with no refusal from SageMaker's autoscaling.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
from constructs import Construct

from constructs_llm import (
    Alarms,
    Autoscaling,
    Engine,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    dashboard_url,
)

#: In order of preference.
POOLS = ["ml.g6e.2xlarge", "ml.g5.4xlarge", "ml.g6.4xlarge", "ml.g5.12xlarge"]


class CapacityStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        model = LlmModel(
            self,
            "Model",
            source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
            engine=Engine.vllm(),
            max_total_tokens=8192,
        )
        self.endpoint = LlmEndpoint(
            self,
            "Endpoint",
            model=model,
            instance_type=POOLS,
            provision_timeout=Duration.minutes(30),
            enhanced_metrics=True,
            detailed_observability=True,
            alarms=Alarms(promql_alarms=True),
            autoscaling=Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8),
        )
        self.dashboard = LlmDashboard(self, "Dashboard", endpoints=[self.endpoint])
        CfnOutput(self, "EndpointName", value=self.endpoint.endpoint_name)
        CfnOutput(self, "DashboardName", value=self.dashboard.dashboard_name)
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:pools-autoscaling",
                reason="The target (8 requests per instance) suits the smallest pools.",
            )
        )
