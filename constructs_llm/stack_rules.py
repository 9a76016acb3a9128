"""CloudFormation rules that stop a deploy in seconds, before any resource is created: the one
helper every rule of the library goes through (the DLC registry's regions, the invoker's
adapter layer and WAF region)."""

from __future__ import annotations

from aws_cdk import CfnRule, CfnRuleAssertion, ICfnRuleConditionExpression, Stack


def assert_before_deploy(
    stack: Stack, rule_id: str, condition: ICfnRuleConditionExpression, description: str
) -> None:
    """One rule per stack and id (the constructs that need it share it), failing the deploy
    with ``description`` unless ``condition`` holds."""
    if stack.node.try_find_child(rule_id) is not None:
        return
    CfnRule(
        stack,
        rule_id,
        assertions=[CfnRuleAssertion(assert_=condition, assert_description=description)],
    )
