"""A model bound to a placement: what the engine derives for that hardware.

:func:`derive` is pure (no constructs): the container env, memory plan, host AMI, warnings and
problems of one model definition on one placement. ``LlmModel.bind`` turns a derivation into
a ``ModelBinding`` (``llm_model.py``), once per placement; the model renders the
``AWS::SageMaker::Model`` of each placement its hosts record (``model/model_resource.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from constructs_llm import catalogs
from constructs_llm.engines.context import EngineContext
from constructs_llm.engines.engine import Engine
from constructs_llm.errors import SizingError
from constructs_llm.hardware.instance_type import unknown_instance_type
from constructs_llm.hardware.placement import Placement
from constructs_llm.model.checkpoint_checks import check_checkpoint
from constructs_llm.problems import Problem
from constructs_llm.reporting import SynthWarning, WarningId
from constructs_llm.sizing.memory import MemoryPlan, ModelArchitecture, plan_memory

if TYPE_CHECKING:
    from constructs_llm.hardware.instance_type import InstanceType
    from constructs_llm.images.container_image import ContainerImage
    from constructs_llm.model.source import ModelSource

_CUDA13_HOST_AMI = "al2023-ami-sagemaker-inference-gpu-4-1"


@dataclass(frozen=True, kw_only=True)
class Definition:
    """What a model is, independent of hardware (``LlmModel`` builds one).

    :param engine: the serving engine.
    :param source: where the weights come from.
    :param max_input_tokens: longest prompt. @default the engine's
    :param max_total_tokens: longest prompt + generation. @default the engine's
    :param env: the user's extra env. @default none
    :param architecture: figures for memory sizing. @default unknown (not checked)
    """

    engine: Engine
    source: ModelSource
    max_input_tokens: int | None = None
    max_total_tokens: int | None = None
    env: Mapping[str, str] | None = None
    architecture: ModelArchitecture | None = None

    @property
    def model_family(self) -> str | None:
        """The family the packaged table gives the weights' Hub id (None: not known)."""
        return catalogs.model_family(self.source.model_id)


@dataclass(frozen=True, kw_only=True)
class Derivation:
    """What one definition becomes on one placement (before any construct exists)."""

    placement: Placement
    environment: Mapping[str, str]
    plan: MemoryPlan | None
    image: ContainerImage
    inference_ami_version: str | None
    warnings: tuple[SynthWarning, ...]
    problems: tuple[Problem, ...]

    def shares_model_with(self, other: Derivation) -> bool:
        """True when one SageMaker Model serves both placements: the same container env,
        image and host AMI (what an instance pool's ``ModelNameOverride`` would change)."""
        return (
            dict(self.environment) == dict(other.environment)
            and self.inference_ami_version == other.inference_ami_version
            and _same_image(self.image, other.image)
        )


def _same_image(a: ContainerImage, b: ContainerImage) -> bool:
    if a is b:
        return True
    return (
        type(a) is type(b)
        and a.repository_name is not None
        and (a.repository_name, a.tag) == (b.repository_name, b.tag)
    )


def derive(definition: Definition, placement: Placement) -> Derivation:
    """The env, memory plan, host AMI, warnings and problems of ``definition`` on ``placement``.

    Engine and hardware mistakes come first and skip the memory plan: they explain a sizing
    failure better than the plan would. Then the engine is checked again with the plan, for
    what only the plan shows (a vLLM context longer than the KV cache).
    """
    engine, inst = definition.engine, placement.instance_type
    user_env = dict(definition.env or {})
    ctx = EngineContext(
        placement=placement,
        model_location=definition.source.model_location,
        revision=definition.source.revision,
        max_input_tokens=definition.max_input_tokens,
        max_total_tokens=definition.max_total_tokens,
        model_family=definition.model_family,
    )
    image = engine.image_for(inst)
    problems = placement.problems()
    if problems:
        return _failed(placement, image, problems)
    problems += _kind_problems(definition)
    checkpoint = check_checkpoint(
        definition.source.model_id, definition.architecture, engine, engine.factory_name, user_env
    )
    problems += checkpoint.problems
    problems += engine.validate(ctx, user_env)
    warnings = [SynthWarning(WarningId.UNKNOWN_INSTANCE_TYPE, unknown_instance_type(inst))]
    warnings = warnings if not inst.known else []
    warnings += [SynthWarning(WarningId.ENGINE_SETTING, w) for w in engine.warnings(ctx, user_env)]
    warnings += [SynthWarning(WarningId.MODEL_ID_GUESS, w) for w in checkpoint.warnings]
    plan = None if problems else _plan(definition, placement, warnings)
    problems += [p.of_kind(SizingError) for p in plan.problems] if plan else []
    planned = replace(ctx, plan=plan)
    if plan is not None and not problems:
        problems += engine.validate(planned, user_env)
    env = {} if problems else {**engine.derive_env(planned), **user_env}
    return Derivation(
        placement=placement,
        environment=env,
        plan=plan,
        image=image,
        inference_ami_version=_host_ami_for(image, inst),
        warnings=tuple(warnings),
        problems=tuple(problems),
    )


def _host_ami_for(image: ContainerImage, instance: InstanceType) -> str | None:
    """CUDA 13 images need the host AMI with NVIDIA driver 580; SageMaker's default has 535."""
    major = image.cuda_major
    if instance.accelerator == "nvidia" and major is not None and major >= 13:
        return _CUDA13_HOST_AMI
    return None


def _failed(placement: Placement, image: ContainerImage, problems: list[Problem]) -> Derivation:
    return Derivation(
        placement=placement,
        environment={},
        plan=None,
        image=image,
        inference_ami_version=None,
        warnings=(),
        problems=tuple(problems),
    )


def _plan(
    definition: Definition, placement: Placement, warnings: list[SynthWarning]
) -> MemoryPlan | None:
    inst, arch = placement.instance_type, definition.architecture
    if not inst.known or inst.accelerator is None:
        return None
    if arch is None:
        unknown = _unknown_model_size(definition.source.model_id)
        warnings.append(SynthWarning(WarningId.UNKNOWN_MODEL_SIZE, unknown))
        return None
    plan = plan_memory(
        arch,
        instance=inst,
        accelerators=placement.accelerators,
        engine=definition.engine,
        max_total_tokens=definition.max_total_tokens,
        strict=False,
        batch_tokens=definition.engine.batch_tokens,
    )
    warnings += [SynthWarning(WarningId.SIZING_ESTIMATE, w) for w in plan.warnings]
    return plan


def _kind_problems(definition: Definition) -> list[Problem]:
    """The engine must serve the kind of model the architecture describes: an embedding model
    on an embedding engine, a chat model on a chat engine."""
    arch, engine = definition.architecture, definition.engine
    if arch is None or arch.kind is engine.model_kind:
        return []
    name = definition.source.model_id or arch.name
    if arch.is_embedding:
        return [
            Problem.of(
                "engine",
                engine,
                f"{name} is an embedding model, but Engine.{engine.factory_name}() serves chat "
                "models;",
                "serve it with Engine.tei() or Engine.vllm() (without embedding=False); the "
                "invoker then answers POST /v1/embeddings",
            )
        ]
    return [
        Problem.of(
            "engine",
            engine,
            f"{name} is a chat model, but Engine.{engine.factory_name}() serves embedding models;",
            "serve it with a chat engine such as Engine.vllm() (without embedding=True)",
        )
    ]


def _unknown_model_size(model_id: str | None) -> str:
    return (
        f"the size of '{model_id or 'this model'}' is unknown, so memory fit was not checked; "
        "pass architecture=ModelArchitecture(...) to check it"
    )
