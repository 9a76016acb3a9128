"""InvokerAuth: who may call a StreamingInvoker, as a value bound to its function and URL."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from aws_cdk import Duration, Token
from aws_cdk import aws_lambda as lambda_

from constructs_llm.cdk_values import cdk_kind
from constructs_llm.contract import Env
from constructs_llm.problems import Problem, Problems
from constructs_llm.values import describe, duration_problem

if TYPE_CHECKING:
    from aws_cdk import aws_secretsmanager as secretsmanager

_DEFAULT_TTL_S = 60


class AuthMode(str, Enum):
    IAM = "iam"
    API_KEYS = "api_keys"


@dataclass(frozen=True)
class InvokerAuth:
    """How clients authenticate to a ``StreamingInvoker``.

    - ``InvokerAuth.iam()`` (the default): the function URL uses ``AWS_IAM``; callers sign
      with SigV4 (``constructs_llm.streaming.sigv4_hook``) and need ``grant_invoke_url``.
    - ``InvokerAuth.api_keys(secret)``: the function URL is public (``NONE``) and the runtime
      checks ``Authorization: Bearer <key>`` against the keys in ``secret`` before anything
      else, so unchanged OpenAI clients work with ``base_url`` and ``api_key`` alone. Behind
      ``add_distribution()`` the URL answers the distribution alone (its origin secret).

    Behind ``add_distribution()``, IAM auth admits every viewer (origin access control signs
    their requests): the distribution must say ``public=True``.

    Auth belongs to the invoker's front door, not to its targets.
    """

    mode: AuthMode
    secret: secretsmanager.ISecret | None = None
    cache_ttl: Duration | None = None

    @staticmethod
    def iam() -> InvokerAuth:
        """SigV4 with AWS credentials (function URL auth type ``AWS_IAM``)."""
        return InvokerAuth(AuthMode.IAM)

    @staticmethod
    def api_keys(
        secret: secretsmanager.ISecret, *, cache_ttl: Duration | None = None
    ) -> InvokerAuth:
        """Bearer keys kept in a Secrets Manager secret.

        :param secret: its ``SecretString`` is one key, or JSON ``{"api_keys": ["...", ...]}``
            (several keys let a rotation overlap). The invoker may read this one secret (and
            decrypt it with the secret's KMS key, if it has one).
        :param cache_ttl: how long the runtime keeps the keys before reading the secret again:
            a rotated or revoked key takes effect within it. @default 1 minute (1 s-1 h)
        """
        problems = Problems("InvokerAuth.api_keys")
        problems.add(_secret_problem(secret))
        problems.add(
            duration_problem(
                "cache_ttl",
                cache_ttl,
                minimum_s=1,
                maximum_s=3600,
                bounds="1 second and 1 hour",
                why="it is how long a revoked key keeps working",
            )
        )
        problems.raise_if_any()
        return InvokerAuth(AuthMode.API_KEYS, secret, cache_ttl)

    @property
    def url_auth_type(self) -> lambda_.FunctionUrlAuthType:
        if self.mode is AuthMode.IAM:
            return lambda_.FunctionUrlAuthType.AWS_IAM
        return lambda_.FunctionUrlAuthType.NONE

    def bind(self, function: lambda_.Function) -> dict[str, str]:
        """Grants the function what the mode needs; returns the runtime's environment."""
        if self.secret is None:
            return {}
        # GetSecretValue on this secret only, plus kms:Decrypt via Secrets Manager when the
        # secret has a customer key (aws_secretsmanager.Secret.grant_read, in the key policy).
        self.secret.grant_read(function)
        _grant_imported_key(self.secret, function)
        ttl = int(self.cache_ttl.to_seconds()) if self.cache_ttl else _DEFAULT_TTL_S
        return {Env.API_KEYS_SECRET_ID: _secret_id(self.secret), Env.API_KEYS_TTL_SECONDS: str(ttl)}


def _grant_imported_key(secret: secretsmanager.ISecret, function: lambda_.Function) -> None:
    """grant_read puts kms:Decrypt in the key's policy, which an imported key cannot take
    (the grant is then silently dropped): grant it on the role instead, via Secrets Manager
    only. The key's own policy must still allow IAM policies (the default key policy does)."""
    from aws_cdk import Stack
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_kms as kms

    key = secret.encryption_key
    if key is None or isinstance(key, kms.Key):
        return
    stack = Stack.of(function)
    function.add_to_role_policy(
        iam.PolicyStatement(
            actions=["kms:Decrypt"],
            resources=[key.key_arn],
            conditions={
                "StringEquals": {
                    "kms:ViaService": f"secretsmanager.{stack.region}.{stack.url_suffix}"
                }
            },
        )
    )


def _secret_id(secret: secretsmanager.ISecret) -> str:
    """The full ARN when known; else the name (a secret imported by name has only a partial
    ARN, which GetSecretValue may resolve ambiguously)."""
    full_arn = secret.secret_full_arn
    return full_arn if full_arn is not None else secret.secret_name


def _secret_problem(secret: object) -> Problem | None:
    if isinstance(secret, str):
        if secret.startswith("arn:") and not Token.is_unresolved(secret):
            return Problem.of(
                "secret",
                secret,
                f"secret must be a Secrets Manager secret, got the string {secret!r};",
                "pass secretsmanager.Secret.from_secret_complete_arn(self, 'ApiKeys', arn)",
            )
        shown = (
            "a string" if Token.is_unresolved(secret) else f"a string of {len(secret)} characters"
        )
        if secret.startswith("sk-"):
            shown = f"'sk-…' ({len(secret)} characters)"
        return Problem.of(
            "secret",
            shown,  # never the string itself: it may be a key
            f"secret must be a Secrets Manager secret, got {shown} (not shown: it may be a "
            "key); a key in the app would be readable in the template.",
            "Store the keys in "
            "Secrets Manager (`aws secretsmanager create-secret --name llm/api-keys "
            "--secret-string <key>`) and pass secretsmanager.Secret.from_secret_name_v2(self, "
            "'ApiKeys', 'llm/api-keys'), or create a secretsmanager.Secret in the stack",
        )
    if not cdk_kind(secret, "aws_secretsmanager", "ISecret"):
        return Problem.of(
            "secret",
            secret,
            f"secret must be a secretsmanager.ISecret, got {describe(secret)}",
        )
    return None
