"""Regenerate the packaged catalogs from their pinned sources: ``make refresh-catalogs``.

- ``constructs_llm/data/dlc_images.json``: the registry account and ECR domain per region,
  the default image (newest listed) of each engine family and the regions that list it, all
  from the image config shipped in the pinned ``sagemaker-core`` wheel
  (``sagemaker/core/image_uri_config/*.json``, domains from ``common_utils.ALTERNATE_DOMAINS``).
  A family whose images live in registries of their own (Hugging Face's TEI images: "Unlike
  most AWS Deep Learning Containers, the TEI images are hosted in a different ECR account in
  each region", aws.github.io/deep-learning-containers/tei) names a ``registry`` group, written
  under ``registries`` instead of the shared per-region accounts.
- ``constructs_llm/data/instances.json``: its ``hosting`` list, the instance types SageMaker
  hosting accepts, from the pinned botocore's service model (``sagemaker`` /
  ``ProductionVariantInstanceType``). Hardware figures have no machine-readable pinned
  source: the script lists hosting types the catalog has no figures for, for a maintainer
  to add by hand with a source.

- ``constructs_llm/data/regions.json``: the regions where CloudFormation has each resource
  type the library renders, and each property of them it names (``FEATURES``), from the
  CloudFormation registry schemas by region that the pinned cfn-lint ships
  (``cfnlint/data/schemas/providers/<region>.json`` names each type's schema file,
  ``resources/<hash>.json``), with cfn-lint's version and its schemas' date. Its
  ``promql_alarms`` section (CloudWatch's own page, no machine-readable source) is kept as
  it is.

``tests/test_catalog_freshness.py`` compares the packaged files with what this script
would write, so bumping ``sagemaker-core``, ``botocore`` or ``cfn-lint`` shows its diff there.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DATA",
    "FAMILIES",
    "FEATURES",
    "build_dlc_images",
    "build_instances",
    "build_regions",
    "hosting_types",
    "missing_hardware",
    "render",
]

DATA = Path(__file__).resolve().parent.parent / "constructs_llm" / "data"
_CUDA = re.compile(r"-(cu\d{3})(?:-|$)")
HOST_AMI_NOTE = (
    "built for CUDA 13, so the library sets the host AMI "
    "al2023-ami-sagemaker-inference-gpu-4-1 (NVIDIA driver 580) on its variants"
)


@dataclass(frozen=True)
class FamilyPolicy:
    """Where an engine family's default image comes from, and why that one."""

    config: str
    tag_contains: str | None
    reason: str
    processor: str = "gpu"
    inference_tool: str | None = None
    #: A registry group of its own (accounts per region unlike the shared DLC registries).
    registry: str | None = None


FAMILIES: dict[str, FamilyPolicy] = {
    "tgi": FamilyPolicy(
        "huggingface-llm.json",
        "-tgi",
        "newest TGI image the SDK lists; TGI is in maintenance mode upstream, and its CUDA 12.4 "
        "build runs on SageMaker's default host AMI",
    ),
    "tgi-neuronx": FamilyPolicy(
        "huggingface-llm-neuronx.json",
        "-neuronx-",
        "newest optimum-neuron TGI image the SDK lists, for Inferentia2 and Trainium",
        processor="inf2",
        inference_tool="neuronx",
    ),
    "lmi": FamilyPolicy(
        "djl-lmi.json",
        "-lmi",
        f"newest LMI image the SDK lists (vLLM backend); {HOST_AMI_NOTE}",
    ),
    "lmi-trtllm": FamilyPolicy(
        "djl-tensorrtllm.json",
        "-tensorrtllm",
        "newest TensorRT-LLM LMI image the SDK lists; that image line ended at 0.33.0 (later "
        "LMI images ship vLLM only)",
    ),
    "vllm": FamilyPolicy(
        "vllm.json",
        None,
        f"newest AWS vLLM SageMaker image the SDK lists; {HOST_AMI_NOTE}",
    ),
    "sglang": FamilyPolicy(
        "sglang.json",
        None,
        f"newest AWS SGLang SageMaker image the SDK lists; {HOST_AMI_NOTE}",
    ),
    "tei": FamilyPolicy(
        "huggingface-tei.json",
        None,
        "newest Hugging Face Text Embeddings Inference image for GPUs the SDK lists (its own "
        "registry accounts); its CUDA 12.2 build runs on SageMaker's default host AMI",
        registry="tei",
    ),
    "tei-cpu": FamilyPolicy(
        "huggingface-tei-cpu.json",
        None,
        "newest Hugging Face Text Embeddings Inference image for CPUs the SDK lists (its own "
        "registry accounts)",
        processor="cpu",
        registry="tei",
    ),
}


def _sdk_file(relative: str) -> Path:
    path = importlib.metadata.distribution("sagemaker-core").locate_file(
        f"sagemaker/core/{relative}"
    )
    return Path(str(path))


def _alternate_domains() -> dict[str, str]:
    """``ALTERNATE_DOMAINS`` of sagemaker-core's common_utils.py, read without importing it."""
    tree = ast.parse(_sdk_file("common_utils.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "ALTERNATE_DOMAINS" for t in node.targets
        ):
            domains: dict[str, str] = ast.literal_eval(node.value)
            return domains
    raise LookupError("ALTERNATE_DOMAINS not found in sagemaker-core common_utils.py")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _newest(policy: FamilyPolicy) -> tuple[str, dict[str, Any]]:
    config = json.loads(_sdk_file(f"image_uri_config/{policy.config}").read_text("utf-8"))
    versions: dict[str, Any] = config.get("inference", config)["versions"]
    newest = max(versions, key=_version_key)
    return newest, versions[newest]


def _tag(spec: dict[str, Any], policy: FamilyPolicy) -> str:
    """The SDK's own rule (image_uris._format_tag): prefix, processor or inference tool,
    Python version and container version, joined by '-' (only the prefix for LMI)."""
    container = spec.get("container_version", {}).get(policy.processor)
    py_versions = spec.get("py_versions") or [None]
    processor = policy.inference_tool or (policy.processor if container else None)
    parts = (spec["tag_prefix"], processor, py_versions[0], container)
    return "-".join(p for p in parts if p)


def build_dlc_images() -> dict[str, Any]:
    """The content of dlc_images.json, from the pinned sagemaker-core."""
    domains = _alternate_domains()
    families: dict[str, Any] = {}
    accounts: dict[str, str] = {}
    groups: dict[str, dict[str, str]] = {}
    for name, policy in FAMILIES.items():
        version, spec = _newest(policy)
        tag = _tag(spec, policy)
        cuda = _CUDA.search(tag)
        group = accounts if policy.registry is None else groups.setdefault(policy.registry, {})
        for region, account in spec["registries"].items():
            if group.setdefault(region, account) != account:
                raise ValueError(f"{region}: two registry accounts ({group[region]}, {account})")
        families[name] = {
            "repository": spec["repository"],
            "tag": tag,
            "tag_contains": policy.tag_contains,
            "cuda": cuda.group(1) if cuda else None,
            "regions": sorted(spec["registries"]),
            "registry": policy.registry,
            "reason": policy.reason,
            "source": f"sagemaker-core image_uri_config/{policy.config} version {version}",
        }
    version = importlib.metadata.version("sagemaker-core")
    return {
        "_source": (
            f"Generated by make refresh-catalogs from sagemaker-core {version} (PyPI): "
            "image_uri_config/*.json (registry account per region, newest version per engine "
            "family, the regions that list it; 'registries' holds the accounts of families "
            "published in registries of their own) and common_utils.ALTERNATE_DOMAINS (ECR "
            "domain)."
        ),
        "sagemaker_core": version,
        "uri_format": "{account}.dkr.ecr.{region}.{domain}/{repository}:{tag}",
        "regions": _registries(accounts, domains),
        "registries": {
            group: _registries(group_accounts, domains)
            for group, group_accounts in sorted(groups.items())
        },
        "families": families,
    }


def _registries(accounts: dict[str, str], domains: dict[str, str]) -> dict[str, Any]:
    """Region -> its registry account and ECR domain."""
    return {
        region: {"account": accounts[region], "domain": domains.get(region, "amazonaws.com")}
        for region in sorted(accounts)
    }


def hosting_types() -> tuple[str, list[str]]:
    """botocore's version and its ``ProductionVariantInstanceType`` enum (service order)."""
    import botocore
    from botocore.loaders import Loader

    model = Loader().load_service_model("sagemaker", "service-2")
    enum: list[str] = model["shapes"]["ProductionVariantInstanceType"]["enum"]
    return str(botocore.__version__), list(enum)


def build_instances(current: dict[str, Any]) -> dict[str, Any]:
    """instances.json with its ``hosting`` list regenerated; hardware figures kept as they are."""
    version, types = hosting_types()
    return {**current, "hosting": {"botocore": version, "instance_types": types}}


def missing_hardware(catalog: dict[str, Any]) -> list[str]:
    """Hosting types the catalog has no hardware figures for."""
    families = catalog["families"]
    missing = []
    for name in catalog["hosting"]["instance_types"]:
        _, family, size = name.split(".", 2)
        if size not in families.get(family, {}).get("sizes", {}):
            missing.append(name)
    return missing


@dataclass(frozen=True)
class Feature:
    """A CloudFormation resource type the library renders, or one property of it (a path
    through the type's schema, ``ProductionVariants.RoutingConfig``), and what it is to a user."""

    resource_type: str
    what: str
    path: str | None = None

    @property
    def name(self) -> str:
        return self.resource_type if self.path is None else f"{self.resource_type}.{self.path}"


FEATURES: tuple[Feature, ...] = (
    Feature("AWS::SageMaker::Model", "SageMaker models"),
    Feature("AWS::SageMaker::EndpointConfig", "SageMaker endpoint configs"),
    Feature("AWS::SageMaker::EndpointConfig", "instance pools", "ProductionVariants.InstancePools"),
    Feature(
        "AWS::SageMaker::EndpointConfig", "routing strategies", "ProductionVariants.RoutingConfig"
    ),
    Feature(
        "AWS::SageMaker::EndpointConfig",
        "capacity reservations",
        "ProductionVariants.CapacityReservationConfig",
    ),
    Feature("AWS::SageMaker::EndpointConfig", "metrics settings", "MetricsConfig"),
    Feature("AWS::SageMaker::Endpoint", "SageMaker endpoints"),
    Feature("AWS::SageMaker::InferenceComponent", "inference components"),
    Feature("AWS::ApplicationAutoScaling::ScalableTarget", "autoscaling"),
    Feature("AWS::CloudWatch::Alarm", "CloudWatch alarms"),
    Feature("AWS::CloudWatch::Alarm", "PromQL alarms", "EvaluationCriteria"),
    Feature("AWS::CloudWatch::Dashboard", "CloudWatch dashboards"),
    Feature("AWS::Lambda::Function", "Lambda functions"),
    Feature("AWS::Lambda::Url", "Lambda function URLs"),
    Feature("AWS::CloudFront::Distribution", "CloudFront distributions"),
    Feature("AWS::CloudFront::OriginAccessControl", "CloudFront origin access control"),
    Feature("AWS::CloudFront::CachePolicy", "CloudFront cache policies"),
    Feature("AWS::WAFv2::WebACL", "WAF web ACLs"),
)


def _cfn_lint_schemas() -> Path:
    """The per-region schemas cfn-lint ships (``cfnlint/data/schemas``), read without
    importing cfn-lint."""
    path = importlib.metadata.distribution("cfn-lint").locate_file("cfnlint/data/schemas")
    return Path(str(path))


def _providers(schemas: Path) -> dict[str, dict[str, str]]:
    """Region -> {resource type: its schema file's hash}; ``sam.json`` is SAM's, no region."""
    return {
        path.stem: json.loads(path.read_text("utf-8"))
        for path in sorted((schemas / "providers").glob("*.json"))
        if path.stem != "sam"
    }


def _has_property(schema: dict[str, Any], path: str) -> bool:
    """Whether ``path`` (``A.B``: property ``B`` of property ``A``, through arrays and
    ``$ref``) is declared in the resource schema."""
    node: dict[str, Any] = schema
    for part in path.split("."):
        node = _resolved(schema, node)
        if node.get("type") == "array" or "items" in node:
            node = _resolved(schema, node.get("items", {}))
        properties = node.get("properties", {})
        if part not in properties:
            return False
        node = properties[part]
    return True


def _resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        reference = node["$ref"]
        if not reference.startswith("#/definitions/"):
            raise ValueError(f"unsupported $ref {reference!r}")
        node = schema["definitions"][reference.removeprefix("#/definitions/")]
    return node


def build_regions(current: dict[str, Any]) -> dict[str, Any]:
    """regions.json from the pinned cfn-lint's per-region schemas; ``promql_alarms`` (kept by
    hand, from CloudWatch's page) as it is in ``current``."""
    schemas = _cfn_lint_schemas()
    providers = _providers(schemas)
    date = json.loads((schemas / "version.json").read_text("utf-8"))["schema_date"]
    version = importlib.metadata.version("cfn-lint")
    loaded: dict[str, dict[str, Any]] = {}

    def schema(digest: str) -> dict[str, Any]:
        if digest not in loaded:
            loaded[digest] = json.loads((schemas / "resources" / f"{digest}.json").read_text())
        return loaded[digest]

    features: dict[str, Any] = {}
    for feature in FEATURES:
        having: dict[str, str] = {}
        for region, types in providers.items():
            digest = types.get(feature.resource_type)
            if digest is None:
                continue
            if feature.path is None or _has_property(schema(digest), feature.path):
                having[region] = digest
        if not having:
            raise ValueError(f"{feature.name}: no region's schema has it")
        files = ", ".join(f"resources/{d}.json" for d in sorted(set(having.values())))
        features[feature.name] = {
            "resource_type": feature.resource_type,
            "property": feature.path,
            "what": feature.what,
            "regions": sorted(having),
            "lacking": sorted(set(providers) - set(having)),
            "source": f"cfn-lint {version} cfnlint/data/schemas/{files}, named by "
            f"providers/<region>.json in {len(having)} of {len(providers)} regions",
        }
    return {
        "_source": (
            f"Generated by make refresh-catalogs from cfn-lint {version} (PyPI): the "
            "CloudFormation registry schemas by region it ships (cfnlint/data/schemas/"
            f"providers/<region>.json and resources/<hash>.json, schema date {date}). A "
            "feature is a resource type, or a property path of one, and the regions whose "
            "schema declares it; promql_alarms is kept by hand from CloudWatch's page."
        ),
        "cfn_lint": version,
        "schema_date": date,
        "regions": sorted(providers),
        "features": features,
        "promql_alarms": current["promql_alarms"],
    }


def render(data: Any) -> str:
    """JSON as the catalogs are written: one line per leaf object, short lists inline."""
    return _render(data, 0) + "\n"


def _render(value: Any, depth: int) -> str:
    pad, inner = " " * depth, " " * (depth + 1)
    flat = json.dumps(value, ensure_ascii=False)
    leaf = isinstance(value, dict) and not any(isinstance(v, (dict, list)) for v in value.values())
    if not isinstance(value, (dict, list)) or (leaf and len(flat) <= 100) or len(flat) <= 60:
        return flat
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return _wrap(value, depth)
        items = [inner + _render(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    items = [f"{inner}{json.dumps(k)}: {_render(v, depth + 1)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + f"\n{pad}}}"


def _wrap(strings: list[str], depth: int) -> str:
    inner = " " * (depth + 2)
    lines: list[list[str]] = [[]]
    for item in (json.dumps(s) for s in strings):
        if lines[-1] and len(inner) + len(", ".join([*lines[-1], item])) + 1 > 100:
            lines.append([])
        lines[-1].append(item)
    body = ",\n".join(inner + ", ".join(line) for line in lines)
    return "[\n" + body + "\n" + " " * depth + "]"


def main() -> int:
    instances_path, dlc_path = DATA / "instances.json", DATA / "dlc_images.json"
    regions_path = DATA / "regions.json"
    instances = build_instances(json.loads(instances_path.read_text("utf-8")))
    regions = build_regions(json.loads(regions_path.read_text("utf-8")))
    changed = []
    for path, data in (
        (dlc_path, build_dlc_images()),
        (instances_path, instances),
        (regions_path, regions),
    ):
        text = render(data)
        if path.read_text("utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path.name)
    print(f"rewrote: {', '.join(changed)}" if changed else "catalogs already current")
    missing = missing_hardware(instances)
    if missing:
        print(
            f"{len(missing)} hosting instance type(s) have no hardware figures in "
            f"instances.json; add them with a source: {', '.join(missing)}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
