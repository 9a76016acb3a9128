"""The packaged catalogs, read through one schema-checked loader into typed records.

Every ``data/*.json`` file of the package (instances, DLC images, models, tool-call and reasoning
parsers, region availability) and of
``constructs_llm.streaming`` (Lambda Web Adapter layers) is read here. The record
dataclasses below are the schema: each JSON object must have exactly the fields of its
record (keys starting with ``_`` are comments), with values of the annotated types, so a
malformed catalog fails loudly with the file, the path inside it and the value, instead of
deep inside a construct. Stdlib only; nothing here imports ``aws_cdk``.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, TypeVar

from constructs_llm.errors import ConstructsLlmError

T = TypeVar("T")

AcceleratorKind = Literal["nvidia", "neuron", "habana"]


class CatalogError(ConstructsLlmError):
    """A packaged catalog does not match its schema."""


# -- instances.json --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class InstanceSize:
    """One instance size: host figures and its accelerators."""

    vcpus: int
    memory_gib: float
    accelerators: int = 0
    neuron_cores: int | None = None
    local_nvme_gb: int


@dataclass(frozen=True, kw_only=True)
class InstanceFamily:
    """An instance family; accelerator fields are None for CPU families."""

    accelerator: AcceleratorKind | None
    accelerator_model: str | None
    accelerator_memory_mib: int | None
    source: str
    sizes: dict[str, InstanceSize]
    #: Peak memory bandwidth of one device in GB/s (the vendor's datasheet figure).
    memory_bandwidth_gbs: float | None = None
    memory_bandwidth_source: str | None = None
    #: NVIDIA: the GPU's CUDA compute capability, as NVIDIA writes it ("8.6").
    compute_capability: str | None = None
    #: NVIDIA, where measured: the device total CUDA reports, in MiB, and how it was measured.
    cuda_memory_mib: int | None = None
    cuda_memory_source: str | None = None
    #: ``accelerator_memory_mib`` is GDDR's nominal size, of which ECC takes a sixteenth.
    gddr_ecc: bool = False


@dataclass(frozen=True, kw_only=True)
class HostingTypes:
    """The instance types SageMaker hosting accepts, as botocore's service model lists them."""

    botocore: str
    instance_types: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class InstanceCatalog:
    families: dict[str, InstanceFamily]
    hosting: HostingTypes


# -- dlc_images.json -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Registry:
    """The Deep Learning Container registry of one region."""

    account: str
    domain: str


@dataclass(frozen=True, kw_only=True)
class DlcFamilyRecord:
    """The default image of one engine family and the regions that list it.

    ``registry`` names a group of ``DlcCatalog.registries`` when the family's images live in
    registries of their own (TEI); None = the shared per-region registries (``regions``).
    """

    repository: str
    tag: str
    tag_contains: str | None
    cuda: str | None
    regions: tuple[str, ...]
    registry: str | None = None
    reason: str
    source: str


@dataclass(frozen=True, kw_only=True)
class DlcCatalog:
    sagemaker_core: str
    uri_format: str
    regions: dict[str, Registry]
    #: Registry groups of families published outside the shared registries, by group name.
    registries: dict[str, dict[str, Registry]]
    families: dict[str, DlcFamilyRecord]


# -- models.json -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ModelRecord:
    """Architecture figures of one Hub model (see ``sizing.ModelArchitecture``).

    An embedding model (``kind`` "embedding") has no family and states the length of its
    embeddings, and the shortest Matryoshka truncation it supports when it has one.
    """

    id: str
    aliases: tuple[str, ...] = ()
    family: str | None  # a key of the parser tables' families; None for embedding models
    kind: Literal["chat", "embedding"] = "chat"
    params_billion: float
    active_params_billion: float | None = None  # MoE: parameters each token reads
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    hidden_size: int
    context_length: int
    default_dtype: str
    #: A pre-quantized checkpoint's method (its config.json's quant_method); None: unquantized.
    quantization: str | None = None
    gated: bool
    source: str
    notes: tuple[str, ...] = ()
    embedding_dimensions: int | None = None
    matryoshka_min_dimensions: int | None = None
    vision: bool = False  # takes images beside text (a vision tower in its config.json)


@dataclass(frozen=True, kw_only=True)
class ModelCatalog:
    models: tuple[ModelRecord, ...]


# -- tool_parsers.json and reasoning_parsers.json ---------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ParserNames:
    """The parser names one engine registers (tool-call parsers, or reasoning parsers)."""

    parsers: tuple[str, ...]
    source: str


@dataclass(frozen=True, kw_only=True)
class FamilyParsers:
    """The parser each engine needs for one model family; None: no parser fits it."""

    vllm: str | None
    sglang: str | None
    source: str


@dataclass(frozen=True, kw_only=True)
class ParserCatalog:
    """A parser table: the names each engine registers, and each model family's parsers."""

    engines: dict[str, ParserNames]
    families: dict[str, FamilyParsers]


# -- regions.json ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FeatureRegions:
    """A CloudFormation resource type, or a property of it (``property``, a path through the
    type's schema), and the regions whose registry schema declares it (``regions``) or not
    (``lacking``), among those the source has schemas for; ``source`` cites the schema files."""

    resource_type: str
    property: str | None
    what: str
    regions: tuple[str, ...]
    lacking: tuple[str, ...]
    source: str


@dataclass(frozen=True, kw_only=True)
class PromqlRegions:
    """The regions CloudWatch's page lists for PromQL querying, which PromQL alarms need."""

    regions: tuple[str, ...]
    source: str
    read: str
    status: str


@dataclass(frozen=True, kw_only=True)
class RegionCatalog:
    """Region availability: cfn-lint's per-region CloudFormation schemas (``regions``: every
    region they cover) and CloudWatch's PromQL regions."""

    cfn_lint: str
    schema_date: str
    regions: tuple[str, ...]
    features: dict[str, FeatureRegions]
    promql_alarms: PromqlRegions


# -- streaming/data/lwa_layers.json ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LwaCommercial:
    account: str
    layers: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class LwaChina:
    accounts: dict[str, str]
    layers: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class LwaLayers:
    version: int
    commercial: LwaCommercial
    china: LwaChina
    unsupported_partition_prefixes: tuple[str, ...]


# -- the loader ------------------------------------------------------------------------------


@cache
def instances() -> InstanceCatalog:
    return load_catalog("constructs_llm", "instances.json", InstanceCatalog)


@cache
def dlc_images() -> DlcCatalog:
    return load_catalog("constructs_llm", "dlc_images.json", DlcCatalog)


@cache
def models() -> ModelCatalog:
    return load_catalog("constructs_llm", "models.json", ModelCatalog)


@cache
def tool_parsers() -> ParserCatalog:
    return load_catalog("constructs_llm", "tool_parsers.json", ParserCatalog)


@cache
def reasoning_parsers() -> ParserCatalog:
    return load_catalog("constructs_llm", "reasoning_parsers.json", ParserCatalog)


@cache
def regions() -> RegionCatalog:
    return load_catalog("constructs_llm", "regions.json", RegionCatalog)


@cache
def lwa_layers() -> LwaLayers:
    return load_catalog("constructs_llm.streaming", "lwa_layers.json", LwaLayers)


def is_gated(model_id: str) -> bool:
    """True when the packaged table marks this Hub id (or an alias of it) gated."""
    return model_id.strip().lower() in _gated_ids()


def checkpoint_quantization(model_id: str | None) -> tuple[bool, str | None]:
    """Whether the packaged table knows this Hub id (or an alias of it), and the method its
    checkpoint is quantized with (None: unquantized, or unknown when the id is not known)."""
    row = _rows().get(model_id.strip().lower()) if model_id else None
    return (row is not None, None if row is None else row.quantization)


def sees_images(model_id: str | None) -> bool | None:
    """Whether the packaged table says this Hub id (or an alias of it) takes images; None when
    the table does not know the model as a chat model."""
    row = _rows().get(model_id.strip().lower()) if model_id else None
    return None if row is None or row.kind != "chat" else row.vision


def model_family(model_id: str | None) -> str | None:
    """The family the packaged table gives this Hub id (or an alias of it); None if unknown."""
    return _families().get(model_id.strip().lower()) if model_id else None


@cache
def _families() -> dict[str, str]:
    return {
        name.lower(): row.family
        for row in models().models
        if row.family is not None
        for name in (row.id, *row.aliases)
    }


@cache
def _rows() -> dict[str, ModelRecord]:
    return {name.lower(): row for row in models().models for name in (row.id, *row.aliases)}


@cache
def _gated_ids() -> frozenset[str]:
    return frozenset(
        name.lower() for row in models().models if row.gated for name in (row.id, *row.aliases)
    )


def load_catalog(package: str, name: str, schema: type[T]) -> T:
    """Read ``<package>/data/<name>`` and check it against ``schema`` (a record dataclass)."""
    where = f"{package.replace('.', '/')}/data/{name}"
    text = resources.files(package).joinpath("data", name).read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise CatalogError(f"{where} is not valid JSON: {error}") from None
    return parse_catalog(raw, schema, where)


def parse_catalog(raw: object, schema: type[T], where: str = "catalog") -> T:
    """Check decoded JSON against ``schema`` and build the typed records."""
    result: T = _parse(raw, schema, where)
    return result


def _parse(value: object, hint: Any, path: str) -> Any:
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _record(value, hint, path)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(value, typing.get_args(hint), path)
    if origin is Literal:
        if value not in typing.get_args(hint):
            _fail(path, f"one of {list(typing.get_args(hint))}", value)
        return value
    if origin in (tuple, list):
        item = typing.get_args(hint)[0]
        if not isinstance(value, list):
            _fail(path, "a list", value)
        return tuple(_parse(v, item, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        _, item = typing.get_args(hint)
        if not isinstance(value, dict):
            _fail(path, "an object", value)
        return {str(k): _parse(v, item, f"{path}.{k}") for k, v in value.items()}
    return _scalar(value, hint, path)


def _record(value: object, cls: type, path: str) -> Any:
    if not isinstance(value, dict):
        _fail(path, f"an object ({cls.__name__})", value)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(k for k in value if k not in fields and not str(k).startswith("_"))
    if unknown:
        raise CatalogError(
            f"{path}: unknown field(s) {unknown} for {cls.__name__}; known: {sorted(fields)}"
        )
    missing = [
        name
        for name, f in fields.items()
        if name not in value
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise CatalogError(f"{path}: missing field(s) {missing} for {cls.__name__}")
    args = {k: _parse(v, hints[k], f"{path}.{k}") for k, v in value.items() if k in fields}
    return cls(**args)


def _union(value: object, options: tuple[Any, ...], path: str) -> Any:
    if value is None and type(None) in options:
        return None
    errors = []
    for option in (o for o in options if o is not type(None)):
        try:
            return _parse(value, option, path)
        except CatalogError as error:
            errors.append(str(error))
    raise CatalogError(" or ".join(errors) if errors else f"{path}: got {value!r}")


def _scalar(value: object, hint: Any, path: str) -> Any:
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if hint is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if hint in (str, bool) and isinstance(value, hint):
        return value
    if hint is type(None) and value is None:
        return None
    _fail(path, getattr(hint, "__name__", str(hint)), value)


def _fail(path: str, expected: str, value: object) -> typing.NoReturn:
    raise CatalogError(f"{path}: expected {expected}, got {value!r}")
