"""The Lambda pieces of a StreamingInvoker: the runtime's code asset, the log group (and the
key policy an encrypted one needs), the function's DependsOn, and the checkov waivers of a
synchronous, URL-invoked streaming function, each with its reason.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, CfnResource, Fn, Names, RemovalPolicy, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from constructs_llm.compliance import CheckovSkip, waive
from constructs_llm.log_group_key import LOG_KEY_ACTIONS, allow_logs_to_use
from constructs_llm.reporting import SynthWarning, WarningId, warn

_STREAMING_DIR = Path(__file__).resolve().parent.parent
_CONCURRENCY_SKIP = CheckovSkip(
    "CKV_AWS_115",
    "Reserved concurrency is left to the account unless max_concurrency=... is given: "
    "reserving any by default fails deploys in accounts whose unreserved concurrency is at "
    "the minimum.",
)
# checkov checks that do not apply to a synchronous, URL-invoked streaming function.
_FUNCTION_SKIPS = (
    CheckovSkip(
        "CKV_AWS_116",
        "Invoked synchronously through its function URL; a dead-letter queue only applies to "
        "asynchronous invocations.",
    ),
    CheckovSkip(
        "CKV_AWS_117", "Needs only the SageMaker Runtime API; pass vpc=... to run it in a VPC."
    ),
    CheckovSkip("CKV_AWS_173", "The environment holds names and settings only (no secrets)."),
)
_PUBLIC_URL_REASON = (
    "API-key auth: the function URL is public by design (OpenAI clients cannot sign "
    "requests); the runtime checks a Bearer key from Secrets Manager before any other work "
    "and answers 401 without one. max_concurrency=... caps what a flood can run."
)
_LOG_KEY_SKIP = CheckovSkip(
    "CKV_AWS_158",
    "CloudWatch Logs encrypts every log group at rest; these logs hold request metadata only. "
    "Pass log_encryption_key=... for a customer-managed key.",
)


def runtime_code() -> lambda_.Code:
    """The runtime package and the vocabulary it shares with the construct layer, as
    ``streaming/runtime/``, ``streaming/formats.py`` (the name the runtime imports it by) and
    ``contract.py`` at the asset root (no bundling step; ``streaming`` is a namespace package
    there)."""
    return lambda_.Code.from_asset(
        str(_STREAMING_DIR.parent),
        exclude=[
            "*",
            "!contract.py",
            "!streaming",
            "!streaming/formats.py",
            "!streaming/runtime",
            "!streaming/runtime/**",
            "**/__pycache__",
            "**/*.pyc",
        ],
    )


#: The function's handler: the Lambda Web Adapter execs ``$LAMBDA_TASK_ROOT/<handler>``.
HANDLER = "streaming/runtime/run.sh"


def invoker_log_group(
    scope: Construct, *, retention: logs.RetentionDays, encryption_key: kms.IKey | None
) -> logs.LogGroup:
    """The function's log group ("Logs"). With a customer key it gets a name of its own
    (``/constructs-llm/<stack name>/<invoker's unique id>``), so the key's policy can let
    CloudWatch Logs use the key for this log group alone."""
    if encryption_key is None:
        log_group = logs.LogGroup(
            scope, "Logs", retention=retention, removal_policy=RemovalPolicy.DESTROY
        )
        waive(log_group.node.default_child, _LOG_KEY_SKIP)
        return log_group
    name = Fn.join("", ["/constructs-llm/", Aws.STACK_NAME, "/", Names.unique_id(scope)])
    log_group = logs.LogGroup(
        scope,
        "Logs",
        log_group_name=name,
        retention=retention,
        encryption_key=encryption_key,
        removal_policy=RemovalPolicy.DESTROY,
    )
    if not allow_logs_to_use(encryption_key, Stack.of(scope), name):
        warn(scope, SynthWarning(WarningId.IMPORTED_LOG_KEY, _imported_log_key(scope)))
    return log_group


def waive_function_checks(function: lambda_.Function, *, max_concurrency: int | None) -> None:
    """The checkov checks that do not apply to the function, each with its reason."""
    skips = _FUNCTION_SKIPS if max_concurrency else (_CONCURRENCY_SKIP, *_FUNCTION_SKIPS)
    waive(function.node.default_child, *skips)


def warn_reserved_concurrency(function: lambda_.Function, max_concurrency: int | None) -> None:
    """Reserving concurrency fails the deploy where the account's limit cannot spare it:
    "Lambda reserves 100 units of concurrency for functions that don't use reserved
    concurrency" (Lambda developer guide, "Configuring reserved concurrency"), and new accounts
    may have a limit of 10-50 in all, so ``PutFunctionConcurrency`` is refused ("...decreases
    account's UnreservedConcurrentExecution below its minimum value of [100]")."""
    if not max_concurrency:
        return
    warn(
        function,
        SynthWarning(
            WarningId.RESERVED_CONCURRENCY,
            f"max_concurrency={max_concurrency} reserves {max_concurrency} of the account's "
            "Lambda concurrency, and Lambda keeps 100 unreserved, so the deploy fails unless "
            f"the account's limit is at least {max_concurrency + 100} (new accounts may have "
            "10-50: `aws lambda get-account-settings` shows AccountLimit.ConcurrentExecutions; "
            "ask for more in Service Quotas), or drop max_concurrency",
        ),
    )


def record_public_url(url: lambda_.FunctionUrl, function: lambda_.Function) -> None:
    """API-key auth: the public URL's checkov findings and cdk-nag findings, with reasons."""
    waive(url.node.default_child, CheckovSkip("CKV_AWS_258", _PUBLIC_URL_REASON))
    for child in function.node.find_all():
        if isinstance(child, lambda_.CfnPermission) and child.principal == "*":
            waive(child, CheckovSkip("CKV_AWS_301", _PUBLIC_URL_REASON))


def depend_on_policy_only(function: lambda_.Function, role: iam.Role) -> None:
    """The Function's GetAtt on the role already orders it after the role; CDK's extra
    DependsOn on the role is a cfn-lint W3005. Keep only the policy edge."""
    policy = role.node.find_child("DefaultPolicy").node.default_child
    cfn = function.node.default_child
    if isinstance(policy, CfnResource) and isinstance(cfn, CfnResource):
        cfn.add_override("DependsOn", [policy.logical_id])


def _imported_log_key(scope: Construct) -> str:
    """What the policy of an imported ``log_encryption_key`` must say, with this invoker's log
    group ARN as it deploys (its stack name and id; region, account and partition as known)."""
    stack = Stack.of(scope)

    def known(value: str, placeholder: str) -> str:
        return placeholder if Token.is_unresolved(value) else value

    arn = (
        f"arn:{known(stack.partition, '<partition>')}:logs:{known(stack.region, '<region>')}:"
        f"{known(stack.account, '<account>')}:log-group:/constructs-llm/{stack.stack_name}/"
        f"{Names.unique_id(scope)}"
    )
    principal = f"logs.{known(stack.region, '<region>')}.amazonaws.com"
    return (
        f"log_encryption_key of '{scope.node.path}' is imported, so its key policy cannot be "
        "changed here, and CloudWatch Logs creates the invoker's log group only if that policy "
        f"already lets {principal} use the key ({', '.join(LOG_KEY_ACTIONS)}) with the "
        f"condition ArnEquals kms:EncryptionContext:aws:logs:arn = {arn} (the deploy fails "
        "with AccessDeniedException from CreateLogGroup otherwise); add that statement to the "
        "key's policy, then acknowledge this warning"
    )
