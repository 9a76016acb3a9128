"""Sixty models in one app, laid out as a platform team hosts them: four stacks, one per team,
each an inference-component endpoint shared by the team's fifteen fine-tuned models.

CloudFormation takes at most 500 resources in a stack. Sixty ``LlmEndpoint``s in one stack
would bring about 700 (each its endpoint, config, Model, role, policies and default alarms),
and the library's synth-time message names the ways out (``hosting/stack_size.py``); this
app takes all three:

- **Inference components on a shared endpoint.** A model brings its Model and component, the
  scaling of its copies (a target, its tracking and the scale-out-from-zero step policy and
  alarm), and its execution role with its policies (each model reads only its own weights);
  the endpoint, its config and role are the team's.
- **Alarms per group rather than per model.** The components' default alarms are off
  (``alarms=False``; each would bring four), and one ``LlmDashboard`` per team shows every
  model's traffic, errors, latency and copies in one place.
- **Several stacks in one app.** Each team's stack has its own 500; one team's change deploys
  only that team's stack.

Each team's weights are fine-tunes in S3 (``s3://<team bucket>/<model>/``) of four open
architectures, which size the copies: one GPU of an ml.g5.12xlarge each, scaling to zero when
idle (AWS's recipe: invocations per copy, target 1, five-minute cooldowns), so the fleet
bills only for the models in use. ``tests/test_fleet_example.py`` counts what each stack holds.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Validations
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_llm import (
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmDashboard,
    LlmModel,
    ModelSource,
    dashboard_url,
)

INSTANCE_TYPE = "ml.g5.12xlarge"
#: The teams, one stack each (``Fleet<Team>``).
TEAMS = ("Search", "Support", "Coding", "Research")
MODELS_PER_TEAM = 15
#: What the teams fine-tune: each model's weights are a copy of one of these architectures.
BASES = (
    "meta-llama/Llama-3.1-8B-Instruct",
    "mistralai/Mistral-7B-Instruct-v0.3",
    "Qwen/Qwen2.5-7B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct",
)


def fleet(scope: Construct, id: str) -> list[FleetTeamStack]:
    """The app's sixty models: one stack per team, ``<id><Team>``."""
    return [FleetTeamStack(scope, f"{id}{team}", team=team) for team in TEAMS]


class FleetTeamStack(Stack):
    """One team's fifteen models as components of one shared endpoint."""

    def __init__(self, scope: Construct, id: str, *, team: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        weights = s3.Bucket.from_bucket_name(self, "Weights", f"{team.lower()}-llm-weights")
        self.endpoint = InferenceComponentEndpoint(
            self, "Endpoint", instance_type=INSTANCE_TYPE, min_instances=0, max_instances=8
        )
        self.components: list[InferenceComponent] = []
        for index in range(MODELS_PER_TEAM):
            name = f"{team.lower()}-{index + 1:02d}"
            model = LlmModel(
                self,
                f"Model{index + 1:02d}",
                source=ModelSource.s3(weights, f"{name}/", model_id=BASES[index % len(BASES)]),
                engine=Engine.vllm(),
                max_total_tokens=8192,
            )
            self.components.append(
                InferenceComponent(
                    self,
                    f"Component{index + 1:02d}",
                    endpoint=self.endpoint,
                    model=model,
                    accelerators=1,
                    min_memory_mib=16 * 1024,
                    served_model_name=name,
                    alarms=False,
                    autoscaling=Autoscaling(
                        min_capacity=0,
                        max_capacity=2,
                        target_invocations_per_instance=1,
                        scale_in_cooldown=Duration.minutes(5),
                        scale_out_cooldown=Duration.minutes(5),
                    ),
                )
            )
        self.dashboard = LlmDashboard(self, "Dashboard", components=self.components)
        CfnOutput(self, "DashboardUrl", value=dashboard_url(self.dashboard))
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:component-fleet:g5-12xlarge",
                reason="Deployed on ml.g5.12xlarge; new hardware gets a new endpoint and "
                "components.",
            )
        )
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:min-instances-zero-region",
                reason="Deployed to us-east-1, which accepts 0.",
            )
        )
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="Annotation::constructs-llm:scale-to-zero",
                reason="Each team's tools retry while a model wakes up; idle models cost nothing.",
            )
        )
