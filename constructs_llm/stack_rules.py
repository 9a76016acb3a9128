"""CloudFormation rules that stop a deploy in seconds, before any resource is created: the one
helper every rule of the library goes through (the DLC registry's regions, the invoker's
adapter layer and WAF region)."""

from __future__ import annotations

import weakref

from aws_cdk import CfnRule, CfnRuleAssertion, ICfnRuleConditionExpression, Stack

# The rule ids each stack holds, kept on this side: every construct that needs a rule asks for
# it, and the rules are made here only (``assert_before_deploy``), under the same Python object
# for a stack for the life of the process (jsii hands it back), so nothing is asked of Node.js.
_made: weakref.WeakKeyDictionary[Stack, set[str]] = weakref.WeakKeyDictionary()


def has_rule(stack: Stack, rule_id: str) -> bool:
    """Whether ``stack`` holds the rule ``rule_id`` (made by :func:`assert_before_deploy`)."""
    return rule_id in _made.setdefault(stack, set())


def assert_before_deploy(
    stack: Stack, rule_id: str, condition: ICfnRuleConditionExpression, description: str
) -> None:
    """One rule per stack and id (the constructs that need it share it), failing the deploy
    with ``description`` unless ``condition`` holds."""
    if has_rule(stack, rule_id):
        return
    _made[stack].add(rule_id)
    CfnRule(
        stack,
        rule_id,
        assertions=[CfnRuleAssertion(assert_=condition, assert_description=description)],
    )
