"""Asynchronous inference: an ``LlmEndpoint`` that queues requests instead of answering them
while the caller waits (``LlmEndpoint(async_inference=AsyncInference(output=bucket))``).

SageMaker's guide ("Asynchronous inference", https://docs.aws.amazon.com/sagemaker/latest/dg/
async-inference.html) describes what changes: a request's body sits in S3 (or, up to 128,000
bytes, inline in the call), ``InvokeEndpointAsync`` queues it and answers at once with where
the answer will be, and SageMaker writes the answer (or the failure) to S3 when the model is
done, optionally notifying SNS topics. Requests may carry payloads "up to 1GB" and run "up to
one hour" (``InvocationTimeoutSeconds``, 1-3600 s, default 900: botocore
``InvokeEndpointAsyncInput``), against 60 seconds and 6 MB for a real-time invocation
(botocore ``InvokeEndpoint``: "A customer's model containers must respond to requests within
60 seconds"). The endpoint can scale to zero instances (``operations/backlog_scaling.py``).

"The presence of an asynchronous inference configuration (AsyncInferenceConfig) object in the
endpoint configuration implies that the endpoint can only receive asynchronous invocations"
(same guide): a ``StreamingInvoker`` cannot front it. The features table ("Supported
features", https://docs.aws.amazon.com/sagemaker/latest/dg/model-deploy-feature-matrix.html)
lists no multiple production variants and no shadow testing for asynchronous inference, and
lists deployment guardrails (the deployment guardrails guide: they "only apply to
Asynchronous inference and Real-time inference endpoint types").

Here the value (``AsyncInference``), its checks, its rendering as ``AsyncInferenceConfig``
(botocore ``AsyncInferenceConfig``: ``OutputConfig`` with ``S3OutputPath``,
``S3FailurePath``, ``KmsKeyId`` and ``NotificationConfig``; ``ClientConfig`` with
``MaxConcurrentInvocationsPerInstance``, 1-1000) and the permissions it needs:

- the model's execution role, which SageMaker uses to read requests and write answers ("create
  an IAM role that can run SageMaker AI and has permission to access Amazon S3 and Amazon SNS.
  Using this role, SageMaker AI can run under your account and access your Amazon S3 bucket
  and Amazon SNS topics", the guide's prerequisites; "your IAM role must have sns:Publish
  permissions", "Check prediction results"): ``s3:PutObject`` and ``s3:AbortMultipartUpload``
  on the output and failure prefixes, ``s3:GetObject`` on the input prefix, ``sns:Publish`` on
  the topic, and the KMS actions S3 and SNS need for keys in play;
- the callers (``endpoint.grant_invoke_async``): ``sagemaker:InvokeEndpointAsync`` on the
  endpoint, ``s3:PutObject`` on the input prefix, ``s3:GetObject`` on the output and failure
  prefixes, and ``s3:ListBucket`` limited to those prefixes, without which S3 answers a missing
  object (an answer not written yet) with 403 instead of 404 (botocore ``GetObject``: "If you
  don't have the s3:ListBucket permission, Amazon S3 returns an HTTP status code 403 Access
  Denied error").

KMS: S3 needs ``kms:GenerateDataKey`` to write an object under a KMS key and ``kms:Decrypt``
to read one, and to complete a multipart upload (https://docs.aws.amazon.com/AmazonS3/latest/
userguide/UsingKMSEncryption.html); an SNS publisher to a topic with a KMS key needs
``kms:GenerateDataKey*`` and ``kms:Decrypt`` (https://docs.aws.amazon.com/sns/latest/dg/
sns-key-management.html), granted here as ``kms:GenerateDataKey`` and ``kms:Decrypt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_cdk import Token
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm.cdk_values import cdk_kind
from constructs_llm.compliance import resource_wildcard
from constructs_llm.execution_role import ExecutionRole
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.reporting import SynthWarning, WarningId
from constructs_llm.s3_keys import folder_problem, key_problem
from constructs_llm.values import describe
from constructs_llm.wildcard_policy import grant_in_own_policy

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_s3 as s3
    from aws_cdk import aws_sagemaker as sagemaker
    from aws_cdk import aws_sns as sns

_ASYNC_FIX = "use AsyncInference(output=bucket) or AsyncInference.s3_prefix(bucket, 'answers/')"
_INVOKE_ASYNC_ACTION = "sagemaker:InvokeEndpointAsync"
#: The policy that holds the folder grants (object wildcards) of an asynchronous endpoint.
_FOLDERS_POLICY = "AsyncFolders"
#: botocore ``MaxConcurrentInvocationsPerInstance``: ``min`` 1, ``max`` 1000.
_MAX_CONCURRENT_INVOCATIONS = 1000
#: botocore ``DestinationS3Uri`` (``S3OutputPath``, ``S3FailurePath``): ``max`` 512.
_MAX_S3_URI = 512
# What a bucket name can take (S3 bucket names are 3-63 characters) in ``s3://<name>/``.
_LONGEST_BUCKET_URI = len("s3://") + 63 + 1
#: Where each location goes when only a bucket is given, next to each other at its root.
_DEFAULT_FOLDERS = {"output": "outputs/", "failure": "failures/", "input": "inputs/"}


@dataclass(frozen=True)
class S3Prefix:
    """A folder of an S3 bucket: ``AsyncInference.s3_prefix(bucket, "batch/answers/")``.

    :param bucket: the bucket.
    :param prefix: the key prefix, ending with ``/`` (``""``: the bucket's root).
    """

    bucket: s3.IBucket
    prefix: str

    def __post_init__(self) -> None:
        problems = Problems("AsyncInference.s3_prefix")
        problems.add(_bucket_problem("bucket", self.bucket))
        problems.add(_prefix_problem(self.prefix))
        problems.raise_if_any()

    @property
    def uri(self) -> str:
        """``s3://<bucket>/<prefix>``."""
        return f"s3://{self.bucket.bucket_name}/{self.prefix}"

    @property
    def objects_arn(self) -> str:
        """The ARN of every object under the prefix."""
        return self.bucket.arn_for_objects(f"{self.prefix}*")

    def sibling(self, folder: str) -> S3Prefix:
        """``folder`` next to this prefix: ``a/outputs/`` -> ``a/<folder>``."""
        parent = self.prefix.rstrip("/").rpartition("/")[0]
        return S3Prefix(self.bucket, f"{parent}/{folder}" if parent else folder)


@dataclass(frozen=True, kw_only=True)
class AsyncInference:
    """Makes an ``LlmEndpoint`` asynchronous: requests queue in SageMaker and each answer is
    written to S3, so a generation may take up to an hour and the endpoint may scale to zero.

    :param output: where SageMaker writes each answer (``S3OutputPath``): a bucket, for its
        ``outputs/`` folder, or ``AsyncInference.s3_prefix(bucket, "answers/")``. Required.
    :param failure: where SageMaker writes each failure (``S3FailurePath``), as ``output``.
        @default a ``failures/`` folder next to the output folder, in its bucket
    :param input: where callers put request bodies: ``grant_invoke_async`` lets them write
        there and the model's role read there (requests elsewhere need their own grants).
        @default an ``inputs/`` folder next to the output folder, in its bucket
    :param notify: SNS topic SageMaker notifies of each answer and each failure
        (``SuccessTopic`` and ``ErrorTopic``); the model's role may publish to it (and use its
        KMS key). @default no notifications: callers poll S3
    :param notify_with_response: put the answer itself in the notifications, when it is at
        most 128 KB (``IncludeInferenceResponseIn``, both topics); needs ``notify``.
        @default False
    :param max_concurrent_per_instance: requests SageMaker sends each instance's container at
        once (``MaxConcurrentInvocationsPerInstance``, 1-1000). @default SageMaker's choice
        ("If no value is provided, SageMaker chooses an optimal value")
    :param kms_key: encrypts the answers in S3 (``KmsKeyId``); the model's role may use it to
        write and callers granted with ``grant_invoke_async`` to read. @default the bucket's
        own encryption
    """

    output: s3.IBucket | S3Prefix | None = None
    failure: s3.IBucket | S3Prefix | None = None
    input: s3.IBucket | S3Prefix | None = None
    notify: sns.ITopic | None = None
    notify_with_response: bool = False
    max_concurrent_per_instance: int | None = None
    kms_key: kms.IKey | None = None

    def __post_init__(self) -> None:
        problems = Problems("AsyncInference")
        problems.extend(self._problems())
        problems.raise_if_any()

    @staticmethod
    def s3_prefix(bucket: s3.IBucket, prefix: str) -> S3Prefix:
        """A folder of ``bucket`` for ``output``, ``failure`` or ``input``: ``prefix`` is the key
        prefix, ending with ``/`` (such as ``"batch/answers/"``)."""
        return S3Prefix(bucket, prefix)

    # -- the three locations --------------------------------------------------------------------

    @property
    def output_location(self) -> S3Prefix:
        """Where answers go."""
        if self.output is None:  # refused when built
            fail("AsyncInference", _no_output())
        return _located(self.output, "output")

    @property
    def failure_location(self) -> S3Prefix:
        """Where failures go."""
        if self.failure is None:
            return self.output_location.sibling(_DEFAULT_FOLDERS["failure"])
        return _located(self.failure, "failure")

    @property
    def input_location(self) -> S3Prefix:
        """Where callers put request bodies."""
        if self.input is None:
            return self.output_location.sibling(_DEFAULT_FOLDERS["input"])
        return _located(self.input, "input")

    # -- rendering and grants -------------------------------------------------------------------

    def config(self) -> sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty:
        """The endpoint config's ``AsyncInferenceConfig``."""
        from aws_cdk import aws_sagemaker as sagemaker

        topic = self.notify.topic_arn if self.notify is not None else None
        notification = None
        if topic is not None:
            notification = sagemaker.CfnEndpointConfig.AsyncInferenceNotificationConfigProperty(
                success_topic=topic,
                error_topic=topic,
                include_inference_response_in=list(_BOTH_TOPICS)
                if self.notify_with_response
                else None,
            )
        client = None
        if self.max_concurrent_per_instance is not None:
            client = sagemaker.CfnEndpointConfig.AsyncInferenceClientConfigProperty(
                max_concurrent_invocations_per_instance=self.max_concurrent_per_instance
            )
        return sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty(
            output_config=sagemaker.CfnEndpointConfig.AsyncInferenceOutputConfigProperty(
                s3_output_path=self.output_location.uri,
                s3_failure_path=self.failure_location.uri,
                kms_key_id=self.kms_key.key_arn if self.kms_key is not None else None,
                notification_config=notification,
            ),
            client_config=client,
        )

    def grant_processing(self, scope: Construct, role: iam.IGrantable) -> None:
        """What SageMaker does with the model's execution role: reads request bodies from the
        input folder, writes answers and failures, publishes the notifications."""
        written = [self.output_location, self.failure_location]
        _statement(
            scope,
            role,
            ["s3:PutObject", "s3:AbortMultipartUpload"],
            [p.objects_arn for p in _unique(written)],
            why="SageMaker writes each answer and failure under its own key in these folders",
        )
        _statement(
            scope,
            role,
            ["s3:GetObject"],
            [self.input_location.objects_arn],
            why="SageMaker reads each request body, under a key the caller picks, from this folder",
        )
        for key in _keys(p.bucket for p in written):
            key.grant(role, "kms:GenerateDataKey", "kms:Decrypt")
        for key in _keys([self.input_location.bucket]):
            key.grant(role, "kms:Decrypt")
        if self.kms_key is not None:
            self.kms_key.grant(role, "kms:GenerateDataKey", "kms:Decrypt")
        if self.notify is not None:
            role.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(actions=["sns:Publish"], resources=[self.notify.topic_arn])
            )
            if self.notify.master_key is not None:
                self.notify.master_key.grant(role, "kms:GenerateDataKey", "kms:Decrypt")

    def grant_callers(
        self, scope: Construct, grantee: iam.IGrantable, endpoint_arn: str
    ) -> iam.Grant:
        """What a caller needs: queue requests on the endpoint, put request bodies in the input
        folder, read answers and failures (and learn that one is not there yet)."""
        grant = iam.Grant.add_to_principal(
            grantee=grantee, actions=[_INVOKE_ASYNC_ACTION], resource_arns=[endpoint_arn]
        )
        inputs = self.input_location
        read = _unique([self.output_location, self.failure_location])
        _statement(
            scope,
            grantee,
            ["s3:PutObject", "s3:AbortMultipartUpload"],
            [inputs.objects_arn],
            why="callers put each request body under a key of their own in this folder",
        )
        _statement(
            scope,
            grantee,
            ["s3:GetObject"],
            [p.objects_arn for p in read],
            why="callers read the answer or failure SageMaker names for their request",
        )
        for bucket_arn, prefixes in _by_bucket(read).items():
            grantee.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["s3:ListBucket"],
                    resources=[bucket_arn],
                    conditions={"StringLike": {"s3:prefix": [f"{p}*" for p in prefixes]}},
                )
            )
        for key in _keys([inputs.bucket]):
            key.grant(grantee, "kms:GenerateDataKey", "kms:Decrypt")
        for key in _keys(p.bucket for p in read):
            key.grant(grantee, "kms:Decrypt")
        if self.kms_key is not None:
            self.kms_key.grant(grantee, "kms:Decrypt")
        return grant

    # -- checks -------------------------------------------------------------------------------

    def _problems(self) -> list[Problem | None]:
        found: list[Problem | None] = []
        if self.output is None:
            found.append(_no_output())
        for name in ("output", "failure", "input"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, S3Prefix):
                found.append(_location_problem(name, value))
        if self.notify is not None and not cdk_kind(self.notify, "aws_sns", "ITopic"):
            found.append(
                Problem.of(
                    "notify",
                    self.notify,
                    f"notify must be an SNS topic (sns.ITopic), got {describe(self.notify)};",
                    "pass sns.Topic(...) or sns.Topic.from_topic_arn(...)",
                )
            )
        if not isinstance(self.notify_with_response, bool):
            found.append(
                Problem.of(
                    "notify_with_response",
                    self.notify_with_response,
                    "notify_with_response must be True or False, got "
                    f"{self.notify_with_response!r}",
                )
            )
        elif self.notify_with_response and self.notify is None:
            found.append(
                Problem.of(
                    "notify_with_response",
                    True,
                    "notify_with_response=True puts answers in notifications, but notify= names no "
                    "topic;",
                    "pass notify=topic or drop notify_with_response",
                )
            )
        found.append(_concurrency_problem(self.max_concurrent_per_instance))
        if self.kms_key is not None and not cdk_kind(self.kms_key, "aws_kms", "IKey"):
            found.append(
                Problem.of(
                    "kms_key",
                    self.kms_key,
                    f"kms_key must be a KMS key (kms.IKey), got {describe(self.kms_key)}",
                )
            )
        if not any(found):
            found.extend(self._overlap_problems())
        return found

    def _overlap_problems(self) -> list[Problem]:
        """Answers, failures and requests must not share a folder: a caller polling for an
        answer would read a failure, or a request, as one."""
        named = {
            "output": self.output_location,
            "failure": self.failure_location,
            "input": self.input_location,
        }
        found = []
        items = list(named.items())
        for i, (a, pa) in enumerate(items):
            for b, pb in items[i + 1 :]:
                if pa.bucket is pb.bucket and _nested(pa.prefix, pb.prefix):
                    found.append(
                        Problem.of(
                            b,
                            pb,
                            f"{a} ({pa.prefix or 'the bucket root'}) and {b} "
                            f"({pb.prefix or 'the bucket root'}) overlap in one bucket: answers, "
                            "failures and requests each need a folder of their own;",
                            f"pass {b}=AsyncInference.s3_prefix(bucket, '...') with another folder",
                        )
                    )
        return found


_BOTH_TOPICS = ("SUCCESS_NOTIFICATION_TOPIC", "ERROR_NOTIFICATION_TOPIC")


def async_inference_problem(async_inference: object) -> Problem | None:
    """``async_inference=``: an ``AsyncInference`` (or None). What an asynchronous endpoint
    cannot have with it (several production variants, a shadow, the OpenAI route) is in the
    cross-feature rules (``hosting/rules.py``)."""
    if async_inference is None or isinstance(async_inference, AsyncInference):
        return None
    got = describe(async_inference)
    return Problem.of(
        "async_inference",
        async_inference,
        f"async_inference must be an AsyncInference, got {got}; {_ASYNC_FIX}",
    )


def alarms_on_async() -> SynthWarning:
    """The default alarms of an asynchronous endpoint: one of them watches a metric SageMaker
    does not publish there."""
    return SynthWarning(
        WarningId.ASYNC_ALARMS,
        "the default ModelErrors alarm watches InvocationModelErrors, which SageMaker does not "
        "publish for an asynchronous endpoint (its metrics are Invocation4XXErrors, "
        "Invocation5XXErrors and ModelLatency, the backlog metrics and, per variant, "
        "InvocationFailures and the like: 'Any metric not listed below is not published', "
        "https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-monitor.html), so it "
        "never trips; the Errors (5xx) and latency alarms apply. Alarm on failed requests "
        "with endpoint.metric('InvocationFailures', statistic='Sum'), or on queued ones with "
        "ApproximateAgeOfOldestRequest",
    )


# -- helpers ----------------------------------------------------------------------------------


def _located(value: s3.IBucket | S3Prefix, name: str) -> S3Prefix:
    if isinstance(value, S3Prefix):
        return value
    return S3Prefix(value, _DEFAULT_FOLDERS[name])


def _unique(prefixes: list[S3Prefix]) -> list[S3Prefix]:
    seen: list[S3Prefix] = []
    for p in prefixes:
        if not any(p.bucket is q.bucket and p.prefix == q.prefix for q in seen):
            seen.append(p)
    return seen


def _by_bucket(prefixes: list[S3Prefix]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for p in prefixes:
        grouped.setdefault(p.bucket.bucket_arn, []).append(p.prefix)
    return grouped


def _keys(buckets: Any) -> list[kms.IKey]:
    """The distinct KMS keys of ``buckets`` (S3-managed encryption needs no grant)."""
    keys: list[kms.IKey] = []
    for bucket in buckets:
        key = bucket.encryption_key
        if key is not None and not any(key is k for k in keys):
            keys.append(key)
    return keys


def _statement(
    scope: Construct, grantee: iam.IGrantable, actions: list[str], resources: list[str], *, why: str
) -> None:
    """A statement with an object wildcard (the keys are picked per request, so a folder is
    the narrowest resource), in a policy of the library's own attached to the grantee, where
    its cdk-nag finding is acknowledged (``wildcard_policy.py``): under the execution role the
    library created (which the Model waits for), else under ``scope``, one per identity."""
    principal = grantee.grant_principal
    home = principal if isinstance(principal, ExecutionRole) else scope
    reason = f"Asynchronous inference: {why}; the grant covers that folder only"
    grant_in_own_policy(
        home,
        _FOLDERS_POLICY,
        grantee,
        [iam.PolicyStatement(actions=actions, resources=resources)],
        *(resource_wildcard(scope, arn, reason) for arn in resources),
        per_identity=home is scope,
    )


def _nested(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def _bucket_problem(name: str, value: object) -> Problem | None:
    if cdk_kind(value, "aws_s3", "IBucket"):
        return None
    return Problem.of(
        name,
        value,
        f"{name} must be an S3 bucket (s3.IBucket), got {describe(value)}",
    )


def _location_problem(name: str, value: object) -> Problem | None:
    if _bucket_problem(name, value) is None:
        return None
    wrong = (
        f"{name} must be an S3 bucket or AsyncInference.s3_prefix(bucket, 'folder/'), got "
        f"{describe(value)}"
    )
    if isinstance(value, str):
        return Problem.of(name, value, f"{wrong};", "give the bucket and the folder apart")
    return Problem.of(name, value, wrong)


def _prefix_problem(prefix: object) -> Problem | None:
    if not isinstance(prefix, str) or Token.is_unresolved(prefix):
        return Problem.of(
            "prefix",
            prefix,
            f"prefix must be a string known at synth such as 'answers/', got {prefix!r}",
        )
    problem = key_problem("prefix", prefix, what="key prefix")
    if problem is None and prefix:
        problem = folder_problem(
            "prefix",
            prefix,
            why="grants cover every key under it, and without the slash 'answers' would also "
            "cover 'answers-old/'",
        )
    if problem:
        return problem
    if any(c in prefix for c in "*?"):
        return Problem.of(
            "prefix",
            prefix,
            f"prefix must not hold '*' or '?' (IAM wildcards), got {prefix!r}",
        )
    longest = _MAX_S3_URI - _LONGEST_BUCKET_URI
    if len(prefix) > longest:
        return Problem.of(
            "prefix",
            prefix,
            f"prefix is {len(prefix)} characters; S3OutputPath and S3FailurePath take at most "
            f"{_MAX_S3_URI} (botocore DestinationS3Uri), so with a bucket name of up to 63 the "
            f"prefix may have {longest}",
        )
    return None


def _concurrency_problem(value: object) -> Problem | None:
    if value is None:
        return None
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and 1 <= value <= _MAX_CONCURRENT_INVOCATIONS
    ):
        return None
    most = _MAX_CONCURRENT_INVOCATIONS
    return Problem.of(
        "max_concurrent_per_instance",
        value,
        f"max_concurrent_per_instance must be an integer from 1 to {most} "
        f"(MaxConcurrentInvocationsPerInstance, botocore min 1, max {most}), "
        f"got {value!r}; or leave it out for SageMaker's choice",
    )


def _no_output() -> Problem:
    return Problem.of(
        "output",
        None,
        "output is required: SageMaker writes each answer to the output location "
        "(AsyncInferenceConfig OutputConfig.S3OutputPath, 'Specify the AsyncInferenceConfig "
        "object and provide an output Amazon S3 location for OutputConfig', "
        "https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-create-endpoint.html), "
        "and InvokeEndpointAsync answers with where it will be;",
        "pass output=bucket or output=AsyncInference.s3_prefix(bucket, 'answers/')",
    )
