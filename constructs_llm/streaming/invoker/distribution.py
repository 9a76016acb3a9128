"""CloudFront in front of a StreamingInvoker's function URL: no caching, POST allowed, origin
timeouts fit for streaming, origin access control for IAM auth, an origin secret header for
API keys (``origin_secret.py``), an optional WAF rate rule.

Facts this module builds on (checked against the sources named):

- OAC for a Lambda function URL needs ``AuthType: AWS_IAM`` and signs every origin request
  ("always" overwrites the viewer's ``Authorization`` header), and for POST the *viewer* must
  send the body's SHA-256 in ``x-amz-content-sha256``: "Lambda doesn't support unsigned
  payloads" (CloudFront Developer Guide, private-content-restricting-access-to-lambda; API
  reference, OriginAccessControlConfig.SigningBehavior).
- Function URLs created since October 2025 need both ``lambda:InvokeFunctionUrl`` and
  ``lambda:InvokeFunction`` (aws/aws-cdk#35872). aws-cdk-lib 2.275's
  ``FunctionUrlOrigin.with_origin_access_control`` adds both, scoped by ``SourceArn`` to the
  distribution (``aws-cloudfront-origins/lib/function-url-origin.js``); tests assert them.
- CloudFront forwards the viewer's ``Authorization`` header only when a cache policy puts it
  in the cache key (AWS re:Post knowledge center, "cloudfront-authorization-header"); POST
  responses are never cached, and the policy's 1-second maximum keeps GETs keyed per key.
- The origin read timeout (time to the first byte, and between bytes) defaults to 30 s,
  minimum 1; values above 60 s may need a quota increase (CloudFront API
  ``OriginReadTimeout``; aws/aws-cdk#18628). The runtime's SSE heartbeat keeps a stream that
  waits for its first token inside it.
- With the default ``*.cloudfront.net`` certificate "CloudFront automatically sets the security
  policy to TLSv1 regardless of the value that you set"; a minimum of TLS 1.2 needs alternate
  domain names (``Aliases``) and a certificate of one's own, and "CloudFront only supports ACM
  certificates in the US East (N. Virginia) Region (us-east-1)" (botocore's CloudFront model
  2020-05-31, ``ViewerCertificate``: ``MinimumProtocolVersion``, ``ACMCertificateArn``).
- A WAF web ACL for CloudFront must be created in us-east-1 (CloudFormation
  ``AWS::WAFv2::WebACL`` ``Scope``); rate limits go from 10 requests per evaluation window
  (default 300 s) up (AWS WAF Developer Guide, rate-based rule high-level settings).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Aws, Duration, Fn, Stack, Token
from aws_cdk import aws_certificatemanager as acm
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from constructs_llm.compliance import CheckovSkip, NagAcknowledgment, waive
from constructs_llm.stack_rules import assert_before_deploy
from constructs_llm.streaming.invoker.checks import WAF_REGION
from constructs_llm.streaming.invoker.origin_secret import HEADER, header_value

#: The viewer security policy of a distribution with a certificate of its own.
_MINIMUM_PROTOCOL = cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021

# cdk-nag findings of a distribution whose fixes are choices the user makes (with reasons).
_DISTRIBUTION_NAG = {
    "AwsSolutions-CFR1": "Geo restrictions are a business decision; set them on the returned "
    "Distribution if needed.",
    "AwsSolutions-CFR3": "Every request is logged by the invoker's function (one JSON line, "
    "no prompt or key); CloudFront access logs would add a bucket to manage.",
}
# Without a certificate of its own the distribution serves *.cloudfront.net, whose TLSv1
# policy CloudFront sets and nobody can change.
_DEFAULT_CERTIFICATE_REASON = (
    "The default *.cloudfront.net certificate allows TLSv1 and CloudFront does not let its "
    "policy be changed; pass certificate=... (ACM, us-east-1) and domain_names=... to "
    "add_distribution for TLSv1.2_2021."
)
_NO_WAF_REASON = (
    "No web ACL was asked for: pass rate_limit=... (a WAF rate rule) or web_acl_arn=... to "
    "add_distribution."
)
_DISTRIBUTION_SKIPS = (
    CheckovSkip("CKV_AWS_86", _DISTRIBUTION_NAG["AwsSolutions-CFR3"]),
    CheckovSkip("CKV_AWS_305", "An API, not a website: there is no root object."),
    CheckovSkip("CKV_AWS_310", "One origin: the function URL (no failover group)."),
    CheckovSkip("CKV_AWS_374", _DISTRIBUTION_NAG["AwsSolutions-CFR1"]),
)
_WAF_LOG4J_SKIP = CheckovSkip(
    "CKV_AWS_192",
    "This web ACL holds the rate rule only; the origin is the invoker's Python runtime (no "
    "Log4j). Pass web_acl_arn=... for a web ACL with managed rule groups.",
)


@dataclass(frozen=True, kw_only=True)
class DistributionSettings:
    origin_access_control: bool
    read_timeout: Duration
    web_acl_arn: str | None
    certificate: acm.ICertificate | None = None
    domain_names: Sequence[str] | None = None
    #: API keys: the secret CloudFront sends as ``x-origin-verify`` (``origin_secret.py``).
    origin_secret: secretsmanager.ISecret | None = None


def build_distribution(
    scope: Construct, url: lambda_.FunctionUrl, settings: DistributionSettings
) -> cloudfront.Distribution:
    """The distribution: one behavior for every path, straight to the function URL; the
    findings whose fixes are the user's choices are recorded with their reasons."""
    if settings.origin_access_control:
        origin: cloudfront.IOrigin = origins.FunctionUrlOrigin.with_origin_access_control(
            url, read_timeout=settings.read_timeout
        )
        cache_policy = cloudfront.CachePolicy.CACHING_DISABLED
    else:
        secret = settings.origin_secret
        origin = origins.FunctionUrlOrigin(
            url,
            read_timeout=settings.read_timeout,
            custom_headers={HEADER: header_value(secret)} if secret is not None else None,
        )
        cache_policy = _authorization_key_policy(scope)
    certificate = settings.certificate
    if certificate is not None:
        _assert_certificate_region(certificate)
    distribution = cloudfront.Distribution(
        scope,
        "Distribution",
        comment="Streaming LLM invoker (constructs_llm)",
        default_behavior=cloudfront.BehaviorOptions(
            origin=origin,
            allowed_methods=cloudfront.AllowedMethods.ALLOW_ALL,
            cached_methods=cloudfront.CachedMethods.CACHE_GET_HEAD,
            viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
            cache_policy=cache_policy,
            # Every viewer header but Host (the function URL answers to its own host name),
            # including x-amz-content-sha256, which OAC signs.
            origin_request_policy=cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
            compress=False,  # compression would hold back SSE events
        ),
        http_version=cloudfront.HttpVersion.HTTP2_AND_3,
        web_acl_id=settings.web_acl_arn,
        # a certificate of the user's, its domain names, SNI and TLSv1.2_2021; else the
        # default *.cloudfront.net certificate
        certificate=certificate,
        domain_names=list(settings.domain_names or ()) if certificate else None,
        minimum_protocol_version=_MINIMUM_PROTOCOL if certificate else None,
        ssl_support_method=cloudfront.SSLMethod.SNI if certificate else None,
    )
    _acknowledge(
        distribution,
        waf=settings.web_acl_arn is not None,
        own_certificate=certificate is not None,
    )
    return distribution


def _acknowledge(
    distribution: cloudfront.Distribution, *, waf: bool, own_certificate: bool
) -> None:
    reasons = dict(_DISTRIBUTION_NAG)
    skips = list(_DISTRIBUTION_SKIPS)
    if not own_certificate:
        reasons["AwsSolutions-CFR4"] = _DEFAULT_CERTIFICATE_REASON
        skips.insert(0, CheckovSkip("CKV_AWS_174", _DEFAULT_CERTIFICATE_REASON))
    if not waf:
        reasons["AwsSolutions-CFR2"] = _NO_WAF_REASON
        skips.append(CheckovSkip("CKV_AWS_68", _NO_WAF_REASON))
    for rule, reason in reasons.items():
        waive(distribution, NagAcknowledgment(rule, reason=reason))
    waive(distribution.node.default_child, *skips)


def _authorization_key_policy(scope: Construct) -> cloudfront.CachePolicy:
    """Forwards ``Authorization`` (API keys) the one way CloudFront allows: in the cache key.
    Nothing is kept past one second, and never across keys."""
    return cloudfront.CachePolicy(
        scope,
        "AuthorizationKey",
        comment="Forward Authorization to the invoker; effectively no caching",
        default_ttl=Duration.seconds(0),
        min_ttl=Duration.seconds(0),
        max_ttl=Duration.seconds(1),
        header_behavior=cloudfront.CacheHeaderBehavior.allow_list("Authorization"),
        query_string_behavior=cloudfront.CacheQueryStringBehavior.all(),
        cookie_behavior=cloudfront.CacheCookieBehavior.none(),
    )


def rate_limit_web_acl(scope: Construct, *, limit: int, window: Duration) -> wafv2.CfnWebACL:
    """A CloudFront web ACL that blocks an IP address above ``limit`` requests per window."""
    _assert_waf_region(Stack.of(scope))
    visibility = wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True,
        metric_name="StreamingInvokerRateLimit",
        sampled_requests_enabled=True,
    )
    rule = wafv2.CfnWebACL.RuleProperty(
        name="RateLimitPerIp",
        priority=0,
        action=wafv2.CfnWebACL.RuleActionProperty(block={}),
        statement=wafv2.CfnWebACL.StatementProperty(
            rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                aggregate_key_type="IP",
                limit=limit,
                evaluation_window_sec=int(window.to_seconds()),
            )
        ),
        visibility_config=visibility,
    )
    web_acl = wafv2.CfnWebACL(
        scope,
        "RateLimit",
        scope="CLOUDFRONT",
        default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
        rules=[rule],
        visibility_config=visibility,
    )
    waive(web_acl, _WAF_LOG4J_SKIP)
    return web_acl


def _assert_waf_region(stack: Stack) -> None:
    """An environment-agnostic stack gets a rule that stops a deploy outside us-east-1 in
    seconds, before anything is created (a concrete region is checked at synth)."""
    _assert_us_east_1(
        stack,
        "ConstructsLlmWafRegion",
        "StreamingInvoker.add_distribution(rate_limit=...) creates a CloudFront WAF web ACL, "
        "which AWS accepts only in us-east-1: deploy this stack there, or create the web ACL "
        "in a us-east-1 stack and pass web_acl_arn=...",
    )


def _assert_certificate_region(certificate: acm.ICertificate) -> None:
    """A certificate requested in an environment-agnostic stack is in whatever region the
    stack deploys to: a rule stops a deploy outside us-east-1 (a concrete region, or an
    imported certificate's ARN, is checked at synth)."""
    if isinstance(certificate, acm.Certificate):
        _assert_us_east_1(
            Stack.of(certificate),
            "ConstructsLlmCertificateRegion",
            "StreamingInvoker.add_distribution(certificate=...): CloudFront takes ACM "
            "certificates from us-east-1 only, and this stack requests the certificate in the "
            "region it deploys to: deploy it to us-east-1, or request the certificate in a "
            "us-east-1 stack and pass it",
        )


def _assert_us_east_1(stack: Stack, rule_id: str, description: str) -> None:
    if Token.is_unresolved(stack.region):
        assert_before_deploy(
            stack, rule_id, Fn.condition_equals(Aws.REGION, WAF_REGION), description
        )
