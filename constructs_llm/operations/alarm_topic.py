"""Where the default alarms notify: ``Alarms(topic=...)``, and the e-mail addresses
``Alarms(email=...)`` subscribes to it.

With addresses and no topic, the endpoint (or component) gets a topic of its own
(``AlarmTopic``), encrypted with a KMS key of its own (``AlarmTopicKey``, rotated, deleted with
the stack) and refusing requests without TLS.

CloudWatch publishes an alarm's notification to the topic as the service principal
``cloudwatch.amazonaws.com``. An ``AWS::SNS::TopicPolicy`` replaces the topic's default access
policy, so a topic with a policy (the TLS-only deny is one) must allow that principal
``sns:Publish``, or the alarm history reads "...alarm:X is not authorized to perform:
SNS:Publish ... because no resource-based policy allows" (AWS knowledge-center article
``cloudwatch-receive-sns-for-alarm-trigger``). :func:`alarm_topic` adds that Allow through
the topic's own API (``add_to_resource_policy``), with conditions on ``aws:SourceAccount``
(this account) and ``aws:SourceArn`` (this account's alarms in this region), for the topic of
its own and for a user's ``sns.Topic`` created in the app alike. An imported topic's policy
cannot be changed here: the scope gets a note saying what to verify.

A topic encrypted with a customer key also needs ``kms:GenerateDataKey*`` and ``kms:Decrypt``
for ``cloudwatch.amazonaws.com`` in the key's policy (SNS developer guide, "Enable
compatibility between event sources from AWS services and encrypted topics",
https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services),
added to a key created in the app, and a note to verify an imported key's. The AWS managed
key ``alias/aws/sns`` is refused (:func:`managed_key_problem`): its policy cannot be changed,
so CloudWatch can never publish to a topic it encrypts.

Each address becomes an ``AWS::SNS::Subscription`` (protocol ``email``) under the topic, its
construct id the address, so reordering the list replaces nothing and two targets that share
a topic and an address share one subscription. An address given as a token (a
``CfnParameter``'s value) takes its id from what the token stands for (the parameter's
logical id), never from a counter, so the order targets are created in changes no id. SNS
mails the address a confirmation; nothing is delivered until it is confirmed, and the
subscription goes with the stack.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from aws_cdk import Aws, RemovalPolicy, Stack, Token
from constructs import Construct

from constructs_llm.notes import add_note
from constructs_llm.problems import Problem
from constructs_llm.values import describe

if TYPE_CHECKING:
    from aws_cdk import aws_sns as sns

# An address SNS can mail: one @, a domain with a dot, no spaces (SNS checks the rest when
# it sends the confirmation).
_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_EXAMPLE = "'oncall@example.com'"


def emails_of(email: str | Sequence[str] | None) -> tuple[str, ...]:
    """The addresses ``email`` names, in order (checked by :func:`email_problems` first)."""
    if email is None:
        return ()
    return (email,) if isinstance(email, str) else tuple(email)


def email_problems(email: object) -> list[Problem]:
    """What is wrong with ``Alarms(email=...)``: a string or a list of strings, each an
    address, none twice."""
    if email is None:
        return []
    if isinstance(email, str):
        addresses: list[object] = [email]
    elif isinstance(email, list | tuple):
        addresses = list(email)
        if not addresses:
            return [
                Problem.of(
                    "email",
                    email,
                    f"email must name at least one address, got {email!r};",
                    "pass None for none",
                )
            ]
    else:
        return [
            Problem.of(
                "email",
                email,
                f"email must be an address such as {_EXAMPLE} or a list of them, got "
                f"{describe(email)}",
            )
        ]
    problems = []
    for index, address in enumerate(addresses):
        where = "email" if isinstance(email, str) else f"email[{index}]"
        if not isinstance(address, str):
            problems.append(
                Problem.of(
                    where,
                    address,
                    f"{where} must be an address such as {_EXAMPLE}, got {describe(address)}",
                )
            )
        elif not Token.is_unresolved(address) and not _ADDRESS.match(address):
            problems.append(
                Problem.of(
                    where,
                    address,
                    f"{where} must be an e-mail address such as {_EXAMPLE}, got {address!r}",
                )
            )
    twice = sorted({a for a in addresses if isinstance(a, str) and addresses.count(a) > 1})
    if twice:
        problems.append(
            Problem.of(
                "email",
                twice,
                f"email names {', '.join(map(repr, twice))} more than once;",
                "name each once",
            )
        )
    return problems


def alarm_topic(
    scope: Construct, topic: sns.ITopic | None, emails: Sequence[str]
) -> sns.ITopic | None:
    """The topic the alarms of ``scope`` notify, with each of ``emails`` subscribed once:
    ``topic``, or with addresses and no topic, ``scope``'s own (created on the first call).
    CloudWatch may publish to it, and use its key (see the module's docstring)."""
    from aws_cdk import aws_sns as sns  # loaded only when alarms notify

    if topic is None and emails:
        found = scope.node.try_find_child("AlarmTopic")
        topic = found if isinstance(found, sns.Topic) else _own_topic(scope)
    if topic is None:
        return None
    _let_cloudwatch_publish(scope, topic)
    for address in emails:
        if not _subscribed(topic, address):
            sns.Subscription(
                topic,
                address if not Token.is_unresolved(address) else _token_id(topic, address),
                topic=topic,
                protocol=sns.SubscriptionProtocol.EMAIL,
                endpoint=address,
            )
    return topic


#: The AWS managed key of SNS, whose key policy no one can change.
_MANAGED_KEY = "alias/aws/sns"


def managed_key_problem(topic: object) -> Problem | None:
    """A topic encrypted with the AWS managed key ``alias/aws/sns``: CloudWatch cannot use that
    key and its policy cannot be changed, so no alarm could ever notify the topic."""
    from aws_cdk import aws_sns as sns

    if not isinstance(topic, sns.Topic):
        return None  # an imported topic's key is not known here
    key = topic.master_key
    cfn = topic.node.default_child
    seen = [
        getattr(key, "alias_name", None),
        getattr(key, "key_arn", None),
        getattr(key, "key_id", None),
        cfn.kms_master_key_id if isinstance(cfn, sns.CfnTopic) else None,
    ]
    for value in seen:
        if isinstance(value, str) and (value.endswith(_MANAGED_KEY) or value == "aws/sns"):
            return Problem.of(
                "topic",
                topic,
                f"topic {topic.node.path} is encrypted with the AWS managed key "
                f"{_MANAGED_KEY} (got {value!r}): CloudWatch cannot publish to it, as that key's "
                "policy cannot let cloudwatch.amazonaws.com use it; encrypt the topic with a "
                "key of your own (kms.Key(...), whose policy the alarms extend), or pass email= "
                "without topic= for a topic and key of the alarms' own",
            )
    return None


def _let_cloudwatch_publish(scope: Construct, topic: sns.ITopic) -> None:
    """Allows ``cloudwatch.amazonaws.com`` to publish this account's alarms to ``topic`` and to
    use its KMS key; where the topic or key is imported (its policy not changed here), a note
    on ``scope`` says what to verify. Each statement is the same for every target, and a
    policy document keeps one of identical statements."""
    from aws_cdk import aws_iam as iam

    cloudwatch = iam.ServicePrincipal("cloudwatch.amazonaws.com")
    added = topic.add_to_resource_policy(
        iam.PolicyStatement(
            sid="AllowCloudWatchAlarmsToPublish",
            principals=[cloudwatch],
            actions=["sns:Publish"],
            resources=[topic.topic_arn],
            conditions={
                "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                "ArnLike": {"aws:SourceArn": _alarms_arn()},
            },
        )
    )
    if not added.statement_added:
        add_note(
            scope,
            f"alarm topic {_named(topic.topic_arn, topic)} is imported: verify that its access "
            "policy allows cloudwatch.amazonaws.com sns:Publish (a topic policy replaces SNS's "
            "default one), or no alarm notification is delivered",
        )
    key = topic.master_key
    if key is None:
        return
    added = key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[cloudwatch],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"],  # in a key policy, "*" means this key
        )
    )
    if not added.statement_added:
        add_note(
            scope,
            f"alarm topic key {_named(key.key_arn, key)} is imported: verify that its key "
            "policy allows cloudwatch.amazonaws.com kms:GenerateDataKey* and kms:Decrypt, or "
            "CloudWatch cannot publish to the encrypted topic",
        )


def _alarms_arn() -> str:
    """What ``aws:SourceArn`` of a CloudWatch alarm's notification matches: this account's
    alarms in this region (pseudo parameters, so an environment-agnostic stack names its own).
    Read when a topic is made, not at import: the first jsii call loads aws-cdk-lib's
    JavaScript in Node.js."""
    return f"arn:{Aws.PARTITION}:cloudwatch:{Aws.REGION}:{Aws.ACCOUNT_ID}:alarm:*"


def _named(value: str, construct: object) -> str:
    """A literal ARN as it is; a token by its construct's path."""
    if not Token.is_unresolved(value):
        return value
    node = getattr(construct, "node", None)
    return node.path if node is not None else "(a token)"


def _own_topic(scope: Construct) -> sns.Topic:
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_sns as sns

    key = kms.Key(
        scope,
        "AlarmTopicKey",
        description=f"Encrypts the alarm notifications of {scope.node.path}",
        enable_key_rotation=True,
        removal_policy=RemovalPolicy.DESTROY,
    )
    return sns.Topic(scope, "AlarmTopic", master_key=key, enforce_ssl=True)


def _subscribed(topic: sns.ITopic, address: str) -> bool:
    """Whether ``topic`` already mails ``address`` (a token compared by what it resolves to)."""
    from aws_cdk import aws_sns as sns

    stack = Stack.of(topic)
    wanted = stack.resolve(address)
    return any(
        isinstance(child, sns.CfnSubscription)
        and str(child.protocol).lower() == "email"
        and stack.resolve(child.endpoint) == wanted
        for child in topic.node.find_all()
    )


def _token_id(topic: sns.ITopic, address: str) -> str:
    """An address given as a token (a ``CfnParameter``'s value) has no text for an id: the id
    hashes what the token resolves to (``{"Ref": "<parameter>"}``), so it does not depend on the
    order in which targets subscribe."""
    resolved = Stack.of(topic).resolve(address)
    import hashlib  # OpenSSL's bindings load when a token address needs a hash

    digest = hashlib.sha256(json.dumps(resolved, sort_keys=True).encode()).hexdigest()[:8]
    return f"EmailToken{digest.upper()}"
