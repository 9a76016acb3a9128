"""A StreamingInvoker's bad input, caught at synth: its props (one error naming every problem)
and those of ``add_distribution``.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from aws_cdk import Duration, Stack, Token
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from constructs_llm.cdk_values import (
    architecture_problem,
    certificate_problem,
    key_problem,
    layer_problem,
    log_retention_problem,
)
from constructs_llm.contract import (
    DEFAULT_MAX_REQUEST_BYTES,
    MAX_REQUEST_BYTES,
    ReasoningField,
)
from constructs_llm.hosting.target import InvocationTarget
from constructs_llm.problems import Problem, Problems
from constructs_llm.region_availability import availability_problems
from constructs_llm.sizing.decode import DecodeRate
from constructs_llm.streaming.invoker.adapter_layer import (
    adapter_layer_problem,
    layer_architecture_problem,
)
from constructs_llm.streaming.invoker.auth import AuthMode, InvokerAuth
from constructs_llm.streaming.invoker.cors import Cors
from constructs_llm.streaming.invoker.environment import (
    CAPACITY_WAIT_MARGIN_S,
    MAX_TIMEOUT_S,
    READ_TIMEOUT_MARGIN_S,
)
from constructs_llm.streaming.invoker.targets import check_targets
from constructs_llm.values import (
    describe,
    duration_problem,
    duration_type_problem,
    is_list,
    not_a_list,
    positive_int_problem,
    str_problem,
)

#: The region of CloudFront's web ACLs and certificates.
WAF_REGION = "us-east-1"
_MIN_RATE_LIMIT = 10
_MAX_RATE_LIMIT = 2_000_000_000
_WEB_ACL_ARN = "arn:aws:wafv2:us-east-1:123456789012:global/webacl/name/id"
# A DNS name CloudFront takes as an alternate domain name: labels of letters, digits and
# hyphens, optionally behind one leading "*." (a wildcard), at most 253 characters.
_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_DOMAIN = re.compile(rf"(\*\.)?({_LABEL}\.)+{_LABEL}")


def check_invoker(
    invoker: Construct,
    *,
    target: object,
    targets: object,
    timeout: Duration,
    memory_size: int,
    heartbeat: Duration | None,
    auth: object,
    max_concurrency: int | None,
    max_request_bytes: object = None,
    adapter_layer: object = None,
    architecture: object = None,
    log_retention: object = None,
    log_encryption_key: object = None,
    reasoning_field: object = None,
    cors: object = None,
    capacity_wait: object = None,
) -> list[InvocationTarget]:
    """The invoker's targets; raises one error naming every problem of the props."""
    problems = Problems(f"StreamingInvoker '{invoker.node.path}'")
    called, target_problems = check_targets(invoker, target, targets)
    problems.extend(target_problems)
    kinds = [
        layer_problem("adapter_layer", adapter_layer),
        architecture_problem("architecture", architecture),
    ]
    problems.extend(kinds)
    if not any(kinds):
        _adapter_problems(invoker, adapter_layer, architecture, problems)
    problems.add(key_problem("log_encryption_key", log_encryption_key))
    if log_retention is not None:
        problems.add(log_retention_problem("log_retention", log_retention))
    if not isinstance(auth, InvokerAuth):
        problems.add(
            Problem.of(
                "auth",
                auth,
                "auth must be InvokerAuth.iam() or InvokerAuth.api_keys(secret), got "
                f"{describe(auth)};",
                "wrap a secret of keys as InvokerAuth.api_keys(secret)",
            )
        )
    problem = positive_int_problem("max_concurrency", max_concurrency)
    if problem is not None:
        problems.add(
            replace(
                problem,
                wrong=f"{problem.wrong};",
                fix="it is the function's reserved concurrency (requests at once), or leave it "
                "unset to use the account's pool",
            )
        )
    problems.add(
        duration_problem(
            "timeout",
            timeout,
            minimum_s=READ_TIMEOUT_MARGIN_S * 3,
            maximum_s=MAX_TIMEOUT_S,
            bounds=f"{READ_TIMEOUT_MARGIN_S * 3} s and 15 minutes",
            why="Lambda stops a function after 15 minutes, and the stream needs "
            f"{READ_TIMEOUT_MARGIN_S} s to end cleanly",
        )
    )
    if heartbeat is not None:
        problems.add(
            duration_problem(
                "heartbeat",
                heartbeat,
                minimum_s=1,
                maximum_s=300,
                bounds="1 and 300 seconds",
                why="CloudFront waits 30 s for an origin by default; beat more often than that",
            )
        )
    problems.add(_request_bytes_problem(max_request_bytes))
    problems.add(_reasoning_field_problem(reasoning_field))
    if cors is not None and not isinstance(cors, Cors):
        problems.add(
            Problem.of(
                "cors",
                cors,
                f"cors must be Cors(allowed_origins=[...]), got {describe(cors)}; e.g. "
                "cors=Cors(allowed_origins=['https://app.example.com'])",
            )
        )
    problems.add(_capacity_wait_problem(capacity_wait, timeout))
    problems.extend(availability_problems(Stack.of(invoker).region, INVOKER_FEATURES))
    if isinstance(memory_size, bool) or not isinstance(memory_size, int):
        problems.add(
            Problem.of(
                "memory_size",
                memory_size,
                f"memory_size must be an integer number of MiB, got {memory_size!r}",
            )
        )
    elif not 128 <= memory_size <= 10240:
        slip = (
            f"; memory_size is in MiB: for {memory_size} GiB pass memory_size={memory_size} * "
            f"1024 ({memory_size * 1024:,})"
            if 1 <= memory_size <= 10
            else ""
        )
        problems.add(
            Problem.of(
                "memory_size",
                memory_size,
                f"memory_size must be 128-10240 MiB, got {memory_size!r}{slip}",
            )
        )
    problems.raise_if_any()
    return called


def _capacity_wait_problem(wait: object, timeout: object) -> Problem | None:
    """``capacity_wait``: 1 s up to the function timeout less what the answer then needs."""
    if wait is None:
        return None
    seconds = timeout.to_seconds() if isinstance(timeout, Duration) else MAX_TIMEOUT_S
    if Token.is_unresolved(seconds):
        seconds = MAX_TIMEOUT_S
    longest = int(seconds) - CAPACITY_WAIT_MARGIN_S
    return duration_problem(
        "capacity_wait",
        wait,
        minimum_s=1,
        maximum_s=max(longest, 0),
        bounds=f"1 s and the timeout less {CAPACITY_WAIT_MARGIN_S} s ({max(longest, 0)} s)",
        why="a request held while its inference component wakes must still have time to be "
        "answered within the function's timeout; lower capacity_wait= or raise timeout=",
    )


def _request_bytes_problem(value: object) -> Problem | None:
    """``max_request_bytes``: 1 KiB up to the function URL's 6 MB request payload limit."""
    if value is None:
        return None
    fix = (
        "a vision request carries its images as base64 data URLs (4/3 of each image's size); "
        f"keep the default ({DEFAULT_MAX_REQUEST_BYTES:,}) or pass 1,024-{MAX_REQUEST_BYTES:,}"
    )
    if isinstance(value, bool) or not isinstance(value, int):
        return Problem.of(
            "max_request_bytes",
            value,
            f"max_request_bytes must be an integer number of bytes, got {describe(value)};",
            fix,
        )
    if not 1024 <= value <= MAX_REQUEST_BYTES:
        return Problem.of(
            "max_request_bytes",
            value,
            f"max_request_bytes must be between 1,024 and {MAX_REQUEST_BYTES:,} (the function "
            "URL's 6 MB request payload limit: Lambda refuses a larger body before the "
            f"runtime sees it), got {value:,};",
            fix,
        )
    return None


def _reasoning_field_problem(value: object) -> Problem | None:
    """``reasoning_field``: a ``ReasoningField``, or its value."""
    if value is None or isinstance(value, ReasoningField):
        return None
    if isinstance(value, str) and value in {field.value for field in ReasoningField}:
        return None
    allowed = ", ".join(f"ReasoningField.{each.name} ({each.value!r})" for each in ReasoningField)
    shown = repr(value) if isinstance(value, str) else describe(value)
    return Problem.of(
        "reasoning_field",
        value,
        f"reasoning_field must be one of {allowed}, got {shown};",
        "keep the default "
        "(reasoning) for current clients, or pass ReasoningField.REASONING_CONTENT for clients "
        "that read only the older name",
    )


def _adapter_problems(
    invoker: Construct, layer: object, architecture: object, problems: Problems
) -> None:
    """Without a layer the published one for the region decides the architecture, and a
    region outside the partitions it is published in needs a layer of the user's."""
    if layer is not None:
        problems.add(layer_architecture_problem(layer, architecture))
        return
    if isinstance(architecture, lambda_.Architecture):
        problems.add(
            Problem.of(
                "adapter_layer",
                None,
                f"architecture={architecture.name} needs adapter_layer=... built for it; without "
                "one "
                "the published layer for the region decides the architecture",
            )
        )
    problems.add(adapter_layer_problem(Stack.of(invoker).region))


def decode_time_warnings(targets: list[InvocationTarget], timeout: Duration) -> list[str]:
    """Targets whose ``max_total_tokens`` cannot be generated within the invoker's timeout at
    a plausible single-stream decode rate on their slowest hardware (their facts'
    ``slowest_decode``, from ``sizing/decode.py``). A warning, not an error: clients that cap
    ``max_tokens`` lower never need that long."""
    limit = int(timeout.to_seconds()) - READ_TIMEOUT_MARGIN_S
    found = []
    for target in targets:
        facts = target.facts
        tokens, slowest = facts.max_total_tokens, facts.slowest_decode
        if tokens is None or slowest is None:
            continue
        if slowest.seconds_for(tokens) > limit:
            found.append(_timeout_below_decode(target, tokens, slowest, limit))
    return found


def _timeout_below_decode(
    target: InvocationTarget, tokens: int, rate: DecodeRate, limit: int
) -> str:
    needed = rate.seconds_for(tokens)
    within = int(rate.tokens_per_s * limit)
    minutes = math.ceil((needed + READ_TIMEOUT_MARGIN_S) / 60)
    raise_timeout = (
        f"raise timeout (Duration.minutes({minutes}))"
        if minutes * 60 <= MAX_TIMEOUT_S
        else "the 15-minute maximum timeout is too short too"
    )
    return (
        f"{describe(target)}: a full-length answer may outlast the invoker's timeout: "
        f"max_total_tokens={tokens:,} at about {rate.tokens_per_s:.0f} tokens/s "
        f"({rate.describe()}) takes about {needed:,.0f} s, but the stream may read for "
        f"{limit:,} s; {raise_timeout}, lower max_total_tokens, or use async inference "
        f"(AsyncInference) for long generations. If clients cap max_tokens at about "
        f"{within:,} or less, acknowledge this warning"
    )


def check_distribution(
    invoker: Construct,
    *,
    has_distribution: bool,
    mode: AuthMode,
    heartbeat: Duration | None,
    oac: object,
    read_timeout: Duration,
    rate_limit: int | None,
    window: Duration,
    web_acl_arn: str | None,
    certificate: object = None,
    domain_names: object = None,
    public: object = None,
) -> None:
    """Raises one error naming every problem of ``add_distribution``'s arguments."""
    problems = Problems(f"StreamingInvoker '{invoker.node.path}'.add_distribution")
    problems.add(_viewer_auth_problem(mode, public))
    problems.add(duration_type_problem("rate_limit_window", window))
    problems.add(str_problem("web_acl_arn", web_acl_arn, example=_WEB_ACL_ARN))
    if has_distribution:
        problems.add(
            Problem.of(
                "add_distribution",
                None,
                "the invoker already has a distribution;",
                "use invoker.distribution",
            )
        )
    problems.add(_oac_problem(mode, oac))
    problems.add(
        duration_problem(
            "read_timeout",
            read_timeout,
            minimum_s=1,
            maximum_s=180,
            bounds="1 and 180 seconds",
            why="CloudFront's origin read timeout (above 60 s needs a quota increase)",
        )
    )
    problems.add(_heartbeat_problem(heartbeat, read_timeout))
    problems.add(_rate_limit_problem(rate_limit, window, web_acl_arn, Stack.of(invoker)))
    problems.extend(_certificate_problems(certificate, domain_names))
    problems.extend(availability_problems(Stack.of(invoker).region, distribution_features(oac)))
    problems.raise_if_any()


#: What the invoker renders that some regions lack (``data/regions.json``): its function URL.
INVOKER_FEATURES = ("AWS::Lambda::Function", "AWS::Lambda::Url")


def distribution_features(oac: object) -> list[str]:
    """What ``add_distribution`` renders that some regions lack: the distribution, and its
    origin access control when signed."""
    return ["AWS::CloudFront::Distribution"] + (
        ["AWS::CloudFront::OriginAccessControl"] if oac is True else []
    )


def _certificate_problems(certificate: object, domain_names: object) -> list[Problem | None]:
    """A certificate of one's own comes with the domain names it covers, and from us-east-1."""
    kind = certificate_problem("certificate", certificate)
    names = _domain_names_problems(domain_names)
    if kind or any(names):
        return [kind, *names]
    if certificate is None and domain_names is not None:
        return [
            Problem.of(
                "certificate",
                certificate,
                "domain_names=... need certificate=... (an ACM certificate in us-east-1 that "
                "covers them): CloudFront serves alternate domain names only with a certificate",
            )
        ]
    if certificate is None:
        return []
    if not domain_names:
        return [
            Problem.of(
                "certificate",
                certificate,
                "certificate=... needs domain_names=[...], the names it covers that clients call "
                "(e.g. ['llm.example.com']): CloudFront uses a certificate of one's own only for "
                "alternate domain names, and serves its *.cloudfront.net name with the default one",
            )
        ]
    return [_certificate_region_problem(certificate)]


def _is_domain_name(name: object) -> bool:
    return isinstance(name, str) and (
        Token.is_unresolved(name) or (len(name) <= 253 and bool(_DOMAIN.fullmatch(name)))
    )


def _not_a_domain_name(name: object) -> str:
    """What a domain name got instead, and the name it may have meant (a URL's host)."""
    if not isinstance(name, str):
        return describe(name)
    host = re.sub(r"^[a-z]+://", "", name).split("/")[0]
    hint = f"; did you mean {host!r}?" if host != name and _DOMAIN.fullmatch(host) else ""
    return f"{name!r}{hint}"


def _domain_names_problems(domain_names: object) -> list[Problem | None]:
    if domain_names is None:
        return []
    if not is_list(domain_names):
        return [not_a_list("domain_names", domain_names, "DNS names such as ['llm.example.com']")]
    found: list[Problem | None] = [
        Problem.of(
            f"domain_names[{i}]",
            name,
            f"domain_names[{i}] must be a DNS name such as 'llm.example.com' or "
            f"'*.example.com' (no scheme, port or path), got {_not_a_domain_name(name)}",
        )
        for i, name in enumerate(domain_names)
        if not _is_domain_name(name)
    ]
    strings = [n for n in domain_names if isinstance(n, str)]
    duplicates = sorted({n for n in strings if strings.count(n) > 1})
    if duplicates:
        found.append(
            Problem.of(
                "domain_names",
                duplicates,
                f"domain_names lists {', '.join(map(repr, duplicates))} more than once",
            )
        )
    return found


def _certificate_region_problem(certificate: object) -> Problem | None:
    """CloudFront takes ACM certificates from us-east-1 only: an imported ARN names its region,
    a certificate requested in a stack with a region is in that region."""
    arn = str(getattr(certificate, "certificate_arn", ""))
    if not Token.is_unresolved(arn):
        parts = arn.split(":")
        region = parts[3] if len(parts) > 5 else None
        where = f"its ARN {arn!r} is in {region!r}"
    else:
        region = Stack.of(certificate).region  # type: ignore[arg-type]
        where = f"it is requested in a stack in {region!r}"
    if region is None or Token.is_unresolved(region) or region == WAF_REGION:
        return None
    return Problem.of(
        "certificate",
        certificate,
        f"certificate: CloudFront takes ACM certificates from {WAF_REGION} only, but {where};",
        f"request the certificate in {WAF_REGION} (a stack of its own with "
        f"env=Environment(region='{WAF_REGION}') and cross_region_references=True) and pass it",
    )


def _heartbeat_problem(heartbeat: Duration | None, read_timeout: Duration) -> Problem | None:
    if heartbeat is None or not isinstance(read_timeout, Duration):
        return None
    beat, limit = heartbeat.to_seconds(), read_timeout.to_seconds()
    if beat < limit:
        return None
    return Problem.of(
        "read_timeout",
        read_timeout,
        f"the invoker's heartbeat ({beat:g} s) must be shorter than read_timeout "
        f"({limit:g} s), or CloudFront drops a stream still waiting for its first token;",
        "lower heartbeat= or raise read_timeout=",
    )


def _viewer_auth_problem(mode: AuthMode, public: object) -> Problem | None:
    """Who may call through the distribution must be a choice: with IAM auth, origin access
    control signs every viewer's request (CloudFront Developer Guide,
    private-content-restricting-access-to-lambda), so anyone who reaches the distribution
    calls the model; with API keys the keys authenticate viewers."""
    if public is not None and not isinstance(public, bool):
        return Problem.of(
            "public",
            public,
            f"public must be True or False, got {describe(public)}",
        )
    if mode is AuthMode.IAM and public is not True:
        return Problem.of(
            "public",
            public,
            "auth=InvokerAuth.iam() behind add_distribution() is an anonymous public API: "
            "CloudFront's origin access control signs every viewer's request with its own "
            "identity, so anyone who reaches the distribution can call the model, without "
            "AWS credentials;",
            "use auth=InvokerAuth.api_keys(secret) so keys authenticate "
            "viewers, or pass add_distribution(public=True) to say that anyone may call "
            "(and limit it with rate_limit=... or web_acl_arn=...)",
        )
    if mode is AuthMode.API_KEYS and public is True:
        return Problem.of(
            "public",
            public,
            "public=True with auth=InvokerAuth.api_keys(...): the keys authenticate every "
            "viewer, so the distribution is not public;",
            "drop public=True",
        )
    return None


def _oac_problem(mode: AuthMode, oac: object) -> Problem | None:
    if not isinstance(oac, bool):
        return Problem.of(
            "origin_access_control",
            oac,
            f"origin_access_control must be True or False, got {oac!r}",
        )
    if mode is AuthMode.IAM and not oac:
        return Problem.of(
            "origin_access_control",
            oac,
            "origin_access_control=False with auth=InvokerAuth.iam(): the function URL "
            "requires SigV4 (AWS_IAM), so CloudFront must sign with origin access control or "
            "every request gets 403;",
            "keep the default, or use auth=InvokerAuth.api_keys(secret) for an unsigned front door",
        )
    if mode is AuthMode.API_KEYS and oac:
        return Problem.of(
            "origin_access_control",
            oac,
            "origin_access_control=True with auth=InvokerAuth.api_keys(...): OAC needs an "
            "AWS_IAM function URL and overwrites the client's Authorization header, so no key "
            "would reach the runtime;",
            "keep the default (False)",
        )
    return None


def _rate_limit_problem(
    rate_limit: int | None, window: Duration, web_acl_arn: str | None, stack: Stack
) -> Problem | None:
    if rate_limit is None:
        return None
    if web_acl_arn is not None:
        return Problem.of(
            "rate_limit", rate_limit, "pass rate_limit=... or web_acl_arn=..., not both"
        )
    problem = positive_int_problem("rate_limit", rate_limit, minimum=_MIN_RATE_LIMIT)
    if problem is None and rate_limit > _MAX_RATE_LIMIT:
        wrong = f"rate_limit must be at most {_MAX_RATE_LIMIT:,}, got {rate_limit!r}"
        problem = Problem.of("rate_limit", rate_limit, wrong)
    if problem is not None:
        why = f"{problem.wrong} (requests per IP address per window; WAF's minimum is 10)"
        return replace(problem, wrong=why)
    seconds = window.to_seconds() if isinstance(window, Duration) else None
    if seconds not in (60, 120, 300, 600):
        wrong = f"rate_limit_window must be 1, 2, 5 or 10 minutes, got {window!r}"
        return Problem.of("rate_limit_window", window, wrong)
    if not Token.is_unresolved(stack.region) and stack.region != WAF_REGION:
        return Problem.of(
            "rate_limit",
            rate_limit,
            f"rate_limit=... creates a CloudFront WAF web ACL, which AWS accepts only in "
            f"{WAF_REGION}, but this stack is in {stack.region!r};",
            f"create the web ACL in a {WAF_REGION} stack and pass web_acl_arn=..., or deploy this "
            f"stack to {WAF_REGION}",
        )
    return None
