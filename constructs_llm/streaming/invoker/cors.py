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
from collections.abc import Callable, Sequence
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
    if not 0 < len(origins) <= _MAX_ITEMS:
        return [_count_problem("allowed_origins", origins, "origins", fix)]
    found = _item_problems(
        "allowed_origins",
        origins,
        _is_origin,
        "an origin such as 'https://app.example.com' (a scheme, a host and an optional port; "
        "no path)",
    )
    if "*" in origins and len(origins) > 1:
        found.append(
            Problem.of(
                "allowed_origins", "*", "allowed_origins: '*' allows every origin;", "give it alone"
            )
        )
    return found


def _is_origin(origin: str) -> bool:
    return (
        origin == "*" or Token.is_unresolved(origin) or bool(_ORIGIN.fullmatch(origin.rstrip("/")))
    )


def _headers_problems(headers: object) -> list[Problem | None]:
    if headers is None:
        return []
    if not is_list(headers):
        names = "header names such as ['authorization', 'content-type']"
        return [not_a_list("allowed_headers", headers, names)]
    if not 0 < len(headers) <= _MAX_ITEMS:
        return [_count_problem("allowed_headers", headers, "header names")]
    found = _item_problems(
        "allowed_headers",
        headers,
        lambda name: bool(_HEADER.fullmatch(name)),
        "a header name such as 'authorization'",
    )
    if "*" in headers:
        found.append(
            Problem.of(
                "allowed_headers",
                "*",
                "allowed_headers: '*' does not cover Authorization in browsers;",
                "list the headers by name",
            )
        )
    return found


def _count_problem(prop: str, items: Sequence[object], names: str, fix: str = "") -> Problem:
    """Both lists take 1 to ``_MAX_ITEMS`` ``names``."""
    wrong = f"{prop} must list 1-{_MAX_ITEMS} {names}, got {len(items)}"
    return Problem.of(prop, items, f"{wrong};" if fix else wrong, fix)


def _item_problems(
    prop: str, items: Sequence[object], valid: Callable[[str], bool], form: str
) -> list[Problem | None]:
    """A problem for each item of ``prop`` that is not a string ``valid`` accepts (``form``
    says what it must be)."""
    return [
        Problem.of(
            f"{prop}[{i}]",
            item,
            f"{prop}[{i}] must be {form}, got "
            f"{repr(item) if isinstance(item, str) else describe(item)}",
        )
        for i, item in enumerate(items)
        if not (isinstance(item, str) and valid(item))
    ]
