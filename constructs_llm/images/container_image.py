"""Container images for SageMaker models, and the ECR pull grants they need.

``ContainerImage.dlc`` resolves the AWS Deep Learning Container registry account per
region through a CloudFormation mapping, so environment-agnostic stacks work
(``dlc_registry.py``). Every image grants its puller ECR access to its own repository only,
plus ``ecr:GetAuthorizationToken`` (which AWS only allows on ``*``) in a small policy of its
own with a cdk-nag acknowledgment (``ecr_pull.py``). Repository names, tags and URIs are
checked by ``image_references.py``.
"""

from __future__ import annotations

import abc
import re
import weakref
from typing import TYPE_CHECKING

from aws_cdk import CfnMapping, Stack, Token
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm.cdk_values import repository_problem as ecr_repository_problem
from constructs_llm.errors import ImageError
from constructs_llm.images.dlc_registry import (
    check_dlc_region,
    dlc_family,
    dlc_family_problem,
    family_region_rule,
    infer_family,
    registry_mapping,
)
from constructs_llm.images.ecr_pull import (
    PULL_ACTIONS,
    check_same_region,
    ecr_repository_arn,
    grant_authorization_token,
    grant_ecr_pull,
)
from constructs_llm.images.image_references import (
    ECR_REGISTRY,
    parse_uri,
    repository_name_problem,
    tag_problem,
)
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.scope_facts import region_of, stack_of
from constructs_llm.values import is_unresolved

if TYPE_CHECKING:
    from aws_cdk import aws_ecr as ecr


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
        """An image in Amazon ECR by URI,
        ``<account>.dkr.ecr.<region>.amazonaws.com/repository:tag`` or ``...@sha256:…``; it gets
        a pull grant on its repository. Other registries (Docker
        Hub, ghcr.io, quay.io, public.ecr.aws) fail: SageMaker pulls them only through a VPC
        (``RepositoryAccessMode=Vpc``), which this library does not render.
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
        match = _CUDA_TAG.search(tag) if tag and not is_unresolved(tag) else None
        return int(match.group(1)[:2]) if match else None

    def bind(self, scope: Construct, grantee: iam.IGrantable) -> str:
        """Grant ``grantee`` pull access and return the image URI (possibly tokens)."""
        uri = self.uri(scope)
        self.grant_pull(scope, grantee)
        return uri

    @abc.abstractmethod
    def uri(self, scope: Construct) -> str:
        """The image URI in ``scope``'s stack (possibly tokens), checked against its region;
        what resolves it there (the DLC registry mapping and region rules) is created in the
        stack on first use."""

    @abc.abstractmethod
    def grant_pull(self, scope: Construct, grantee: iam.IGrantable) -> None:
        """Grant ``grantee`` pull access to the image (none for a URI given as a token)."""


# Each jsii call is a round trip to the Node.js process, and every model of a stack resolves
# and grants its image (a component's model, then its endpoint's role, for each component):
# what one stack resolves once is kept on this side, by stack (the registry part of each
# family's URI, each repository's ARN); a scope's stack and region are read once
# (``scope_facts.py``).
_registries: weakref.WeakKeyDictionary[Stack, dict[str, str]] = weakref.WeakKeyDictionary()


class _DlcImage(ContainerImage):
    def __init__(self, repository: str, tag: str, family: str | None) -> None:
        problems = Problems("ContainerImage.dlc")
        problems.add(repository_name_problem(repository), ImageError)
        problems.add(tag_problem(tag), ImageError)
        if family is not None:
            problems.add(dlc_family_problem(family), ImageError)
        problems.raise_if_any()
        known = dlc_family(family) if family is not None else None
        self._repository = repository
        self._tag = tag
        self._family = known if family is not None else infer_family(repository, tag)

    @property
    def repository_name(self) -> str:
        return self._repository

    @property
    def tag(self) -> str:
        return self._tag

    def uri(self, scope: Construct) -> str:
        stack = stack_of(scope)
        registry = _registries.setdefault(stack, {})
        region, concrete = region_of(scope)
        if concrete:
            check_dlc_region(
                scope, region, repository=self._repository, tag=self._tag, family=self._family
            )
        family = self._family.name if self._family is not None else ""
        found = registry.get(f"family:{family}")
        if found is None:  # once per stack and family: the mapping, the rule, the tokens
            mapping = self._mapping(stack)
            if self._family is not None:
                family_region_rule(stack, self._family)
            account = mapping.find_in_map(region, "account")
            domain = mapping.find_in_map(region, "domain")
            found = registry[f"family:{family}"] = f"{account}.dkr.ecr.{region}.{domain}"
        return f"{found}/{self._repository}:{self._tag}"

    def grant_pull(self, scope: Construct, grantee: iam.IGrantable) -> None:
        # Granted again for each model and host even when the same: the grants are recorded
        # in the template's CDK metadata (aws-cdk-lib's method analytics), which stays as is.
        stack = stack_of(scope)
        registry = _registries.setdefault(stack, {})
        arn = registry.get(f"repository:{self._repository}")
        if arn is None:
            account = self._mapping(stack).find_in_map(region_of(scope)[0], "account")
            arn = registry[f"repository:{self._repository}"] = stack.format_arn(
                service="ecr",
                resource="repository",
                resource_name=self._repository,
                account=account,
            )
        grant_ecr_pull(scope, grantee, [arn])

    def _mapping(self, stack: Stack) -> CfnMapping:
        return registry_mapping(stack, self._family.registry if self._family else None)


class _UriImage(ContainerImage):
    def __init__(self, uri: str) -> None:
        self._uri = uri
        self._repository: str | None = None
        self._tag: str | None = None
        self._ecr: tuple[str, str, str] | None = None  # account, region, repository
        if isinstance(uri, str) and Token.is_unresolved(uri):
            return  # resolved at deploy time; nothing to validate or grant
        match = parse_uri(uri)
        if isinstance(match, Problem):
            fail("ContainerImage.from_uri", match, ImageError)
        ecr_registry = ECR_REGISTRY.fullmatch(match["registry"])
        if ecr_registry is None:
            fail("ContainerImage.from_uri", _registry_problem(uri, match["registry"]), ImageError)
        self._repository = match["repository"]
        self._tag = match["tag"]
        self._ecr = (ecr_registry["account"], ecr_registry["region"], match["repository"])

    @property
    def repository_name(self) -> str | None:
        return self._repository

    @property
    def tag(self) -> str | None:
        return self._tag

    def uri(self, scope: Construct) -> str:
        if self._ecr is not None:
            check_same_region(Stack.of(scope), self._ecr[1], self._uri)
        return self._uri

    def grant_pull(self, scope: Construct, grantee: iam.IGrantable) -> None:
        if self._ecr is not None:
            account, region, repository = self._ecr
            arn = ecr_repository_arn(scope, account=account, region=region, repository=repository)
            grant_ecr_pull(scope, grantee, [arn])


def _registry_problem(uri: str, registry: str) -> Problem:
    """An image on a registry other than Amazon ECR: SageMaker pulls a model's image from ECR
    (``ImageConfig.RepositoryAccessMode`` ``Platform``, the default) and from another registry
    only in ``Vpc`` mode, through the model's VPC ("Use a Private Docker Registry for Real-Time
    Inference Containers", SageMaker guide); otherwise CreateModel fails with "Using non-ECR
    image ... without Vpc repository access mode is not supported". This library renders no
    ``ImageConfig``, so Docker Hub, ghcr.io, quay.io, nvcr.io and ECR Public
    (public.ecr.aws) images fail at deploy."""
    name = uri.split("/", 1)[1]
    return Problem.of(
        "uri",
        uri,
        f"{uri!r} is on {registry}, which SageMaker does not pull from: a model's image must be "
        "in a private Amazon ECR repository (another registry needs ImageConfig "
        "RepositoryAccessMode=Vpc, which this library does not render, and CreateModel refuses "
        "the image at deploy);",
        "copy it into ECR in the stack's region (docker pull "
        f"{uri}; docker tag {uri} <account>.dkr.ecr.<region>.amazonaws.com/{name}; docker push "
        "...) and pass that URI, or use ContainerImage.from_ecr_repository(repository, tag)",
    )


class _EcrRepositoryImage(ContainerImage):
    def __init__(self, repository: ecr.IRepository, tag: str) -> None:
        problems = Problems("ContainerImage.from_ecr_repository")
        problems.add(ecr_repository_problem("repository", repository), ImageError)
        problems.add(tag_problem(tag), ImageError)
        problems.raise_if_any()
        self._repo = repository
        self._tag = tag

    @property
    def repository_name(self) -> str:
        return self._repo.repository_name

    @property
    def tag(self) -> str | None:
        return None if self._tag.startswith("sha256:") else self._tag

    def uri(self, scope: Construct) -> str:
        region = self._repo.env.region
        if not Token.is_unresolved(region):
            check_same_region(Stack.of(scope), region, f"ECR repository {self._repo.node.path}")
        if self._tag.startswith("sha256:"):
            return self._repo.repository_uri_for_digest(self._tag)
        return self._repo.repository_uri_for_tag(self._tag)

    def grant_pull(self, scope: Construct, grantee: iam.IGrantable) -> None:
        # repository.grant also handles cross-account resource policies; the token grant
        # goes to its own acknowledged policy instead of grant_pull's default policy.
        self._repo.grant(grantee, *PULL_ACTIONS)
        grant_authorization_token(scope, grantee)
