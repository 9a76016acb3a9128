"""Hugging Face Text Embeddings Inference (TEI): embedding models on NVIDIA GPUs or on CPUs.

What the SageMaker images do, from huggingface/text-embeddings-inference at v1.8.2 (the
version of the newest TEI images the SageMaker SDK lists):

- The entrypoint (huggingface/text-embeddings-inference: ``sagemaker-entrypoint.sh``, and
  huggingface/text-embeddings-inference: ``sagemaker-entrypoint-cuda-all.sh`` in the
  GPU image built from ``Dockerfile-cuda-all``'s ``sagemaker`` target) requires
  ``HF_MODEL_ID`` ("HF_MODEL_ID must be set"), exports it as ``MODEL_ID`` and
  ``HF_MODEL_REVISION`` as ``REVISION``, and starts ``text-embeddings-router --port 8080
  --json-output``. Every other setting is one of the router's arguments, which clap also reads
  from the env var of the same name (``router/src/main.rs``): ``MAX_BATCH_TOKENS`` (16384),
  ``MAX_CLIENT_BATCH_SIZE`` (32), ``MAX_CONCURRENT_REQUESTS`` (512), ``MAX_BATCH_REQUESTS``,
  ``AUTO_TRUNCATE``, ``POOLING``, ``DTYPE`` and the Hub token ``HF_TOKEN``.
- The GPU image starts only on compute capability 7.5, 8.x and 9.0 (the entrypoint picks
  ``text-embeddings-router-75``, ``-80`` or ``-90`` and otherwise exits with "cuda compute cap
  ... is not supported"), and the model runs on one GPU (candle's ``Device::new_cuda(0)``,
  ``backends/candle/src/lib.rs``): there is no tensor parallelism, so a copy needs one GPU.
- ``/invocations`` is the ``embed`` route for an embedding model (``router/src/http/
  server.rs``), unless ``TASK=sentence-similarity`` (the ``similarity`` route) or SPLADE pooling
  (``embed_sparse``) changes it: both answer another shape, so the library refuses them. The
  body is ``{"inputs": "text" | ["text", ...], "truncate": bool, "normalize": bool,
  "dimensions": int}`` and the answer a JSON array of float arrays, one per input; nothing
  streams (``RequestFormat.EMBED``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.engines._support import dtype_name, int_value, put
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.context import EngineContext, EnvRule
from constructs_llm.engines.engine import Engine
from constructs_llm.engines.env_rules import env_entry_problem
from constructs_llm.engines.settings import SettingsChecked, setting
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem
from constructs_llm.sizing.memory import DEFAULT_BATCH_TOKENS

#: ``--max-client-batch-size``'s default: inputs TEI takes in one request.
_TEI_CLIENT_BATCH_SIZE = 32
_GPU_FAMILY, _CPU_FAMILY = "tei", "tei-cpu"
# The default GPU image starts on compute capability 7.5, 8.x and 9.0 only (the catalog's
# ``compute_capability``, from NVIDIA's list).
_SERVED_FAMILIES = "ml.g4dn, ml.g5, ml.g6, ml.g6e, ml.p4d, ml.p4de, ml.p5, ml.p5e or ml.p5en"
# TEI's Pool value names (clap's kebab-case of backends/core Pool); SPLADE answers sparse
# embeddings on another route, so it is not offered.
_POOLING = ("cls", "mean", "last-token")
# DType: float16 and float32 in the candle backends both images run (backends/src/dtype.rs).
_TEI_DTYPES = ("fp16", "fp32")
_TRUE_VALUES = frozenset({"true", "1", "yes", "on"})
#: Env values on which TEI answers /invocations with another shape than OpenAI's embeddings:
#: key -> (value, what TEI answers).
_OTHER_ANSWERS = {
    "POOLING": (
        "splade",
        "sparse embeddings on /invocations (its embed_sparse route), which OpenAI's embeddings "
        "API has no shape for",
    ),
    "TASK": ("sentence-similarity", "sentence similarities on /invocations instead of embeddings"),
}


@dataclass(frozen=True, kw_only=True)
class TeiEngine(SettingsChecked, Engine):
    """Hugging Face Text Embeddings Inference: an embedding model on one NVIDIA GPU, or on CPUs.

    The image follows the instance: the TEI GPU image on GPU instances, the TEI CPU image on
    CPU instances (ml.c*, ml.m*, ml.r*). The invoker serves the model on
    ``POST /v1/embeddings`` (OpenAI's embeddings API), calling ``InvokeEndpoint`` (TEI does not
    stream). A copy uses one GPU: give an inference component ``accelerators=1``.

    :param image: @default the newest TEI image the library knows for the instance's hardware
        (``tei`` on GPUs, ``tei-cpu`` on CPUs)
    :param max_batch_tokens: ``MAX_BATCH_TOKENS``, tokens TEI batches into one forward pass;
        sizes the memory plan's activations. @default TEI's 16384
    :param max_client_batch_size: ``MAX_CLIENT_BATCH_SIZE``, inputs TEI takes in one request;
        the invoker splits a longer ``input`` list into calls of at most this many.
        @default TEI's 32
    :param max_concurrent_requests: ``MAX_CONCURRENT_REQUESTS``; TEI answers 429 past it.
        @default TEI's 512
    :param max_batch_requests: ``MAX_BATCH_REQUESTS``, requests in one batch. @default no limit
    :param auto_truncate: ``AUTO_TRUNCATE``: cut inputs longer than the model's limit instead
        of refusing them (a 400 through the invoker). @default TEI's: refuse
    :param pooling: ``POOLING``: cls, mean or last-token, over the model's own
        ``1_Pooling/config.json``. @default the model's
    :param dtype: ``DTYPE``: fp16 or fp32. @default TEI's: fp16 on GPUs, fp32 on CPUs
    """

    name = "tei"
    factory_name = "tei"
    accelerator = None  # NVIDIA GPUs or CPUs
    stream_format = StreamFormat.AUTO  # nothing streams: TEI answers one JSON body (EMBED)
    request_format = RequestFormat.EMBED
    chat_completions_path = ChatCompletionsPath.ABSENT  # an embeddings router: no chat route

    image: ContainerImage | None = setting(image=True)
    max_batch_tokens: int | None = setting(positive=True)
    max_client_batch_size: int | None = setting(positive=True)
    max_concurrent_requests: int | None = setting(positive=True)
    max_batch_requests: int | None = setting(positive=True)
    auto_truncate: bool | None = setting(boolean=True)
    pooling: str | None = setting(choices=_POOLING)
    dtype: str | None = setting(dtype=_TEI_DTYPES)

    def env_name_of(self, flag: str) -> str | None:
        """The router reads each of its flags from the env name in capitals."""
        return flag.replace("-", "_").upper()

    @property
    def token_env_names(self) -> tuple[str, ...]:
        # HF_TOKEN only: the router's --hf-token (HF_TOKEN) conflicts with the deprecated
        # --hf-api-token (HF_API_TOKEN), so giving both would stop it at start.
        return ("HF_TOKEN",)

    @property
    def weight_dtype(self) -> str | None:
        return dtype_name(self.dtype, {"fp16": "fp16", "fp32": "fp32"})

    @property
    def batch_tokens(self) -> int | None:
        return self.max_batch_tokens or DEFAULT_BATCH_TOKENS

    @property
    def max_inputs_per_call(self) -> int | None:
        return self.max_client_batch_size or _TEI_CLIENT_BATCH_SIZE

    def image_for(self, instance: InstanceType) -> ContainerImage:
        if self.image is not None:
            return self.image
        family = _GPU_FAMILY if instance.accelerator == "nvidia" else _CPU_FAMILY
        return ContainerImage.dlc_default(family)

    def devices_used(self, instance: InstanceType, accelerators: int | None = None) -> int:
        return 1  # one GPU per copy (candle's Device::new_cuda(0)), or the CPUs

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = {"HF_MODEL_ID": ctx.model_location}
        put(env, "HF_MODEL_REVISION", ctx.revision)
        put(env, "MAX_BATCH_TOKENS", self.max_batch_tokens)
        put(env, "MAX_CLIENT_BATCH_SIZE", self.max_client_batch_size)
        put(env, "MAX_CONCURRENT_REQUESTS", self.max_concurrent_requests)
        put(env, "MAX_BATCH_REQUESTS", self.max_batch_requests)
        if self.auto_truncate is not None:
            env["AUTO_TRUNCATE"] = "true" if self.auto_truncate else "false"
        put(env, "POOLING", self.pooling)
        put(env, "DTYPE", dtype_name(self.dtype, {"fp16": "float16", "fp32": "float32"}))
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {
            "HF_MODEL_ID": EnvRule.MODEL,
            "HF_MODEL_REVISION": EnvRule.REVISION,
            # The client batch size is the invoker's split size: env must not change it.
            "MAX_CLIENT_BATCH_SIZE": EnvRule.PROTOCOL,
        }

    def _aliases(self) -> Mapping[str, str]:
        # The entrypoint (huggingface/text-embeddings-inference: sagemaker-entrypoint.sh) exports
        # MODEL_ID and REVISION from the SageMaker names.
        return {"MODEL_ID": "HF_MODEL_ID", "REVISION": "HF_MODEL_REVISION"}

    def _rule_problem(
        self, kind: EnvRule | None, key: str, value: str, derived: str | None, ctx: EngineContext
    ) -> Problem | None:
        if key == "MAX_CLIENT_BATCH_SIZE" and value != derived:
            return env_entry_problem(
                key,
                value,
                ": the invoker splits a request's inputs into calls of the client batch size it "
                "knows;",
                "set Engine.tei(max_client_batch_size=...) instead",
            )
        return super()._rule_problem(kind, key, value, derived, ctx)

    def _hardware_problems(self, ctx: EngineContext) -> list[Problem]:
        inst = ctx.instance
        if inst.accelerator in ("neuron", "habana"):
            return [_no_tei_image(inst)]
        if inst.accelerator != "nvidia" or self.image is not None:
            return []
        capability = inst.compute_capability
        if capability is None or capability == (7, 5) or (8, 0) <= capability <= (9, 0):
            return []
        return [_compute_capability(inst, capability)]

    def _settings_problems(self, ctx: EngineContext) -> list[Problem]:
        if ctx.max_input_tokens is None and ctx.max_total_tokens is None:
            return []
        return [_no_token_limits(ctx.max_input_tokens, ctx.max_total_tokens)]

    def _effective_problems(self, ctx: EngineContext, env: Mapping[str, str]) -> list[Problem]:
        problems = [
            env_entry_problem(key, env[key], f" makes TEI answer {answer};", "remove it")
            for key, (value, answer) in _OTHER_ANSWERS.items()
            if env.get(key, "").strip().lower() == value
        ]
        if "MAX_BATCH_TOKENS" in env and not int_value(env, "MAX_BATCH_TOKENS"):
            key = "MAX_BATCH_TOKENS"
            problems.append(env_entry_problem(key, env[key], " must be a positive integer"))
        return problems

    def _warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        inst = ctx.instance
        found = []
        if self.image is None and not inst.family_known:
            found.append(_unknown_hardware(inst))
        if inst.accelerator == "nvidia" and ctx.devices > 1:
            found.append(_idle_gpus(ctx))
        truncate = user_env.get("AUTO_TRUNCATE", "").strip().lower() in _TRUE_VALUES
        if truncate and self.auto_truncate is None:
            found.append(_truncate_in_env())
        return found


def _no_tei_image(inst: InstanceType) -> Problem:
    return Problem.of(
        "instance_type",
        inst.name,
        f"Engine.tei() serves NVIDIA GPUs and CPUs, and {inst.name} has neither (no TEI image is "
        "published for its accelerator);",
        "choose a GPU instance such as ml.g5.xlarge or a CPU instance such as ml.c6i.2xlarge",
    )


def _compute_capability(inst: InstanceType, capability: tuple[int, int]) -> Problem:
    return Problem.of(
        "instance_type",
        inst.name,
        f"{inst.name} has {inst.accelerator_model} GPUs (CUDA compute capability "
        f"{capability[0]}.{capability[1]}), on which the TEI GPU image does not start: its "
        "SageMaker entrypoint runs only on compute capability 7.5, 8.x and 9.0;",
        f"choose {_SERVED_FAMILIES}, or pass Engine.tei(image=...) with a TEI image built for it",
    )


def _no_token_limits(low: int | None, high: int | None) -> Problem:
    given = ", ".join(
        f"{name}={value}"
        for name, value in (("max_input_tokens", low), ("max_total_tokens", high))
        if value is not None
    )
    return Problem.of(
        "max_total_tokens",
        high,
        f"{given}: TEI takes its input limit from the model's config (max_position_embeddings) "
        "and has no setting for it;",
        "drop the token limits from the model, and pass "
        "Engine.tei(auto_truncate=True) to cut longer inputs instead of refusing them",
    )


def _unknown_hardware(inst: InstanceType) -> str:
    return (
        f"{inst.name} is not in the hardware catalog, so Engine.tei() cannot tell a GPU from a "
        "CPU instance and uses the TEI CPU image; on a GPU instance pass "
        "Engine.tei(image=ContainerImage.dlc_default('tei'))"
    )


def _idle_gpus(ctx: EngineContext) -> str:
    return (
        f"TEI runs a copy on one GPU, so {ctx.devices - 1} of the {ctx.devices} GPUs "
        f"{ctx.where} stay idle; serve it on a one-GPU instance, or as an InferenceComponent "
        "with accelerators=1 (copies then share the instance)"
    )


def _truncate_in_env() -> str:
    return (
        "env AUTO_TRUNCATE is on: inputs longer than the model's limit are cut silently; "
        "prefer Engine.tei(auto_truncate=True) so the setting is visible in code"
    )
