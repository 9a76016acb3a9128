"""The text of every engine problem and warning; the checks that use them stay short."""

from __future__ import annotations

from constructs_llm.engines.context import EngineContext
from constructs_llm.hardware.instance_type import InstanceType

__all__ = [
    "alias_loses",
    "below_floor",
    "env_not_a_string",
    "inferentia1",
    "legacy_input_length",
    "lmi_backend",
    "neuron_cores_above",
    "neuron_odd_cores",
    "neuron_without_length",
    "no_tool_parser",
    "parallel_above",
    "parallel_env_above",
    "parser_with_tools_off",
    "rule_limit",
    "rule_model",
    "rule_protocol",
    "rule_revision",
    "rule_tools",
    "tgi_neuronx_tools",
    "timeout_in_env",
    "token_in_env",
    "token_limits_order",
    "tools_not_served",
    "tools_turned_off",
    "tools_without_grammar",
    "trn1_topology",
    "trtllm_tools",
    "trtllm_without_input_length",
    "unknown_tool_parser",
    "vllm_full_context",
    "wrong_hardware",
]

_KINDS = {
    "nvidia": "NVIDIA GPUs",
    "neuron": "AWS Neuron accelerators (Inferentia/Trainium)",
    "habana": "Habana Gaudi accelerators",  # ml.dl1: no built-in engine serves it
}
_INSTEAD = {
    "nvidia": "a GPU instance such as ml.g5.2xlarge",
    "neuron": "an ml.inf2 or ml.trn1 instance",
}
REMOVED_LMI_BACKENDS = ("lmi-dist", "scheduler")  # removed in LMI v15 (0.33.0)


def wrong_hardware(factory: str, wanted: str, inst: InstanceType) -> str:
    have = inst.accelerator
    if have is None:
        return (
            f"Engine.{factory}() serves {_KINDS[wanted]} but {inst.name} has no accelerator; "
            f"choose {_INSTEAD[wanted]}"
        )
    return (
        f"Engine.{factory}() serves {_KINDS[wanted]} but {inst.name} has {_KINDS[have]}; use "
        f"{_engines_for(have)} on {inst.name}, or choose {_INSTEAD[wanted]}"
    )


def _engines_for(accelerator: str) -> str:
    if accelerator == "neuron":
        return "Engine.tgi_neuronx()"
    if accelerator == "nvidia":
        return "Engine.tgi(), Engine.lmi(), Engine.vllm() or Engine.sglang()"
    return "Engine.custom(image=...) with an image built for it"


def parallel_above(setting: str, value: int, ctx: EngineContext) -> str:
    return (
        f"{setting}={value} exceeds the {ctx.devices} GPU(s) {ctx.where}; use {setting} <= "
        f"{ctx.devices} or an instance with more GPUs"
    )


def token_limits_order(low: int, high: int) -> str:
    return (
        f"max_input_tokens ({low}) must be less than max_total_tokens ({high}), which counts "
        f"the prompt plus the generated tokens; raise max_total_tokens above {low}"
    )


# -- user env -----------------------------------------------------------------------------------


def env_not_a_string(key: object, value: object) -> str:
    return (
        f"env[{key!r}] must map a string to a string, got {type(value).__name__} {value!r}; "
        f"write it as {str(value)!r}"
    )


def token_in_env(key: str, value: str) -> str:
    shown = f"'{value[:5]}…'" if value.startswith("hf_") else "a value"
    return (
        f"env {key} holds {shown} that looks like a Hugging Face token in plain text (it would "
        "be readable in the template and in DescribeModel); store it in Secrets Manager and "
        "pass ModelSource.hugging_face(model_id, token=secret)"
    )


def timeout_in_env(key: str) -> str:
    return (
        f"env {key} looks like a SageMaker startup timeout, but the container never reads it; "
        "set LlmEndpoint(health_check_timeout=Duration.minutes(...), "
        "download_timeout=Duration.minutes(...)) (or the same on InferenceComponent)"
    )


def alias_loses(key: str, value: str, target: str, derived: str) -> str:
    return (
        f"env {key}={value!r} is read by the container as {target}, which the engine sets to "
        f"{derived!r} and which wins; set the engine's own setting instead of {key}"
    )


def rule_model(key: str, value: str, ctx: EngineContext) -> str:
    return (
        f"env {key}={value!r} contradicts the model source {ctx.model_location!r}; choose the "
        f"model with source=ModelSource.hugging_face({value!r}) (or s3(...)) instead of env"
    )


def rule_revision(key: str, value: str, ctx: EngineContext) -> str:
    return (
        f"env {key}={value!r} contradicts the source revision {ctx.revision!r}; pass "
        f"ModelSource.hugging_face(..., revision={value!r}) instead"
    )


def rule_limit(key: str, value: str, setting: str, current: int | None) -> str:
    clash = f"contradicts {setting}={current}" if current else f"bypasses {setting}"
    return (
        f"env {key}={value!r} {clash} of the model; set {setting}={value} on the model instead, "
        "so memory sizing and validation use it"
    )


def rule_protocol(key: str, value: str, derived: str | None) -> str:
    return (
        f"env {key}={value!r} changes the request/stream contract the engine sets "
        f"({key}={derived!r}) and the streaming invoker relies on; remove it, or describe your "
        "container with Engine.custom(image=..., stream_format=...)"
    )


def parallel_env_above(key: str, value: str, available: int, unit: str, ctx: EngineContext) -> str:
    return f"env {key}={value} exceeds the {available} {unit} {ctx.where}; use at most {available}"


def below_floor(key: str, value: int, floor_key: str, floor: int, setting: str, why: str) -> str:
    return (
        f"{key}={value} is below {floor_key}={floor} ({why}); raise {setting} to at least "
        f"{floor} or lower {floor_key}"
    )


# -- engine specific ----------------------------------------------------------------------------


def legacy_input_length(value: str) -> str:
    return (
        f"env MAX_INPUT_LENGTH={value!r} is TGI's legacy name for MAX_INPUT_TOKENS (setting "
        "both fails at launch); remove it and set max_input_tokens= on the model"
    )


def inferentia1(inst: InstanceType) -> str:
    return (
        f"{inst.name} is Inferentia1, which TGI NeuronX does not support; use an ml.inf2 or "
        "ml.trn1 instance"
    )


def neuron_cores_above(cores: int, available: int, ctx: EngineContext) -> str:
    return (
        f"Engine.tgi_neuronx(num_cores={cores}) exceeds the {available} NeuronCores "
        f"{ctx.where}; use num_cores <= {available}"
    )


def trn1_topology(setting: str, inst: InstanceType, available: int) -> str:
    return (
        f"{setting} is not a topology the Neuron runtime supports on {inst.name} (1, 2, 8, 16 "
        f"or a multiple of 32 cores); use one of {[c for c in (1, 2, 8, 16, 32) if c <= available]}"
    )


def neuron_odd_cores(cores: int, inst: InstanceType) -> str:
    return (
        f"HF_NUM_CORES={cores} on {inst.name}: the Neuron docs list 1, 2, 4, 8 and 24 cores as "
        f"Inferentia2 tensor-parallel degrees; verify the model compiles for {cores} cores, or "
        f"use a power of two or all {inst.neuron_cores} cores"
    )


def neuron_without_length() -> str:
    return (
        "max_total_tokens is not set, so the Neuron image picks a cached configuration for you "
        "(or fails if none matches); set max_total_tokens to fix the compiled sequence length"
    )


def lmi_backend(backend: str) -> str:
    if backend.strip().lower() in REMOVED_LMI_BACKENDS:
        return (
            f"LMI backend {backend!r} was removed in LMI v15 (0.33.0); current LMI images ship "
            "vLLM (the default) and, in the separate -tensorrtllm images, TensorRT-LLM: use "
            "Engine.lmi(backend='vllm')"
        )
    return (
        f"LMI backend must be 'vllm' or 'trtllm', got {backend!r}; use Engine.lmi(backend='vllm')"
    )


def trtllm_without_input_length(default_len: int) -> str:
    return (
        f"LMI TensorRT-LLM compiles the engine for {default_len}-token prompts by default and "
        "rejects longer ones; set max_input_tokens (and max_total_tokens) on the model"
    )


def vllm_full_context(model: str, context: int, instance: str, fits: int) -> str:
    return (
        f"vLLM sizes for the full {context:,}-token context of {model} by default, but the KV "
        f"cache on {instance} holds about {fits:,} tokens, so it would fail at start-up; set "
        f"max_total_tokens <= {fits:,} on the model"
    )


# -- tool calling -------------------------------------------------------------------------------


def unknown_tool_parser(parser: str, known: tuple[str, ...]) -> str:
    return (
        f"tool_call_parser must be a parser the engine registers, got {parser!r}; known: "
        f"{', '.join(sorted(known))}"
    )


def parser_with_tools_off(parser: str) -> str:
    return (
        f"tool_call_parser={parser!r} was given with tool_calls=False; drop one of them "
        "(tool_calls=None or True turns the parser on)"
    )


def trtllm_tools() -> str:
    return (
        "LMI serves tool calls through its vLLM backend only (TensorRT-LLM's chat input drops "
        "tools); use Engine.lmi(backend='vllm'), or drop tool_calls/tool_call_parser"
    )


def tgi_neuronx_tools() -> str:
    return (
        "tool_calls=True: TGI NeuronX does not serve tool calls (its Neuron backend has no "
        "grammar, which TGI's tool calls are built on); use Engine.tgi() on GPUs, or drop "
        "tool_calls=True"
    )


def tools_turned_off(factory: str) -> str:
    return f"Engine.{factory}(tool_calls=False) turns tool calling off"


def no_tool_parser(family: str | None) -> str:
    which = f"the model family {family!r}" if family else "this model (not in the packaged table)"
    return (
        f"no tool-call parser is known for {which}; pass tool_call_parser=... naming the parser "
        "that fits the model's chat template, or drop tool_calls=True"
    )


def tools_not_served(factory: str, why: str) -> str:
    return f"Engine.{factory}(tool_calls=True) cannot be served: {why}"


def tools_without_grammar(key: str, value: str) -> str:
    return (
        f"env {key}={value!r} turns off TGI's grammar, which its tool calls are built on; remove "
        "it, or drop tool_calls=True"
    )


def rule_tools(key: str, value: str, derived: str | None) -> str:
    sets = f"sets {key}={derived!r}" if derived is not None else f"leaves {key} unset"
    return (
        f"env {key}={value!r} contradicts the engine's tool calling (it {sets}), which the "
        "streaming invoker follows; set tool_calls= and tool_call_parser= on the engine instead"
    )
