"""BatchApi: OpenAI's Batch API in front of an invoker's targets, on a Step Functions
distributed map (``StreamingInvoker.add_batch_api()``).

What it owns, in its own scope:

- ``Bucket``: the files and batches (``files/``, ``batches/``, ``results/``; see
  ``runtime/batches/store.py``), unless one is given: KMS-encrypted with a key of its own,
  TLS-only, versioned, private, expiring objects after ``retention``;
- ``Worker``: a Lambda function on the invoker's code asset (handler
  ``streaming/runtime/batches/worker.handle``) that serves one request line, and finishes a
  batch;
- ``StateMachine``: a standard state machine whose distributed map ``Lines`` reads the input
  file's lines from S3 (``ItemReader`` with ``ReaderConfig.InputType: JSONL``: the Step
  Functions guide's ItemReader page lists CSV, JSON, JSONL and MANIFEST), runs the worker on
  each line (with ``async_targets``, a line the worker queued on an asynchronous endpoint goes
  on to ``Queued``, a ``Choice``, ``Waiting``, a ``Wait`` state of ``pending.wait`` seconds,
  and ``Poll``, the worker looking for the answer, until it is there: the Step Functions job
  poller pattern, ``runtime/batches/queued.py``), at most the model's ``max_concurrency`` at
  once (``MaxConcurrencyPath``),
  retrying a busy target (``TargetBusy``: throttled, unavailable, a component scaling from
  zero), tolerating every line's failure (each is written to the error file), writes the
  children's results to ``results/`` (``ResultWriter``), then runs the worker once more to
  assemble OpenAI's output and error files (``Finalize``); its timeout is the completion
  window;
- the invoker's environment (``BATCH_*``) and grants: its function starts, reads and stops
  executions of this state machine, reads their map runs, and reads and writes the bucket's
  ``files/`` and ``batches/``.

An asynchronous endpoint (``async_targets``) is served in batches only: the invoker cannot
stream from it ("the presence of an asynchronous inference configuration ... implies that the
endpoint can only receive asynchronous invocations", SageMaker's asynchronous inference guide).
Its model is in the worker's routes and in ``BATCH_ASYNC`` (the model and its input folder) of
the worker and the invoker, whose line checks take it for ``/v1/chat/completions`` batches; the
worker's role gets ``endpoint.grant_invoke_async`` (``InvokeEndpointAsync`` on the endpoint,
``s3:PutObject`` on its input folder, ``s3:GetObject`` and the listing on its output and
failure folders) and nothing real-time on it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from aws_cdk import (
    ArnFormat,
    Aws,
    CfnResource,
    Duration,
    FeatureFlags,
    Fn,
    RemovalPolicy,
    Stack,
)
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from constructs_llm.cdk_values import cdk_kind
from constructs_llm.compliance import CheckovSkip, NagAcknowledgment, resource_wildcard, waive
from constructs_llm.contract import Env, ModelKind
from constructs_llm.hosting.target import InvocationTarget, QueuingTarget
from constructs_llm.problems import Problem, Problems
from constructs_llm.streaming.invoker.environment import MAX_TIMEOUT_S, READ_TIMEOUT_MARGIN_S
from constructs_llm.streaming.invoker.function import runtime_code
from constructs_llm.streaming.invoker.targets import routes_environment
from constructs_llm.values import (
    describe,
    duration_problem,
    is_list,
    not_a_list,
    positive_int_problem,
)
from constructs_llm.wildcard_policy import grant_in_own_policy

WORKER_HANDLER = "streaming.runtime.batches.worker.handle"
#: Lines of one target in flight when its capacity is not known.
DEFAULT_CONCURRENCY = 8
#: Step Functions' distributed map runs up to 10,000 child executions at once.
MAX_CONCURRENCY = 10_000
DEFAULT_RETENTION = Duration.days(30)
DEFAULT_WINDOW = Duration.hours(24)
#: Retrying a busy target: every minute at first, then up to every 5 minutes, for about 45
#: minutes in all, which covers an inference component starting its first copy.
RETRY_INTERVAL = Duration.minutes(1)
RETRY_MAX_DELAY = Duration.minutes(5)
RETRY_ATTEMPTS = 12
RETRY_BACKOFF = 1.5
_LOG_RETENTION = logs.RetentionDays.ONE_MONTH
_RESULT_WRITER_V2 = "@aws-cdk/aws-stepfunctions:useDistributedMapResultWriterV2"

_WORKER_SKIPS = (
    CheckovSkip(
        "CKV_AWS_116",
        "Invoked synchronously by the state machine, which retries and records each failure; "
        "a dead-letter queue only applies to asynchronous invocations.",
    ),
    CheckovSkip("CKV_AWS_117", "Needs only the SageMaker Runtime and S3 APIs."),
    CheckovSkip("CKV_AWS_173", "The environment holds names and settings only (no secrets)."),
    CheckovSkip(
        "CKV_AWS_115",
        "The distributed map bounds the lines in flight (MaxConcurrency per target); "
        "reserving concurrency fails deploys in accounts at their unreserved minimum.",
    ),
)
_LOG_SKIP = CheckovSkip(
    "CKV_AWS_158",
    "CloudWatch Logs encrypts every log group at rest; these logs hold request metadata only.",
)
_NO_ACCESS_LOGS = (
    "The bucket is read and written only by the invoker and the state machine, whose calls "
    "CloudTrail records; pass access_logs=... for S3 server access logs."
)


def default_concurrency(target: InvocationTarget) -> int:
    """A target's lines in flight: what its autoscaling holds in flight (its facts'
    ``max_in_flight``), at most ``MAX_CONCURRENCY``, else ``DEFAULT_CONCURRENCY``."""
    most = target.facts.max_in_flight
    return DEFAULT_CONCURRENCY if most is None else max(1, min(MAX_CONCURRENCY, most))


class BatchApi(Construct):
    """OpenAI's Batch API (``/v1/files``, ``/v1/batches``) for an invoker's targets; made by
    ``StreamingInvoker.add_batch_api()`` in the invoker's scope, whose parameters it takes.

    :param targets: the invoker's targets, which the worker calls.
    :param function: the invoker's function, which gets the ``BATCH_*`` environment.
    :param role: the invoker's role, granted the front door's calls.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        targets: Sequence[InvocationTarget],
        function: lambda_.Function,
        role: iam.IRole,
        bucket: s3.IBucket | None = None,
        retention: Duration | None = None,
        max_concurrency: int | None = None,
        completion_window: Duration | None = None,
        access_logs: s3.IBucket | None = None,
        async_targets: Sequence[QueuingTarget] | None = None,
    ) -> None:
        super().__init__(scope, id)
        retention = retention or DEFAULT_RETENTION
        window = completion_window or DEFAULT_WINDOW
        _check(
            scope,
            bucket=bucket,
            retention=retention,
            max_concurrency=max_concurrency,
            window=window,
            access_logs=access_logs,
        )
        queued = _async_targets(scope, targets, async_targets)
        self.bucket = bucket or self._own_bucket(retention, access_logs)
        self.worker = self._worker(targets, queued)
        self.state_machine = self._state_machine(window, queued=bool(queued))
        concurrency = {
            t.facts.served_model_name: max_concurrency or default_concurrency(t)
            for t in [*targets, *queued]
        }
        env = {
            Env.BATCH_BUCKET: self.bucket.bucket_name,
            Env.BATCH_STATE_MACHINE_ARN: self.state_machine.state_machine_arn,
            Env.BATCH_WINDOW_SECONDS: str(int(window.to_seconds())),
            Env.BATCH_CONCURRENCY: json.dumps(concurrency, separators=(",", ":")),
        }
        if queued:
            env[Env.BATCH_ASYNC] = _inputs(self, queued)
        for name, value in env.items():
            function.add_environment(name, value)
        self._grant_front_door(role)

    # -- the bucket -----------------------------------------------------------------------

    def _own_bucket(self, retention: Duration, access_logs: s3.IBucket | None) -> s3.Bucket:
        bucket = s3.Bucket(
            self,
            "Bucket",
            encryption_key=kms.Key(self, "Key", enable_key_rotation=True),
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            versioned=True,
            server_access_logs_bucket=access_logs,
            server_access_logs_prefix="batch/" if access_logs else None,
            lifecycle_rules=[
                s3.LifecycleRule(
                    expiration=Duration.days(math.ceil(retention.to_days(integral=False))),
                    noncurrent_version_expiration=Duration.days(1),
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                )
            ],
            removal_policy=RemovalPolicy.RETAIN,
        )
        if access_logs is None:
            waive(bucket.node.default_child, CheckovSkip("CKV_AWS_18", _NO_ACCESS_LOGS))
            waive(bucket, NagAcknowledgment("AwsSolutions-S1", reason=_NO_ACCESS_LOGS))
        return bucket

    # -- the worker -----------------------------------------------------------------------

    def _worker(
        self, targets: Sequence[InvocationTarget], queued: Sequence[QueuingTarget]
    ) -> lambda_.Function:
        role = iam.Role(
            self,
            "WorkerRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Serves the lines of OpenAI batches (constructs_llm)",
        )
        log_group = logs.LogGroup(
            self, "WorkerLogs", retention=_LOG_RETENTION, removal_policy=RemovalPolicy.DESTROY
        )
        waive(log_group.node.default_child, _LOG_SKIP)
        log_group.grant_write(role)
        env = {
            **routes_environment(self, [*targets, *queued]),
            Env.UPSTREAM_READ_TIMEOUT: str(MAX_TIMEOUT_S - READ_TIMEOUT_MARGIN_S),
            Env.BATCH_BUCKET: self.bucket.bucket_name,  # where it keeps each line's answer
        }
        if queued:
            env[Env.BATCH_ASYNC] = _inputs(self, queued)
        worker = lambda_.Function(
            self,
            "Worker",
            runtime=lambda_.Runtime.PYTHON_3_14,
            architecture=lambda_.Architecture.ARM_64,
            code=runtime_code(),
            handler=WORKER_HANDLER,
            timeout=Duration.seconds(MAX_TIMEOUT_S),
            memory_size=512,
            role=role,
            log_group=log_group,
            retry_attempts=0,
            environment=env,
        )
        waive(worker.node.default_child, *_WORKER_SKIPS)
        _depend_on_policy_only(worker, role)
        for target in targets:
            target.grant_invoke(role)
        for endpoint in queued:  # InvokeEndpointAsync and its folders, nothing real-time
            endpoint.grant_invoke_async(role)
        grant_in_own_policy(
            self,
            "WorkerObjects",
            role,
            [
                self._objects(["s3:GetObject"], "results/*", "files/*", "batches/*"),
                self._objects(["s3:PutObject"], "files/*", "batches/*"),
            ],
            *self._object_acks("The worker", "results/*", "files/*", "batches/*"),
        )
        self._grant_key(role, "kms:Decrypt", "kms:GenerateDataKey")
        return worker

    def _objects(self, actions: list[str], *prefixes: str) -> iam.PolicyStatement:
        """``actions`` on the bucket's objects under ``prefixes`` only."""
        return iam.PolicyStatement(
            actions=actions, resources=[self.bucket.arn_for_objects(p) for p in prefixes]
        )

    def _grant_key(self, role: iam.IRole, *actions: str) -> None:
        """The bucket's key, when it has one: S3 decrypts reads and asks for a data key on
        writes, as the caller."""
        key = self.bucket.encryption_key
        if key is not None:
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=list(actions), resources=[key.key_arn])
            )

    def _object_acks(self, who: str, *prefixes: str) -> list[NagAcknowledgment]:
        return [
            resource_wildcard(
                self,
                self.bucket.arn_for_objects(prefix),
                f"{who} reads and writes the batch objects under {prefix} only; their keys "
                "are made at run time.",
            )
            for prefix in prefixes
        ]

    # -- the state machine ----------------------------------------------------------------

    def _state_machine(self, window: Duration, *, queued: bool) -> sfn.StateMachine:
        line = self._worker_step("Line")
        line.add_retry(
            errors=["TargetBusy"],
            interval=RETRY_INTERVAL,
            max_attempts=RETRY_ATTEMPTS,
            backoff_rate=RETRY_BACKOFF,
            max_delay=RETRY_MAX_DELAY,
            jitter_strategy=sfn.JitterType.FULL,
        )
        # CDK renders result_writer_v2 only under the feature flag, and result_writer only
        # without it; both write the same Resource and Parameters.
        writer_v2 = bool(FeatureFlags.of(self).is_enabled(_RESULT_WRITER_V2))
        lines = sfn.DistributedMap(
            self,
            "Lines",
            item_reader=sfn.S3JsonLItemReader(
                bucket=self.bucket, key=sfn.JsonPath.string_at("$.input_key")
            ),
            item_selector={
                "phase": "line",
                "batch_id": sfn.JsonPath.string_at("$.batch_id"),
                "line": sfn.JsonPath.string_at("$$.Map.Item.Value"),
            },
            max_concurrency_path="$.max_concurrency",
            tolerated_failure_percentage=100,
            result_writer=(
                None if writer_v2 else sfn.ResultWriter(bucket=self.bucket, prefix="results")
            ),
            result_writer_v2=(
                sfn.ResultWriterV2(bucket=self.bucket, prefix="results") if writer_v2 else None
            ),
            result_path="$.map",
            map_execution_type=sfn.StateMachineType.STANDARD,
        )
        lines.item_processor(self._queued_lines(line) if queued else line)
        finalize = self._worker_step(
            "Finalize",
            {
                "phase": "finalize",
                "batch_id": sfn.JsonPath.string_at("$.batch_id"),
                "manifest": sfn.JsonPath.object_at("$.map.ResultWriterDetails"),
            },
        )
        log_group = logs.LogGroup(
            self, "ExecutionLogs", retention=_LOG_RETENTION, removal_policy=RemovalPolicy.DESTROY
        )
        waive(log_group.node.default_child, _LOG_SKIP)
        machine = sfn.StateMachine(
            self,
            "StateMachine",
            definition_body=sfn.DefinitionBody.from_chainable(lines.next(finalize)),
            state_machine_type=sfn.StateMachineType.STANDARD,
            timeout=window,
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
            comment="Runs OpenAI batches: one worker call per JSONL line (constructs_llm)",
        )
        role = machine.role
        if isinstance(role, iam.Role):
            _depend_on_policy_only(machine, role)
        grant_in_own_policy(
            self,
            "MapResults",
            role,
            [self._objects(["s3:PutObject"], "results/*")],
            *self._object_acks("The distributed map", "results/*"),
        )
        self._grant_key(role, "kms:Decrypt", "kms:GenerateDataKey")
        # What CDK itself puts in the state machine's own role: acknowledged on that role's
        # default policy, which holds only CDK's statements for this state machine.
        cdk_policy = role.node.find_child("DefaultPolicy")
        waive(
            cdk_policy,
            resource_wildcard(
                role,
                f"arn:{Aws.PARTITION}:s3:::{self.bucket.bucket_name}/*",
                "CDK's S3JsonLItemReader grants s3:GetObject on the bucket's objects, where the "
                "map reads a batch's input file (its key is an execution's input).",
            ),
            resource_wildcard(
                role,
                f"{self.worker.function_arn}:*",
                "CDK's LambdaInvoke grants the worker's versions and aliases with the function.",
            ),
            NagAcknowledgment(
                "AwsSolutions-IAM5",
                finding="Resource::*",
                reason="Step Functions' log delivery (logs:CreateLogDelivery, ...) and X-Ray "
                "(xray:PutTraceSegments, ...) take no resource-level permissions.",
            ),
        )
        name = Fn.select(6, Fn.split(":", machine.state_machine_arn))
        children = f"arn:{Aws.PARTITION}:states:{Aws.REGION}:{Aws.ACCOUNT_ID}:execution:{name}/*:*"
        executions = f"arn:{Aws.PARTITION}:states:{Aws.REGION}:{Aws.ACCOUNT_ID}:execution:{name}:*"
        waive(
            machine.node.find_child("DistributedMapPolicy"),
            resource_wildcard(
                machine,
                children,
                "CDK's distributed map policy: the map redrives its child executions, whose "
                "names Step Functions makes at run time.",
            ),
            resource_wildcard(
                machine,
                executions,
                "CDK's distributed map policy: the map reads and stops the state machine's own "
                "executions, named after batches at run time.",
            ),
        )
        return machine

    def _worker_step(
        self, state_id: str, payload: dict[str, Any] | None = None
    ) -> tasks.LambdaInvoke:
        """A state that calls the worker with ``payload`` (@default the state's input) and
        passes on its answer alone, retrying Lambda's service errors."""
        return tasks.LambdaInvoke(
            self,
            state_id,
            lambda_function=self.worker,
            payload=None if payload is None else sfn.TaskInput.from_object(payload),
            payload_response_only=True,
            retry_on_service_exceptions=True,
        )

    def _queued_lines(self, line: tasks.LambdaInvoke) -> sfn.IChainable:
        """A line, then, while the worker answers ``{"pending": ...}`` (a line queued on an
        asynchronous endpoint), a wait of ``pending.wait`` seconds and a look for its answer:
        the Step Functions job poller (a task, a ``Wait`` state with ``SecondsPath``, a task
        that checks, a ``Choice`` that loops)."""
        poll = self._worker_step(
            "Poll",
            {
                "phase": "poll",
                "batch_id": sfn.JsonPath.string_at("$.pending.batch_id"),
                "pending": sfn.JsonPath.object_at("$.pending"),
            },
        )
        waiting = sfn.Wait(self, "Waiting", time=sfn.WaitTime.seconds_path("$.pending.wait"))
        answered = sfn.Succeed(self, "Answered")
        queued = sfn.Choice(self, "Queued")
        queued.when(sfn.Condition.is_present("$.pending"), waiting.next(poll).next(queued))
        queued.otherwise(answered)
        return line.next(queued)

    # -- the invoker ----------------------------------------------------------------------

    def _grant_front_door(self, role: iam.IRole) -> None:
        machine = self.state_machine
        machine.grant_start_execution(role)
        stack = Stack.of(self)
        name = stack.split_arn(
            machine.state_machine_arn, ArnFormat.COLON_RESOURCE_NAME
        ).resource_name
        executions = stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{name}:*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        map_runs = stack.format_arn(
            service="states",
            resource="mapRun",
            resource_name=f"{name}/*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        grant_in_own_policy(
            self,
            "FrontDoor",
            role,
            [
                iam.PolicyStatement(
                    actions=[
                        "states:DescribeExecution",
                        "states:StopExecution",
                        "states:ListMapRuns",
                    ],
                    resources=[executions],
                ),
                iam.PolicyStatement(actions=["states:DescribeMapRun"], resources=[map_runs]),
                self._objects(["s3:GetObject", "s3:PutObject"], "files/*", "batches/*"),
            ],
            resource_wildcard(
                self, executions, "Executions are named after batches, made at run time."
            ),
            resource_wildcard(self, map_runs, "Each execution's map run is named at run time."),
            *self._object_acks("The invoker", "files/*", "batches/*"),
        )
        self._grant_key(role, "kms:Decrypt", "kms:GenerateDataKey")
        role.add_to_principal_policy(  # listing the batches: the batches/ prefix only
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[self.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": ["batches/*"]}},
            )
        )


def _inputs(scope: Construct, queued: Sequence[QueuingTarget]) -> str:
    """``BATCH_ASYNC``: each asynchronous model's name and the input folder of its endpoint."""
    inputs = {}
    for endpoint in queued:
        config = endpoint.async_inference
        if config is not None:
            inputs[endpoint.facts.served_model_name] = config.input_location.uri
    return Stack.of(scope).to_json_string(inputs)


def _async_targets(
    scope: Construct, targets: Sequence[InvocationTarget], given: object
) -> list[QueuingTarget]:
    """``async_targets``: asynchronous ``LlmEndpoint``s of chat models in the invoker's stack,
    each under a model name no other target serves."""
    if given is None:
        return []
    problems = Problems(f"StreamingInvoker '{scope.node.path}'.add_batch_api")
    if not is_list(given):
        problems.fail(not_a_list("async_targets", given, "asynchronous LlmEndpoints"))
    found: list[QueuingTarget] = []
    names = {t.facts.served_model_name: describe(t) for t in targets}
    items: list[object] = list(given)
    for index, item in enumerate(items):
        where = f"async_targets[{index}]"
        if not isinstance(item, QueuingTarget) or not item.facts.is_async:
            problems.add(
                Problem.of(
                    "async_targets",
                    item,
                    f"{where} must be an LlmEndpoint with async_inference=AsyncInference(...), "
                    f"got {describe(item)};",
                    "give real-time targets to the StreamingInvoker itself",
                )
            )
            continue
        if item.facts.model_kind is not ModelKind.CHAT:
            problems.add(
                Problem.of(
                    "async_targets",
                    item,
                    f"{where} {describe(item)} serves an embedding model; asynchronous targets "
                    "serve /v1/chat/completions batches only,",
                    "so give its model a real-time endpoint and pass that to the StreamingInvoker",
                )
            )
            continue
        there = Stack.of(item) if isinstance(item, Construct) else None
        if there is not None and there is not Stack.of(scope):
            problems.add(
                Problem.of(
                    "async_targets",
                    item,
                    f"{where} {describe(item)} is in stack '{there.node.path}', the "
                    f"invoker in '{Stack.of(scope).node.path}';",
                    "put them in one stack",
                )
            )
            continue
        name = item.facts.served_model_name
        if name in names:
            problems.add(
                Problem.of(
                    "async_targets",
                    item,
                    f"{where} {describe(item)} serves the model name {name!r}, as {names[name]} "
                    "does;",
                    "pass served_model_name=... to one of them",
                )
            )
            continue
        names[name] = describe(item)
        found.append(item)
    problems.raise_if_any()
    return found


def _depend_on_policy_only(owner: Construct, role: iam.Role) -> None:
    """The resource's GetAtt on its role already orders it after the role; CDK's extra
    DependsOn on the role is a cfn-lint W3005. Keep only the policy edge (as the invoker's
    function does, ``function.depend_on_policy_only``)."""
    policy = role.node.find_child("DefaultPolicy").node.default_child
    cfn = owner.node.default_child
    if isinstance(policy, CfnResource) and isinstance(cfn, CfnResource):
        cfn.add_override("DependsOn", [policy.logical_id])


def _check(
    scope: Construct,
    *,
    bucket: object,
    retention: object,
    max_concurrency: object,
    window: object,
    access_logs: object,
) -> None:
    problems = Problems(f"StreamingInvoker '{scope.node.path}'.add_batch_api")
    if bucket is not None and not cdk_kind(bucket, "aws_s3", "IBucket"):
        problems.add(
            Problem.of(
                "bucket",
                bucket,
                f"bucket must be an s3.IBucket, got {bucket!r};",
                "pass s3.Bucket(...)",
            )
        )
    if access_logs is not None and not cdk_kind(access_logs, "aws_s3", "IBucket"):
        problems.add(
            Problem.of(
                "access_logs",
                access_logs,
                f"access_logs must be an s3.IBucket, got {access_logs!r}",
            )
        )
    if bucket is not None and access_logs is not None:
        problems.add(
            Problem.of(
                "access_logs",
                access_logs,
                "access_logs applies to the bucket add_batch_api makes;",
                "give it to yours",
            )
        )
    problems.add(
        duration_problem(
            "retention",
            retention,
            minimum_s=86_400,
            maximum_s=3650 * 86_400,
            bounds="1 day and 10 years",
            why="S3 expires objects after whole days",
        )
    )
    problems.add(
        duration_problem(
            "completion_window",
            window,
            minimum_s=3600,
            maximum_s=365 * 86_400,
            bounds="1 hour and 1 year",
            why="it is the state machine's timeout (a standard execution runs up to a year)",
        )
    )
    problem = positive_int_problem("max_concurrency", max_concurrency)
    if problem is None and isinstance(max_concurrency, int) and max_concurrency > MAX_CONCURRENCY:
        problem = Problem.of(
            "max_concurrency",
            max_concurrency,
            f"max_concurrency must be at most {MAX_CONCURRENCY:,} (a distributed map's most "
            f"child executions at once), got {max_concurrency!r}",
        )
    problems.add(problem)
    problems.raise_if_any()
