"""Model sources: Hub ids and tokens as dynamic references, S3 reads scoped to the weights."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, CfnOutput, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm.errors import ConfigurationError
from constructs_llm.model.source import MODEL_DIR, ModelSource, SourceBinding

TOKEN_NAMES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def _role(stack: Stack, id: str = "Role") -> iam.Role:
    return iam.Role(stack, id, assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))


def _statements(template: Template, role_prefix: str) -> list[dict[str, Any]]:
    """The statements of every policy attached to the role (its default policy's first, then
    the policies of the library's own that hold its wildcards, such as WeightsPrefix)."""
    policies = sorted(
        template.find_resources("AWS::IAM::Policy").items(),
        key=lambda item: (not item[0].startswith(f"{role_prefix}DefaultPolicy"), item[0]),
    )
    return [
        statement
        for _, p in policies
        if any(str(r.get("Ref", "")).startswith(role_prefix) for r in p["Properties"]["Roles"])
        for statement in p["Properties"]["PolicyDocument"]["Statement"]
    ]


# -- Hugging Face Hub -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def hub(new_stack: Callable[..., Stack]) -> tuple[Stack, SourceBinding, SourceBinding, Template]:
    # GIVEN a gated model whose token lives in Secrets Manager
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "HfToken", "hf/token")
    json_secret = secretsmanager.Secret.from_secret_name_v2(stack, "Tokens", "tokens")
    role = _role(stack)
    # WHEN both sources are bound for an engine that reads two token names
    plain = ModelSource.hugging_face(
        "meta-llama/Llama-2-13b-chat-hf", revision="main", token=secret
    ).bind(stack, role, token_env_names=TOKEN_NAMES)
    field = ModelSource.hugging_face(
        "meta-llama/Llama-2-13b-chat-hf", token=json_secret, token_json_field="hf"
    ).bind(stack, role, token_env_names=("HF_TOKEN",))
    # AND the values reach the template, as LlmModel's container environment does
    for name, value in {**plain.env, **{f"F{k}": v for k, v in field.env.items()}}.items():
        CfnOutput(stack, f"Out{name.replace('_', '')}", value=value)
    return stack, plain, field, Template.from_stack(stack)


def test_hub_source_is_the_model_id_and_revision(
    hub: tuple[Stack, SourceBinding, SourceBinding, Template],
) -> None:
    _, plain, _, _ = hub
    assert (plain.model_location, plain.revision) == ("meta-llama/Llama-2-13b-chat-hf", "main")
    assert plain.model_data_url is None and plain.model_data_source is None
    source = ModelSource.hugging_face("tiiuae/falcon-40b-instruct")
    assert (source.model_id, source.is_hub) == ("tiiuae/falcon-40b-instruct", True)


def test_token_is_a_dynamic_reference_under_every_engine_name(
    hub: tuple[Stack, SourceBinding, SourceBinding, Template],
) -> None:
    stack, plain, field, template = hub
    assert set(plain.env) == set(TOKEN_NAMES)
    for value in plain.env.values():
        rendered = json.dumps(stack.resolve(value))
        assert rendered.startswith('{"Fn::Join": ["", ["{{resolve:secretsmanager:')
        assert rendered.endswith(':secret:hf/token:SecretString:::}}"]]}')
    assert ":SecretString:hf::}}" in json.dumps(stack.resolve(field.env["HF_TOKEN"]))
    # THEN the synthesized template holds only references, never a token value
    text = json.dumps(template.to_json())
    assert text.count("{{resolve:secretsmanager:") == 3
    assert "hf_" not in text


def test_hub_source_grants_nothing_and_warns_about_describe_model(
    hub: tuple[Stack, SourceBinding, SourceBinding, Template],
) -> None:
    stack, _, _, template = hub
    assert _statements(template, "Role") == []
    warnings = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("sagemaker:DescribeModel")
    )
    assert warnings


@pytest.mark.parametrize(
    "revision", ["main", "v1.0", "refs/pr/12", "5f0b02c75b57c5855da9ae460ce51323ea669d8a"]
)
def test_branches_tags_and_commits_are_accepted(revision: str) -> None:
    assert (
        ModelSource.hugging_face("org/model-1.5B_v2", revision=revision).model_id
        == "org/model-1.5B_v2"
    )


# -- S3 -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3_sources() -> tuple[App, Stack, dict[str, SourceBinding]]:
    # GIVEN weights in an imported bucket, a KMS-encrypted bucket, and an archive
    app = App()
    stack = Stack(app, "S3Sources")
    plain_bucket = s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    encrypted = s3.Bucket.from_bucket_attributes(
        stack, "Encrypted", bucket_name="secure-weights", encryption_key=key
    )
    bindings = {
        "prefix": ModelSource.s3(
            plain_bucket, "llama3-8b/", model_id="meta-llama/Meta-Llama-3-8B-Instruct"
        ).bind(stack, _role(stack, "PrefixRole"), token_env_names=TOKEN_NAMES),
        "encrypted": ModelSource.s3(encrypted, "mistral/").bind(
            stack, _role(stack, "EncryptedRole"), token_env_names=TOKEN_NAMES
        ),
        "archive": ModelSource.s3_archive(plain_bucket, "phi3/model.tar.gz").bind(
            stack, _role(stack, "ArchiveRole"), token_env_names=TOKEN_NAMES
        ),
    }
    return app, stack, bindings


def test_s3_prefix_is_an_uncompressed_model_data_source(
    s3_sources: tuple[App, Stack, dict[str, SourceBinding]],
) -> None:
    _, stack, bindings = s3_sources
    binding = bindings["prefix"]
    assert (binding.model_location, binding.model_data_url, binding.env) == (MODEL_DIR, None, {})
    assert stack.resolve(binding.model_data_source) == {
        "s3DataSource": {
            "s3Uri": "s3://my-weights/llama3-8b/",
            "s3DataType": "S3Prefix",
            "compressionType": "None",
        }
    }


def test_s3_prefix_grants_exactly_the_reads_of_that_prefix(
    s3_sources: tuple[App, Stack, dict[str, SourceBinding]],
) -> None:
    _, stack, _ = s3_sources
    statements = _statements(Template.from_stack(stack), "PrefixRole")
    assert statements == [
        {
            "Action": "s3:ListBucket",
            "Condition": {"StringLike": {"s3:prefix": ["llama3-8b/*"]}},
            "Effect": "Allow",
            "Resource": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::my-weights"]]},
        },
        {  # the object wildcard, in the WeightsPrefix policy where cdk-nag's finding is accepted
            "Action": "s3:GetObject",
            "Effect": "Allow",
            "Resource": {
                "Fn::Join": [
                    "",
                    ["arn:", {"Ref": "AWS::Partition"}, ":s3:::my-weights/llama3-8b/*"],
                ]
            },
        },
    ]


def test_an_encrypted_bucket_adds_decrypt_on_its_key_only(
    s3_sources: tuple[App, Stack, dict[str, SourceBinding]],
) -> None:
    _, stack, _ = s3_sources
    template = Template.from_stack(stack)
    kms_actions = [
        s["Action"]
        for s in _statements(template, "EncryptedRole")
        if "kms" in json.dumps(s["Action"])
    ]
    assert kms_actions == ["kms:Decrypt"]
    decrypt = next(
        s for s in _statements(template, "EncryptedRole") if s["Action"] == "kms:Decrypt"
    )
    assert decrypt["Resource"] == {"Fn::GetAtt": [_key_id(template), "Arn"]}
    assert not any("kms" in json.dumps(s) for s in _statements(template, "PrefixRole"))


def _key_id(template: Template) -> str:
    return next(iter(template.find_resources("AWS::KMS::Key")))


def test_s3_archive_reads_one_object(
    s3_sources: tuple[App, Stack, dict[str, SourceBinding]],
) -> None:
    _, stack, bindings = s3_sources
    binding = bindings["archive"]
    assert binding.model_data_source is None
    assert stack.resolve(binding.model_data_url) == "s3://my-weights/phi3/model.tar.gz"
    assert _statements(Template.from_stack(stack), "ArchiveRole") == [
        {
            "Action": "s3:GetObject",
            "Effect": "Allow",
            "Resource": {
                "Fn::Join": [
                    "",
                    ["arn:", {"Ref": "AWS::Partition"}, ":s3:::my-weights/phi3/model.tar.gz"],
                ]
            },
        }
    ]


def test_s3_grants_pass_cdk_nag(s3_sources: tuple[App, Stack, dict[str, SourceBinding]]) -> None:
    from cdk_nag import AwsSolutionsChecks

    app, _, _ = s3_sources
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()  # raises on any unacknowledged finding


@pytest.fixture(scope="module")
def bucket() -> s3.IBucket:
    return s3.Bucket.from_bucket_name(Stack(App(), "Buckets"), "Weights", "my-weights")


def test_s3_sources_are_not_hub_and_may_declare_their_model(bucket: s3.IBucket) -> None:
    assert ModelSource.s3(bucket, "x/").is_hub is False
    assert ModelSource.s3(bucket, "x/").model_id is None
    assert ModelSource.s3_archive(bucket, "m.tar.gz", model_id="org/m").model_id == "org/m"


# -- gated Hub models -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "model_id",
    ["mistralai/Mixtral-8x7B-Instruct-v0.1", "meta-llama/Meta-Llama-3-8B-Instruct"],
)
def test_a_gated_model_without_a_token_fails_naming_the_secret_to_create(model_id: str) -> None:
    # GIVEN a repository the table marks gated (an alias included) and no token
    with pytest.raises(ConfigurationError) as caught:
        ModelSource.hugging_face(model_id)

    # THEN the error says why the deploy would fail, and both fixes
    message = str(caught.value)
    assert message.startswith(f"ModelSource.hugging_face: {model_id} is a gated Hugging Face")
    assert "fails at deploy" in message
    assert "aws secretsmanager create-secret --name hugging-face/token" in message
    assert "token=secretsmanager.Secret.from_secret_name_v2(" in message
    assert "pass needs_token=False" in message and "HF_ENDPOINT" in message


def _hub_warnings(stack: Stack, source: ModelSource) -> list[str]:
    role = iam.Role(stack, "GatedRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    source.bind(stack, role, token_env_names=TOKEN_NAMES)
    return [
        str(w.entry.data)
        for w in Annotations.from_stack(stack).find_warning("*", Match.any_value())
    ]


def test_a_gated_model_with_a_token_a_mirror_or_an_open_model_passes(
    new_stack: Callable[..., Stack],
) -> None:
    # a token: only the DescribeModel warning
    stack = new_stack()
    secret = secretsmanager.Secret.from_secret_name_v2(stack, "GatedToken", "hf/token")
    gemma = ModelSource.hugging_face("google/gemma-2-9b-it", token=secret)
    (warning,) = _hub_warnings(stack, gemma)
    assert "sagemaker:DescribeModel" in warning
    # a mirror that needs no token (stated), and an open model: nothing at all
    mirrored = ModelSource.hugging_face("google/gemma-2-9b-it", needs_token=False)
    assert _hub_warnings(new_stack(), mirrored) == []
    assert _hub_warnings(new_stack(), ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct")) == []


def test_needs_token_makes_a_private_repository_fail_without_a_token() -> None:
    # GIVEN a repository the table does not know, stated to need a token
    with pytest.raises(ConfigurationError, match=r"acme/private-llm-7b needs a token"):
        ModelSource.hugging_face("acme/private-llm-7b", needs_token=True)
    assert ModelSource.hugging_face("acme/private-llm-7b").model_id == "acme/private-llm-7b"
    with pytest.raises(ConfigurationError, match=r"needs_token must be True, False or None"):
        ModelSource.hugging_face("acme/private-llm-7b", needs_token="no")  # type: ignore[arg-type]


# -- Hub ids that look like typos -----------------------------------------------------------


def _warnings(stack: Stack) -> list[str]:
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    return [str(w.entry.data) for w in found]


def _bound_warnings(stack: Stack, source: ModelSource) -> list[str]:
    source.bind(stack, _role(stack, "TypoRole"), token_env_names=TOKEN_NAMES)
    return _warnings(stack)


@pytest.mark.parametrize(
    ("model_id", "match"),
    [
        ("meta-llama/Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct"),  # "Meta-"
        ("meta-lama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct"),
        ("tiiuae/falcon-40b-instrcut", "tiiuae/falcon-40b-instruct"),
        ("deepseek-ai/DeepSeek-R1-Distil-Qwen-7B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"),
    ],
)
def test_a_hub_id_like_a_table_id_warns_naming_the_close_match(
    new_stack: Callable[..., Stack], model_id: str, match: str
) -> None:
    (warning,) = _bound_warnings(new_stack(), ModelSource.hugging_face(model_id))
    assert warning.startswith(f"{model_id!r} is not in the packaged model table but {match!r} is")
    assert f"did you mean {match!r}?" in warning and "fails at deploy" in warning
    assert "acknowledge this warning" in warning and "architecture=ModelArchitecture" in warning
    assert warning.endswith("[ack: constructs-llm:hub-id-typo]")


@pytest.mark.parametrize(
    "model_id",
    [
        "Qwen/Qwen2.5-7B-Instruct-AWQ",  # a quantized copy extends the table's id
        "Qwen/Qwen3-8B-FP8",
        "Qwen/Qwen2-7B-Instruct",  # another release: other numbers
        "Qwen/Qwen2.5-Coder-7B-Instruct",  # a sibling model
        "myorg/Meta-Llama-3-8B-Instruct",  # a fork under another organisation
        "acme/private-llm-7b",
        "meta-llama/meta-llama-3-8b-instruct",  # the table's id in another case
    ],
)
def test_forks_siblings_and_quantized_copies_are_not_taken_for_typos(
    new_stack: Callable[..., Stack], model_id: str
) -> None:
    assert _bound_warnings(new_stack(), ModelSource.hugging_face(model_id, needs_token=False)) == []


def test_a_typo_in_the_model_id_of_s3_weights_warns_that_memory_is_not_checked(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    weights = s3.Bucket.from_bucket_name(stack, "TypoWeights", "weights")
    source = ModelSource.s3(weights, "llama/", model_id="meta-llama/Llama-3-8B-Instruct")
    (warning,) = _bound_warnings(stack, source)
    assert "did you mean 'meta-llama/Meta-Llama-3-8B-Instruct'?" in warning
    assert "only looks up the model's size, so memory fit is not checked" in warning
    # granting the same reads to another role (a component endpoint's) does not warn again
    source.grant_read(stack, _role(stack, "Other"))
    assert len(_warnings(stack)) == 1
