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
from constructs_llm.reporting import warn

__all__ = [
    "MAPPING_ID",
    "DlcFamily",
    "check_dlc_region",
    "dlc_family",
    "dlc_regions",
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
    """A concrete region must have a registry; an image its family does not list there warns."""
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
    warn(
        scope,
        "constructs-llm:dlc-region-not-listed",
        f"The SageMaker Python SDK does not list {family.name} images "
        f"({repository}) in {region}, so tag {tag!r} may not exist there "
        "and the endpoint would fail to start. Verify with: aws ecr describe-images "
        f"--region {region} --registry-id {account} --repository-name {repository} "
        f"--image-ids imageTag={tag}",
    )
