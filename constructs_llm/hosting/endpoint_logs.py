"""EndpointLogs: the CloudWatch Logs group of an endpoint, created by the stack before the
endpoint, with a retention, an optional KMS key and a removal policy (``logs=`` of
``LlmEndpoint`` and ``InferenceComponentEndpoint``).

What AWS does, and why only some endpoints can get a group of the stack's:

- SageMaker writes an endpoint's container output to ``/aws/sagemaker/Endpoints/<endpoint
  name>`` ("Log groups and streams that Amazon SageMaker AI sends to Amazon CloudWatch Logs",
  https://docs.aws.amazon.com/sagemaker/latest/dg/logging-cloudwatch.html) and creates that
  group itself, through the execution role's ``logs:CreateLogGroup`` ("How to use SageMaker AI
  execution roles", CreateModel permissions), when the containers start. A group SageMaker
  creates never expires ("By default, log data is stored in CloudWatch Logs indefinitely",
  CloudWatch Logs guide, "Change log data retention"), is encrypted with CloudWatch's own key,
  and outlives the stack.
- ``AWS::Logs::LogGroup`` takes a ``LogGroupName``, ``RetentionInDays``, ``KmsKeyId`` and a
  deletion policy (its CloudFormation schema). A group the stack creates before the endpoint
  (the Endpoint depends on it) is the one SageMaker then writes to.
- The endpoint's name must be known when the template is written: given (``endpoint_name=``),
  or derived by the library (a guarded rollout's name, the fleet's name of
  ``FleetChange.NEW_ENDPOINT``). CloudFormation generates the other names when it creates the
  endpoint, and the containers start, and SageMaker creates the group, while that creation
  runs: a group named from ``Fn::GetAtt`` could only be created after the endpoint, when the
  group exists already, so CloudFormation would fail ("already exists"). Those endpoints keep
  SageMaker's group: their logs are kept indefinitely until someone sets a retention.
- A group that exists already cannot be created either: an endpoint deployed with a name by an
  earlier version of the library has its group from SageMaker. So the default follows the
  app's context, ``"constructs-llm:endpointLogGroups": true`` (new apps' ``cdk.json``), as CDK's
  feature flags do; an existing app turns it on after deleting (or importing, ``cdk import``)
  each named endpoint's group.
- A customer key needs CloudWatch Logs in its key policy, for this group only ("Encrypt log
  data in CloudWatch Logs using AWS Key Management Service": the ``logs.<region>.amazonaws.com``
  principal, with ``kms:EncryptionContext:aws:logs:arn`` = the group's ARN). The writers need
  no KMS permission.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import CfnResource, RemovalPolicy, Stack
from constructs import Construct

from constructs_llm.cdk_values import key_problem, log_retention_problem
from constructs_llm.compliance import CheckovSkip, waive
from constructs_llm.log_group_key import LOG_KEY_ACTIONS, allow_logs_to_use
from constructs_llm.problems import Problem, Problems
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.scope_facts import context_of
from constructs_llm.values import describe, type_problem

if TYPE_CHECKING:  # loaded when a group is created: endpoints without one never import them
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_logs as logs

#: The context key whose ``true`` makes the stack create the groups of named endpoints.
CONTEXT_KEY = "constructs-llm:endpointLogGroups"
#: The prefix of every endpoint's log group.
ENDPOINT_LOG_GROUPS = "/aws/sagemaker/Endpoints"

_LOG_KEY_SKIP = CheckovSkip(
    "CKV_AWS_158",
    "CloudWatch Logs encrypts every log group at rest; pass "
    "EndpointLogs(encryption_key=...) for a customer-managed key.",
)


@dataclass(frozen=True, kw_only=True)
class EndpointLogs:
    """The log group the stack creates for an endpoint whose name it knows, before the
    endpoint, instead of the one SageMaker would create (no retention, CloudWatch's key, left
    behind by a deleted stack).

    :param retention: how long CloudWatch Logs keeps the containers' output, a
        ``logs.RetentionDays``. @default one month
    :param encryption_key: a KMS key for the group; its key policy gets CloudWatch Logs, for
        this group only (an imported key's policy is yours to change: a warning says what it
        needs). @default CloudWatch's own encryption
    :param removal_policy: what a stack deletion (or a replaced group) does with the group.
        @default ``RemovalPolicy.DESTROY``: a retained group of that name would make the next
        deploy of the endpoint fail ("already exists")
    """

    retention: logs.RetentionDays | None = None
    encryption_key: kms.IKey | None = None
    removal_policy: RemovalPolicy = RemovalPolicy.DESTROY

    def __post_init__(self) -> None:
        problems = Problems("EndpointLogs")
        if self.retention is not None:
            problems.add(log_retention_problem("retention", self.retention))
        problems.add(key_problem("encryption_key", self.encryption_key))
        problems.add(
            type_problem(
                "removal_policy",
                self.removal_policy,
                RemovalPolicy,
                "use RemovalPolicy.DESTROY or RemovalPolicy.RETAIN",
            )
        )
        problems.raise_if_any()


def endpoint_logs_of(
    scope: Construct, given: object, endpoint_name: str | None
) -> tuple[EndpointLogs | None, Problem | None]:
    """The log group settings ``logs=`` asks for (``True``, ``False`` or ``EndpointLogs``),
    else the app context's, and what is wrong (naming the value and the fix). Asked for
    explicitly on an endpoint whose name CloudFormation generates, it is an error; from the
    context, such an endpoint gets no group (SageMaker creates its own)."""
    if given is False:
        return None, None
    if given is True or isinstance(given, EndpointLogs):
        if endpoint_name is None:
            return None, _generated_name(given)
        return (given if isinstance(given, EndpointLogs) else EndpointLogs()), None
    if given is not None:
        return None, Problem.of(
            "logs",
            given,
            f"logs must be True, False or EndpointLogs(...), got {describe(given)};",
            "pass EndpointLogs(retention=logs.RetentionDays.ONE_MONTH) to choose the retention",
        )
    flag = context_of(scope, CONTEXT_KEY)
    if isinstance(flag, str) and flag.strip().lower() in ("true", "false"):
        flag = flag.strip().lower() == "true"  # from the command line: -c key=true
    if flag is not None and not isinstance(flag, bool):
        return None, Problem.of(
            "logs",
            flag,
            f"the context value {CONTEXT_KEY} must be true or false, got {flag!r};",
            "fix it in cdk.json (or -c), or pass logs=EndpointLogs(...) or logs=False",
        )
    return (EndpointLogs() if flag and endpoint_name is not None else None), None


def _generated_name(given: object) -> Problem:
    shown = "logs=True" if given is True else "logs=EndpointLogs(...)"
    return Problem.of(
        "logs",
        given,
        f"{shown} asks the stack to create the endpoint's log group, but the endpoint has "
        "no name until CloudFormation creates it, and SageMaker creates the group "
        f"({ENDPOINT_LOG_GROUPS}/<name>) as the containers start, during that creation, so "
        "the stack cannot create it first;",
        "give endpoint_name=... (or drop logs=, and set a retention on SageMaker's group after "
        "the deploy)",
    )


def create_log_group(
    scope: Construct, endpoint: CfnResource, endpoint_name: str, settings: EndpointLogs
) -> logs.LogGroup:
    """The endpoint's log group (``Logs`` under ``scope``), which the Endpoint waits for."""
    from aws_cdk import aws_logs as logs

    name = f"{ENDPOINT_LOG_GROUPS}/{endpoint_name}"
    group = logs.LogGroup(
        scope,
        "Logs",
        log_group_name=name,
        retention=settings.retention or logs.RetentionDays.ONE_MONTH,
        encryption_key=settings.encryption_key,
        removal_policy=settings.removal_policy,
    )
    endpoint.node.add_dependency(group)
    key = settings.encryption_key
    if key is None:
        waive(group.node.default_child, _LOG_KEY_SKIP)
    elif not allow_logs_to_use(key, Stack.of(scope), name):
        warn(scope, SynthWarning(WarningId.IMPORTED_LOG_KEY, _imported_key(name)))
    return group


def _imported_key(name: str) -> str:
    return (
        f"the endpoint's log group {name} is encrypted with an imported KMS key, whose key "
        "policy this stack cannot change: it must allow the logs.<region>.amazonaws.com "
        f"principal {', '.join(LOG_KEY_ACTIONS)} with the condition ArnEquals "
        f"kms:EncryptionContext:aws:logs:arn = the group's ARN (…:log-group:{name}), or the "
        "group's creation fails; add that statement, then acknowledge this warning"
    )
