"""AWS's contract for alarms, walked over every template: alarm action -> topic -> topic policy
-> key, and alarm -> the resource its metrics name.

For each alarm with ``AlarmActions``, the walk follows each action to its ``AWS::SNS::Topic``,
finds the ``AWS::SNS::TopicPolicy`` that names the topic (a topic policy replaces SNS's default
one) and requires an Allow for ``cloudwatch.amazonaws.com`` on ``sns:Publish`` on that topic,
conditioned on the alarm's account (``aws:SourceAccount``) and matching the alarm's ARN
(``aws:SourceArn``); a topic with ``KmsMasterKeyId`` needs its ``AWS::KMS::Key``'s
``KeyPolicy`` to allow that principal ``kms:GenerateDataKey*`` and ``kms:Decrypt`` (AWS
knowledge-center article ``cloudwatch-receive-sns-for-alarm-trigger``; SNS developer guide,
``sns-key-management``). Every alarm whose dimensions or PromQL query name a SageMaker endpoint
or inference component must depend on that resource, so CloudFormation moves it to a new fleet
only once the fleet exists (``constructs_llm/operations/alarms.py``).

Everything is read from the template: the committed example templates (equal to a fresh synth,
``tests/test_examples.py``) and one in-process synth of the combinations they lack. Each walk
asserts it visited something, and mutants (the Allow dropped, the key statement dropped, the
dependency dropped) must fail it.
"""

from __future__ import annotations

import copy
import fnmatch
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template

from constructs_llm import Alarms, Deployment, InferenceComponent, LlmEndpoint
from tests.conftest import cdk_context
from tests.matrix.builders import G5_4GPU, ic_endpoint
from tests.matrix.builders import model as llama3
from tests.support.template_graph import Graph

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "templates"
ALARM = "AWS::CloudWatch::Alarm"
TOPIC = "AWS::SNS::Topic"
TOPIC_POLICY = "AWS::SNS::TopicPolicy"
KEY = "AWS::KMS::Key"
WATCHED = ("AWS::SageMaker::Endpoint", "AWS::SageMaker::InferenceComponent")
CLOUDWATCH = "cloudwatch.amazonaws.com"


def _text(node: Any) -> str:
    """A value as text: ``Ref`` as ``${Name}``, ``Fn::GetAtt`` as ``${Name.Attr}``,
    ``Fn::Join`` joined; anything else fails, so nothing passes unread."""
    if isinstance(node, str):
        return node
    if isinstance(node, dict) and len(node) == 1:
        ((function, argument),) = node.items()
        if function == "Ref":
            return "${" + str(argument) + "}"
        if function == "Fn::GetAtt":
            return "${" + ".".join(argument) + "}"
        if function == "Fn::Join":
            separator, parts = argument
            return str(separator).join(_text(p) for p in parts)
    raise ValueError(f"a value the walk does not read: {node!r}")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _principal_is_cloudwatch(statement: dict[str, Any]) -> bool:
    principal = statement.get("Principal", {})
    return isinstance(principal, dict) and CLOUDWATCH in _list(principal.get("Service", []))


def _allows(statement: dict[str, Any], action: str) -> bool:
    return statement.get("Effect") == "Allow" and any(
        fnmatch.fnmatchcase(action, granted) for granted in _list(statement.get("Action", []))
    )


def _topic_of(action: Any, resources: dict[str, Any]) -> str | None:
    """The logical id of the SNS topic an alarm action names: "" for an action that is no
    topic of the template (a scaling policy), None for a topic the template does not hold."""
    if isinstance(action, dict) and "Ref" in action:
        target = action["Ref"]
        return str(target) if resources.get(target, {}).get("Type") == TOPIC else ""
    return None if ":sns:" in _text(action) else ""


def _publish_problems(alarm: str, topic: str, resources: dict[str, Any]) -> list[str]:
    """What keeps CloudWatch from publishing ``alarm``'s notification to ``topic``."""
    policies = [
        r["Properties"]["PolicyDocument"]
        for r in resources.values()
        if r["Type"] == TOPIC_POLICY and {"Ref": topic} in r["Properties"]["Topics"]
    ]
    if not policies:  # SNS's default policy lets the account's services publish
        return []
    alarm_arn = "arn:${AWS::Partition}:cloudwatch:${AWS::Region}:${AWS::AccountId}:alarm:"
    alarm_arn += _text(resources[alarm]["Properties"].get("AlarmName", {"Ref": alarm}))
    for document in policies:
        for statement in document["Statement"]:
            if not (_principal_is_cloudwatch(statement) and _allows(statement, "sns:Publish")):
                continue
            if {"Ref": topic} not in _list(statement.get("Resource")):
                continue
            conditions = statement.get("Condition", {})
            account = conditions.get("StringEquals", {}).get("aws:SourceAccount")
            source = conditions.get("ArnLike", {}).get("aws:SourceArn")
            if account is None or _text(account) != "${AWS::AccountId}":
                return [f"{topic}: the Allow for {alarm} names account {account!r}"]
            if source is None or not fnmatch.fnmatchcase(alarm_arn, _text(source)):
                return [f"{topic}: aws:SourceArn {source!r} does not match {alarm_arn}"]
            return []
    return [f"{topic}'s policy lets no {CLOUDWATCH} sns:Publish, so {alarm} cannot notify"]


def _key_problems(alarm: str, topic: str, resources: dict[str, Any]) -> list[str]:
    """What keeps CloudWatch from using ``topic``'s customer key."""
    key_id = resources[topic]["Properties"].get("KmsMasterKeyId")
    if key_id is None:
        return []
    key = _text(key_id).removeprefix("${").removesuffix("}").split(".")[0]
    if resources.get(key, {}).get("Type") != KEY:
        return [f"{topic} is encrypted with {key_id!r}, a key whose policy {alarm} cannot rely on"]
    statements = resources[key]["Properties"]["KeyPolicy"]["Statement"]
    missing = [
        action
        for action in ("kms:GenerateDataKey*", "kms:Decrypt")
        if not any(_principal_is_cloudwatch(s) and _allows(s, action) for s in statements)
    ]
    return [f"{key} does not allow {CLOUDWATCH} {', '.join(missing)}"] if missing else []


def delivery_walk(template: dict[str, Any]) -> tuple[int, list[str]]:
    """(alarm actions followed to a topic of the template, problems found)."""
    resources = template["Resources"]
    visited, problems = 0, []
    for alarm, resource in resources.items():
        if resource["Type"] != ALARM:
            continue
        for action in resource["Properties"].get("AlarmActions", []):
            topic = _topic_of(action, resources)
            if topic is None:
                problems.append(f"{alarm} notifies {action!r}, a topic this walk cannot read")
                continue
            if not topic:
                continue  # not a notification (a scaling policy's action)
            visited += 1
            problems += _publish_problems(alarm, topic, resources)
            problems += _key_problems(alarm, topic, resources)
    return visited, problems


def _names(node: Any) -> Iterator[str]:
    """Every string a value holds (dimension values, a PromQL query)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _names(value)


def _watched_names(resources: dict[str, Any]) -> dict[str, str]:
    """The literal names of the template's endpoints and components -> their logical ids."""
    found = {}
    for logical_id, resource in resources.items():
        if resource["Type"] in WATCHED:
            field = "EndpointName" if resource["Type"] == WATCHED[0] else "InferenceComponentName"
            name = resource["Properties"].get(field)
            if isinstance(name, str):
                found[name] = logical_id
    return found


def dependency_walk(template: dict[str, Any]) -> tuple[int, list[str]]:
    """(alarms that name an endpoint or component of the template, those that do not wait
    for it)."""
    resources = template["Resources"]
    graph = Graph(Template.from_json(template))
    watched = _watched_names(resources)
    visited, problems = 0, []
    for alarm, resource in resources.items():
        if resource["Type"] != ALARM:
            continue
        props = resource["Properties"]
        texts = [
            *(_text(d["Value"]) for d in props.get("Dimensions", []) if d["Name"] != "Target"),
            *_names(props.get("EvaluationCriteria", {})),
            *_names(props.get("Metrics", [])),
        ]
        named = {watched[n] for n in watched for t in texts if n in t}
        named |= {
            target
            for t in texts
            for target in resources
            if resources[target]["Type"] in WATCHED and "${" + target + "." in t
        }
        for target in sorted(named):
            visited += 1
            if not graph.waits_for(alarm, target):
                problems.append(f"{alarm} names {target} but does not depend on it")
        for target in named:
            if graph.waits_for(target, alarm):
                problems.append(f"{target} depends on {alarm}: a cycle with the alarm's wait")
    return visited, problems


# -- the templates ---------------------------------------------------------------------------


def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.template.json").read_text())
    return loaded


FIXTURE_NAMES = sorted(p.name.removesuffix(".template.json") for p in FIXTURES.glob("*.json"))


@pytest.fixture(scope="module")
def combinations() -> dict[str, Any]:
    """What the examples lack, in one stack: an endpoint whose alarms mail an address (a topic
    and key of their own), a guarded endpoint notifying a user's topic encrypted with a
    customer key, and a guarded inference component notifying that topic too."""
    app = App(context=cdk_context())
    stack = Stack(app, "Contract")
    key = kms.Key(stack, "UserKey", enable_key_rotation=True)
    topic = sns.Topic(stack, "UserTopic", master_key=key, enforce_ssl=True)
    served = llama3(stack, id="Served", bound=False)  # one definition, on both endpoints
    LlmEndpoint(stack, "Mailed", model=served, alarms=Alarms(email="oncall@example.com"))
    LlmEndpoint(
        stack,
        "Guarded",
        model=served,
        instance_count=2,
        alarms=Alarms(topic=topic, model_latency=Duration.seconds(30)),
        deployment=Deployment.canary(percent=50, bake=Duration.minutes(5)),
    )
    InferenceComponent(
        stack,
        "Chat",
        endpoint=ic_endpoint(stack),
        model=llama3(stack, id="ChatModel", instance_type=G5_4GPU, bound=False),
        accelerators=1,
        min_memory_mib=16 * 1024,
        copies=2,
        alarms=Alarms(topic=topic),
        deployment=Deployment.rolling(batch_percent=50, bake=Duration.minutes(5)),
    )
    synthesized = dict(Template.from_stack(stack).to_json())
    return synthesized


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_example_s_alarms_can_notify_their_topic(name: str) -> None:
    visited, problems = delivery_walk(_fixture(name))
    assert problems == []
    if name == "Production":  # the one example whose alarms notify (its on-call topic)
        assert visited >= 7


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_example_s_alarms_wait_for_what_they_watch(name: str) -> None:
    visited, problems = dependency_walk(_fixture(name))
    assert problems == []
    template = _fixture(name)
    watching = any(r["Type"] in WATCHED for r in template["Resources"].values()) and any(
        r["Type"] == ALARM for r in template["Resources"].values()
    )
    assert visited > 0 or not watching


def test_the_walks_visit_the_examples() -> None:
    # neither walk can pass by matching nothing
    assert sum(delivery_walk(_fixture(n))[0] for n in FIXTURE_NAMES) >= 7
    assert sum(dependency_walk(_fixture(n))[0] for n in FIXTURE_NAMES) >= 40


def test_the_combinations_deliver_and_wait(combinations: dict[str, Any]) -> None:
    visited, problems = delivery_walk(combinations)
    assert problems == []
    # the mailed endpoint's 4 alarms, the guarded endpoint's 5 and the component's 4
    assert visited >= 12
    keys = [r for r in combinations["Resources"].values() if r["Type"] == KEY]
    assert len(keys) == 2  # the mailed endpoint's own key and the user's
    visited, problems = dependency_walk(combinations)
    assert problems == []
    assert visited >= 12


# -- mutants ---------------------------------------------------------------------------------


def _drop_statements(template: dict[str, Any], kind: str, field: str, drop: Any) -> dict[str, Any]:
    mutant = copy.deepcopy(template)
    dropped = 0
    for resource in mutant["Resources"].values():
        if resource["Type"] == kind:
            document = resource["Properties"][field]
            kept = [s for s in document["Statement"] if not drop(s)]
            dropped += len(document["Statement"]) - len(kept)
            document["Statement"] = kept
    assert dropped, "the mutant changed nothing"
    return mutant


@pytest.mark.parametrize("source", ["Production", "combinations"])
def test_a_topic_policy_without_the_allow_fails_the_walk(
    source: str, combinations: dict[str, Any]
) -> None:
    template = combinations if source == "combinations" else _fixture(source)
    mutant = _drop_statements(
        template,
        TOPIC_POLICY,
        "PolicyDocument",
        lambda s: s["Effect"] == "Allow" and _principal_is_cloudwatch(s),
    )
    _, problems = delivery_walk(mutant)
    assert any("lets no cloudwatch.amazonaws.com sns:Publish" in p for p in problems)


@pytest.mark.parametrize("source", ["Production", "combinations"])
def test_a_key_policy_without_the_cloudwatch_statement_fails_the_walk(
    source: str, combinations: dict[str, Any]
) -> None:
    template = combinations if source == "combinations" else _fixture(source)
    mutant = _drop_statements(template, KEY, "KeyPolicy", _principal_is_cloudwatch)
    _, problems = delivery_walk(mutant)
    assert any("kms:GenerateDataKey*, kms:Decrypt" in p for p in problems)


def test_an_allow_for_another_account_fails_the_walk() -> None:
    mutant = copy.deepcopy(_fixture("Production"))
    for resource in mutant["Resources"].values():
        if resource["Type"] == TOPIC_POLICY:
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                if statement["Effect"] == "Allow":
                    statement["Condition"]["StringEquals"]["aws:SourceAccount"] = "111111111111"
    _, problems = delivery_walk(mutant)
    assert problems and all("names account '111111111111'" in p for p in problems)


@pytest.mark.parametrize("source", ["Production", "combinations"])
def test_an_alarm_that_does_not_wait_for_its_endpoint_fails_the_walk(
    source: str, combinations: dict[str, Any]
) -> None:
    mutant = copy.deepcopy(combinations if source == "combinations" else _fixture(source))
    dropped = 0
    for resource in mutant["Resources"].values():
        if resource["Type"] == ALARM and "DependsOn" in resource:
            del resource["DependsOn"]
            dropped += 1
    assert dropped
    _, problems = dependency_walk(mutant)
    # an alarm that names its endpoint by GetAtt still waits; one that names it by a literal
    # waits only through DependsOn
    assert problems and all("does not depend on it" in p for p in problems)
    if source == "Production":  # every alarm there names the endpoint by a literal
        assert len(problems) == dropped
