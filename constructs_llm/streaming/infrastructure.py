"""StreamingInvoker: a Lambda function URL that streams an LLM's tokens as OpenAI chunks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aws_cdk import (
    ArnFormat,
    Aws,
    CfnResource,
    Duration,
    Fn,
    RemovalPolicy,
    Stack,
    Token,
)
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct, IConstruct

from constructs_llm import catalogs
from constructs_llm._compliance import CheckovSkip, NagAcknowledgment, waive
from constructs_llm._validation import Problems, describe, duration_problem, positive_int_problem
from constructs_llm.errors import ConfigurationError
from constructs_llm.invocation_target import InvocationTarget
from constructs_llm.streaming.distribution import (
    MAX_RATE_LIMIT,
    MIN_RATE_LIMIT,
    WAF_REGION,
    DistributionSettings,
    build_distribution,
    rate_limit_web_acl,
)
from constructs_llm.streaming.invoker_auth import AuthMode, InvokerAuth
from constructs_llm.streaming.invoker_metrics import InvokerMetrics
from constructs_llm.streaming.runtime.metrics import NAMESPACE
from constructs_llm.streaming.stack_rules import assert_before_deploy
from constructs_llm.streaming.targets import (
    check_targets,
    environment_size_problem,
    routes_environment,
)

__all__ = ["StreamingInvoker", "adapter_layer_arn"]

_RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"
_PORT = "8080"
_MAX_TIMEOUT_S = 900
# Stream reads give up a little before the function itself would be stopped.
_READ_TIMEOUT_MARGIN_S = 10
_CONCURRENCY_SKIP = {
    "id": "CKV_AWS_115",
    "comment": "Reserved concurrency is left to the account unless max_concurrency=... is "
    "given: reserving any by default fails deploys in accounts whose unreserved concurrency "
    "is at the minimum.",
}
# checkov checks that do not apply to a synchronous, URL-invoked streaming function.
_CHECKOV_SKIPS = [
    {
        "id": "CKV_AWS_116",
        "comment": "Invoked synchronously through its function URL; a dead-letter queue only "
        "applies to asynchronous invocations.",
    },
    {
        "id": "CKV_AWS_117",
        "comment": "Needs only the SageMaker Runtime API; pass vpc=... to run it in a VPC.",
    },
    {
        "id": "CKV_AWS_173",
        "comment": "The environment holds names and settings only (no secrets).",
    },
]


_PUBLIC_URL_REASON = (
    "API-key auth: the function URL is public by design (OpenAI clients cannot sign "
    "requests); the runtime checks a Bearer key from Secrets Manager before any other work "
    "and answers 401 without one. max_concurrency=... caps what a flood can run."
)
# cdk-nag findings of a distribution whose fixes are choices the user makes (with reasons).
_DISTRIBUTION_NAG = {
    "AwsSolutions-CFR1": "Geo restrictions are a business decision; set them on the returned "
    "Distribution if needed.",
    "AwsSolutions-CFR3": "Every request is logged by the invoker's function (one JSON line, "
    "no prompt or key); CloudFront access logs would add a bucket to manage.",
    "AwsSolutions-CFR4": "The default *.cloudfront.net certificate allows TLSv1; add a domain "
    "and certificate to the returned Distribution to require TLS 1.2.",
}
_NO_WAF_REASON = (
    "No web ACL was asked for: pass rate_limit=... (a WAF rate rule) or web_acl_arn=... to "
    "add_distribution."
)
_DISTRIBUTION_SKIPS = [
    {"id": "CKV_AWS_174", "comment": _DISTRIBUTION_NAG["AwsSolutions-CFR4"]},
    {"id": "CKV_AWS_86", "comment": _DISTRIBUTION_NAG["AwsSolutions-CFR3"]},
    {"id": "CKV_AWS_305", "comment": "An API, not a website: there is no root object."},
    {"id": "CKV_AWS_310", "comment": "One origin: the function URL (no failover group)."},
    {"id": "CKV_AWS_374", "comment": _DISTRIBUTION_NAG["AwsSolutions-CFR1"]},
]
_WAF_LOG4J_SKIP = {
    "id": "CKV_AWS_192",
    "comment": "This web ACL holds the rate rule only; the origin is the invoker's Python "
    "runtime (no Log4j). Pass web_acl_arn=... for a web ACL with managed rule groups.",
}
# A heartbeat well inside CloudFront's origin read timeout, when the invoker has none.
_DISTRIBUTION_HEARTBEAT_S = 15

_LOG_KEY_SKIP = {
    "id": "CKV_AWS_158",
    "comment": "CloudWatch Logs encrypts every log group at rest; these logs hold request "
    "metadata only. Pass log_encryption_key=... for a customer-managed key.",
}


class StreamingInvoker(InvokerMetrics, Construct):
    """A streaming, OpenAI-compatible front door to one or several models: ``LlmEndpoint``,
    ``InferenceComponent`` or adapter (``component.add_adapter``) targets.

    A Python Lambda (stdlib + boto3, no bundling) behind the Lambda Web Adapter layer, with a
    function URL in ``RESPONSE_STREAM`` mode: ``AWS_IAM`` auth by default, or public with
    Bearer keys checked by the runtime (``auth=InvokerAuth.api_keys(secret)``).
    ``add_distribution()`` puts CloudFront in front. ``POST /v1/chat/completions`` works for
    every engine; tokens are flushed as they arrive. Each chat request's log line is also a
    CloudWatch Embedded Metric Format record of its LLM metrics (time to first token, duration,
    tokens, pace, errors by kind, disconnects), read with ``metric_*()``.

    With ``targets=[...]`` the request's ``model`` picks the target (its served model name:
    ``served_model_name=``, else derived; an adapter's name), each with its own request and
    stream format; ``GET /v1/models`` lists them all and an unknown ``model`` gets a 404
    (``model_not_found``). The function may invoke exactly those endpoints and components.

    :param target: the endpoint, inference component or adapter to call. @default none: give
        ``targets`` instead
    :param timeout: longest request, generation included. @default 5 minutes (max 15)
    :param memory_size: MiB. @default 512
    :param architecture: the function's architecture, which must match ``adapter_layer``.
        @default arm64, or what the published layer for the region needs
    :param adapter_layer: the Lambda Web Adapter layer. @default the published layer for the
        stack's region (arm64 in commercial regions, x86_64 in China)
    :param log_retention: @default one month
    :param heartbeat: while the first token is awaited, send an SSE comment this often, so a
        proxy in front (CloudFront waits 30 s by default) does not drop the request. Once a
        beat was sent, a failure before the first token arrives as an error event in the
        stream instead of an HTTP status. @default no heartbeat
    :param log_encryption_key: customer key for the log group. @default CloudWatch Logs'
        own encryption (logs hold request metadata only, never prompts or completions)
    :param auth: ``InvokerAuth.iam()`` (SigV4) or ``InvokerAuth.api_keys(secret)`` (Bearer
        keys: the URL is public and the runtime checks the key). @default ``InvokerAuth.iam()``
    :param max_concurrency: reserved concurrency: at most this many requests run at once, so
        a flood (authenticated or not) can cost at most this many concurrent executions;
        requests above it get 429. @default none reserved (the account's pool)
    :param targets: several models behind one URL, routed by the request's ``model``; each
        in the invoker's stack (import endpoints from elsewhere with
        ``LlmEndpoint.from_endpoint_attributes``), each served model name once.
        @default none: ``target``
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        target: InvocationTarget | None = None,
        timeout: Duration | None = None,
        memory_size: int = 512,
        adapter_layer: lambda_.ILayerVersion | None = None,
        architecture: lambda_.Architecture | None = None,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        log_encryption_key: kms.IKey | None = None,
        heartbeat: Duration | None = None,
        auth: InvokerAuth | None = None,
        max_concurrency: int | None = None,
        targets: Sequence[InvocationTarget] | None = None,
    ) -> None:
        super().__init__(scope, id)
        timeout = timeout or Duration.minutes(5)
        auth = InvokerAuth.iam() if auth is None else auth
        called = _check(
            self, target, targets, timeout, memory_size, heartbeat, auth, max_concurrency
        )
        self._heartbeat = heartbeat
        self.auth = auth
        #: Every target; ``target`` is the first.
        self.targets = tuple(called)
        self.target = called[0]
        environment = self._environment(called, timeout)
        too_big = environment_size_problem(environment, called)
        if too_big:
            raise ConfigurationError(f"StreamingInvoker '{self.node.path}': {too_big}")
        self.distribution: cloudfront.Distribution | None = None
        architecture, layer = self._adapter(adapter_layer, architecture)
        log_group = logs.LogGroup(
            self,
            "Logs",
            retention=log_retention,
            encryption_key=log_encryption_key,
            removal_policy=RemovalPolicy.DESTROY,
        )
        if log_encryption_key is None:
            _skip_checkov(log_group.node.default_child, _LOG_KEY_SKIP)
        else:
            _allow_logs_to_use(log_encryption_key, Stack.of(self))
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Streaming invoker of an LLM endpoint (constructs_llm)",
        )
        log_group.grant_write(self.role)
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=lambda_.Runtime.PYTHON_3_14,
            architecture=architecture,
            code=_runtime_code(),
            handler="runtime/run.sh",
            layers=[layer],
            timeout=timeout,
            memory_size=memory_size,
            role=self.role,
            log_group=log_group,
            retry_attempts=0,
            reserved_concurrent_executions=max_concurrency,
            environment=environment,
        )
        skips = _CHECKOV_SKIPS if max_concurrency else [_CONCURRENCY_SKIP, *_CHECKOV_SKIPS]
        _skip_checkov(self.function.node.default_child, *skips)
        for each in called:
            each.grant_invoke(self.role)
        for name, value in auth.bind(self.function).items():
            self.function.add_environment(name, value)
        _depend_on_policy_only(self.function, self.role)
        self.function_url = self.function.add_function_url(
            auth_type=auth.url_auth_type,
            invoke_mode=lambda_.InvokeMode.RESPONSE_STREAM,
        )
        if auth.mode is AuthMode.API_KEYS:
            _record_public_url(self.function_url, self.function)

    @property
    def url(self) -> str:
        """The function URL; append ``v1`` for an OpenAI client's ``base_url``."""
        return self.function_url.url

    @property
    def distribution_url(self) -> str | None:
        """``https://<domain>/`` of the distribution (``add_distribution``), else None."""
        if self.distribution is None:
            return None
        return f"https://{self.distribution.distribution_domain_name}/"

    def grant_invoke_url(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` call the URL (``InvokeFunctionUrl`` and, via the URL only,
        ``InvokeFunction``, as function URLs require since October 2025)."""
        return self.function.grant_invoke_url(grantee)

    def add_distribution(
        self,
        *,
        origin_access_control: bool | None = None,
        read_timeout: Duration | None = None,
        rate_limit: int | None = None,
        rate_limit_window: Duration | None = None,
        web_acl_arn: str | None = None,
    ) -> cloudfront.Distribution:
        """CloudFront in front of the function URL, for browsers and CDN or WAF fronts:
        caching off, every method (POST) allowed, HTTPS only, no compression.

        With ``InvokerAuth.iam()`` CloudFront signs each request with origin access control
        and becomes the only caller the URL admits (both ``lambda:InvokeFunctionUrl`` and
        ``lambda:InvokeFunction``, scoped to this distribution): viewers need no AWS
        credentials, but a POST must carry its body's SHA-256 in ``x-amz-content-sha256``
        (``constructs_llm.streaming.content_sha256_hook``). With API keys the viewer's
        ``Authorization: Bearer`` header is forwarded and checked by the runtime; the function
        URL itself stays reachable with a key.

        If the invoker has no ``heartbeat``, one of 15 s (at most half ``read_timeout``) is
        set, so a stream waiting for its first token outlives the origin read timeout.

        :param origin_access_control: sign origin requests (OAC). Required with IAM auth (a
            distribution cannot call an ``AWS_IAM`` URL unsigned); refused with API keys
            (OAC overwrites ``Authorization`` and needs an ``AWS_IAM`` URL).
            @default True with IAM auth, False with API keys
        :param read_timeout: CloudFront's origin read timeout: the longest silence it accepts
            from the function, including before the first byte (a ``stream: false`` answer
            must be complete within it). Above 60 s needs a CloudFront quota increase.
            @default 60 seconds (1-180)
        :param rate_limit: add a WAF web ACL that blocks an IP address sending more than this
            many requests per ``rate_limit_window``. CloudFront web ACLs exist only in
            us-east-1, so the stack must deploy there. @default no WAF
        :param rate_limit_window: 1, 2, 5 or 10 minutes. @default 5 minutes
        :param web_acl_arn: an existing CloudFront web ACL instead (e.g. from a us-east-1
            stack). @default none
        """
        read_timeout = read_timeout or Duration.seconds(60)
        window = rate_limit_window or Duration.minutes(5)
        oac = (
            self.auth.mode is AuthMode.IAM
            if origin_access_control is None
            else origin_access_control
        )
        self._check_distribution(oac, read_timeout, rate_limit, window, web_acl_arn)
        if rate_limit is not None:
            web_acl = rate_limit_web_acl(self, limit=rate_limit, window=window)
            _skip_checkov(web_acl, _WAF_LOG4J_SKIP)
            web_acl_arn = web_acl.attr_arn
        if self._heartbeat is None:
            beat = min(_DISTRIBUTION_HEARTBEAT_S, max(1, int(read_timeout.to_seconds()) // 2))
            self.function.add_environment("HEARTBEAT_SECONDS", str(beat))
        self.distribution = build_distribution(
            self,
            self.function_url,
            DistributionSettings(
                origin_access_control=oac, read_timeout=read_timeout, web_acl_arn=web_acl_arn
            ),
        )
        _acknowledge_distribution(self.distribution, waf=web_acl_arn is not None)
        return self.distribution

    def _check_distribution(
        self,
        oac: object,
        read_timeout: Duration,
        rate_limit: int | None,
        window: Duration,
        web_acl_arn: str | None,
    ) -> None:
        problems = Problems(f"StreamingInvoker '{self.node.path}'.add_distribution")
        if self.distribution is not None:
            problems.add("the invoker already has a distribution; use invoker.distribution")
        problems.add(_oac_problem(self.auth.mode, oac))
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
        problems.add(self._heartbeat_problem(read_timeout))
        problems.add(_rate_limit_problem(rate_limit, window, web_acl_arn, Stack.of(self)))
        problems.raise_if_any()

    def _heartbeat_problem(self, read_timeout: Duration) -> str | None:
        if self._heartbeat is None or not isinstance(read_timeout, Duration):
            return None
        beat, limit = self._heartbeat.to_seconds(), read_timeout.to_seconds()
        if beat < limit:
            return None
        return (
            f"the invoker's heartbeat ({beat:g} s) must be shorter than read_timeout "
            f"({limit:g} s), or CloudFront drops a stream still waiting for its first token; "
            "lower heartbeat= or raise read_timeout="
        )

    def _environment(
        self, targets: Sequence[InvocationTarget], timeout: Duration
    ) -> dict[str, str]:
        routes = routes_environment(self, targets)
        component = routes.pop("INFERENCE_COMPONENT_NAME", None)
        env = {
            "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
            "AWS_LWA_INVOKE_MODE": "response_stream",
            "AWS_LWA_PORT": _PORT,
            "AWS_LWA_READINESS_CHECK_PATH": "/health",
            "PORT": _PORT,
            **routes,
            "UPSTREAM_READ_TIMEOUT": str(_read_timeout(timeout)),
            "METRICS_NAMESPACE": NAMESPACE,
        }
        if component is not None:  # listed last, as before routing existed
            env["INFERENCE_COMPONENT_NAME"] = component
        if self._heartbeat is not None:
            env["HEARTBEAT_SECONDS"] = str(int(self._heartbeat.to_seconds()))
        return env

    def _adapter(
        self, layer: lambda_.ILayerVersion | None, architecture: lambda_.Architecture | None
    ) -> tuple[lambda_.Architecture, lambda_.ILayerVersion]:
        if layer is not None:
            return architecture or lambda_.Architecture.ARM_64, layer
        if architecture is not None:
            raise ConfigurationError(
                f"StreamingInvoker '{self.node.path}': architecture={architecture.name} needs "
                "adapter_layer=... built for it; without one the published layer for the "
                "region decides the architecture"
            )
        stack = Stack.of(self)
        arn, arch = adapter_layer_arn(stack.region)
        if Token.is_unresolved(stack.region):
            _commercial_partition_rule(stack)
        architecture = (
            lambda_.Architecture.ARM_64 if arch == "arm64" else lambda_.Architecture.X86_64
        )
        return architecture, lambda_.LayerVersion.from_layer_version_arn(self, "Adapter", arn)


def _oac_problem(mode: AuthMode, oac: object) -> str | None:
    if not isinstance(oac, bool):
        return f"origin_access_control must be True or False, got {oac!r}"
    if mode is AuthMode.IAM and not oac:
        return (
            "origin_access_control=False with auth=InvokerAuth.iam(): the function URL "
            "requires SigV4 (AWS_IAM), so CloudFront must sign with origin access control or "
            "every request gets 403; keep the default, or use "
            "auth=InvokerAuth.api_keys(secret) for an unsigned front door"
        )
    if mode is AuthMode.API_KEYS and oac:
        return (
            "origin_access_control=True with auth=InvokerAuth.api_keys(...): OAC needs an "
            "AWS_IAM function URL and overwrites the client's Authorization header, so no key "
            "would reach the runtime; keep the default (False)"
        )
    return None


def _rate_limit_problem(
    rate_limit: int | None, window: Duration, web_acl_arn: str | None, stack: Stack
) -> str | None:
    if rate_limit is None:
        return None
    if web_acl_arn is not None:
        return "pass rate_limit=... or web_acl_arn=..., not both"
    problem = positive_int_problem("rate_limit", rate_limit, minimum=MIN_RATE_LIMIT)
    if problem is None and rate_limit > MAX_RATE_LIMIT:
        problem = f"rate_limit must be at most {MAX_RATE_LIMIT:,}, got {rate_limit!r}"
    if problem is not None:
        return f"{problem} (requests per IP address per window; WAF's minimum is 10)"
    seconds = window.to_seconds() if isinstance(window, Duration) else None
    if seconds not in (60, 120, 300, 600):
        return f"rate_limit_window must be 1, 2, 5 or 10 minutes, got {window!r}"
    if not Token.is_unresolved(stack.region) and stack.region != WAF_REGION:
        return (
            f"rate_limit=... creates a CloudFront WAF web ACL, which AWS accepts only in "
            f"{WAF_REGION}, but this stack is in {stack.region!r}; create the web ACL in a "
            f"{WAF_REGION} stack and pass web_acl_arn=..., or deploy this stack to {WAF_REGION}"
        )
    return None


def _record_public_url(url: lambda_.FunctionUrl, function: lambda_.Function) -> None:
    """API-key auth: the public URL's checkov findings and cdk-nag findings, with reasons."""
    _skip_checkov(url.node.default_child, {"id": "CKV_AWS_258", "comment": _PUBLIC_URL_REASON})
    for child in function.node.find_all():
        if isinstance(child, lambda_.CfnPermission) and child.principal == "*":
            _skip_checkov(child, {"id": "CKV_AWS_301", "comment": _PUBLIC_URL_REASON})


def _acknowledge_distribution(distribution: cloudfront.Distribution, *, waf: bool) -> None:
    reasons = dict(_DISTRIBUTION_NAG)
    skips = list(_DISTRIBUTION_SKIPS)
    if not waf:
        reasons["AwsSolutions-CFR2"] = _NO_WAF_REASON
        skips.append({"id": "CKV_AWS_68", "comment": _NO_WAF_REASON})
    for rule, reason in reasons.items():
        waive(distribution, NagAcknowledgment(rule, reason=reason))
    _skip_checkov(distribution.node.default_child, *skips)


def _allow_logs_to_use(key: kms.IKey, stack: Stack) -> None:
    """CloudWatch Logs encrypts with the key only if the key policy lets it (an imported key's
    policy cannot be changed here: it must already allow this)."""
    key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal(f"logs.{stack.region}.{stack.url_suffix}")],
            actions=[
                "kms:Encrypt",
                "kms:Decrypt",
                "kms:ReEncryptFrom",
                "kms:ReEncryptTo",
                "kms:GenerateDataKey",
                "kms:GenerateDataKeyWithoutPlaintext",
                "kms:DescribeKey",
            ],
            resources=["*"],  # in a key policy, "*" means this key
            conditions={
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": stack.format_arn(
                        service="logs",
                        resource="log-group",
                        resource_name="*",
                        arn_format=ArnFormat.COLON_RESOURCE_NAME,
                    )
                }
            },
        )
    )


def _commercial_partition_rule(stack: Stack) -> None:
    """An environment-agnostic stack uses the commercial layer ARN; outside the commercial
    partition the deploy stops in seconds, before any resource is created, saying why."""
    assert_before_deploy(
        stack,
        "ConstructsLlmAdapterPartition",
        Fn.condition_equals(Aws.PARTITION, "aws"),
        "StreamingInvoker: this environment-agnostic stack uses the Lambda Web Adapter layer "
        "of the commercial partition; give the stack a concrete region (China gets its x86_64 "
        "layer) or pass adapter_layer=...",
    )


def _depend_on_policy_only(function: lambda_.Function, role: iam.Role) -> None:
    """The Function's GetAtt on the role already orders it after the role; CDK's extra
    DependsOn on the role is a cfn-lint W3005. Keep only the policy edge."""
    policy = role.node.find_child("DefaultPolicy").node.default_child
    cfn = function.node.default_child
    if isinstance(policy, CfnResource) and isinstance(cfn, CfnResource):
        cfn.add_override("DependsOn", [policy.logical_id])


def _skip_checkov(resource: IConstruct | None, *skips: dict[str, str]) -> None:
    """Records checkov skips, each with its reason, in the resource's metadata."""
    if isinstance(resource, CfnResource):
        waive(resource, *(CheckovSkip(s["id"], s["comment"]) for s in skips))


def adapter_layer_arn(region: str) -> tuple[str, str]:
    """The Lambda Web Adapter layer ARN and its architecture for ``region`` (may be a token)."""
    data = catalogs.lwa_layers()
    version = data.version
    commercial = data.commercial
    if Token.is_unresolved(region):
        name = commercial.layers["arm64"]
        arn = f"arn:aws:lambda:{region}:{commercial.account}:layer:{name}:{version}"
        return arn, "arm64"
    china = data.china.accounts.get(region)
    if china is not None:
        name = data.china.layers["x86_64"]
        return f"arn:aws-cn:lambda:{region}:{china}:layer:{name}:{version}", "x86_64"
    if any(region.startswith(p) for p in data.unsupported_partition_prefixes):
        raise ConfigurationError(
            f"no published Lambda Web Adapter layer is known for region {region!r}; publish "
            "the adapter in that partition and pass adapter_layer=LayerVersion."
            "from_layer_version_arn(...) (an arm64 build)"
        )
    name = commercial.layers["arm64"]
    return f"arn:aws:lambda:{region}:{commercial.account}:layer:{name}:{version}", "arm64"


def _check(
    invoker: Construct,
    target: object,
    targets: object,
    timeout: Duration,
    memory_size: int,
    heartbeat: Duration | None,
    auth: object,
    max_concurrency: int | None,
) -> list[InvocationTarget]:
    """The invoker's targets; raises one error naming every problem of the props."""
    problems = Problems(f"StreamingInvoker '{invoker.node.path}'")
    called, target_problems = check_targets(invoker, target, targets)
    problems.extend(target_problems)
    if not isinstance(auth, InvokerAuth):
        problems.add(
            f"auth must be InvokerAuth.iam() or InvokerAuth.api_keys(secret), got "
            f"{describe(auth)}; wrap a secret of keys as InvokerAuth.api_keys(secret)"
        )
    problem = positive_int_problem("max_concurrency", max_concurrency)
    if problem is not None:
        problems.add(
            f"{problem}; it is the function's reserved concurrency (requests at once), or "
            "leave it unset to use the account's pool"
        )
    problems.add(
        duration_problem(
            "timeout",
            timeout,
            minimum_s=_READ_TIMEOUT_MARGIN_S * 3,
            maximum_s=_MAX_TIMEOUT_S,
            bounds=f"{_READ_TIMEOUT_MARGIN_S * 3} s and 15 minutes",
            why="Lambda stops a function after 15 minutes, and the stream needs "
            f"{_READ_TIMEOUT_MARGIN_S} s to end cleanly",
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
    if isinstance(memory_size, bool) or not isinstance(memory_size, int):
        problems.add(f"memory_size must be an integer number of MiB, got {memory_size!r}")
    elif not 128 <= memory_size <= 10240:
        problems.add(f"memory_size must be 128-10240 MiB, got {memory_size!r}")
    problems.raise_if_any()
    return called


def _read_timeout(timeout: Duration) -> int:
    return int(timeout.to_seconds()) - _READ_TIMEOUT_MARGIN_S


def _runtime_code() -> lambda_.Code:
    """The runtime package alone, as ``runtime/`` at the asset root (no bundling step)."""
    return lambda_.Code.from_asset(
        str(_RUNTIME_DIR.parent),
        exclude=["*", "!runtime", "!runtime/**", "**/__pycache__", "**/*.pyc"],
    )
