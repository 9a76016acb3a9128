"""The evaluator the contract walks use decides as IAM's documented evaluation logic does:
explicit deny wins, wildcards stay inside an ARN segment unless they end it, tokens match only
themselves or a wildcard, and a condition it cannot decide is reported, not assumed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.iam_policy import Request, arn_matches, resource_policy
from tests.support.symbolic import REGION, Resolver, Token, Unresolved, render, text

TEMPLATE: dict[str, Any] = {
    "Mappings": {"Registry": {"us-east-1": {"account": "763104351884"}}},
    "Resources": {
        "Endpoint": {"Type": "AWS::SageMaker::Endpoint", "Properties": {}},
        "Named": {"Type": "AWS::SageMaker::Endpoint", "Properties": {"EndpointName": "Chat-A"}},
        "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {}},
    },
}


def _decide(statements: list[dict[str, Any]], request: Request) -> Any:
    resolve = Resolver(TEMPLATE)
    return resource_policy("P", {"Statement": statements}, resolve).evaluate(request)


def _allow(action: Any, resource: Any, **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("arn:aws:s3:::b/*", "arn:aws:s3:::b/a/b:c", True),  # the resource segment spans
        ("arn:aws:logs:*", "arn:aws:logs:us-east-1:1:log-group:g", True),  # a final * spans
        ("arn:aws:*:us-east-1:1:x", "arn:aws:s3:us-east-1:1:x", True),
        ("arn:aws:logs:us-*-1:1:g", "arn:aws:logs:us-east-1:1:g", True),
        ("arn:aws:logs:us-*1:1:g", "arn:aws:logs:us-east:1:1:g", False),  # * inside a segment
        ("arn:aws:s3:::b/?", "arn:aws:s3:::b/ab", False),
        ("*", "arn:aws:s3:::b", True),
    ],
)
def test_arn_wildcards_follow_the_segments(pattern: str, value: str, matches: bool) -> None:
    assert arn_matches(text(pattern), text(value)) is matches


def test_a_token_matches_itself_or_a_wildcard_never_a_literal() -> None:
    name = Token("Endpoint.EndpointName")
    value = text("arn:aws:sagemaker:r:1:endpoint/", name)
    assert arn_matches(text("arn:aws:sagemaker:r:1:endpoint/", name), value)
    assert arn_matches(text("arn:aws:sagemaker:r:1:endpoint/*"), value)
    assert not arn_matches(text("arn:aws:sagemaker:r:1:endpoint/chat"), value)
    assert not arn_matches(text("arn:aws:sagemaker:r:1:endpoint/?"), value)


def test_references_resolve_to_the_resource_they_name() -> None:
    resolve = Resolver(TEMPLATE)
    assert resolve({"Ref": "Endpoint"}) == resolve({"Fn::GetAtt": ["Endpoint", "EndpointArn"]})
    assert render(resolve({"Ref": "Named"})).endswith(":endpoint/chat-a")  # lower case
    assert resolve({"Fn::Sub": "${Bucket}/x"}) == resolve(
        {"Fn::Join": ["", [{"Ref": "Bucket"}, "/x"]]}
    )
    assert resolve({"Fn::FindInMap": ["Registry", "us-east-1", "account"]}) == ("763104351884",)
    mapped = resolve({"Fn::FindInMap": ["Registry", {"Ref": "AWS::Region"}, "account"]})
    assert len(mapped) == 1 and isinstance(mapped[0], Token) and str(REGION) in str(mapped[0])
    with pytest.raises(Unresolved):
        resolve({"Fn::If": ["C", "a", "b"]})


def test_select_takes_a_piece_or_a_token_where_only_a_deploy_knows_the_pieces() -> None:
    resolve = Resolver(
        {
            "Resources": {
                "Machine": {"Type": "AWS::StepFunctions::StateMachine", "Properties": {}},
                "Other": {"Type": "AWS::Some::Thing", "Properties": {}},
            }
        }
    )

    def sixth(node: Any) -> Any:
        return resolve({"Fn::Select": [6, {"Fn::Split": [":", node]}]})

    assert sixth({"Ref": "Machine"}) == (Token("Machine.StateMachineName"),)
    assert sixth({"Ref": "Machine"}) == resolve({"Fn::GetAtt": ["Machine", "Name"]})
    (unknown,) = sixth({"Ref": "Other"})  # a Ref this resolver has no return values for
    assert isinstance(unknown, Token) and "Other" in unknown.name
    assert resolve({"Fn::Select": [1, {"Fn::Split": [":", "a:b"]}]}) == ("b",)
    with pytest.raises(Unresolved):
        resolve({"Fn::Select": [2, {"Fn::Split": [":", "a:b"]}]})


def test_an_explicit_deny_wins() -> None:
    request = Request("s3:GetObject", text("arn:aws:s3:::b/k"))
    allow = _allow("s3:*", "*")
    assert _decide([allow], request).allowed
    decision = _decide([allow, {**allow, "Effect": "Deny"}], request)
    assert not decision.allowed and "denied by P[1]" in decision.why()


def test_actions_match_case_insensitively_and_not_action_inverts() -> None:
    request = Request("sagemaker:InvokeEndpoint", text("*"))
    assert _decide([_allow("SageMaker:invoke*", "*")], request).allowed
    assert not _decide([_allow("sagemaker:InvokeEndpointAsync", "*")], request).allowed
    not_action = {"Effect": "Allow", "NotAction": "sagemaker:Invoke*", "Resource": "*"}
    assert not _decide([not_action], request).allowed


def test_conditions_decide_from_the_request_or_are_reported() -> None:
    statement = _allow(
        "cloudwatch:PutMetricData",
        "*",
        Condition={"StringEquals": {"cloudwatch:namespace": "/aws/sagemaker/Endpoints"}},
    )
    bare = Request("cloudwatch:PutMetricData", text("*"))
    decision = _decide([statement], bare)
    assert not decision.allowed
    assert "only if StringEquals cloudwatch:namespace" in decision.why()
    inside = Request(
        bare.action, bare.resource, {"cloudwatch:Namespace": text("/aws/sagemaker/Endpoints")}
    )
    assert _decide([statement], inside).allowed  # condition keys are case-insensitive
    outside = Request(bare.action, bare.resource, {"cloudwatch:namespace": text("Other")})
    assert "needs StringEquals" in _decide([statement], outside).why()
    unknown = _allow("cloudwatch:*", "*", Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})
    assert "only if IpAddress" in _decide([unknown], bare).why()


def test_a_deny_that_may_apply_blocks_the_allow() -> None:
    deny = {
        "Effect": "Deny",
        "Action": "*",
        "Resource": "*",
        "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}},
    }
    decision = _decide([_allow("*", "*"), deny], Request("s3:GetObject", text("*")))
    assert not decision.allowed and "Deny in P[1] only if" in decision.why()


def test_a_resource_policy_matches_its_principal() -> None:
    statement = _allow(
        "lambda:InvokeFunctionUrl", "*", Principal={"Service": "cloudfront.amazonaws.com"}
    )
    cloudfront = ("Service", text("cloudfront.amazonaws.com"))
    request = Request("lambda:InvokeFunctionUrl", text("*"), principal=cloudfront)
    assert _decide([statement], request).allowed
    other = Request(
        request.action, request.resource, principal=("AWS", text("arn:aws:iam::1:root"))
    )
    assert not _decide([statement], other).allowed


def test_a_deny_to_every_aws_principal_without_tls_applies_to_the_role() -> None:
    deny = {
        "Effect": "Deny",
        "Principal": {"AWS": "*"},
        "Action": "s3:*",
        "Resource": "*",
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
    role = ("AWS", text("arn:aws:iam::1:role/r"))
    plain = Request("s3:GetObject", text("*"), {"aws:SecureTransport": text("false")}, role)
    assert _decide([deny], plain).denied_by
    secure = Request("s3:GetObject", text("*"), {"aws:SecureTransport": text("true")}, role)
    assert not _decide([deny], secure).denied_by
