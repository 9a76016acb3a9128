"""ECR pull grants of a model's image: the pull actions on its repository only, plus
``ecr:GetAuthorizationToken`` (which AWS allows only on ``*``) in a small policy of the
library's own with its cdk-nag acknowledgment on that policy alone (``wildcard_policy.py``);
and the rule that SageMaker pulls from its own region only.
"""

from __future__ import annotations

from aws_cdk import Stack, Token
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_llm.compliance import ECR_AUTHORIZATION_TOKEN
from constructs_llm.errors import ImageError
from constructs_llm.execution_role import ExecutionRole
from constructs_llm.problems import Problem, fail
from constructs_llm.wildcard_policy import grant_in_own_policy

PULL_ACTIONS = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:GetDownloadUrlForLayer",
    "ecr:BatchGetImage",
)
_AUTH_POLICY_ID = "ConstructsLlmEcrAuthorizationToken"

# ARN partition by region prefix (longest prefix first); other regions take the stack's.
_PARTITIONS = (
    ("us-isob-", "aws-iso-b"),
    ("us-isof-", "aws-iso-f"),
    ("us-iso-", "aws-iso"),
    ("eu-isoe-", "aws-iso-e"),
    ("us-gov-", "aws-us-gov"),
    ("eusc-", "aws-eusc"),
    ("cn-", "aws-cn"),
)


def grant_ecr_pull(scope: Construct, grantee: iam.IGrantable, repository_arns: list[str]) -> None:
    """Grant image pulls from these repositories plus the ECR authorization token."""
    iam.Grant.add_to_principal(
        grantee=grantee, actions=list(PULL_ACTIONS), resource_arns=repository_arns
    )
    grant_authorization_token(scope, grantee)


def grant_authorization_token(scope: Construct, grantee: iam.IGrantable) -> None:
    """Add ecr:GetAuthorizationToken on * in a policy that holds that statement alone, with
    its cdk-nag acknowledgment on that policy only.

    The policy is a child of the execution role when the library created the role (so the
    resources that wait for the role's policies wait for it too), else of ``scope`` (the
    model), attached to the role: a role or an imported role of the caller's gets no
    acknowledgment, so a wildcard its owner adds later is still flagged.
    """
    # A role of this app is its own principal (``Role.grantPrincipal`` is the role): not asked.
    principal = grantee if isinstance(grantee, iam.Role) else grantee.grant_principal
    home = principal if isinstance(principal, ExecutionRole) else scope
    statement = iam.PolicyStatement(actions=["ecr:GetAuthorizationToken"], resources=["*"])
    grant_in_own_policy(home, _AUTH_POLICY_ID, grantee, [statement], ECR_AUTHORIZATION_TOKEN)


def ecr_repository_arn(scope: Construct, *, account: str, region: str, repository: str) -> str:
    """The ARN of an ECR repository in a concrete region: in that region's partition when its
    prefix names one, else in the stack's (``AWS::Partition`` or the literal of its concrete
    region), which is the image's wherever the pull can work, since SageMaker pulls from its
    own region only (``check_same_region``). Nothing assumes the commercial partition."""
    partition = next((p for prefix, p in _PARTITIONS if region.startswith(prefix)), None)
    if partition is None:
        return Stack.of(scope).format_arn(
            service="ecr",
            region=region,
            account=account,
            resource="repository",
            resource_name=repository,
        )
    return f"arn:{partition}:ecr:{region}:{account}:repository/{repository}"


def check_same_region(stack: Stack, image_region: str, what: str) -> None:
    """``what`` (an image in ``image_region``) must be in the stack's region, once known."""
    region = stack.region
    if Token.is_unresolved(region) or region == image_region:
        return
    fail(
        "",
        Problem.of(
            "image",
            image_region,
            f"SageMaker pulls model images only from ECR in the model's own region: {what} is in "
            f"{image_region!r} but stack {stack.stack_name!r} deploys to {region!r}. Replicate the "
            "image to that region (ECR replication) and use that URI.",
        ),
        ImageError,
    )
