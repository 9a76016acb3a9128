"""What a model's checkpoint is, against what the engine is told to serve: its kind (a chat
model or an embedding model) and its quantization.

Where the packaged model table (or the user's ``architecture=``) knows the checkpoint, a
contradiction is certain and fails. Where only the Hub id hints at it, the hint warns, with an
id to acknowledge (``WarningId.MODEL_ID_GUESS``, ``constructs-llm:model-id-guess``): forks and
private copies are named freely, and the Hub cannot be asked at synth.

- **Kind.** Every repository of the ``sentence-transformers`` organization is a Sentence
  Transformers embedding model. Names such as ``bge-``, ``e5-``, ``gte-``, ``embed``,
  ``MiniLM`` or ``mpnet`` suggest an embedding model; ``Instruct``, ``chat`` or a chat family
  (Llama, Mistral, Qwen, Gemma, ...) a chat model.
- **Quantization.** Engines read a pre-quantized checkpoint's method from its config.json
  (``quantization_config.quant_method``), and vLLM refuses a ``quantization`` that does not
  match it ("Quantization method specified in the model config ... does not match the
  quantization method specified in the ``quantization`` argument",
  ``ModelConfig._verify_quantization`` in vllm-project/vllm). A method that needs a quantized
  checkpoint (AWQ, GPTQ, Marlin, compressed-tensors, EXL2) finds none in an unquantized one;
  a method applied at load time (fp8, bitsandbytes, EETQ) quantizes unquantized weights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from constructs_llm import catalogs
from constructs_llm.contract import ModelKind
from constructs_llm.problems import Problem

if TYPE_CHECKING:
    from collections.abc import Mapping

    from constructs_llm.engines.engine import Engine
    from constructs_llm.sizing.memory import ModelArchitecture

_EMBEDDING_ORGS = ("sentence-transformers/",)
_EMBEDDING_NAME = re.compile(
    r"(?:^|[-_.])(?:bge|e5|gte)(?:[-_.]|$)|embed|minilm|mpnet|colbert|rerank|retriev"
)
_CHAT_NAME = re.compile(
    r"instruct|chat|(?:^|[-_.])it(?:[-_.]|$)|llama|mistral|mixtral|qwen|gemma|phi-|falcon|"
    r"deepseek|gpt|coder|vicuna|zephyr|hermes"
)
#: Methods that load a checkpoint quantized with them; the others quantize at load time.
_NEEDS_QUANTIZED = frozenset({"awq", "gptq", "marlin", "compressed-tensors", "exl2"})
#: The settings each checkpoint method takes (vLLM's Marlin kernels read GPTQ and AWQ weights).
_MATCHES = {
    "awq": frozenset({"awq", "awq_marlin"}),
    "gptq": frozenset({"gptq", "gptq_marlin", "marlin"}),
    "fp8": frozenset({"fp8"}),
    "compressed-tensors": frozenset({"compressed-tensors"}),
}
#: What a Hub name says about its quantization.
_NAMED_METHOD = (
    ("awq", re.compile(r"(?:^|[-_.])awq(?:[-_.]|$)")),
    ("gptq", re.compile(r"(?:^|[-_.])gptq(?:[-_.]|$)")),
    ("fp8", re.compile(r"(?:^|[-_.])fp8(?:[-_.]|$)")),
)


@dataclass(frozen=True)
class CheckpointFindings:
    """What the checkpoint shows against the engine: ``problems`` are certain (a Sentence
    Transformers model on a chat engine, a quantization the table's checkpoint does not
    have); ``warnings`` are hints from the Hub id alone (a name that suggests the other kind of
    model, or another quantization than the one asked for)."""

    problems: tuple[Problem, ...]
    warnings: tuple[str, ...]


def check_checkpoint(
    model_id: str | None,
    architecture: ModelArchitecture | None,
    engine: Engine,
    factory: str,
    user_env: Mapping[str, str],
) -> CheckpointFindings:
    """The checkpoint of ``model_id`` (``architecture`` when given or known) against
    ``Engine.<factory>()`` with the model's ``user_env``."""
    if not model_id:
        return CheckpointFindings(problems=(), warnings=())
    known, method = catalogs.checkpoint_quantization(model_id)
    asked = engine.quantization_asked(user_env)
    problems: list[Problem | None] = []
    hints: list[str | None] = []
    if architecture is None and _sentence_model(model_id):
        if engine.model_kind is ModelKind.CHAT:
            problems.append(_sentence_transformers(model_id, factory))
    elif architecture is None and not known:
        name = model_id.lower().rsplit("/", 1)[-1]
        hints.append(_kind_guess(model_id, name, engine.model_kind, factory))
    if asked is not None and known:
        problems.append(_quantization_problem(model_id, method, asked, architecture))
    elif asked is not None:
        hints.append(_named_quantization(model_id, asked))
    return CheckpointFindings(
        problems=tuple(p for p in problems if p), warnings=tuple(w for w in hints if w)
    )


def _sentence_model(model_id: str) -> bool:
    return model_id.lower().startswith(_EMBEDDING_ORGS)


def _matches(method: str, setting: str) -> bool:
    setting = setting.strip().lower()
    if method == "fp8":  # an FP8 name may be either format
        return setting in _MATCHES["fp8"] | _MATCHES["compressed-tensors"]
    return setting in _MATCHES.get(method, frozenset({method}))


def _quantization_problem(
    model_id: str, method: str | None, asked: tuple[str, str], arch: ModelArchitecture | None
) -> Problem | None:
    written, value = asked
    setting = value.strip().lower()
    if method is None:
        if setting not in _NEEDS_QUANTIZED:
            return None  # quantized at load time
        stored = arch.default_dtype if arch else "16-bit"
        return Problem.of(
            written,
            asked,
            f"{written} loads a checkpoint quantized with {setting}, but {model_id} is not one: "
            f"the model table lists its weights unquantized, in {stored};",
            f"drop it, or serve a checkpoint quantized with {setting}{_examples(setting)}",
        )
    if _matches(method, setting):
        return None
    return Problem.of(
        written,
        asked,
        f"{written} contradicts the checkpoint of {model_id}, which is quantized with {method} "
        "(its config.json's quant_method; vLLM refuses a method that does not match it);",
        f"drop it, as the engine reads the method from the checkpoint, or ask for {method!r}",
    )


def _examples(method: str) -> str:
    rows = [r.id for r in catalogs.models().models if r.quantization == method]
    return f", such as {rows[0]!r}" if rows else ""


def _sentence_transformers(model_id: str, factory: str) -> Problem:
    return Problem.of(
        "engine",
        None,
        f"{model_id} is a Sentence Transformers model (every model of the sentence-transformers "
        f"organization is an embedding model), but Engine.{factory}() serves chat models;",
        "serve it with Engine.tei() (the invoker then answers POST /v1/embeddings)",
    )


def _kind_guess(model_id: str, name: str, serves: ModelKind, factory: str) -> str | None:
    embedding = _EMBEDDING_NAME.search(name)
    chat = None if embedding else _CHAT_NAME.search(name)
    hint = embedding if serves is ModelKind.CHAT else chat
    if hint is None:
        return None
    seems, instead = (
        ("an embedding", "Engine.tei()")
        if serves is ModelKind.CHAT
        else ("a chat", "Engine.vllm()")
    )
    meant = "a chat" if serves is ModelKind.CHAT else "an embedding"
    return (
        f"{model_id} is not in the model table, and its name ({hint.group(0).strip('-_.')!r}) "
        f"suggests {seems} model, but Engine.{factory}() serves {serves.value} models; serve "
        f"{seems} model with {instead}, or, if it is {meant} model, pass "
        f"architecture=ModelArchitecture(..., kind=ModelKind.{serves.name}) or acknowledge this "
        "warning"
    )


def _named_quantization(model_id: str, asked: tuple[str, str]) -> str | None:
    name = model_id.lower().rsplit("/", 1)[-1]
    named = next((m for m, pattern in _NAMED_METHOD if pattern.search(name)), None)
    if named is None or _matches(named, asked[1]):
        return None
    return (
        f"{model_id} is not in the model table, and its name says {named.upper()}, but "
        f"{asked[0]} asks for {asked[1]}; check quantization_config.quant_method in its "
        "config.json (vLLM refuses a method that does not match it), drop the setting to let "
        "the engine read it, or acknowledge this warning"
    )
