"""AdapterComponent: a LoRA adapter served by an inference component's copies.

SageMaker's adapter inference component names a base component
(``Specification.BaseInferenceComponentName``) and the adapter's artifacts
(``Specification.Container.ArtifactUrl``), and has no compute of its own: "An adapter inference
component is loaded by a base inference component, and it uses the compute resources of the
base inference component" (botocore ``InferenceComponentSpecification``). It is invoked like
any component, with its own ``InferenceComponentName``; SageMaker passes the adapter to the
container in the ``X-Amzn-SageMaker-Adapter-Identifier`` header.

Only some engines' SageMaker integrations register adapters at run time (``_ADAPTER_ENV``); the
base model must turn it on in its ``env``.
"""

from __future__ import annotations

import re

from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm.hosting.components.component_base import ComponentAttributes
from constructs_llm.hosting.components.plan import AdapterPlan, ComponentPlan
from constructs_llm.hosting.names import generated_name, name_problem
from constructs_llm.hosting.target import ServesModel, TargetFacts, hosted_facts
from constructs_llm.model.source import ModelSource
from constructs_llm.operations.metrics import DashboardView, InvocationMetrics
from constructs_llm.problems import Problem, Problems
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.values import describe

#: Engines whose SageMaker integration serves adapter components, by ``Engine.name``, and the
#: base model env that turns it on.
#: - LMI (vLLM async): ``option.enable_lora`` enables adapters (deepjavalibrary/djl-serving:
#:   ``serving/docs/lmi/user_guides/vllm_user_guide.md``, "LoRA Adapter Support"; LMI v16
#:   release notes: "Multi-LoRA (adapters) support in async mode"); the async handler reads
#:   SageMaker's adapter header (deepjavalibrary/djl-serving:
#:   ``djl_python/lmi_vllm/vllm_async_service.py``,
#:   ``_extract_lora_adapter``).
#: - The AWS vLLM DLC: ``SM_VLLM_ENABLE_LORA`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING`` "to
#:   enable dynamic adapter loading with inference components"
#:   (aws/model-hosting-container-standards: ``docs/sagemaker/05_lora_adapter_management.md``;
#:   vLLM registers SageMaker's load-adapter handler only with the latter:
#:   vllm-project/vllm: ``vllm/entrypoints/serve/lora/api_router.py``).
#: TGI, TGI NeuronX, TensorRT-LLM and SGLang have no SageMaker adapter registration.
_ADAPTER_ENV: dict[str, dict[str, str]] = {
    "lmi-vllm": {"OPTION_ENABLE_LORA": "true"},
    "vllm": {"SM_VLLM_ENABLE_LORA": "true", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"},
}
_CUSTOM = "custom"
# The name clients send as ``model``; also the adapter's construct id.
_ADAPTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$")


class AdapterComponent(ComponentAttributes, ServesModel, InvocationMetrics, Construct):
    """A LoRA adapter on top of an inference component (``component.add_adapter(...)``).

    Served to OpenAI clients under its ``name``, with its base's request and stream formats.
    Its artifacts are one ``.tar.gz`` in S3 (``ModelSource.s3_archive``): SageMaker's
    ``ArtifactUrl`` "must point to a single gzip compressed tar archive (.tar.gz suffix)"
    (botocore ``InferenceComponentContainerSpecification``). It registers with its base's
    endpoint, which grants at synth the read of only that object to its own role and the base
    model's role (which one SageMaker uses is undocumented, as for component weights).

    :param base: the component whose copies load the adapter.
    :param name: the model name clients send; letters, digits, ``.``, ``_``, ``:`` and ``-``,
        at most 63 characters.
    :param source: the adapter's ``.tar.gz`` (``ModelSource.s3_archive(bucket, key)``).
    :param inference_component_name: physical name. @default generated from the path
    """

    plan: AdapterPlan

    def __init__(
        self,
        scope: Construct,
        *,
        base: ComponentAttributes,
        name: str,
        source: ModelSource,
        inference_component_name: str | None = None,
    ) -> None:
        base_plan = _check(scope, base, name, source, inference_component_name)
        super().__init__(scope, name)
        self.base, self.endpoint = base, base.endpoint
        self.plan = AdapterPlan(
            name=name,
            source=source,
            component_name=inference_component_name
            or generated_name(self, "inference_component_name"),
            model=base_plan.model,
        )
        spec = sagemaker.CfnInferenceComponent
        self.resource = spec(
            self,
            "Resource",
            inference_component_name=self.plan.component_name,
            endpoint_name=base.endpoint.endpoint_name,
            specification=spec.InferenceComponentSpecificationProperty(
                base_inference_component_name=base.inference_component_name,
                container=spec.InferenceComponentContainerSpecificationProperty(
                    artifact_url=source.archive_url
                ),
            ),
        )
        # The base is named by a literal: state the order (created after it, deleted first).
        self.resource.node.add_dependency(base.resource)
        base.endpoint.add_adapter(self)
        if base_plan.model.engine.name == _CUSTOM:
            warn(
                self,
                SynthWarning(
                    WarningId.ADAPTER_ENGINE_UNVERIFIED,
                    f"adapter {name!r} on a custom engine: verify that its image registers "
                    "SageMaker adapter components (the X-Amzn-SageMaker-Adapter-Identifier "
                    "header)",
                ),
            )

    @property
    def name(self) -> str:
        """The model name clients send."""
        return self.plan.name

    @property
    def source(self) -> ModelSource:
        return self.plan.source

    @property
    def facts(self) -> TargetFacts:
        """What an invoker, a dashboard or an alarm reads of the adapter: its base's pools (its
        copies load the adapter), with the adapter's own name; it scales with its base, and has
        no scaling of its own."""
        base = self.base.plan
        return hosted_facts(self, base.pools if isinstance(base, ComponentPlan) else (), None)

    def dashboard_view(self) -> DashboardView:
        """Its dashboard row shows what its invokers measure; its base component's row shows
        the copies it runs on."""
        return DashboardView(label="AdapterComponent", sagemaker=False)


def _check(
    scope: Construct,
    base: object,
    name: object,
    source: object,
    inference_component_name: str | None,
) -> ComponentPlan:
    """The base component's plan, once every argument is checked."""
    problems = Problems(f"InferenceComponent '{scope.node.path}'.add_adapter({name!r})")
    plan = base.plan if isinstance(base, ComponentAttributes) else None
    if not isinstance(plan, ComponentPlan):
        problems.fail(
            Problem.of(
                "base",
                base,
                f"base must be an InferenceComponent, got {describe(base)};",
                "use component.add_adapter(name, source=...)",
            )
        )
    if not isinstance(name, str) or not _ADAPTER_NAME.match(name):
        problems.add(
            Problem.of(
                "name",
                name,
                "the adapter name must be 1-63 letters, digits, '.', '_', ':' or '-' starting "
                f"with a letter or digit (clients send it as 'model'), got {name!r}",
            )
        )
    elif scope.node.try_find_child(name) is not None:
        problems.add(
            Problem.of(
                "name",
                name,
                f"the component already has an adapter named {name!r};",
                "give each its name",
            )
        )
    problems.add(name_problem("inference_component_name", inference_component_name))
    problems.add(_source_problem(source))
    problems.add(_engine_problem(plan))
    problems.raise_if_any()
    return plan


def _source_problem(source: object) -> Problem | None:
    if isinstance(source, ModelSource) and source.archive_url is not None:
        return None
    if isinstance(source, ModelSource):
        got = "a Hugging Face Hub model" if source.is_hub else "an S3 prefix"
    else:
        got = describe(source)
    return Problem.of(
        "source",
        source,
        f"source must be the adapter's .tar.gz in S3, got {got}: SageMaker's ArtifactUrl must "
        "point to a single gzip compressed tar archive; package the adapter (adapter_config.json "
        "and its weights) and pass ModelSource.s3_archive(bucket, 'adapters/name.tar.gz')",
    )


def _engine_problem(base: ComponentPlan) -> Problem | None:
    engine = base.model.engine
    if engine.name == _CUSTOM:
        return None  # warned about: the library cannot tell
    wanted = _ADAPTER_ENV.get(engine.name)
    if wanted is None:
        return Problem.of(
            "base",
            base,
            f"engine {engine.name!r} of LlmModel '{base.model.node.path}' serves no SageMaker "
            "adapter components;",
            "serve the base model with Engine.lmi(backend='vllm') or Engine.vllm()",
        )
    env = base.binding.environment
    missing = {k: v for k, v in wanted.items() if env.get(k, "").strip().lower() != v}
    if not missing:
        return None
    return Problem.of(
        "base",
        base,
        f"LlmModel '{base.model.node.path}' ({engine.name}) does not turn adapters on;",
        f"add env={missing!r} to it (the engine registers adapters only then)",
    )
