"""Image references checked at synth: ECR repository names, tags and digests, and whole
image URIs (with the ECR registry they name, if any).
"""

from __future__ import annotations

import re

from constructs_llm.problems import Problem
from constructs_llm.values import is_unresolved

_REPOSITORY = re.compile(r"(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")
_URI = re.compile(
    r"(?P<registry>[A-Za-z0-9.-]+(?::[0-9]+)?)/(?P<repository>[^:@\s]+)"
    r"(?::(?P<tag>[^@\s]+))?(?:@(?P<digest>[^\s]+))?"
)
ECR_REGISTRY = re.compile(
    r"(?P<account>[0-9]{12})\.dkr\.ecr(?:-fips)?\.(?P<region>[a-z0-9-]+)\."
    r"(?:amazonaws\.com(?:\.cn)?|c2s\.ic\.gov|sc2s\.sgov\.gov|csp\.hci\.ic\.gov|cloud\.adc-e\.uk"
    r"|amazonaws\.eu)"
)
_MAX_URI = 255  # ContainerDefinition.Image maximum length


def repository_name_problem(repository: object) -> Problem | None:
    if not isinstance(repository, str) or not repository:
        return Problem.of(
            "repository",
            repository,
            f"DLC repository must be a non-empty string, got {repository!r}.",
        )
    if is_unresolved(repository):
        return None
    if ".dkr.ecr." in repository or ":" in repository:
        return Problem.of(
            "repository",
            repository,
            f"ContainerImage.dlc takes a repository name, got the image URI {repository!r};",
            "use ContainerImage.from_uri(uri) for a full URI.",
        )
    if not (2 <= len(repository) <= 256 and _REPOSITORY.fullmatch(repository)):
        return Problem.of(
            "repository",
            repository,
            f"Invalid ECR repository name: got {repository!r}.",
            "Use lower-case letters, "
            "digits and . _ - / separators, e.g. 'huggingface-pytorch-tgi-inference'.",
        )
    return None


def tag_problem(tag: object) -> Problem | None:
    if not isinstance(tag, str) or not tag:
        return Problem.of(
            "tag",
            tag,
            f"Image tag must be a non-empty string, got {tag!r}.",
        )
    if is_unresolved(tag) or _TAG.fullmatch(tag) or _DIGEST.fullmatch(tag):
        return None
    return Problem.of(
        "tag",
        tag,
        f"Invalid image tag: got {tag!r}. A tag is 1-128 letters, digits, '_', '.' or '-', "
        "with no whitespace and not starting with '.' or '-' (or a 'sha256:<64 hex>' digest).",
    )


def parse_uri(uri: object) -> re.Match[str] | Problem:
    """The parts of the image URI ``uri``, or what is wrong with it."""
    if not isinstance(uri, str) or not uri:
        return Problem.of("uri", uri, f"Image URI must be a non-empty string, got {uri!r}.")
    match = _URI.fullmatch(uri)
    problem = _uri_problem(uri, match)
    if problem or match is None:
        return Problem.of(
            "uri",
            uri,
            f"Invalid image URI: got {uri!r}. {problem}",
            "Expected 'registry/repository:tag' or 'registry/repository@sha256:<digest>', e.g. "
            "'123456789012.dkr.ecr.us-east-1.amazonaws.com/my-llm:1.0'.",
        )
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
