"""A customer KMS key for a log group the library creates (the invoker's, an endpoint's): the
statement its key policy needs, added where the stack can change the policy.

"Encrypt log data in CloudWatch Logs using AWS Key Management Service"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html) gives
the regional CloudWatch Logs principal these actions, limited by the encryption context
CloudWatch Logs sends (``kms:EncryptionContext:aws:logs:arn``, the log group's ARN) to one
log group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Stack
from aws_cdk import aws_iam as iam

from constructs_llm.scope_facts import arn_in_stack

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms

#: What CloudWatch Logs does with a log group's key.
LOG_KEY_ACTIONS = (
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:DescribeKey",
)


def allow_logs_to_use(key: kms.IKey, stack: Stack, log_group_name: str) -> bool:
    """Adds the statement to ``key``'s policy for the log group ``log_group_name``. An imported
    key's policy cannot be changed here (CDK adds nothing to it): False then, and its policy
    must already allow this."""
    log_group_arn = arn_in_stack(stack, "logs", "log-group", log_group_name)
    added = key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal(f"logs.{stack.region}.{stack.url_suffix}")],
            actions=list(LOG_KEY_ACTIONS),
            resources=["*"],  # in a key policy, "*" means this key
            conditions={"ArnEquals": {"kms:EncryptionContext:aws:logs:arn": log_group_arn}},
        )
    )
    return bool(added.statement_added)
