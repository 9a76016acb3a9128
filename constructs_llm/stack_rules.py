"""CloudFormation rules that stop a deploy in seconds, before any resource is created: the one
helper every rule of the library goes through (the DLC registry's regions, the invoker's
adapter layer and WAF region)."""

from __future__ import annotations

import weakref

from aws_cdk import CfnRule, CfnRuleAssertion, ICfnRuleConditionExpression, Stack

# The rule ids each stack is known to hold, kept on this side: every construct that needs a
# rule asks for it, and each ``try_find_child`` is a jsii round trip.
_made: weakref.WeakKeyDictionary[Stack, set[str]] = weakref.WeakKeyDictionary()


def has_rule(stack: Stack, rule_id: str) -> bool:
    """Whether ``stack`` holds a construct ``rule_id`` (the rule, once made)."""
    made = _made.get(stack)
    if made is None:
        made = _made[stack] = set()
    if rule_id in made:
        return True
    if stack.node.try_find_child(rule_id) is None:
        return False
    made.add(rule_id)
    return True


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
