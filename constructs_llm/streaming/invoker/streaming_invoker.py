"""StreamingInvoker: a Lambda function URL that streams an LLM's tokens as OpenAI chunks.

The construct composes its parts: the adapter layer (``adapter_layer.py``), the function's
environment (``environment.py``, with its targets' routes from ``targets.py``), its code asset,
log group and waivers (``function.py``), the checks of its props (``checks.py``), its front
doors (``auth.py``, ``distribution.py``) and its metrics (``metrics.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from constructs_llm.cdk_values import grantee_problem
from constructs_llm.contract import Env, ReasoningField
from constructs_llm.hosting.target import InvocationTarget
from constructs_llm.problems import Problem, fail
from constructs_llm.region_availability import assert_available
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.streaming.invoker.adapter_layer import adapter_for
from constructs_llm.streaming.invoker.auth import AuthMode, InvokerAuth
from constructs_llm.streaming.invoker.checks import (
    INVOKER_FEATURES,
    check_distribution,
    check_invoker,
    decode_time_warnings,
    distribution_features,
)
from constructs_llm.streaming.invoker.cors import Cors
from constructs_llm.streaming.invoker.environment import invoker_environment
from constructs_llm.streaming.invoker.function import (
    HANDLER,
    depend_on_policy_only,
    invoker_log_group,
    record_public_url,
    runtime_code,
    waive_function_checks,
    warn_reserved_concurrency,
)
from constructs_llm.streaming.invoker.metrics import InvokerMetrics
from constructs_llm.streaming.invoker.targets import environment_size_problem

if TYPE_CHECKING:
    from aws_cdk import aws_certificatemanager as acm
    from aws_cdk import aws_cloudfront as cloudfront
    from aws_cdk import aws_s3 as s3
    from aws_cdk import aws_secretsmanager as secretsmanager

    from constructs_llm.hosting.endpoint import LlmEndpoint
    from constructs_llm.streaming.invoker.batch_api import BatchApi

# A heartbeat well inside CloudFront's origin read timeout, when the invoker has none.
_DISTRIBUTION_HEARTBEAT_S = 15


class StreamingInvoker(InvokerMetrics, Construct):
    """A streaming, OpenAI-compatible front door to one or several models: ``LlmEndpoint``,
    ``InferenceComponent`` or adapter (``component.add_adapter``) targets.

    A Python Lambda (stdlib + boto3, no bundling) behind the Lambda Web Adapter layer, with a
    function URL in ``RESPONSE_STREAM`` mode: ``AWS_IAM`` auth by default, or public with
    Bearer keys checked by the runtime (``auth=InvokerAuth.api_keys(secret)``).
    ``add_distribution()`` puts CloudFront in front. ``POST /v1/chat/completions`` works for
    every engine, and so does ``POST /v1/responses`` (the stateless Responses API; one templated
    prompt on a generate-API engine); tokens are flushed as they arrive. Each request's log
    line is also a
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
    :param max_request_bytes: the largest request body the runtime reads (a larger one gets
        413), up to the function URL's 6 MB limit; a vision request carries its images as
        base64 data URLs, 4/3 of each image's size. @default 5 MiB (a 3.75 MB photo)
    :param cors: let web pages on other origins call the invoker from a browser
        (``Cors(allowed_origins=[...])``): the runtime answers preflights before checking keys
        and puts CORS headers on every answer to an allowed origin. @default off: no CORS
        headers, ``OPTIONS`` refused
    :param reasoning_field: the name under which chat answers carry a reasoning model's
        thinking, on the message and each stream delta: ``ReasoningField.REASONING``
        (vLLM's name since 0.25, which current clients read), ``REASONING_CONTENT`` (the
        older name, for clients that read only it), or ``BOTH`` (some clients then read the
        thinking twice: the OpenAI Agents SDK streams it as summary and as text). Responses'
        reasoning items are the same in every case. @default ``ReasoningField.REASONING``
    :param capacity_wait: how long a chat or Responses request is held, and retried with
        backoff, while its inference component has no copy (scaled to zero, waking up);
        streams get SSE comments meanwhile. Past it, or without it, the client gets a 503
        with ``Retry-After``. At most the timeout less 30 s. @default not held
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
        max_request_bytes: int | None = None,
        reasoning_field: ReasoningField | str | None = None,
        cors: Cors | None = None,
        capacity_wait: Duration | None = None,
    ) -> None:
        super().__init__(scope, id)
        timeout = timeout or Duration.minutes(5)
        auth = InvokerAuth.iam() if auth is None else auth
        called = check_invoker(
            self,
            target=target,
            targets=targets,
            timeout=timeout,
            memory_size=memory_size,
            heartbeat=heartbeat,
            auth=auth,
            max_concurrency=max_concurrency,
            max_request_bytes=max_request_bytes,
            adapter_layer=adapter_layer,
            architecture=architecture,
            log_retention=log_retention,
            log_encryption_key=log_encryption_key,
            reasoning_field=reasoning_field,
            cors=cors,
            capacity_wait=capacity_wait,
        )
        assert_available(self, INVOKER_FEATURES)
        for warning in decode_time_warnings(called, timeout):
            warn(self, SynthWarning(WarningId.INVOKER_TIMEOUT_DECODE, warning))
        self._heartbeat = heartbeat
        self.auth = auth
        #: Every target; ``target`` is the first.
        self.targets = tuple(called)
        self.target = called[0]
        environment = invoker_environment(
            self,
            called,
            timeout=timeout,
            heartbeat=heartbeat,
            max_request_bytes=max_request_bytes,
            reasoning_field=reasoning_field,
            capacity_wait=capacity_wait,
        )
        if cors is not None:
            environment.update(cors.environment())
        too_big = environment_size_problem(environment, called)
        if too_big:
            fail(f"StreamingInvoker '{self.node.path}'", too_big)
        self.distribution: cloudfront.Distribution | None = None
        #: The secret CloudFront sends as ``x-origin-verify`` (API keys behind a distribution).
        self.origin_secret: secretsmanager.Secret | None = None
        #: The Batch API, once ``add_batch_api()`` added it.
        self.batch_api: BatchApi | None = None
        self._domain_names: tuple[str, ...] = ()
        architecture, layer = adapter_for(self, layer=adapter_layer, architecture=architecture)
        log_group = invoker_log_group(
            self, retention=log_retention, encryption_key=log_encryption_key
        )
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
            code=runtime_code(),
            handler=HANDLER,
            layers=[layer],
            timeout=timeout,
            memory_size=memory_size,
            role=self.role,
            log_group=log_group,
            retry_attempts=0,
            reserved_concurrent_executions=max_concurrency,
            environment=environment,
        )
        waive_function_checks(self.function, max_concurrency=max_concurrency)
        warn_reserved_concurrency(self.function, max_concurrency)
        for each in called:
            each.grant_invoke(self.role)
        for name, value in auth.bind(self.function).items():
            self.function.add_environment(name, value)
        depend_on_policy_only(self.function, self.role)
        self.function_url = self.function.add_function_url(
            auth_type=auth.url_auth_type,
            invoke_mode=lambda_.InvokeMode.RESPONSE_STREAM,
        )
        if auth.mode is AuthMode.API_KEYS:
            record_public_url(self.function_url, self.function)

    @property
    def url(self) -> str:
        """The function URL; append ``v1`` for an OpenAI client's ``base_url``."""
        return self.function_url.url

    @property
    def distribution_url(self) -> str | None:
        """``https://<domain>/`` of the distribution (``add_distribution``): its first domain
        name that is not a wildcard when it has ``domain_names``, else its
        ``*.cloudfront.net`` name; None without a distribution."""
        if self.distribution is None:
            return None
        names = [n for n in self._domain_names if not n.startswith("*.")]
        return f"https://{names[0] if names else self.distribution.distribution_domain_name}/"

    def grant_invoke_url(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` call the URL (``InvokeFunctionUrl`` and, via the URL only,
        ``InvokeFunction``, as function URLs require since October 2025)."""
        problem = grantee_problem("grantee", grantee)
        if problem:
            fail(f"StreamingInvoker '{self.node.path}'.grant_invoke_url", problem)
        return self.function.grant_invoke_url(grantee)

    def add_distribution(
        self,
        *,
        origin_access_control: bool | None = None,
        read_timeout: Duration | None = None,
        rate_limit: int | None = None,
        rate_limit_window: Duration | None = None,
        web_acl_arn: str | None = None,
        certificate: acm.ICertificate | None = None,
        domain_names: Sequence[str] | None = None,
        public: bool | None = None,
    ) -> cloudfront.Distribution:
        """CloudFront in front of the function URL, for browsers and CDN or WAF fronts:
        caching off, every method (POST) allowed, HTTPS only, no compression.

        With ``InvokerAuth.api_keys(secret)`` (the safe choice) the viewer's ``Authorization:
        Bearer`` header is forwarded and checked by the runtime, and the function URL answers
        CloudFront alone: a secret generated in Secrets Manager ("OriginSecret") goes with
        every origin request as ``x-origin-verify``, and the runtime refuses a request without
        it (403) before anything else, so nobody bypasses the distribution's WAF.

        With ``InvokerAuth.iam()`` CloudFront signs each request with origin access control
        and becomes the only caller the URL admits (both ``lambda:InvokeFunctionUrl`` and
        ``lambda:InvokeFunction``, scoped to this distribution), on behalf of every viewer:
        viewers need no AWS credentials, so anyone who reaches the distribution can call the
        model. That is refused at synth unless ``public=True`` says so. A POST must carry its
        body's SHA-256 in ``x-amz-content-sha256``
        (``constructs_llm.streaming.content_sha256_hook``).

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
        :param certificate: an ACM certificate in us-east-1 for ``domain_names``: viewers
            connecting to those names need TLS 1.2 (security policy ``TLSv1.2_2021``, SNI).
            The distribution's ``*.cloudfront.net`` name keeps the default certificate, whose
            policy CloudFront fixes at TLSv1: give clients the domain names (a DNS record
            pointing them at the distribution is yours to create). @default the default
            ``*.cloudfront.net`` certificate
        :param domain_names: the names ``certificate`` covers, which clients call; required
            with it. @default none
        :param public: ``True`` says that anyone who reaches the distribution may call the
            model: required with ``InvokerAuth.iam()`` (origin access control signs every
            viewer's request), refused with API keys (the keys authenticate viewers).
            @default not public: IAM auth behind a distribution fails at synth
        """
        read_timeout = read_timeout or Duration.seconds(60)
        window = rate_limit_window or Duration.minutes(5)
        oac = (
            self.auth.mode is AuthMode.IAM
            if origin_access_control is None
            else origin_access_control
        )
        check_distribution(
            self,
            has_distribution=self.distribution is not None,
            mode=self.auth.mode,
            heartbeat=self._heartbeat,
            oac=oac,
            read_timeout=read_timeout,
            rate_limit=rate_limit,
            window=window,
            web_acl_arn=web_acl_arn,
            certificate=certificate,
            domain_names=domain_names,
            public=public,
        )
        assert_available(self, distribution_features(oac))
        from constructs_llm.streaming.invoker import distribution as door  # CloudFront, when used

        if rate_limit is not None:
            web_acl_arn = door.rate_limit_web_acl(self, limit=rate_limit, window=window).attr_arn
        self._domain_names = tuple(domain_names or ())
        if self._heartbeat is None:
            beat = min(_DISTRIBUTION_HEARTBEAT_S, max(1, int(read_timeout.to_seconds()) // 2))
            self.function.add_environment(Env.HEARTBEAT_SECONDS, str(beat))
        secret = None
        if self.auth.mode is AuthMode.API_KEYS:
            from constructs_llm.streaming.invoker.origin_secret import origin_secret

            secret = self.origin_secret = origin_secret(self, self.role)
            self.function.add_environment(Env.ORIGIN_SECRET_ID, secret.secret_arn)
        self.distribution = door.build_distribution(
            self,
            self.function_url,
            door.DistributionSettings(
                origin_access_control=oac,
                read_timeout=read_timeout,
                web_acl_arn=web_acl_arn,
                certificate=certificate,
                domain_names=domain_names,
                origin_secret=secret,
            ),
        )
        return self.distribution

    def add_batch_api(
        self,
        *,
        bucket: s3.IBucket | None = None,
        retention: Duration | None = None,
        max_concurrency: int | None = None,
        completion_window: Duration | None = None,
        access_logs: s3.IBucket | None = None,
        async_targets: Sequence[LlmEndpoint] | None = None,
    ) -> BatchApi:
        """OpenAI's Batch API on this invoker's URL: ``POST /v1/files`` (purpose ``batch``),
        ``GET /v1/files/{id}`` and ``/content``, ``POST /v1/batches``, ``GET /v1/batches`` and
        ``/{id}``, ``POST /v1/batches/{id}/cancel``, for ``/v1/chat/completions`` requests to
        its targets. Each batch is one execution of a Step Functions state machine whose
        distributed map invokes the target once per line (``docs/batch.md``).

        :param bucket: where files, batches and results are kept. @default a bucket of its
            own: KMS-encrypted with its own key, TLS-only, versioned, expiring after
            ``retention``
        :param retention: how long the bucket it makes keeps files and results. @default 30
            days (1 day-10 years)
        :param max_concurrency: lines of one target in flight at once (the map's
            ``MaxConcurrency``). @default each target's autoscaling ``max_capacity`` times
            its ``target_concurrent_requests``, else 8
        :param completion_window: how long a batch may run before it expires (the state
            machine's timeout). @default 24 hours (OpenAI's window; 1 hour-1 year)
        :param access_logs: a bucket for the S3 server access logs of the bucket it makes.
            @default none (CloudTrail records the calls)
        :param async_targets: asynchronous ``LlmEndpoint``s (``async_inference=``) of chat
            models, served in ``/v1/chat/completions`` batches only (the invoker cannot
            stream from them): each line is queued with ``InvokeEndpointAsync`` and its
            answer read from S3, so the endpoint may scale from zero. @default none
        """
        from constructs_llm.streaming.invoker.batch_api import BatchApi  # Step Functions, when used

        if self.batch_api is not None:
            fail(
                f"StreamingInvoker '{self.node.path}'.add_batch_api",
                Problem.of(
                    "add_batch_api",
                    None,
                    "the invoker already has a Batch API;",
                    "call add_batch_api() once",
                ),
            )
        self.batch_api = BatchApi(
            self,
            "Batch",
            targets=self.targets,
            function=self.function,
            role=self.role,
            bucket=bucket,
            retention=retention,
            max_concurrency=max_concurrency,
            completion_window=completion_window,
            access_logs=access_logs,
            async_targets=async_targets,
        )
        return self.batch_api
