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
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from constructs_llm.compliance import WEIGHTS_PREFIX_OBJECTS, resource_wildcard
from constructs_llm.model import source_checks as _checks
from constructs_llm.problems import Problem, Problems, fail
from constructs_llm.reporting import SynthWarning, WarningId, warn
from constructs_llm.wildcard_policy import grant_in_own_policy

MODEL_DIR = "/opt/ml/model"
"""Where SageMaker puts S3 weights in the container."""

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_s3

    # Only a type: aws_secretsmanager loads aws_ec2, the costliest module to import.
    from aws_cdk import aws_secretsmanager as secretsmanager

#: The policy, under the model (or an adapter's host), that holds the reads of a weights prefix.
_WEIGHTS_POLICY = "WeightsPrefix"


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
        needs_token: bool | None = None,
    ) -> ModelSource:
        """A model the container downloads from the Hugging Face Hub at start-up.

        A repository the packaged model table marks gated (Llama, Gemma, Mistral) fails
        without ``token``: the download is refused and the deploy would fail after the
        container starts.

        :param model_id: Hub id ``org/name``, e.g. ``"meta-llama/Meta-Llama-3-8B-Instruct"``.
        :param revision: branch, tag or commit; pin a commit for repeatable deploys.
            @default the main branch
        :param token: Secrets Manager secret holding a Hub token, for gated models. It is
            passed as a dynamic reference under every env name the engine reads; the value
            never appears in the template (it does appear in DescribeModel). @default none
        :param token_json_field: read the token from this field of a JSON secret.
            @default the whole secret string
        :param needs_token: whether the download needs a token. ``False`` for a gated model
            the container fetches through a Hub mirror or proxy that needs none (set
            ``HF_ENDPOINT`` in the model's ``env``); ``True`` makes a missing token an error
            for a gated repository the table does not know (a private one).
            @default from the table (True for the gated repositories it lists)
        """
        return _HubSource(
            model_id,
            revision=revision,
            token=token,
            token_json_field=token_json_field,
            needs_token=needs_token,
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

    def region_problem(self, region: str) -> Problem | None:
        """A problem when the weights are known to live in another region than ``region``
        (the model's stack's). @default None: nothing to compare"""
        return None

    @property
    def is_hub(self) -> bool:
        """True when the container downloads from the Hub (needs egress, no isolation)."""
        return False

    @property
    def model_location(self) -> str:
        """What the container is told to load: the Hub id, or ``/opt/ml/model``."""
        return MODEL_DIR

    @property
    def revision(self) -> str | None:
        """The Hub revision, if one is pinned."""
        return None

    @property
    def archive_url(self) -> str | None:
        """``s3://bucket/key`` of a ``model.tar.gz`` source (``s3_archive``); None otherwise."""
        return None

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
        needs_token: bool | None,
    ) -> None:
        problems = [
            _checks.hub_id_problem(model_id),
            _checks.revision_problem(revision),
            _checks.token_problem(token),
            _checks.token_field_problem(token_json_field),
            _checks.gated_problem(model_id, token, needs_token),
        ]
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

    @property
    def model_location(self) -> str:
        return self._model_id

    @property
    def revision(self) -> str | None:
        return self._revision

    def grant_read(self, scope: Construct, grantee: iam.IGrantable) -> None:
        del scope, grantee  # the container downloads from the Hub: no AWS reads to grant

    def bind(
        self, scope: Construct, grantee: iam.IGrantable, *, token_env_names: tuple[str, ...]
    ) -> SourceBinding:
        _warn_if_typo(scope, self._model_id, hub=True)
        env: dict[str, str] = {}
        if self._token is not None:
            if not token_env_names:
                fail(
                    "",
                    Problem.of(
                        "token",
                        None,
                        f"ModelSource.hugging_face({self._model_id!r}) has a token but the engine "
                        "reads none;",
                        "give Engine.custom(token_env_names=...) the env names",
                    ),
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
            warn(
                scope,
                SynthWarning(
                    WarningId.HF_TOKEN_IN_MODEL_ENV,
                    f"the Hugging Face token of {self._model_id} reaches the container through the "
                    f"Model's environment ({', '.join(token_env_names)}), so principals allowed "
                    "sagemaker:DescribeModel can read it; restrict that action, or stage the "
                    "weights in S3 with ModelSource.s3(...) so no token is needed at run time",
                ),
            )
        return SourceBinding(model_location=self._model_id, revision=self._revision, env=env)


class _S3Source(ModelSource):
    """Weights SageMaker copies from S3 to ``/opt/ml/model``: no Hub access, no token."""

    def __init__(
        self,
        factory: str,
        bucket: aws_s3.IBucket,
        path_problem: Problem | None,
        model_id: str | None,
    ) -> None:
        _raise(
            factory,
            [_checks.bucket_problem(bucket), path_problem, _checks.declared_id_problem(model_id)],
        )
        self._bucket = bucket
        self._model_id = model_id

    @property
    def model_id(self) -> str | None:
        return self._model_id

    def region_problem(self, region: str) -> Problem | None:
        return _checks.bucket_region_problem(self._bucket, region)

    def bind(
        self, scope: Construct, grantee: iam.IGrantable, *, token_env_names: tuple[str, ...]
    ) -> SourceBinding:
        if self._model_id is not None:
            _warn_if_typo(scope, self._model_id, hub=False)
        return self._grant_all(scope, grantee)

    def grant_read(self, scope: Construct, grantee: iam.IGrantable) -> None:
        self._grant_all(scope, grantee)

    def _grant_all(self, scope: Construct, grantee: iam.IGrantable) -> SourceBinding:
        binding = self._grant_read(scope, grantee)
        _grant_key(self._bucket, grantee)
        return binding

    @abc.abstractmethod
    def _grant_read(self, scope: Construct, grantee: iam.IGrantable) -> SourceBinding:
        """Grant ``grantee`` read access to the weights and return what the Model gets."""


class _S3PrefixSource(_S3Source):
    def __init__(self, bucket: aws_s3.IBucket, prefix: str, *, model_id: str | None) -> None:
        super().__init__("ModelSource.s3", bucket, _checks.prefix_problem(prefix), model_id)
        self._prefix = prefix

    def _grant_read(self, scope: Construct, grantee: iam.IGrantable) -> SourceBinding:
        bucket, prefix = _facts(self._bucket), self._prefix
        objects = bucket.objects(f"{prefix}*")
        # The object wildcard goes in a policy of ``scope``'s own (the model, or the host of an
        # adapter), attached to each role that reads, acknowledged for cdk-nag there only.
        statement = iam.PolicyStatement(actions=["s3:GetObject"], resources=[objects])
        wildcard = resource_wildcard(scope, objects, WEIGHTS_PREFIX_OBJECTS)
        grant_in_own_policy(
            scope, _WEIGHTS_POLICY, grantee, [statement], wildcard, per_identity=True
        )
        _add_statement(
            grantee,
            actions=["s3:ListBucket"],
            resources=[bucket.arn],
            conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        )
        uri = f"s3://{bucket.name}/{prefix}"
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
        super().__init__(
            "ModelSource.s3_archive", bucket, _checks.archive_key_problem(key), model_id
        )
        self._key = key

    @property
    def archive_url(self) -> str:
        return f"s3://{_facts(self._bucket).name}/{self._key}"

    def _grant_read(self, scope: Construct, grantee: iam.IGrantable) -> SourceBinding:
        _add_statement(
            grantee, actions=["s3:GetObject"], resources=[_facts(self._bucket).objects(self._key)]
        )
        return SourceBinding(model_location=MODEL_DIR, model_data_url=self.archive_url)


# -- warnings -------------------------------------------------------------------------------


def _warn_if_typo(scope: Construct, model_id: str, *, hub: bool) -> None:
    """An id the model table lacks that looks like a typo of one it has: a warning (forks and
    models the table lacks are legitimate), acknowledged by its id."""
    message = _checks.hub_id_typo(model_id, hub=hub)
    if message is not None:
        warn(scope, SynthWarning(WarningId.HUB_ID_TYPO, message))


# -- grants ---------------------------------------------------------------------------------


def _add_statement(
    grantee: iam.IGrantable,
    *,
    actions: list[str],
    resources: list[str],
    conditions: dict[str, Any] | None = None,
) -> None:
    """Add a statement to the grantee's policy (none for an imported role, which has none)."""
    statement = iam.PolicyStatement(actions=actions, resources=resources, conditions=conditions)
    # A role of this app is its own principal (``Role.grantPrincipal`` is the role): not asked;
    # nor is the result read (each of its fields is a round trip to the Node.js process).
    principal = grantee if isinstance(grantee, iam.Role) else grantee.grant_principal
    principal.add_to_principal_policy(statement)


def _grant_key(bucket: aws_s3.IBucket, grantee: iam.IGrantable) -> None:
    key = _facts(bucket).key
    if key is not None:
        key.grant_decrypt(grantee)


@dataclass(frozen=True)
class _BucketFacts:
    """What the grants and Models read of a weights bucket: its ARN, name and key."""

    arn: str
    name: str
    key: kms.IKey | None

    def objects(self, key_pattern: str) -> str:
        """``bucket.arn_for_objects(key_pattern)``: aws-cdk-lib's ``BucketBase`` joins the two
        (``aws-s3/lib/perms.ts``, ``arnForObjects``)."""
        return f"{self.arn}/{key_pattern}"


# Each jsii call is a round trip to the Node.js process, and the models of a fleet share a
# weights bucket: its ARN, name and key never change, so each is asked once per bucket.
_buckets: weakref.WeakKeyDictionary[aws_s3.IBucket, _BucketFacts] = weakref.WeakKeyDictionary()


def _facts(bucket: aws_s3.IBucket) -> _BucketFacts:
    found = _buckets.get(bucket)
    if found is None:
        found = _buckets[bucket] = _BucketFacts(
            bucket.bucket_arn, bucket.bucket_name, bucket.encryption_key
        )
    return found


def _raise(factory: str, found: list[Problem | None]) -> None:
    problems = Problems(factory)
    problems.extend(found)
    problems.raise_if_any()
