"""AWS Deep Learning Container registries: the default image of each engine family, and the
registry account per region, resolved through a CloudFormation mapping so environment-agnostic
stacks work (with a rule that stops a deploy to an unmapped region early).

Most families share one registry account per region (the ``ConstructsLlmDlcRegistry``
mapping). A family published in registries of its own (Hugging Face's TEI images, "hosted in
a different ECR account in each region", aws.github.io/deep-learning-containers/tei) names a
registry group, which gets a mapping of its own (``ConstructsLlmDlcRegistryTei``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from aws_cdk import Aws, CfnMapping, Fn, Stack, Token
from constructs import Construct

from constructs_llm import catalogs
from constructs_llm.errors import ImageError
from constructs_llm.problems import Problem, fail
from constructs_llm.stack_rules import assert_before_deploy

MAPPING_ID = "ConstructsLlmDlcRegistry"
"""Construct id (and logical id) of the per-stack region -> registry mapping."""


@dataclass(frozen=True, kw_only=True)
class DlcFamily:
    """The default Deep Learning Container of one serving-engine family."""

    name: str
    repository: str
    tag: str
    tag_contains: str | None
    cuda: str | None
    regions: frozenset[str] | None
    """Regions where the SageMaker Python SDK lists the image; None = unknown, no check."""
    registry: str | None = None
    """The registry group its images live in; None = the shared DLC registries."""

    def matches(self, repository: str, tag: str) -> bool:
        if repository != self.repository:
            return False
        return self.tag_contains is None or self.tag_contains in tag


@functools.cache
def _dlc_families() -> dict[str, DlcFamily]:
    return {
        name: DlcFamily(
            name=name,
            repository=spec.repository,
            tag=spec.tag,
            tag_contains=spec.tag_contains,
            cuda=spec.cuda,
            regions=frozenset(spec.regions),
            registry=spec.registry,
        )
        for name, spec in catalogs.dlc_images().families.items()
    }


def dlc_family(name: str) -> DlcFamily:
    """The default image of an engine family: tgi, tgi-neuronx, lmi, lmi-trtllm, vllm, sglang,
    tei, tei-cpu."""
    problem = dlc_family_problem(name)
    if problem:
        fail("", problem, ImageError)
    return _dlc_families()[name]


def dlc_family_problem(name: object) -> Problem | None:
    """What is wrong with the family ``name`` (one :func:`dlc_family` knows), or None."""
    families = _dlc_families()
    if isinstance(name, str) and name in families:
        return None
    known = ", ".join(families)
    return Problem.of(
        "family",
        name,
        f"Unknown Deep Learning Container family: got {name!r}. Known families: {known}.",
    )


def dlc_regions(registry: str | None = None) -> dict[str, dict[str, str]]:
    """Region -> {"account", "domain"} of the Deep Learning Container registries, or of the
    registry group ``registry`` (tei)."""
    return {
        region: {"account": found.account, "domain": found.domain}
        for region, found in _registries(registry).items()
    }


def _registries(registry: str | None) -> dict[str, catalogs.Registry]:
    catalog = catalogs.dlc_images()
    return catalog.regions if registry is None else catalog.registries[registry]


def _mapping_id(registry: str | None) -> str:
    return MAPPING_ID + "".join(part.capitalize() for part in (registry or "").split("-"))


def registry_mapping(stack: Stack, registry: str | None = None) -> CfnMapping:
    """The stack's region -> registry mapping (of the registry group ``registry``, if given),
    created once per stack."""
    mapping_id = _mapping_id(registry)
    existing = stack.node.try_find_child(mapping_id)
    if isinstance(existing, CfnMapping):
        return existing
    if existing is not None:
        fail(
            "",
            Problem.of(
                "id",
                mapping_id,
                f"Construct id {mapping_id!r} in stack {stack.node.path!r} is reserved for the "
                "Deep Learning Container registry mapping;",
                "rename your construct.",
            ),
            ImageError,
        )
    # lazy: a stack with a concrete region gets literal values and no mapping at all.
    mapping = CfnMapping(stack, mapping_id, mapping=dlc_regions(registry), lazy=True)
    if Token.is_unresolved(stack.region):
        _region_rule(stack, registry)
    return mapping


def _region_rule(stack: Stack, registry: str | None) -> None:
    """An environment-agnostic stack deployed to an unmapped region fails in seconds, before
    any resource is created, with a message saying what to do (instead of a bare
    'mapping key not found')."""
    which = "Deep Learning Container" if registry is None else f"{registry} image"
    assert_before_deploy(
        stack,
        f"{_mapping_id(registry)}Region",
        Fn.condition_contains(sorted(dlc_regions(registry)), Aws.REGION),
        f"constructs_llm knows no {which} registry for this region; use "
        "ContainerImage.from_uri(...) with the image in this region",
    )


def infer_family(repository: str, tag: str) -> DlcFamily | None:
    """The family whose default repository (and tag marker) the image matches, if any."""
    if Token.is_unresolved(repository) or Token.is_unresolved(tag):
        return None
    return next((f for f in _dlc_families().values() if f.matches(repository, tag)), None)


def check_dlc_region(
    scope: Construct, region: str, *, repository: str, tag: str, family: DlcFamily | None
) -> None:
    """A concrete region must have a registry, and the image's family must be listed there."""
    registries = _registries(family.registry if family else None)
    if region not in registries:
        fail(
            "",
            Problem.of(
                "region",
                region,
                f"No Deep Learning Container registry is known for region {region!r} "
                f"(image {repository}:{tag}; {len(registries)} regions are mapped).",
                "Pass the image URI for that region explicitly: ContainerImage.from_uri("
                f'"<account>.dkr.ecr.{region}.amazonaws.com/{repository}:{tag}").',
            ),
            ImageError,
        )
    if family is None or family.regions is None or region in family.regions:
        return
    account = registries[region].account
    listed = sorted(family.regions & registries.keys())
    fail(
        "",
        Problem.of(
            "region",
            region,
            f"The SageMaker Python SDK does not list {family.name} images ({repository}) in "
            f"{region}, so tag {tag!r} is not known to exist there and the endpoint would fail to "
            "start.",
            f"Deploy to a region that lists them ({_some(listed)}), choose another engine, "
            "or pass the image in this region with ContainerImage.from_uri(...) after checking it "
            f"exists: aws ecr describe-images --region {region} --registry-id {account} "
            f"--repository-name {repository} --image-ids imageTag={tag}",
        ),
        ImageError,
    )


def family_region_rule(stack: Stack, family: DlcFamily) -> None:
    """In an environment-agnostic stack, a rule per image family listed in fewer regions than
    the registries: a deploy elsewhere fails in seconds, naming the family, before any resource
    is created. With several families in one stack, their rules together admit only the regions
    where every image exists."""
    if not Token.is_unresolved(stack.region) or family.regions is None:
        return
    mapped = set(dlc_regions(family.registry))
    if mapped <= family.regions:
        return
    rule_id = f"{MAPPING_ID}Region{''.join(p.capitalize() for p in family.name.split('-'))}"
    assert_before_deploy(
        stack,
        rule_id,
        Fn.condition_contains(sorted(family.regions & mapped), Aws.REGION),
        f"The SageMaker Python SDK lists no {family.name} image ({family.repository}) in this "
        "region; deploy to a region that lists it, choose another engine, or use "
        "ContainerImage.from_uri(...) with the image in this region",
    )


def _some(regions: list[str]) -> str:
    shown = ", ".join(regions[:6])
    return f"{shown}, ... ({len(regions)} regions)" if len(regions) > 6 else shown
