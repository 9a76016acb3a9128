"""Where the weights come from: the Hugging Face Hub, or S3 (a prefix or a model.tar.gz).

Each source grants the model's role exactly the reads it needs: nothing for the Hub;
``s3:GetObject`` on the prefix's objects plus ``s3:ListBucket`` limited to that prefix for
uncompressed weights; ``s3:GetObject`` on the one archive for ``model.tar.gz``; and
``kms:Decrypt`` on the bucket's key when the bucket has one. A Hub token is never plain text:
it comes from Secrets Manager as a CloudFormation dynamic reference, under every env name the
engine reads.
"""

from __future__ import annotations

import abc
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_cdk import Acknowledgment, Annotations, Stack, Token, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm import catalogs
from constructs_llm.errors import ConfigurationError

MODEL_DIR = "/opt/ml/model"
"""Where SageMaker puts S3 weights in the container."""

# Hub rules: letters, digits, '-', '_', '.'; no '--' or '..'; '-' and '.' neither start nor end
# a part; the repository name is at most 96 characters.
_HUB_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?")
_MAX_HUB_NAME = 96
# Git ref names (branch or tag) or a commit hash.
_REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}")

if TYPE_CHECKING:
    from aws_cdk import aws_s3

    # Only a type: aws_secretsmanager loads aws_ec2, the costliest module to import.
    from aws_cdk import aws_secretsmanager as secretsmanager


@dataclass(frozen=True, kw_only=True)
class SourceBinding:
    """What a source contributes to the SageMaker Model.

    :param model_location: the Hub id, or ``/opt/ml/model`` for S3 weights.
    :param revision: the Hub revision. @default None
    :param env: env entries to add (the token's dynamic references). @default none
    :param model_data_url: ``ModelDataUrl`` (a ``model.tar.gz``). @default None
    :param model_data_source: ``ModelDataSource`` (uncompressed S3 weights). @default None
    """

    model_location: str
    revision: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    model_data_url: str | None = None
    model_data_source: sagemaker.CfnModel.ModelDataSourceProperty | None = None


class ModelSource(abc.ABC):
    """The model's weights. Create with ``hugging_face``, ``s3`` or ``s3_archive``."""

    @staticmethod
    def hugging_face(
        model_id: str,
        *,
        revision: str | None = None,
        token: secretsmanager.ISecret | None = None,
        token_json_field: str | None = None,
    ) -> ModelSource:
        """A model the container downloads from the Hugging Face Hub at start-up.

        :param model_id: Hub id ``org/name``, e.g. ``"meta-llama/Meta-Llama-3-8B-Instruct"``.
        :param revision: branch, tag or commit; pin a commit for repeatable deploys.
            @default the main branch
        :param token: Secrets Manager secret holding a Hub token, for gated models. It is
            passed as a dynamic reference under every env name the engine reads; the value
            never appears in the template (it does appear in DescribeModel). @default none
        :param token_json_field: read the token from this field of a JSON secret.
            @default the whole secret string
        """
        return _HubSource(
            model_id, revision=revision, token=token, token_json_field=token_json_field
        )

    @staticmethod
    def s3(bucket: aws_s3.IBucket, prefix: str, *, model_id: str | None = None) -> ModelSource:
        """Uncompressed weights under an S3 prefix (``config.json``, ``*.safetensors``, ...).

        SageMaker copies them to ``/opt/ml/model`` (``ModelDataSource``, ``S3Prefix``,
        ``CompressionType: None``), so the container needs no Hub access and no token.

        :param bucket: the bucket holding the weights. With SSE-KMS, import it with its key
            (``s3.Bucket.from_bucket_attributes(..., encryption_key=key)``) so the role gets
            ``kms:Decrypt``; an imported bucket without its key gets no KMS grant.
        :param prefix: the folder, ending with "/", e.g. ``"llama3-8b-instruct/"``.
        :param model_id: the Hub id these weights are a copy of, to look up the model's size
            for memory checks. @default None (pass ``architecture=`` to the model instead)
        """
        return _S3PrefixSource(bucket, prefix, model_id=model_id)

    @staticmethod
    def s3_archive(bucket: aws_s3.IBucket, key: str, *, model_id: str | None = None) -> ModelSource:
        """A ``model.tar.gz`` in S3 (``ModelDataUrl``), unpacked into ``/opt/ml/model``.

        Prefer :meth:`s3` for large models: SageMaker skips the unpacking.

        :param key: object key ending with ".tar.gz".
        :param model_id: as for :meth:`s3`. @default None
        """
        return _S3ArchiveSource(bucket, key, model_id=model_id)

    @property
    def model_id(self) -> str | None:
        """The Hub id (for a Hub source, or as declared for S3 weights); None if unknown."""
        return None

    @property
    def is_hub(self) -> bool:
        """True when the container downloads from the Hub (needs egress, no isolation)."""
        return False

    @abc.abstractmethod
    def bind(
        self, scope: Construct, grantee: iam.IGrantable, *, token_env_names: tuple[str, ...]
    ) -> SourceBinding:
        """Grant ``grantee`` the reads the weights need and return what the Model gets."""

    @abc.abstractmethod
    def grant_read(self, scope: Construct, grantee: iam.IGrantable) -> None:
        """Grant ``grantee`` the same reads as ``bind``."""


class _HubSource(ModelSource):
    def __init__(
        self,
        model_id: str,
        *,
        revision: str | None,
        token: secretsmanager.ISecret | None,
        token_json_field: str | None,
    ) -> None:
        problems = [_hub_id_problem(model_id), _revision_problem(revision), _token_problem(token)]
        _raise("ModelSource.hugging_face", problems)
        self._model_id = model_id
        self._revision = revision
        self._token = token
        self._token_json_field = token_json_field

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def is_hub(self) -> bool:
        return True

    def grant_read(self, scope: Construct, grantee: iam.IGrantable) -> None:
        del scope, grantee  # the container downloads from the Hub: no AWS reads to grant

    def bind(
        self, scope: Construct, grantee: iam.IGrantable, *, token_env_names: tuple[str, ...]
    ) -> SourceBinding:
        env: dict[str, str] = {}
        if self._token is None and catalogs.is_gated(self._model_id):
            Annotations.of(scope).add_warning_v2(
                "constructs-llm:gated-model-no-token",
                f"{self._model_id} is a gated Hugging Face repository and no token is given, so "
                "the container cannot download it and the endpoint fails at deploy; accept the "
                "model's terms on the Hub, create a Secrets Manager secret holding that "
                "account's token (e.g. 'hugging-face/token') and pass token="
                "secretsmanager.Secret.from_secret_name_v2(self, 'HfToken', "
                "'hugging-face/token') to ModelSource.hugging_face",
            )
        if self._token is not None:
            if not token_env_names:
                raise ConfigurationError(
                    f"ModelSource.hugging_face({self._model_id!r}) has a token but the engine "
                    "reads none; give Engine.custom(token_env_names=...) the env names"
                )
            secret = self._token
            value = (
                secret.secret_value_from_json(self._token_json_field)
                if self._token_json_field
                else secret.secret_value
            )
            # CloudFormation resolves {{resolve:secretsmanager:...}} at deploy time; the
            # template only holds the reference.
            reference = value.unsafe_unwrap()
            env = dict.fromkeys(token_env_names, reference)
            Annotations.of(scope).add_warning_v2(
                "constructs-llm:hf-token-in-model-env",
                f"the Hugging Face token of {self._model_id} reaches the container through the "
                f"Model's environment ({', '.join(token_env_names)}), so principals allowed "
                "sagemaker:DescribeModel can read it; restrict that action, or stage the "
                "weights in S3 with ModelSource.s3(...) so no token is needed at run time",
            )
        return SourceBinding(model_location=self._model_id, revision=self._revision, env=env)


class _S3Source(ModelSource):
    """Weights SageMaker copies from S3 to ``/opt/ml/model``: no Hub access, no token."""

    def __init__(
        self, factory: str, bucket: aws_s3.IBucket, path_problem: str | None, model_id: str | None
    ) -> None:
        _raise(factory, [_bucket_problem(bucket), path_problem, _declared_id_problem(model_id)])
        self._bucket = bucket
        self._model_id = model_id

    @property
    def model_id(self) -> str | None:
        return self._model_id

    def bind(
        self, scope: Construct, grantee: iam.IGrantable, *, token_env_names: tuple[str, ...]
    ) -> SourceBinding:
        binding = self._grant_read(scope, grantee)
        _grant_key(self._bucket, grantee)
        return binding

    def grant_read(self, scope: Construct, grantee: iam.IGrantable) -> None:
        self.bind(scope, grantee, token_env_names=())

    @abc.abstractmethod
    def _grant_read(self, scope: Construct, grantee: iam.IGrantable) -> SourceBinding:
        """Grant ``grantee`` read access to the weights and return what the Model gets."""


class _S3PrefixSource(_S3Source):
    def __init__(self, bucket: aws_s3.IBucket, prefix: str, *, model_id: str | None) -> None:
        super().__init__("ModelSource.s3", bucket, _prefix_problem(prefix), model_id)
        self._prefix = prefix

    def _grant_read(self, scope: Construct, grantee: iam.IGrantable) -> SourceBinding:
        bucket, prefix = self._bucket, self._prefix
        objects = bucket.arn_for_objects(f"{prefix}*")
        added = _add_statement(grantee, actions=["s3:GetObject"], resources=[objects])
        _add_statement(
            grantee,
            actions=["s3:ListBucket"],
            resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        )
        principal = grantee.grant_principal
        if added and isinstance(principal, Construct):
            # Acknowledged on the role, whose default policy holds the statement.
            finding = f"Resource::{_nag_resource(scope, objects)}"
            Validations.of(principal).acknowledge(
                Acknowledgment(
                    id=f"AwsSolutions::AwsSolutions-IAM5[{finding}]",
                    reason="SageMaker reads every object under the model's weights prefix; the "
                    "grant covers that prefix only",
                )
            )
        uri = f"s3://{bucket.bucket_name}/{prefix}"
        return SourceBinding(
            model_location=MODEL_DIR,
            model_data_source=sagemaker.CfnModel.ModelDataSourceProperty(
                s3_data_source=sagemaker.CfnModel.S3DataSourceProperty(
                    s3_uri=uri, s3_data_type="S3Prefix", compression_type="None"
                )
            ),
        )


class _S3ArchiveSource(_S3Source):
    def __init__(self, bucket: aws_s3.IBucket, key: str, *, model_id: str | None) -> None:
        super().__init__("ModelSource.s3_archive", bucket, _archive_key_problem(key), model_id)
        self._key = key

    def _grant_read(self, scope: Construct, grantee: iam.IGrantable) -> SourceBinding:
        _add_statement(
            grantee, actions=["s3:GetObject"], resources=[self._bucket.arn_for_objects(self._key)]
        )
        return SourceBinding(
            model_location=MODEL_DIR,
            model_data_url=f"s3://{self._bucket.bucket_name}/{self._key}",
        )


# -- grants ---------------------------------------------------------------------------------


def _add_statement(
    grantee: iam.IGrantable,
    *,
    actions: list[str],
    resources: list[str],
    conditions: dict[str, Any] | None = None,
) -> bool:
    """Add a statement to the grantee's policy; False when it cannot (an imported role)."""
    statement = iam.PolicyStatement(actions=actions, resources=resources, conditions=conditions)
    return grantee.grant_principal.add_to_principal_policy(statement).statement_added


def _grant_key(bucket: aws_s3.IBucket, grantee: iam.IGrantable) -> None:
    if bucket.encryption_key is not None:
        bucket.encryption_key.grant_decrypt(grantee)


def _nag_resource(scope: Construct, arn: str) -> str:
    """The resource as cdk-nag prints it in a finding id (its flattenCfnReference)."""
    return _flatten(Stack.of(scope).resolve(arn))


def _flatten(node: Any) -> str:
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict) and len(node) == 1:
        ((fn, arg),) = node.items()
        if fn == "Fn::Join":
            delimiter, items = arg
            return str(delimiter).join(_flatten(i) for i in items)
        if fn in ("Fn::Sub", "Fn::ImportValue"):
            return _flatten(arg)
        if fn == "Fn::GetAtt":
            return f"<{_flatten(arg[0])}.{_flatten(arg[1])}>"
        if fn == "Ref":
            return f"<{_flatten(arg)}>"
    return json.dumps(node, separators=(",", ":"))


# -- validation -----------------------------------------------------------------------------


def _raise(factory: str, problems: list[str | None]) -> None:
    found = [p for p in problems if p]
    if found:
        raise ConfigurationError(f"{factory}: " + "; ".join(found))


def _hub_id_problem(model_id: object) -> str | None:
    if not isinstance(model_id, str):
        return f"model_id must be a Hub id string such as 'org/name', got {model_id!r}"
    if Token.is_unresolved(model_id):
        return None
    hint = _hub_id_hint(model_id)
    if hint:
        return f"model_id must be a Hub id 'org/name', got {model_id!r}; {hint}"
    return None


def _hub_id_hint(model_id: str) -> str | None:
    if model_id != model_id.strip() or any(c.isspace() for c in model_id):
        return f"remove the whitespace: {''.join(model_id.split())!r}"
    if model_id.startswith("s3://"):
        return "for weights in S3 use ModelSource.s3(bucket, prefix)"
    url = re.match(r"https?://(?:www\.)?huggingface\.co/([^/]+/[^/?#]+)", model_id)
    if url:
        return f"pass the id, not the URL: {url.group(1)!r}"
    parts = model_id.split("/")
    if len(parts) != 2:
        return (
            "the Hub id names the organisation or user too, e.g. 'openai-community/gpt2'"
            if len(parts) == 1
            else "it has exactly one '/', between organisation and name"
        )
    bad = [p for p in parts if not _HUB_PART.fullmatch(p) or "--" in p or ".." in p]
    if bad:
        return (
            f"{bad[0]!r} may use only letters, digits, '-', '_' and '.', without '--' or '..', "
            "and may not start or end with '-' or '.'"
        )
    if len(parts[1]) > _MAX_HUB_NAME:
        return f"the name part has {len(parts[1])} characters; the Hub allows {_MAX_HUB_NAME}"
    return None


def _revision_problem(revision: object) -> str | None:
    if revision is None:
        return None
    if not isinstance(revision, str):
        return f"revision must be a string (branch, tag or commit), got {revision!r}"
    if Token.is_unresolved(revision):
        return None
    ok = (
        _REVISION.fullmatch(revision)
        and ".." not in revision
        and "//" not in revision
        and not revision.endswith(("/", ".", ".lock"))
    )
    if not ok:
        return (
            f"revision must be a branch, tag or commit hash, got {revision!r}; use e.g. 'main' "
            "or a 40-character commit hash from the model's Files and versions tab"
        )
    return None


def _token_problem(token: object) -> str | None:
    if token is None:
        return None
    if isinstance(token, str):
        shown = f"'{token[:5]}…'" if token.startswith("hf_") else "a string"
        return (
            f"token must be a Secrets Manager secret, got {shown}; a plain string would be "
            "readable in the template. Store the token in Secrets Manager (e.g. `aws "
            "secretsmanager create-secret --name hf/token --secret-string <token>`) and pass "
            "secretsmanager.Secret.from_secret_name_v2(self, 'HfToken', 'hf/token')"
        )
    if not hasattr(token, "secret_value"):
        return f"token must be a secretsmanager.ISecret, got {type(token).__name__}"
    return None


def _declared_id_problem(model_id: str | None) -> str | None:
    return None if model_id is None else _hub_id_problem(model_id)


def _bucket_problem(bucket: object) -> str | None:
    if not hasattr(bucket, "arn_for_objects"):
        return (
            f"bucket must be an s3.IBucket, got {type(bucket).__name__} {bucket!r}; use "
            "s3.Bucket.from_bucket_name(self, 'Weights', 'my-bucket')"
        )
    return None


def _prefix_problem(prefix: object) -> str | None:
    if not isinstance(prefix, str):
        return f"prefix must be a string such as 'llama3-8b/', got {prefix!r}"
    if Token.is_unresolved(prefix):
        return None
    if prefix.startswith("s3://"):
        return f"prefix is the key prefix inside the bucket, got the URI {prefix!r}"
    if not prefix or prefix == "/":
        return "prefix must name the folder holding the weights, e.g. 'llama3-8b/', got ''"
    if prefix.startswith("/"):
        return f"prefix must not start with '/', got {prefix!r}; use {prefix.lstrip('/')!r}"
    if not prefix.endswith("/"):
        return (
            f"prefix must end with '/', got {prefix!r}; use {prefix + '/'!r} (SageMaker copies "
            "every object under it, and without the slash 'llama' would also match 'llama-old/')"
        )
    return None


def _archive_key_problem(key: object) -> str | None:
    if not isinstance(key, str):
        return f"key must be a string such as 'models/model.tar.gz', got {key!r}"
    if Token.is_unresolved(key):
        return None
    if key.startswith("s3://"):
        return f"key is the object key inside the bucket, got the URI {key!r}"
    if key.startswith("/"):
        return f"key must not start with '/', got {key!r}; use {key.lstrip('/')!r}"
    if not key.endswith(".tar.gz"):
        hint = (
            "use ModelSource.s3(bucket, prefix) for uncompressed weights"
            if key.endswith("/")
            else "compress the weights as model.tar.gz"
        )
        return f"key must name a .tar.gz archive, got {key!r}; {hint}"
    return None
