"""Container images for SageMaker models, and the ECR pull grants they need.

``ContainerImage.dlc`` resolves the AWS Deep Learning Container registry account per
region through a CloudFormation mapping, so environment-agnostic stacks work. Every image
grants its puller ECR access to its own repository only, plus ``ecr:GetAuthorizationToken``
(which AWS only allows on ``*``) in a small policy of its own with a cdk-nag acknowledgment.
"""

from __future__ import annotations

import abc
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import (
    Annotations,
    Aws,
    CfnMapping,
    CfnRule,
    CfnRuleAssertion,
    Fn,
    Stack,
    Token,
)
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm import catalogs
from constructs_llm._compliance import ECR_AUTHORIZATION_TOKEN, waive
from constructs_llm.errors import ImageError

__all__ = [
    "MAPPING_ID",
    "PULL_ACTIONS",
    "ContainerImage",
    "DlcFamily",
    "dlc_family",
    "dlc_regions",
    "grant_ecr_pull",
]

MAPPING_ID = "ConstructsLlmDlcRegistry"
"""Construct id (and logical id) of the per-stack region -> registry mapping."""

PULL_ACTIONS = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:GetDownloadUrlForLayer",
    "ecr:BatchGetImage",
)
_AUTH_POLICY_ID = "ConstructsLlmEcrAuthorizationToken"

_REPOSITORY = re.compile(r"(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")
_URI = re.compile(
    r"(?P<registry>[A-Za-z0-9.-]+(?::[0-9]+)?)/(?P<repository>[^:@\s]+)"
    r"(?::(?P<tag>[^@\s]+))?(?:@(?P<digest>[^\s]+))?"
)
_ECR_REGISTRY = re.compile(
    r"(?P<account>[0-9]{12})\.dkr\.ecr(?:-fips)?\.(?P<region>[a-z0-9-]+)\."
    r"(?:amazonaws\.com(?:\.cn)?|c2s\.ic\.gov|sc2s\.sgov\.gov|csp\.hci\.ic\.gov|cloud\.adc-e\.uk"
    r"|amazonaws\.eu)"
)
# ARN partition by region prefix (longest prefix first).
_PARTITIONS = (
    ("us-isob-", "aws-iso-b"),
    ("us-isof-", "aws-iso-f"),
    ("us-iso-", "aws-iso"),
    ("eu-isoe-", "aws-iso-e"),
    ("us-gov-", "aws-us-gov"),
    ("eusc-", "aws-eusc"),
    ("cn-", "aws-cn"),
)
_MAX_URI = 255  # ContainerDefinition.Image maximum length

if TYPE_CHECKING:
    from aws_cdk import aws_ecr as ecr


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
        raise ImageError(
            f"Unknown Deep Learning Container family: got {name!r}. "
            f"Known families: {', '.join(families)}."
        )
    return families[name]


def dlc_regions() -> dict[str, dict[str, str]]:
    """Region -> {"account", "domain"} of the Deep Learning Container registries."""
    return {
        region: {"account": registry.account, "domain": registry.domain}
        for region, registry in catalogs.dlc_images().regions.items()
    }


_CUDA_TAG = re.compile(r"-cu(\d{3})(?:\b|-)")


class ContainerImage(abc.ABC):
    """The serving container of a model. Create with one of the static factories."""

    @staticmethod
    def dlc(repository: str, tag: str, *, family: str | None = None) -> ContainerImage:
        """An AWS Deep Learning Container, e.g. ``dlc("huggingface-pytorch-tgi-inference", tag)``.

        The registry account and ECR domain come from a CloudFormation mapping keyed by
        the stack's region. ``family`` (tgi, lmi, ...) names the engine family for the
        region-availability warning; by default it is inferred from repository and tag.
        """
        return _DlcImage(repository, tag, family)

    @staticmethod
    def dlc_default(family: str) -> ContainerImage:
        """The newest default image this library knows for an engine family (see ``dlc_family``)."""
        spec = dlc_family(family)
        return _DlcImage(spec.repository, spec.tag, family)

    @staticmethod
    def from_uri(uri: str) -> ContainerImage:
        """Any image by URI: ``registry/repository:tag`` or ``registry/repository@sha256:…``.

        ECR URIs get a pull grant on their repository; other registries get no grant.
        """
        return _UriImage(uri)

    @staticmethod
    def from_ecr_repository(repository: ecr.IRepository, tag: str = "latest") -> ContainerImage:
        """An image in an ECR repository of yours; ``tag`` may also be a ``sha256:`` digest."""
        return _EcrRepositoryImage(repository, tag)

    @property
    @abc.abstractmethod
    def repository_name(self) -> str | None:
        """Repository name (may be a token), or None when unknown."""

    @property
    @abc.abstractmethod
    def tag(self) -> str | None:
        """Image tag, or None for digest-only and unparsed (token) images."""

    @property
    def cuda_major(self) -> int | None:
        """CUDA major version named in the tag (``...-cu130`` -> 13), or None."""
        tag = self.tag
        match = _CUDA_TAG.search(tag) if tag and not Token.is_unresolved(tag) else None
        return int(match.group(1)[:2]) if match else None

    @abc.abstractmethod
    def bind(self, scope: Construct, grantee: iam.IGrantable) -> str:
        """Grant ``grantee`` pull access and return the image URI (possibly tokens)."""


class _DlcImage(ContainerImage):
    def __init__(self, repository: str, tag: str, family: str | None) -> None:
        _check_repository(repository)
        _check_tag(tag)
        self._repository = repository
        self._tag = tag
        self._family = dlc_family(family) if family is not None else _infer_family(repository, tag)

    @property
    def repository_name(self) -> str:
        return self._repository

    @property
    def tag(self) -> str:
        return self._tag

    def bind(self, scope: Construct, grantee: iam.IGrantable) -> str:
        stack = Stack.of(scope)
        region = stack.region
        if not Token.is_unresolved(region):
            self._check_region(scope, region)
        mapping = _registry_mapping(stack)
        account = mapping.find_in_map(region, "account")
        domain = mapping.find_in_map(region, "domain")
        arn = stack.format_arn(
            service="ecr", resource="repository", resource_name=self._repository, account=account
        )
        grant_ecr_pull(grantee, [arn])
        return f"{account}.dkr.ecr.{region}.{domain}/{self._repository}:{self._tag}"

    def _check_region(self, scope: Construct, region: str) -> None:
        registries = catalogs.dlc_images().regions
        if region not in registries:
            raise ImageError(
                f"No Deep Learning Container registry is known for region {region!r} "
                f"(image {self._repository}:{self._tag}; {len(registries)} regions are mapped). "
                "Pass the image URI for that region explicitly: ContainerImage.from_uri("
                f'"<account>.dkr.ecr.{region}.amazonaws.com/{self._repository}:{self._tag}").'
            )
        family = self._family
        if family is None or family.regions is None or region in family.regions:
            return
        account = registries[region].account
        Annotations.of(scope).add_warning_v2(
            "constructs-llm:dlc-region-not-listed",
            f"The SageMaker Python SDK does not list {family.name} images "
            f"({self._repository}) in {region}, so tag {self._tag!r} may not exist there "
            "and the endpoint would fail to start. Verify with: aws ecr describe-images "
            f"--region {region} --registry-id {account} --repository-name {self._repository} "
            f"--image-ids imageTag={self._tag}",
        )


class _UriImage(ContainerImage):
    def __init__(self, uri: str) -> None:
        self._uri = uri
        self._repository: str | None = None
        self._tag: str | None = None
        self._ecr: tuple[str, str, str] | None = None  # account, region, repository
        if isinstance(uri, str) and Token.is_unresolved(uri):
            return  # resolved at deploy time; nothing to validate or grant
        match = _parse_uri(uri)
        self._repository = match["repository"]
        self._tag = match["tag"]
        ecr_registry = _ECR_REGISTRY.fullmatch(match["registry"])
        if ecr_registry is not None:
            self._ecr = (ecr_registry["account"], ecr_registry["region"], match["repository"])

    @property
    def repository_name(self) -> str | None:
        return self._repository

    @property
    def tag(self) -> str | None:
        return self._tag

    def bind(self, scope: Construct, grantee: iam.IGrantable) -> str:
        if self._ecr is not None:
            account, region, repository = self._ecr
            _check_same_region(Stack.of(scope), region, self._uri)
            arn = f"arn:{_partition(region)}:ecr:{region}:{account}:repository/{repository}"
            grant_ecr_pull(grantee, [arn])
        return self._uri


class _EcrRepositoryImage(ContainerImage):
    def __init__(self, repository: ecr.IRepository, tag: str) -> None:
        _check_tag(tag)
        self._repo = repository
        self._tag = tag

    @property
    def repository_name(self) -> str:
        return self._repo.repository_name

    @property
    def tag(self) -> str | None:
        return None if self._tag.startswith("sha256:") else self._tag

    def bind(self, scope: Construct, grantee: iam.IGrantable) -> str:
        region = self._repo.env.region
        if not Token.is_unresolved(region):
            _check_same_region(Stack.of(scope), region, f"ECR repository {self._repo.node.path}")
        # repository.grant also handles cross-account resource policies; the token grant
        # goes to its own acknowledged policy instead of grant_pull's default policy.
        self._repo.grant(grantee, *PULL_ACTIONS)
        _grant_authorization_token(grantee)
        if self._tag.startswith("sha256:"):
            return self._repo.repository_uri_for_digest(self._tag)
        return self._repo.repository_uri_for_tag(self._tag)


def grant_ecr_pull(grantee: iam.IGrantable, repository_arns: list[str]) -> None:
    """Grant image pulls from these repositories plus the ECR authorization token."""
    iam.Grant.add_to_principal(
        grantee=grantee, actions=list(PULL_ACTIONS), resource_arns=repository_arns
    )
    _grant_authorization_token(grantee)


def _grant_authorization_token(grantee: iam.IGrantable) -> None:
    """Add ecr:GetAuthorizationToken on * where its cdk-nag acknowledgment covers nothing else.

    For identities created in this app the statement gets a dedicated policy under the
    identity (so depending on the role also orders this policy first); other principals
    (imported roles) get it in their default policy, which is acknowledged instead.
    """
    principal = grantee.grant_principal
    statement = iam.PolicyStatement(actions=["ecr:GetAuthorizationToken"], resources=["*"])
    if isinstance(principal, (iam.Role, iam.LazyRole, iam.User, iam.Group)):
        if principal.node.try_find_child(_AUTH_POLICY_ID) is None:
            policy = iam.Policy(principal, _AUTH_POLICY_ID, statements=[statement])
            principal.attach_inline_policy(policy)
            waive(policy, ECR_AUTHORIZATION_TOKEN)
        return
    result = principal.add_to_principal_policy(statement)
    if result.statement_added and isinstance(result.policy_dependable, Construct):
        waive(result.policy_dependable, ECR_AUTHORIZATION_TOKEN)


def _registry_mapping(stack: Stack) -> CfnMapping:
    existing = stack.node.try_find_child(MAPPING_ID)
    if isinstance(existing, CfnMapping):
        return existing
    if existing is not None:
        raise ImageError(
            f"Construct id {MAPPING_ID!r} in stack {stack.node.path!r} is reserved for the "
            "Deep Learning Container registry mapping; rename your construct."
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


def _infer_family(repository: str, tag: str) -> DlcFamily | None:
    if Token.is_unresolved(repository) or Token.is_unresolved(tag):
        return None
    return next((f for f in _dlc_families().values() if f.matches(repository, tag)), None)


def _check_repository(repository: str) -> None:
    if not isinstance(repository, str) or not repository:
        raise ImageError(f"DLC repository must be a non-empty string, got {repository!r}.")
    if Token.is_unresolved(repository):
        return
    if ".dkr.ecr." in repository or ":" in repository:
        raise ImageError(
            f"ContainerImage.dlc takes a repository name, got the image URI {repository!r}; "
            "use ContainerImage.from_uri(uri) for a full URI."
        )
    if not (2 <= len(repository) <= 256 and _REPOSITORY.fullmatch(repository)):
        raise ImageError(
            f"Invalid ECR repository name: got {repository!r}. Use lower-case letters, "
            "digits and . _ - / separators, e.g. 'huggingface-pytorch-tgi-inference'."
        )


def _check_tag(tag: str) -> None:
    if not isinstance(tag, str) or not tag:
        raise ImageError(f"Image tag must be a non-empty string, got {tag!r}.")
    if Token.is_unresolved(tag) or _TAG.fullmatch(tag) or _DIGEST.fullmatch(tag):
        return
    raise ImageError(
        f"Invalid image tag: got {tag!r}. A tag is 1-128 letters, digits, '_', '.' or '-', "
        "with no whitespace and not starting with '.' or '-' (or a 'sha256:<64 hex>' digest)."
    )


def _parse_uri(uri: str) -> re.Match[str]:
    if not isinstance(uri, str) or not uri:
        raise ImageError(f"Image URI must be a non-empty string, got {uri!r}.")
    match = _URI.fullmatch(uri)
    problem = _uri_problem(uri, match)
    if problem:
        raise ImageError(
            f"Invalid image URI: got {uri!r}. {problem} Expected 'registry/repository:tag' or "
            "'registry/repository@sha256:<digest>', e.g. "
            "'123456789012.dkr.ecr.us-east-1.amazonaws.com/my-llm:1.0'."
        )
    assert match is not None
    return match


def _uri_problem(uri: str, match: re.Match[str] | None) -> str:
    if len(uri) > _MAX_URI:
        return f"It is {len(uri)} characters; SageMaker allows {_MAX_URI}."
    if match is None:
        if any(c.isspace() for c in uri):
            return "It contains whitespace."
        return "It needs a registry host and a repository."
    if "." not in match["registry"] and ":" not in match["registry"]:
        return f"{match['registry']!r} is not a registry host (it needs a dot, e.g. a domain)."
    if not _REPOSITORY.fullmatch(match["repository"]):
        return f"Repository {match['repository']!r} must be lower case letters, digits, . _ - /."
    tag, digest = match["tag"], match["digest"]
    if tag is None and digest is None:
        return "It has no tag or digest; pin one (':1.0' or '@sha256:...')."
    if tag is not None and not _TAG.fullmatch(tag):
        return f"Tag {tag!r} is not a valid tag."
    if digest is not None and not _DIGEST.fullmatch(digest):
        return f"Digest {digest!r} must be 'sha256:' and 64 lower-case hex digits."
    return ""


def _partition(region: str) -> str:
    return next((p for prefix, p in _PARTITIONS if region.startswith(prefix)), "aws")


def _check_same_region(stack: Stack, image_region: str, what: str) -> None:
    region = stack.region
    if Token.is_unresolved(region) or region == image_region:
        return
    raise ImageError(
        f"SageMaker pulls model images only from ECR in the model's own region: {what} is in "
        f"{image_region!r} but stack {stack.stack_name!r} deploys to {region!r}. Replicate the "
        "image to that region (ECR replication) and use that URI."
    )
