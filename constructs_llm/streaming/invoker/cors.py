"""Cors: which web pages may call a StreamingInvoker from a browser (opt-in).

The runtime answers CORS itself (``streaming/runtime/http/cors.py``), not the function URL's
own ``Cors`` setting. With that setting "Lambda automatically adds the CORS headers to all
responses through the function URL ... If there are conflicting headers, the configured CORS
headers on the function URL take precedence" (Lambda Developer Guide, "Creating and managing
Lambda function URLs", section "Cross-origin resource sharing (CORS)";
awsdocs/aws-lambda-developer-guide: doc_source/urls-configuration.md), and Lambda then answers
preflights at the URL, before the function and its origin secret check. The runtime's answer
is the same through the function URL and through CloudFront, comes after CloudFront's origin
secret (so a direct preflight is refused like any direct request), and is tested here against
the runtime's own process. The URL's ``Cors`` is left unset so the two never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Duration, Token

from constructs_llm.contract import DEFAULT_CORS_HEADERS, DEFAULT_CORS_MAX_AGE_S, Env
from constructs_llm.problems import Problem, Problems
from constructs_llm.values import describe, duration_problem, is_list, not_a_list

# An origin as browsers send it (RFC 6454): scheme, host and an optional port; no path.
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?")
# A header name (RFC 9110 token).
_HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_MAX_ITEMS = 100  # the same bound as a function URL's own AllowOrigins / AllowHeaders


@dataclass(frozen=True, kw_only=True)
class Cors:
    """CORS for browsers: the origins that may call the invoker, the request headers they may
    send, and how long a browser keeps a preflight's answer. Pass it as
    ``StreamingInvoker(cors=Cors(allowed_origins=["https://app.example.com"]))``; without it
    no answer carries a CORS header and ``OPTIONS`` is refused (405), as before.

    The runtime answers a preflight (``OPTIONS``, no credentials) before checking keys, and
    puts ``Access-Control-Allow-Origin`` (and ``Access-Control-Expose-Headers: x-request-id``)
    on every answer to an allowed origin, streamed ones included.

    :param allowed_origins: ``https://host[:port]`` each (``http://`` for local development),
        or ``["*"]`` for every origin.
    :param allowed_headers: request headers a page may send. @default ``authorization``,
        ``content-type`` and ``x-amz-content-sha256`` (the body's hash that CloudFront's origin
        access control needs on a POST)
    :param max_age: how long a browser keeps a preflight's answer. @default 2 hours (0 s-1 day;
        Chromium keeps at most 2 hours)
    """

    allowed_origins: Sequence[str]
    allowed_headers: Sequence[str] | None = None
    max_age: Duration | None = None

    def __post_init__(self) -> None:
        problems = Problems("Cors")
        problems.extend(_origins_problems(self.allowed_origins))
        problems.extend(_headers_problems(self.allowed_headers))
        problems.add(
            duration_problem(
                "max_age",
                self.max_age,
                minimum_s=0,
                maximum_s=86400,
                bounds="0 seconds and 1 day",
                why="browsers keep a preflight's answer at most that long",
            )
        )
        problems.raise_if_any()

    def environment(self) -> dict[str, str]:
        """The runtime's ``CORS_*`` variables."""
        headers = self.allowed_headers or DEFAULT_CORS_HEADERS
        max_age = self.max_age.to_seconds() if self.max_age else DEFAULT_CORS_MAX_AGE_S
        return {
            Env.CORS_ALLOWED_ORIGINS: ",".join(o.rstrip("/").lower() for o in self.allowed_origins),
            Env.CORS_ALLOWED_HEADERS: ",".join(h.lower() for h in headers),
            Env.CORS_MAX_AGE_SECONDS: str(int(max_age)),
        }


def _origins_problems(origins: object) -> list[Problem | None]:
    fix = "e.g. allowed_origins=['https://app.example.com'], or ['*'] for every origin"
    if not is_list(origins):
        return [not_a_list("allowed_origins", origins, "origins", fix)]
    if not origins:
        return [
            Problem.of(
                "allowed_origins",
                origins,
                "allowed_origins must name at least one origin, got [];",
                fix,
            )
        ]
    if len(origins) > _MAX_ITEMS:
        return [
            Problem.of(
                "allowed_origins",
                origins,
                f"allowed_origins takes at most {_MAX_ITEMS} origins, got {len(origins)}",
            )
        ]
    found: list[Problem | None] = []
    for i, origin in enumerate(origins):
        if not isinstance(origin, str):
            found.append(
                Problem.of(
                    f"allowed_origins[{i}]",
                    origin,
                    f"allowed_origins[{i}] must be a string, got {describe(origin)}",
                )
            )
        elif origin == "*" and len(origins) > 1:
            found.append(
                Problem.of(
                    "allowed_origins",
                    "*",
                    "allowed_origins: '*' allows every origin;",
                    "give it alone",
                )
            )
        elif (
            origin != "*"
            and not Token.is_unresolved(origin)
            and not _ORIGIN.fullmatch(origin.rstrip("/"))
        ):
            found.append(
                Problem.of(
                    f"allowed_origins[{i}]",
                    origin,
                    f"allowed_origins[{i}] must be an origin such as 'https://app.example.com' "
                    f"(a scheme, a host and an optional port; no path), got {origin!r}",
                )
            )
    return found


def _headers_problems(headers: object) -> list[Problem | None]:
    if headers is None:
        return []
    if not is_list(headers):
        names = "header names such as ['authorization', 'content-type']"
        return [not_a_list("allowed_headers", headers, names)]
    if not headers or len(headers) > _MAX_ITEMS:
        return [
            Problem.of(
                "allowed_headers",
                headers,
                f"allowed_headers must list 1-{_MAX_ITEMS} header names, got {len(headers)}",
            )
        ]
    found: list[Problem | None] = []
    for i, name in enumerate(headers):
        if not isinstance(name, str) or not _HEADER.fullmatch(name):
            found.append(
                Problem.of(
                    f"allowed_headers[{i}]",
                    name,
                    f"allowed_headers[{i}] must be a header name such as 'authorization', got "
                    f"{describe(name) if not isinstance(name, str) else repr(name)}",
                )
            )
        elif name == "*":
            found.append(
                Problem.of(
                    "allowed_headers",
                    "*",
                    "allowed_headers: '*' does not cover Authorization in browsers;",
                    "list the headers by name",
                )
            )
    return found
