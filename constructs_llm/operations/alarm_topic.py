"""Where the default alarms notify: ``Alarms(topic=...)``, and the e-mail addresses
``Alarms(email=...)`` subscribes to it.

With addresses and no topic, the endpoint (or component) gets a topic of its own
(``AlarmTopic``), encrypted with a KMS key of its own (``AlarmTopicKey``, rotated, deleted with
the stack) and refusing requests without TLS. CloudWatch publishes to an encrypted topic only
when the key's policy lets it use the key, which each alarm adds (``alarms._notify``), and an
AWS managed key's policy cannot be changed, hence a key of its own (SNS developer guide, "Enable
compatibility between event sources from AWS services and encrypted topics",
https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services).

Each address becomes an ``AWS::SNS::Subscription`` (protocol ``email``) under the topic, its
construct id the address, so reordering the list replaces nothing and two targets that share
a topic and an address share one subscription. SNS mails the address a confirmation; nothing
is delivered until it is confirmed, and the subscription goes with the stack.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from aws_cdk import RemovalPolicy, Token
from constructs import Construct

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


def email_problems(email: object) -> list[str]:
    """What is wrong with ``Alarms(email=...)``: a string or a list of strings, each an
    address, none twice."""
    if email is None:
        return []
    if isinstance(email, str):
        addresses: list[object] = [email]
    elif isinstance(email, list | tuple):
        addresses = list(email)
        if not addresses:
            return [f"email must name at least one address, got {email!r}; pass None for none"]
    else:
        return [
            f"email must be an address such as {_EXAMPLE} or a list of them, got {describe(email)}"
        ]
    problems = []
    for index, address in enumerate(addresses):
        where = "email" if isinstance(email, str) else f"email[{index}]"
        if not isinstance(address, str):
            problems.append(
                f"{where} must be an address such as {_EXAMPLE}, got {describe(address)}"
            )
        elif not Token.is_unresolved(address) and not _ADDRESS.match(address):
            problems.append(
                f"{where} must be an e-mail address such as {_EXAMPLE}, got {address!r}"
            )
    twice = sorted({a for a in addresses if isinstance(a, str) and addresses.count(a) > 1})
    if twice:
        problems.append(f"email names {', '.join(map(repr, twice))} more than once; name each once")
    return problems


def alarm_topic(
    scope: Construct, topic: sns.ITopic | None, emails: Sequence[str]
) -> sns.ITopic | None:
    """The topic the alarms of ``scope`` notify, with each of ``emails`` subscribed once:
    ``topic``, or with addresses and no topic, ``scope``'s own (created on the first call)."""
    from aws_cdk import aws_sns as sns  # loaded only when alarms notify

    if topic is None and emails:
        found = scope.node.try_find_child("AlarmTopic")
        topic = found if isinstance(found, sns.Topic) else _own_topic(scope)
    for address in emails:
        if topic is not None and not _subscribed(topic, address):
            sns.Subscription(
                topic,
                address if not Token.is_unresolved(address) else _token_id(topic),
                topic=topic,
                protocol=sns.SubscriptionProtocol.EMAIL,
                endpoint=address,
            )
    return topic


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
    from aws_cdk import aws_sns as sns

    return any(
        isinstance(child, sns.CfnSubscription)
        and str(child.protocol).lower() == "email"
        and child.endpoint == address
        for child in topic.node.find_all()
    )


def _token_id(topic: sns.ITopic) -> str:
    """An address given as a token (a ``CfnParameter``'s value) has no text for an id."""
    taken = {child.node.id for child in topic.node.children}
    return next(f"EmailToken{n}" for n in range(len(taken) + 1) if f"EmailToken{n}" not in taken)
