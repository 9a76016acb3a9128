"""AWS Deep Learning Container registries: the default image of each engine family, and the
registry account per region, resolved through a CloudFormation mapping so environment-agnostic
stacks work (with a rule that stops a deploy to an unmapped region early).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from aws_cdk import Aws, CfnMapping, CfnRule, CfnRuleAssertion, Fn, Stack, Token
from constructs import Construct

from constructs_llm import catalogs
from constructs_llm.errors import ImageError
from constructs_llm.problems import fail

__all__ = [
    "MAPPING_ID",
    "DlcFamily",
    "check_dlc_region",
    "dlc_family",
    "dlc_regions",
    "family_region_rule",
    "infer_family",
    "registry_mapping",
]

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
        )
        for name, spec in catalogs.dlc_images().families.items()
    }


def dlc_family(name: str) -> DlcFamily:
    """The default image of an engine family: tgi, tgi-neuronx, lmi, lmi-trtllm, vllm, sglang."""
    families = _dlc_families()
    if name not in families:
        fail(
            "",
            f"Unknown Deep Learning Container family: got {name!r}. "
            f"Known families: {', '.join(families)}.",
            ImageError,
        )
    return families[name]


def dlc_regions() -> dict[str, dict[str, str]]:
    """Region -> {"account", "domain"} of the Deep Learning Container registries."""
    return {
        region: {"account": registry.account, "domain": registry.domain}
        for region, registry in catalogs.dlc_images().regions.items()
    }


def registry_mapping(stack: Stack) -> CfnMapping:
    """The stack's region -> registry mapping, created once per stack."""
    existing = stack.node.try_find_child(MAPPING_ID)
    if isinstance(existing, CfnMapping):
        return existing
    if existing is not None:
        fail(
            "",
            f"Construct id {MAPPING_ID!r} in stack {stack.node.path!r} is reserved for the "
            "Deep Learning Container registry mapping; rename your construct.",
            ImageError,
        )
    # lazy: a stack with a concrete region gets literal values and no mapping at all.
    mapping = CfnMapping(stack, MAPPING_ID, mapping=dlc_regions(), lazy=True)
    if Token.is_unresolved(stack.region):
        _region_rule(stack)
    return mapping


def _region_rule(stack: Stack) -> None:
    """An environment-agnostic stack deployed to an unmapped region fails in seconds, before
    any resource is created, with a message saying what to do (instead of a bare
    'mapping key not found')."""
    CfnRule(
        stack,
        f"{MAPPING_ID}Region",
        assertions=[
            CfnRuleAssertion(
                assert_=Fn.condition_contains(sorted(dlc_regions()), Aws.REGION),
                assert_description=(
                    "constructs_llm knows no Deep Learning Container registry for this "
                    "region; use ContainerImage.from_uri(...) with the image in this region"
                ),
            )
        ],
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
    registries = catalogs.dlc_images().regions
    if region not in registries:
        fail(
            "",
            f"No Deep Learning Container registry is known for region {region!r} "
            f"(image {repository}:{tag}; {len(registries)} regions are mapped). "
            "Pass the image URI for that region explicitly: ContainerImage.from_uri("
            f'"<account>.dkr.ecr.{region}.amazonaws.com/{repository}:{tag}").',
            ImageError,
        )
    if family is None or family.regions is None or region in family.regions:
        return
    account = registries[region].account
    listed = sorted(family.regions & registries.keys())
    fail(
        "",
        f"The SageMaker Python SDK does not list {family.name} images ({repository}) in "
        f"{region}, so tag {tag!r} is not known to exist there and the endpoint would fail to "
        f"start. Deploy to a region that lists them ({_some(listed)}), choose another engine, "
        "or pass the image in this region with ContainerImage.from_uri(...) after checking it "
        f"exists: aws ecr describe-images --region {region} --registry-id {account} "
        f"--repository-name {repository} --image-ids imageTag={tag}",
        ImageError,
    )


def family_region_rule(stack: Stack, family: DlcFamily) -> None:
    """In an environment-agnostic stack, a rule per image family listed in fewer regions than
    the registries: a deploy elsewhere fails in seconds, naming the family, before any resource
    is created. With several families in one stack, their rules together admit only the regions
    where every image exists."""
    if not Token.is_unresolved(stack.region) or family.regions is None:
        return
    mapped = set(dlc_regions())
    if mapped <= family.regions:
        return
    rule_id = f"{MAPPING_ID}Region{''.join(p.capitalize() for p in family.name.split('-'))}"
    if stack.node.try_find_child(rule_id) is not None:
        return
    listed = sorted(family.regions & mapped)
    CfnRule(
        stack,
        rule_id,
        assertions=[
            CfnRuleAssertion(
                assert_=Fn.condition_contains(listed, Aws.REGION),
                assert_description=(
                    f"The SageMaker Python SDK lists no {family.name} image ({family.repository}) "
                    "in this region; deploy to a region that lists it, choose another engine, "
                    "or use ContainerImage.from_uri(...) with the image in this region"
                ),
            )
        ],
    )


def _some(regions: list[str]) -> str:
    shown = ", ".join(regions[:6])
    return f"{shown}, ... ({len(regions)} regions)" if len(regions) > 6 else shown
