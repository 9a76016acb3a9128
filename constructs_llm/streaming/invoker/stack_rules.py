"""CloudFormation rules that stop a deploy in seconds, before any resource is created."""

from __future__ import annotations

from aws_cdk import CfnRule, CfnRuleAssertion, ICfnRuleConditionExpression, Stack

__all__ = ["assert_before_deploy"]


def assert_before_deploy(
    stack: Stack, rule_id: str, condition: ICfnRuleConditionExpression, description: str
) -> None:
    """One rule per stack and id (several invokers share it), failing with ``description``."""
    if stack.node.try_find_child(rule_id) is not None:
        return
    CfnRule(
        stack,
        rule_id,
        assertions=[CfnRuleAssertion(assert_=condition, assert_description=description)],
    )
