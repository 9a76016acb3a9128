"""CloudFront → function URL, walked in every committed example template: an origin that is a
public function URL (auth type ``NONE``, API keys) must send the origin secret header, whose
dynamic reference names a secret that the URL's function reads (``ORIGIN_SECRET_ID``) and only
its role may read; an ``AWS_IAM`` URL must be reached through origin access control. The walk
starts from the distributions and must find at least one public origin, so it cannot pass by
matching nothing."""

from __future__ import annotations

import json
from typing import Any

from tests.support.templates import FIXTURES

_HEADER = "x-origin-verify"


def _templates() -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.template.json"))}


def _url_of(origin: dict[str, Any], resources: dict[str, Any]) -> str | None:
    """The logical ID of the AWS::Lambda::Url whose FunctionUrl the origin's domain is cut from."""
    text = json.dumps(origin["DomainName"])
    found = [
        logical_id
        for logical_id, r in resources.items()
        if r["Type"] == "AWS::Lambda::Url" and f'["{logical_id}", "FunctionUrl"]' in text
    ]
    return found[0] if len(found) == 1 else None


def _policies_naming(
    secret: str, resources: dict[str, Any]
) -> list[tuple[list[Any], dict[str, Any]]]:
    """(the policy's roles, the statement) of each statement whose resources name ``secret``."""
    return [
        (r["Properties"]["Roles"], statement)
        for r in resources.values()
        if r["Type"] == "AWS::IAM::Policy"
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
        if {"Ref": secret} in _as_list(statement["Resource"])
    ]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_every_public_function_url_behind_cloudfront_answers_cloudfront_alone() -> None:
    public_origins = 0
    for stack, template in _templates().items():
        resources = template["Resources"]
        for distribution in (
            r for r in resources.values() if r["Type"] == "AWS::CloudFront::Distribution"
        ):
            for origin in distribution["Properties"]["DistributionConfig"]["Origins"]:
                url_id = _url_of(origin, resources)
                if url_id is None:
                    continue
                url = resources[url_id]["Properties"]
                if url["AuthType"] == "AWS_IAM":
                    assert "OriginAccessControlId" in origin, (stack, url_id)
                    continue
                public_origins += 1
                # the distribution sends the secret, by a dynamic reference
                headers = {h["HeaderName"]: h["HeaderValue"] for h in origin["OriginCustomHeaders"]}
                value = headers[_HEADER]
                parts = value["Fn::Join"][1]
                assert parts[0] == "{{resolve:secretsmanager:" and parts[2] == ":SecretString:::}}"
                secret = parts[1]["Ref"]
                assert resources[secret]["Type"] == "AWS::SecretsManager::Secret"
                assert "SecretString" not in resources[secret]["Properties"]  # generated
                # the URL's function reads that secret
                function_id = url["TargetFunctionArn"]["Fn::GetAtt"][0]
                function = resources[function_id]["Properties"]
                assert function["Environment"]["Variables"]["ORIGIN_SECRET_ID"] == {"Ref": secret}
                # and only its role may read it, with GetSecretValue
                role = function["Role"]["Fn::GetAtt"][0]
                readers = _policies_naming(secret, resources)
                assert readers, (stack, secret)
                for roles, statement in readers:
                    assert roles == [{"Ref": role}], (stack, roles)
                    assert "secretsmanager:GetSecretValue" in _as_list(statement["Action"])
    assert public_origins >= 1  # FrontDoors' API-key distribution at least
