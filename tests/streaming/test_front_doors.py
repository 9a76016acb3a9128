"""StreamingInvoker's front doors: InvokerAuth (IAM or API keys), max_concurrency and
add_distribution (CloudFront, OAC, both Lambda permissions, the optional WAF rate rule), and
the synth-time errors that name the bad value."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.assertions import Template

from constructs_llm import Cors, InvokerAuth, StreamingInvoker
from constructs_llm.errors import ConfigurationError
from constructs_llm.region_availability import rule_id
from tests.matrix.builders import endpoint as llama3_endpoint

CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # managed policy ids (CloudFront docs)
ALL_VIEWER_EXCEPT_HOST_HEADER = "b689b0a8-53d0-40ab-baf2-68738e2966ac"


@pytest.fixture(scope="module")
def doors(new_stack: Callable[..., Stack]) -> tuple[Stack, Template]:
    """One stack: an API-key invoker (KMS-encrypted secret, max_concurrency, CORS) and an IAM
    invoker, each behind a distribution; the IAM one public, with a WAF rate rule."""
    stack = new_stack()
    endpoint = llama3_endpoint(stack)
    key = kms.Key(stack, "KeysKey", enable_key_rotation=True)
    secret = secretsmanager.Secret(stack, "Keys", encryption_key=key)
    keyed = StreamingInvoker(
        stack,
        "Keyed",
        target=endpoint,
        auth=InvokerAuth.api_keys(secret),
        max_concurrency=7,
        cors=Cors(allowed_origins=["https://App.example.com/"], max_age=Duration.minutes(10)),
    )
    keyed.add_distribution()
    signed = StreamingInvoker(stack, "Signed", target=endpoint, auth=InvokerAuth.iam())
    signed.add_distribution(public=True, rate_limit=500, rate_limit_window=Duration.minutes(1))
    return stack, Template.from_stack(stack)


def _resource(template: Template, kind: str, path_part: str) -> tuple[str, dict[str, Any]]:
    matches = [
        (logical_id, dict(r))
        for logical_id, r in template.find_resources(kind).items()
        if path_part in logical_id
    ]
    assert len(matches) == 1, [m[0] for m in matches]
    return matches[0]


def _function(template: Template, name: str) -> dict[str, Any]:
    return dict(_resource(template, "AWS::Lambda::Function", f"{name}Function")[1]["Properties"])


def _role_statements(template: Template, name: str) -> list[dict[str, Any]]:
    role = _function(template, name)["Role"]["Fn::GetAtt"][0]
    return [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def _url(template: Template, name: str) -> dict[str, Any]:
    return dict(_resource(template, "AWS::Lambda::Url", f"{name}Function")[1]["Properties"])


def _distribution(template: Template, name: str) -> dict[str, Any]:
    config = _resource(template, "AWS::CloudFront::Distribution", f"{name}Distribution")[1]
    return dict(config["Properties"]["DistributionConfig"])


def _keys_secret(template: Template) -> str:
    """The logical ID of the API keys' secret (the user's, not the origin secret)."""
    (logical_id,) = [
        k for k in template.find_resources("AWS::SecretsManager::Secret") if "Origin" not in k
    ]
    return logical_id


def _checkov_skips(resource: Mapping[str, Any]) -> set[str]:
    return {s["id"] for s in resource.get("Metadata", {}).get("checkov", {}).get("skip", [])}


# -- auth modes ---------------------------------------------------------------------------------


def test_iam_is_the_default_and_keeps_the_url_on_aws_iam(doors: tuple[Stack, Template]) -> None:
    _, template = doors
    assert _url(template, "Signed")["AuthType"] == "AWS_IAM"
    env = _function(template, "Signed")["Environment"]["Variables"]
    assert "API_KEYS_SECRET_ID" not in env
    assert not any("secretsmanager" in json.dumps(s) for s in _role_statements(template, "Signed"))


def test_api_keys_make_the_url_public_and_pass_the_secret_to_the_runtime(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    url = _url(template, "Keyed")
    assert (url["AuthType"], url["InvokeMode"]) == ("NONE", "RESPONSE_STREAM")
    secret_logical_id = _keys_secret(template)
    env = _function(template, "Keyed")["Environment"]["Variables"]
    assert env["API_KEYS_SECRET_ID"] == {"Ref": secret_logical_id}  # Ref of a secret: its ARN
    assert env["API_KEYS_TTL_SECONDS"] == "60"


def test_the_secret_read_is_scoped_to_that_one_secret(doors: tuple[Stack, Template]) -> None:
    _, template = doors
    secret_logical_id = _keys_secret(template)
    reads = [
        s
        for s in _role_statements(template, "Keyed")
        if "secretsmanager" in json.dumps(s["Action"])
    ]
    assert len(reads) == 1  # CDK merges the reads of the keys and of the origin secret
    assert "secretsmanager:GetSecretValue" in reads[0]["Action"]
    assert sorted(r["Ref"] for r in reads[0]["Resource"]) == sorted(
        [secret_logical_id, _origin_secret(template, "Keyed")]
    )


def test_a_secret_with_a_key_lets_the_invoker_decrypt_through_secrets_manager_only(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    role = _function(template, "Keyed")["Role"]["Fn::GetAtt"][0]
    (key,) = template.find_resources("AWS::KMS::Key").values()
    grants = [
        s
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if s["Principal"] == {"AWS": {"Fn::GetAtt": [role, "Arn"]}}
    ]
    assert len(grants) == 1
    assert grants[0]["Action"] == "kms:Decrypt"
    assert "secretsmanager." in json.dumps(grants[0]["Condition"]["StringEquals"]["kms:ViaService"])


def test_an_imported_secret_and_key_are_granted_on_the_role(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    key = kms.Key.from_key_arn(
        stack, "Key", "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    )
    secret = secretsmanager.Secret.from_secret_attributes(
        stack,
        "Keys",
        secret_complete_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:llm/keys-AbCdEf",
        encryption_key=key,
    )
    StreamingInvoker(
        stack, "Keyed", target=llama3_endpoint(stack), auth=InvokerAuth.api_keys(secret)
    )
    template = Template.from_stack(stack)
    statements = _role_statements(template, "Keyed")
    read = next(s for s in statements if "secretsmanager:GetSecretValue" in s["Action"])
    assert read["Resource"] == secret.secret_arn
    decrypt = next(s for s in statements if "kms:Decrypt" in json.dumps(s["Action"]))
    assert decrypt["Resource"] == key.key_arn
    # only through Secrets Manager, whose host takes the stack's partition's suffix
    assert decrypt["Condition"]["StringEquals"]["kms:ViaService"] == {
        "Fn::Join": [
            "",
            ["secretsmanager.", {"Ref": "AWS::Region"}, ".", {"Ref": "AWS::URLSuffix"}],
        ]
    }
    env = _function(template, "Keyed")["Environment"]["Variables"]
    assert env["API_KEYS_SECRET_ID"] == secret.secret_arn


def test_a_secret_imported_by_name_is_read_by_name(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Keys", "llm/api-keys")
    auth = InvokerAuth.api_keys(secret, cache_ttl=Duration.seconds(30))
    StreamingInvoker(stack, "Keyed", target=llama3_endpoint(stack), auth=auth)
    template = Template.from_stack(stack)
    env = _function(template, "Keyed")["Environment"]["Variables"]
    assert env["API_KEYS_SECRET_ID"] == "llm/api-keys"
    assert env["API_KEYS_TTL_SECONDS"] == "30"
    read = next(
        s
        for s in _role_statements(template, "Keyed")
        if "secretsmanager:GetSecretValue" in s["Action"]
    )
    assert "secret:llm/api-keys-??????" in json.dumps(read["Resource"])  # one secret, any suffix


def test_the_public_url_records_why_checkov_findings_do_not_apply(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    url = _resource(template, "AWS::Lambda::Url", "KeyedFunction")[1]
    assert _checkov_skips(url) == {"CKV_AWS_258"}
    public = [
        r
        for r in template.find_resources("AWS::Lambda::Permission").values()
        if r["Properties"]["Principal"] == "*"
    ]
    assert {r["Properties"]["Action"] for r in public} == {
        "lambda:InvokeFunctionUrl",
        "lambda:InvokeFunction",
    }
    assert all(_checkov_skips(r) == {"CKV_AWS_301"} for r in public)
    assert "checks a Bearer key" in json.dumps(url["Metadata"])


def test_max_concurrency_reserves_concurrency(doors: tuple[Stack, Template]) -> None:
    _, template = doors
    assert _function(template, "Keyed")["ReservedConcurrentExecutions"] == 7
    assert "ReservedConcurrentExecutions" not in _function(template, "Signed")
    keyed = _resource(template, "AWS::Lambda::Function", "KeyedFunction")[1]
    signed = _resource(template, "AWS::Lambda::Function", "SignedFunction")[1]
    assert "CKV_AWS_115" not in _checkov_skips(keyed)
    assert "CKV_AWS_115" in _checkov_skips(signed)


# -- add_distribution ---------------------------------------------------------------------------


def test_distributions_stream_uncached_posts(doors: tuple[Stack, Template]) -> None:
    _, template = doors
    for name in ("Keyed", "Signed"):
        config = _distribution(template, name)
        behavior = config["DefaultCacheBehavior"]
        assert "POST" in behavior["AllowedMethods"]
        assert behavior["Compress"] is False
        assert behavior["ViewerProtocolPolicy"] == "https-only"
        assert behavior["OriginRequestPolicyId"] == ALL_VIEWER_EXCEPT_HOST_HEADER
        (origin,) = config["Origins"]
        assert origin["CustomOriginConfig"]["OriginReadTimeout"] == 60
        assert origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
        env = _function(template, name)["Environment"]["Variables"]
        assert env["HEARTBEAT_SECONDS"] == "15"  # inside the 60 s read timeout


def test_iam_distribution_signs_with_oac_and_grants_both_permissions(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    config = _distribution(template, "Signed")
    assert config["DefaultCacheBehavior"]["CachePolicyId"] == CACHING_DISABLED
    (origin,) = config["Origins"]
    oac_id, oac = _resource(template, "AWS::CloudFront::OriginAccessControl", "Signed")
    assert origin["OriginAccessControlId"] == {"Fn::GetAtt": [oac_id, "Id"]}
    settings = oac["Properties"]["OriginAccessControlConfig"]
    assert (
        settings["OriginAccessControlOriginType"],
        settings["SigningBehavior"],
        settings["SigningProtocol"],
    ) == ("lambda", "always", "sigv4")
    distribution_id, _ = _resource(template, "AWS::CloudFront::Distribution", "SignedDistribution")
    url_id = _resource(template, "AWS::Lambda::Url", "SignedFunction")[0]
    cloudfront = {
        p["Properties"]["Action"]: p["Properties"]
        for p in template.find_resources("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "cloudfront.amazonaws.com"
    }
    assert set(cloudfront) == {"lambda:InvokeFunctionUrl", "lambda:InvokeFunction"}
    for permission in cloudfront.values():
        assert permission["FunctionName"] == {"Fn::GetAtt": [url_id, "FunctionArn"]}
        source = json.dumps(permission["SourceArn"])
        assert ":cloudfront::" in source and distribution_id in source
    assert cloudfront["lambda:InvokeFunction"]["InvokedViaFunctionUrl"] is True


def test_api_key_distribution_forwards_authorization_without_oac(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    config = _distribution(template, "Keyed")
    (origin,) = config["Origins"]
    assert "OriginAccessControlId" not in origin
    policy_id, policy = _resource(template, "AWS::CloudFront::CachePolicy", "Keyed")
    assert config["DefaultCacheBehavior"]["CachePolicyId"] == {"Ref": policy_id}
    settings = policy["Properties"]["CachePolicyConfig"]
    assert (settings["MinTTL"], settings["DefaultTTL"], settings["MaxTTL"]) == (0, 0, 1)
    headers = settings["ParametersInCacheKeyAndForwardedToOrigin"]["HeadersConfig"]
    assert headers == {"HeaderBehavior": "whitelist", "Headers": ["Authorization"]}


def test_rate_limit_adds_a_cloudfront_web_acl(doors: tuple[Stack, Template]) -> None:
    _, template = doors
    acl_id, acl = _resource(template, "AWS::WAFv2::WebACL", "Signed")
    props = acl["Properties"]
    assert props["Scope"] == "CLOUDFRONT"
    assert props["DefaultAction"] == {"Allow": {}}
    (rule,) = props["Rules"]
    assert rule["Action"] == {"Block": {}}
    assert rule["Statement"]["RateBasedStatement"] == {
        "AggregateKeyType": "IP",
        "Limit": 500,
        "EvaluationWindowSec": 60,
    }
    assert _distribution(template, "Signed")["WebACLId"] == {"Fn::GetAtt": [acl_id, "Arn"]}
    assert "WebACLId" not in _distribution(template, "Keyed")
    assert _checkov_skips(acl) == {"CKV_AWS_192"}


def test_an_agnostic_stack_with_a_web_acl_asserts_us_east_1(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    (assertion,) = template.to_json()["Rules"]["ConstructsLlmWafRegion"]["Assertions"]
    assert assertion["Assert"] == {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-east-1"]}
    assert "web_acl_arn=" in assertion["AssertDescription"]


def test_an_agnostic_stack_with_origin_access_control_refuses_regions_without_it(
    doors: tuple[Stack, Template],
) -> None:
    """The IAM distribution's origin access control has a rule of its own: CloudFormation's
    schemas have distributions in the China regions but not origin access control."""
    _, template = doors
    rules = template.to_json()["Rules"]
    (assertion,) = rules[rule_id("AWS::CloudFront::OriginAccessControl")]["Assertions"]
    (contains,) = assertion["Assert"]["Fn::Not"]
    regions, region = contains["Fn::Contains"]
    assert region == {"Ref": "AWS::Region"}
    assert {"cn-north-1", "us-gov-west-1"} <= set(regions) and "us-east-1" not in regions
    assert "AWS::CloudFront::OriginAccessControl" in assertion["AssertDescription"]
    (distribution,) = rules[rule_id("AWS::CloudFront::Distribution")]["Assertions"]
    assert "cn-north-1" not in distribution["Assert"]["Fn::Not"][0]["Fn::Contains"][0]


def test_an_existing_web_acl_is_attached(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(region="eu-west-1")
    invoker = StreamingInvoker(stack, "Signed", target=llama3_endpoint(stack))
    arn = "arn:aws:wafv2:us-east-1:123456789012:global/webacl/edge/abcd"
    invoker.add_distribution(public=True, web_acl_arn=arn, read_timeout=Duration.seconds(20))
    template = Template.from_stack(stack)
    config = _distribution(template, "Signed")
    assert config["WebACLId"] == arn
    assert config["Origins"][0]["CustomOriginConfig"]["OriginReadTimeout"] == 20
    assert _function(template, "Signed")["Environment"]["Variables"]["HEARTBEAT_SECONDS"] == "10"
    template.resource_count_is("AWS::WAFv2::WebACL", 0)
    assert "ConstructsLlmWafRegion" not in template.to_json().get("Rules", {})
    assert invoker.distribution_url is not None


def test_a_concrete_us_east_1_stack_needs_no_region_rule(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(region="us-east-1")
    StreamingInvoker(stack, "Signed", target=llama3_endpoint(stack)).add_distribution(
        public=True, rate_limit=100
    )
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::WAFv2::WebACL", 1)
    assert "ConstructsLlmWafRegion" not in template.to_json().get("Rules", {})


def test_an_invoker_heartbeat_is_kept(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    invoker = StreamingInvoker(
        stack, "Signed", target=llama3_endpoint(stack), heartbeat=Duration.seconds(5)
    )
    invoker.add_distribution(public=True)
    env = _function(Template.from_stack(stack), "Signed")["Environment"]["Variables"]
    assert env["HEARTBEAT_SECONDS"] == "5"


# -- errors at synth ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("secret", "message", "hidden"),
    [
        ("sk-4f1c9b2e8d7a6c5b", r"got 'sk-…' \(19 characters\) \(not shown", "4f1c9b2e"),
        ("Zq8xY2vW9uT7sR6q", r"got a string of 16 characters \(not shown", "Zq8xY2vW"),
        (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:llm/keys-AbCdEf",
            r"got the string 'arn:aws:secretsmanager:.*llm/keys-AbCdEf'.*from_secret_complete_arn",
            "",
        ),
        ({"api_keys": ["k"]}, r"must be a secretsmanager.ISecret, got dict", ""),
    ],
)
def test_a_plain_value_in_place_of_a_secret_fails_naming_it(
    secret: Any, message: str, hidden: str
) -> None:
    with pytest.raises(ConfigurationError, match=message) as raised:
        InvokerAuth.api_keys(secret)
    assert "InvokerAuth.api_keys" in str(raised.value)
    if hidden:
        assert hidden not in str(raised.value)


def test_cache_ttl_out_of_range_fails_naming_it(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Keys", "llm/api-keys")
    with pytest.raises(
        ConfigurationError, match="cache_ttl must be between 1 second and 1 hour, got 7200 s"
    ):
        InvokerAuth.api_keys(secret, cache_ttl=Duration.hours(2))


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"max_concurrency": 0}, "max_concurrency must be an integer >= 1, got 0; it is the"),
        ({"max_concurrency": -5}, "max_concurrency must be an integer >= 1, got -5"),
        ({"max_concurrency": "10"}, "max_concurrency must be an integer >= 1, got '10'"),
        ({"max_concurrency": True}, "max_concurrency must be an integer >= 1, got True"),
        (
            {"auth": "iam"},
            "auth must be InvokerAuth.iam.. or InvokerAuth.api_keys.secret., got str 'iam'",
        ),
    ],
)
def test_bad_invoker_props_fail_naming_the_value(
    new_stack: Callable[..., Stack], props: dict[str, Any], message: str
) -> None:
    stack = new_stack()
    with pytest.raises(ConfigurationError, match=message):
        StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack), **props)


def test_a_secret_passed_as_auth_says_how_to_wrap_it(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Keys", "llm/api-keys")
    with pytest.raises(
        ConfigurationError, match=r"got .*; wrap a secret of keys as InvokerAuth.api_keys\(secret\)"
    ):
        StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack), auth=secret)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("auth", "props", "message"),
    [
        (
            "iam",
            {"origin_access_control": False},
            "origin_access_control=False with auth=InvokerAuth.iam.*every request gets 403",
        ),
        (
            "keys",
            {"origin_access_control": True},
            "origin_access_control=True with auth=InvokerAuth.api_keys.*Authorization",
        ),
        (
            "iam",
            {"read_timeout": Duration.minutes(5)},
            "read_timeout must be between 1 and 180 seconds, got 300 s",
        ),
        ("iam", {"rate_limit": 5}, r"rate_limit must be an integer >= 10, got 5 \(requests per IP"),
        (
            "iam",
            {"rate_limit": 100, "rate_limit_window": Duration.minutes(3)},
            "rate_limit_window must be 1, 2, 5 or 10 minutes",
        ),
        (
            "iam",
            {"rate_limit": 100, "web_acl_arn": "arn:aws:wafv2:us-east-1:1:global/webacl/x/y"},
            "rate_limit=... or web_acl_arn=..., not both",
        ),
    ],
)
def test_bad_distributions_fail_at_synth_naming_the_value(
    new_stack: Callable[..., Stack], auth: str, props: dict[str, Any], message: str
) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Keys", "llm/api-keys")
    invoker_auth = InvokerAuth.iam() if auth == "iam" else InvokerAuth.api_keys(secret)
    invoker = StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack), auth=invoker_auth)
    if auth == "iam":
        props = {"public": True, **props}
    with pytest.raises(ConfigurationError, match=message):
        invoker.add_distribution(**props)


def test_a_web_acl_outside_us_east_1_fails_naming_the_region(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(region="eu-west-1")
    invoker = StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack))
    with pytest.raises(
        ConfigurationError,
        match="only in us-east-1, but this stack is in 'eu-west-1'.*web_acl_arn=",
    ):
        invoker.add_distribution(public=True, rate_limit=100)


def test_a_heartbeat_as_long_as_the_read_timeout_fails(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    invoker = StreamingInvoker(
        stack, "Stream", target=llama3_endpoint(stack), heartbeat=Duration.seconds(30)
    )
    with pytest.raises(
        ConfigurationError, match=r"heartbeat \(30 s\) must be shorter than read_timeout \(30 s\)"
    ):
        invoker.add_distribution(public=True, read_timeout=Duration.seconds(30))


def test_a_second_distribution_is_refused(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    invoker = StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack))
    invoker.add_distribution(public=True)
    with pytest.raises(ConfigurationError, match="already has a distribution"):
        invoker.add_distribution(public=True)


# -- who may call through the distribution ------------------------------------------------------


def test_iam_behind_a_distribution_is_refused_unless_said_public(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an IAM invoker, whose distribution signs every viewer's request with OAC
    stack = new_stack()
    invoker = StreamingInvoker(stack, "Stream", target=llama3_endpoint(stack))
    # WHEN it is put behind CloudFront without a choice of who may call
    with pytest.raises(ConfigurationError) as raised:
        invoker.add_distribution()
    # THEN the error names the value, why, and both ways out
    message = str(raised.value)
    assert f"StreamingInvoker '{invoker.node.path}'.add_distribution" in message
    assert "auth=InvokerAuth.iam() behind add_distribution() is an anonymous public API" in message
    assert "anyone who reaches the distribution" in message
    assert "InvokerAuth.api_keys(secret)" in message and "public=True" in message
    assert invoker.distribution is None
    # AND public=False is the same refusal
    with pytest.raises(ConfigurationError, match="anonymous public API"):
        invoker.add_distribution(public=False)


def test_public_is_refused_with_api_keys(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Keys", "llm/api-keys")
    invoker = StreamingInvoker(
        stack, "Stream", target=llama3_endpoint(stack), auth=InvokerAuth.api_keys(secret)
    )
    with pytest.raises(
        ConfigurationError, match=r"public=True with auth=InvokerAuth.api_keys.*drop public=True"
    ):
        invoker.add_distribution(public=True)


# -- the origin secret: the function URL answers CloudFront alone --------------------------------


def _origin_secret(template: Template, name: str) -> str:
    (logical_id,) = [
        k
        for k in template.find_resources("AWS::SecretsManager::Secret")
        if k.startswith(f"{name}OriginSecret")
    ]
    return logical_id


def test_an_api_key_distribution_sends_a_generated_origin_secret(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    secret_id = _origin_secret(template, "Keyed")
    secret = template.find_resources("AWS::SecretsManager::Secret")[secret_id]["Properties"]
    # generated by Secrets Manager: no value in the template
    assert secret["GenerateSecretString"]["PasswordLength"] == 64
    assert secret["GenerateSecretString"]["ExcludePunctuation"] is True
    assert "SecretString" not in secret
    # the distribution's only origin sends it, as a dynamic reference CloudFormation resolves
    (origin,) = _distribution(template, "Keyed")["Origins"]
    (header,) = origin["OriginCustomHeaders"]
    assert header["HeaderName"] == "x-origin-verify"
    assert header["HeaderValue"] == {
        "Fn::Join": ["", ["{{resolve:secretsmanager:", {"Ref": secret_id}, ":SecretString:::}}"]]
    }
    # the runtime is told which secret to read
    env = _function(template, "Keyed")["Environment"]["Variables"]
    assert env["ORIGIN_SECRET_ID"] == {"Ref": secret_id}


def test_only_the_invoker_s_role_may_read_the_origin_secret(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    secret_id = _origin_secret(template, "Keyed")
    readers = [
        (logical_id, statement)
        for logical_id, policy in template.find_resources("AWS::IAM::Policy").items()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if secret_id in json.dumps(statement["Resource"])
    ]
    assert len(readers) == 1, readers
    _, statement = readers[0]
    # that secret by its ARN (Ref), beside the keys' secret: no pattern, no wildcard
    resources = statement["Resource"]
    assert {"Ref": secret_id} in resources
    assert all(set(r) == {"Ref"} for r in resources)
    assert set(statement["Action"]) == {
        "secretsmanager:GetSecretValue",
        "secretsmanager:DescribeSecret",
    }
    assert statement in _role_statements(template, "Keyed")
    # no statement of the role reads secrets on a wildcard
    assert not any(
        "secretsmanager" in json.dumps(s["Action"]) and s["Resource"] == "*"
        for s in _role_statements(template, "Keyed")
    )


def test_an_iam_distribution_has_no_origin_secret(doors: tuple[Stack, Template]) -> None:
    _, template = doors
    (origin,) = _distribution(template, "Signed")["Origins"]
    assert "OriginCustomHeaders" not in origin
    assert not [k for k in template.find_resources("AWS::SecretsManager::Secret") if "Signed" in k]
    assert "ORIGIN_SECRET_ID" not in _function(template, "Signed")["Environment"]["Variables"]


def test_an_api_key_invoker_without_a_distribution_has_no_origin_secret(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Keys", "llm/api-keys")
    StreamingInvoker(
        stack, "Keyed", target=llama3_endpoint(stack), auth=InvokerAuth.api_keys(secret)
    )
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::SecretsManager::Secret", 0)
    assert "ORIGIN_SECRET_ID" not in _function(template, "Keyed")["Environment"]["Variables"]


# -- CORS ---------------------------------------------------------------------------------------


def test_cors_goes_to_the_runtime_and_not_to_the_function_url(
    doors: tuple[Stack, Template],
) -> None:
    _, template = doors
    env = _function(template, "Keyed")["Environment"]["Variables"]
    assert env["CORS_ALLOWED_ORIGINS"] == "https://app.example.com"  # as browsers send it
    assert env["CORS_ALLOWED_HEADERS"] == "authorization,content-type,x-amz-content-sha256"
    assert env["CORS_MAX_AGE_SECONDS"] == "600"
    # the runtime answers CORS; the URL's own Cors would answer preflights itself
    assert "Cors" not in _url(template, "Keyed")
    # off unless asked for
    signed = _function(template, "Signed")["Environment"]["Variables"]
    assert not [name for name in signed if name.startswith("CORS_")]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"allowed_origins": []}, r"allowed_origins must list 1-100 origins, got 0; e\.g\. "),
        (
            {"allowed_origins": [7]},
            r"allowed_origins\[0\] must be an origin such as 'https://app.example.com'.*got int 7",
        ),
        (
            {"allowed_origins": ["app.example.com"]},
            r"allowed_origins\[0\] must be an origin such as 'https://app.example.com'.*got "
            r"'app.example.com'",
        ),
        (
            {"allowed_origins": ["https://app.example.com/chat"]},
            r"no path\), got 'https://app.example.com/chat'",
        ),
        (
            {"allowed_origins": ["*", "https://a.example"]},
            "'\\*' allows every origin; give it alone",
        ),
        (
            {"allowed_origins": ["*"], "allowed_headers": ["*"]},
            "'\\*' does not cover Authorization",
        ),
        (
            {"allowed_origins": ["*"], "allowed_headers": ["x header"]},
            r"allowed_headers\[0\] must be a header name.*got 'x header'",
        ),
        (
            {"allowed_origins": ["*"], "max_age": Duration.days(2)},
            "max_age must be between 0 seconds and 1 day, got 172800 s",
        ),
    ],
)
def test_bad_cors_values_fail_naming_them(props: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as raised:
        Cors(**props)
    assert str(raised.value).startswith("Cors")
