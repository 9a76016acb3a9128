"""Every CloudFront origin of every template that is a Lambda function URL can reach it:

- a URL with ``AuthType`` ``AWS_IAM`` is signed by an origin access control of type
  ``lambda`` that always signs with SigV4, and the function's resource-based policy lets the
  ``cloudfront.amazonaws.com`` principal call ``lambda:InvokeFunctionUrl`` and
  ``lambda:InvokeFunction`` on behalf of that distribution (``AWS:SourceArn``
  ``arn:<partition>:cloudfront::<account>:distribution/<id>``) ("Restrict access to an AWS
  Lambda function URL origin", https://docs.aws.amazon.com/AmazonCloudFront/latest/
  DeveloperGuide/private-content-restricting-access-to-lambda.html);
- a URL with ``AuthType`` ``NONE`` is public: its policy must let anyone call both actions
  through the URL ("Control access to Lambda function URLs": "your function's resource-based
  policy is always in effect and must grant public access"; "Starting in October 2025, new
  function URLs will require both lambda:InvokeFunctionUrl and lambda:InvokeFunction
  permissions", https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html).

Lambda adds ``lambda:FunctionUrlAuthType`` and ``lambda:InvokedViaFunctionUrl`` to the
conditions of a permission given ``FunctionUrlAuthType`` or ``InvokedViaFunctionUrl``
(AddPermission); the request context here carries both as a call through the URL does.

What only a deploy proves: that CloudFront's signed request reaches the function (the body's
``x-amz-content-sha256`` header a POST needs is the client's to send).
"""

from __future__ import annotations

from typing import Any

from tests.support.contract_walk import Walk, of_type
from tests.support.iam_policy import Request, lambda_permissions
from tests.support.symbolic import ACCOUNT, PARTITION, Resolver, references, text

__all__ = ["ACTIONS", "walk_origins"]

ACTIONS = ("lambda:InvokeFunctionUrl", "lambda:InvokeFunction")


def walk_origins(name: str, template: dict[str, Any]) -> Walk:
    walk = Walk(name)
    resolve = Resolver(template)
    urls = of_type(template, "AWS::Lambda::Url")
    for distribution_id, distribution in of_type(template, "AWS::CloudFront::Distribution").items():
        distribution_arn = text(
            "arn:", PARTITION, ":cloudfront::", ACCOUNT, ":distribution/",
            resolve({"Ref": distribution_id}),
        )  # fmt: skip
        for origin in distribution["Properties"]["DistributionConfig"].get("Origins", []):
            url_ids = [r for r in references(origin["DomainName"]) if r in urls]
            if not url_ids:
                continue
            (url_id,) = url_ids
            url = urls[url_id]["Properties"]
            function_arn = resolve(url["TargetFunctionArn"])
            policy = lambda_permissions(resolve, function_arn)
            where = f"origin {origin['Id']} of {distribution_id} ({url_id}, {url['AuthType']})"
            if url["AuthType"] == "AWS_IAM":
                _signed(walk, resolve, origin, where)
                principal = ("Service", text("cloudfront.amazonaws.com"))
                context = {"AWS:SourceArn": distribution_arn}
            else:
                principal = ("AWS", text("anonymous"))
                context = {}
            context = {
                **context,
                "lambda:FunctionUrlAuthType": text(url["AuthType"]),
                "lambda:InvokedViaFunctionUrl": text("true"),
            }
            for action in ACTIONS:
                request = Request(action, function_arn, context, principal)
                walk.need(f"{distribution_id}'s viewers", policy, request, where)
            walk.walked.append(where)
    return walk


def _signed(walk: Walk, resolve: Resolver, origin: dict[str, Any], where: str) -> None:
    control = origin.get("OriginAccessControlId")
    ids = list(references(control)) if control is not None else []
    if not ids:
        walk.problems.append(f"{walk.template}: {where}: no origin access control signs it")
        return
    config = resolve.resources[ids[0]]["Properties"]["OriginAccessControlConfig"]
    expected = {
        "OriginAccessControlOriginType": "lambda",
        "SigningBehavior": "always",
        "SigningProtocol": "sigv4",
    }
    wrong = {k: config.get(k) for k, v in expected.items() if config.get(k) != v}
    if wrong:
        walk.problems.append(f"{walk.template}: {where}: {ids[0]} has {wrong}, not {expected}")
