"""ContainerImage: DLC registry mapping per region, URI validation, least-privilege ECR grants."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack, Validations
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template
from cdk_nag import AwsSolutionsChecks

from constructs_llm.errors import ImageError
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.images.dlc_registry import MAPPING_ID, dlc_family, dlc_regions
from tests.conftest import cdk_context

TGI = dlc_family("tgi")
TGI_REPOSITORY = "huggingface-pytorch-tgi-inference"
ECR_URI = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/my-llm:1.0"
DIGEST = "sha256:" + "a" * 64


@dataclass
class Bound:
    stack: Stack
    role: iam.Role
    uri: str

    @property
    def resolved(self) -> Any:
        return self.stack.resolve(self.uri)


def _stack(app: App, name: str, region: str | None = None) -> tuple[Stack, iam.Role]:
    env = Environment(account="123456789012", region=region) if region else None
    stack = Stack(app, name, env=env)
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    return stack, role


def _bind(app: App, name: str, image: ContainerImage, region: str | None = None) -> Bound:
    stack, role = _stack(app, name, region)
    return Bound(stack, role, image.bind(stack, role))


@dataclass
class Synth:
    agnostic: Bound
    agnostic_lmi: Bound
    us_east_1: Bound
    china: Bound
    ecr_uri: Bound
    repo: Bound
    repo_digest: Bound


@pytest.fixture(scope="module")
def synth() -> Synth:
    """One app, one synthesis: every scenario is a stack of its own."""
    app = App(context=cdk_context())
    agnostic = _bind(app, "Agnostic", ContainerImage.dlc(TGI.repository, TGI.tag))
    # a second image on the same role and stack reuses the mapping and the token policy
    lmi = ContainerImage.dlc_default("lmi")
    agnostic_lmi = Bound(agnostic.stack, agnostic.role, lmi.bind(agnostic.stack, agnostic.role))
    repo_stack, repo_role = _stack(app, "Repo", "us-east-1")
    repository = ecr.Repository(repo_stack, "Images")
    repo_uri = ContainerImage.from_ecr_repository(repository).bind(repo_stack, repo_role)
    digest_uri = ContainerImage.from_ecr_repository(repository, DIGEST).bind(repo_stack, repo_role)
    result = Synth(
        agnostic=agnostic,
        agnostic_lmi=agnostic_lmi,
        us_east_1=_bind(app, "UsEast1", ContainerImage.dlc_default("tgi"), "us-east-1"),
        china=_bind(app, "China", ContainerImage.dlc_default("tgi"), "cn-north-1"),
        ecr_uri=_bind(app, "EcrUri", ContainerImage.from_uri(ECR_URI), "eu-west-1"),
        repo=Bound(repo_stack, repo_role, repo_uri),
        repo_digest=Bound(repo_stack, repo_role, digest_uri),
    )
    app.synth()
    return result


@pytest.fixture(scope="module")
def templates(synth: Synth) -> dict[str, Template]:
    bound = [synth.agnostic, synth.us_east_1, synth.china, synth.ecr_uri]
    return {b.stack.stack_name: Template.from_stack(b.stack) for b in [*bound, synth.repo]}


def _statements(template: Template) -> list[dict[str, Any]]:
    policies = template.find_resources("AWS::IAM::Policy")
    return [s for p in policies.values() for s in p["Properties"]["PolicyDocument"]["Statement"]]


PULL = frozenset(
    ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"]
)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _pulled(template: Template) -> list[Any]:
    """Resources the ECR pull actions are granted on (statements may be merged by CDK)."""
    return [
        resource
        for statement in _statements(template)
        if frozenset(_as_list(statement["Action"])) == PULL
        for resource in _as_list(statement["Resource"])
    ]


def _find_in_map(key: str) -> dict[str, Any]:
    return {"Fn::FindInMap": [MAPPING_ID, {"Ref": "AWS::Region"}, key]}


# -- DLC images -------------------------------------------------------------------------------


def test_environment_agnostic_stack_resolves_the_registry_with_find_in_map(synth: Synth) -> None:
    assert synth.agnostic.resolved == {
        "Fn::Join": [
            "",
            [
                _find_in_map("account"),
                ".dkr.ecr.",
                {"Ref": "AWS::Region"},
                ".",
                _find_in_map("domain"),
                f"/{TGI.repository}:{TGI.tag}",
            ],
        ]
    }


def test_mapping_has_every_region_once_per_stack(
    synth: Synth, templates: dict[str, Template]
) -> None:
    mappings = templates["Agnostic"].to_json()["Mappings"]

    assert list(mappings) == [MAPPING_ID]  # two images, one mapping
    registry = mappings[MAPPING_ID]
    assert set(registry) == set(dlc_regions())
    assert registry["us-east-1"] == {"account": "763104351884", "domain": "amazonaws.com"}
    assert registry["ap-northeast-3"]["account"] == "364406365360"
    assert registry["cn-northwest-1"] == {"account": "727897471807", "domain": "amazonaws.com.cn"}
    assert registry["us-isob-east-1"]["domain"] == "sc2s.sgov.gov"
    assert registry["eusc-de-east-1"]["domain"] == "amazonaws.eu"


def test_concrete_region_gets_a_literal_uri_and_no_mapping(
    synth: Synth, templates: dict[str, Template]
) -> None:
    expected = f"763104351884.dkr.ecr.us-east-1.amazonaws.com/{TGI.repository}:{TGI.tag}"

    assert synth.us_east_1.resolved == expected
    assert "Mappings" not in templates["UsEast1"].to_json()


def test_china_region_uses_the_china_registry_and_domain(synth: Synth) -> None:
    expected = f"727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/{TGI.repository}:{TGI.tag}"

    assert synth.china.resolved == expected


def test_unmapped_concrete_region_fails_naming_region_and_override() -> None:
    app = App(context=cdk_context())
    stack, role = _stack(app, "Fake", "xx-fake-1")

    with pytest.raises(ImageError, match="'xx-fake-1'") as caught:
        ContainerImage.dlc_default("tgi").bind(stack, role)

    message = str(caught.value)
    assert 'ContainerImage.from_uri("<account>.dkr.ecr.xx-fake-1.amazonaws.com/' in message
    assert f"{TGI.repository}:{TGI.tag}" in message


def test_a_region_where_the_sdk_does_not_list_the_family_fails_at_synth() -> None:
    # GIVEN a TensorRT-LLM image (family inferred from repository + tag) in ap-east-2
    app = App(context=cdk_context())
    stack, role = _stack(app, "ApEast2", "ap-east-2")
    image = ContainerImage.dlc("djl-inference", "0.33.0-tensorrtllm0.21.0-cu128")
    # WHEN it is bound THEN the synth fails naming the family, the region and the fixes
    with pytest.raises(
        ImageError,
        match=r"does not list lmi-trtllm images \(djl-inference\) in ap-east-2.*"
        r"Deploy to a region that lists them \(.*\), choose another engine, or pass the "
        r"image.*ContainerImage\.from_uri.*aws ecr describe-images",
    ):
        image.bind(stack, role)


def test_a_listed_region_warns_nothing(synth: Synth) -> None:
    assert Annotations.from_stack(synth.us_east_1.stack).find_warning("*", Match.any_value()) == []


def test_dlc_pull_is_scoped_to_its_repository(templates: dict[str, Template]) -> None:
    def arn(repository: str) -> dict[str, Any]:
        return {
            "Fn::Join": [
                "",
                [
                    "arn:",
                    {"Ref": "AWS::Partition"},
                    ":ecr:",
                    {"Ref": "AWS::Region"},
                    ":",
                    _find_in_map("account"),
                    f":repository/{repository}",
                ],
            ]
        }

    pulled = _pulled(templates["Agnostic"])

    assert len(pulled) == 2
    assert arn(TGI.repository) in pulled
    assert arn("djl-inference") in pulled


def test_concrete_region_pull_arn_names_the_registry_account(
    templates: dict[str, Template],
) -> None:
    # the project enables partition literals, so a China stack says aws-cn outright
    arn = f"arn:aws-cn:ecr:cn-north-1:727897471807:repository/{TGI.repository}"

    assert _pulled(templates["China"]) == [arn]


@pytest.mark.parametrize("stack", ["Agnostic", "UsEast1", "EcrUri", "Repo"])
def test_only_get_authorization_token_uses_a_wildcard(
    templates: dict[str, Template], stack: str
) -> None:
    template = templates[stack]
    wildcards = [s for s in _statements(template) if "*" in str(s["Resource"])]

    assert wildcards == [
        {"Action": "ecr:GetAuthorizationToken", "Effect": "Allow", "Resource": "*"}
    ]
    # in a policy of its own, attached to the role, so its acknowledgment covers nothing else
    token_policies = template.find_resources(
        "AWS::IAM::Policy",
        {"Properties": {"PolicyDocument": {"Statement": [Match.object_like({"Resource": "*"})]}}},
    )
    (policy,) = token_policies.values()
    (role_id,) = template.find_resources("AWS::IAM::Role")
    assert policy["Properties"]["Roles"] == [{"Ref": role_id}]


# -- cdk-nag --------------------------------------------------------------------------------------


def _nag_app() -> App:
    app = App(context=cdk_context())
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


def test_cdk_nag_accepts_the_acknowledged_token_wildcard() -> None:
    # GIVEN AwsSolutions checks, a created role and an imported role pulling DLC images
    app = _nag_app()
    stack, role = _stack(app, "Nag", "us-east-1")
    imported = iam.Role.from_role_arn(stack, "Imported", "arn:aws:iam::123456789012:role/ml")
    ContainerImage.dlc_default("tgi").bind(stack, role)
    ContainerImage.dlc_default("tgi").bind(stack, imported)

    # WHEN synthesized THEN no unacknowledged AwsSolutions-IAM5 finding stops synthesis
    app.synth()


def test_cdk_nag_still_flags_other_wildcards_on_the_same_role() -> None:
    # GIVEN the role also gets an unrelated wildcard statement
    app = _nag_app()
    stack, role = _stack(app, "Nag", "us-east-1")
    ContainerImage.dlc_default("tgi").bind(stack, role)
    role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=["*"]))

    # THEN the acknowledgment does not hide it
    with pytest.raises(RuntimeError, match=re.escape("AwsSolutions-IAM5[Resource::*]")):
        app.synth()


# -- from_uri ---------------------------------------------------------------------------------


def test_ecr_uri_is_parsed_and_its_repository_granted(
    synth: Synth, templates: dict[str, Template]
) -> None:
    image = ContainerImage.from_uri(ECR_URI)
    arn = "arn:aws:ecr:eu-west-1:123456789012:repository/team/my-llm"

    assert (image.repository_name, image.tag) == ("team/my-llm", "1.0")
    assert synth.ecr_uri.uri == ECR_URI
    assert _pulled(templates["EcrUri"]) == [arn]


@pytest.mark.parametrize(
    ("uri", "arn"),
    [
        (
            "123456789012.dkr.ecr.cn-northwest-1.amazonaws.com.cn/llm@" + DIGEST,
            "arn:aws-cn:ecr:cn-northwest-1:123456789012:repository/llm",
        ),
        (
            "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/llm:v2",
            "arn:aws-us-gov:ecr:us-gov-west-1:123456789012:repository/llm",
        ),
    ],
)
def test_ecr_uri_partition_follows_its_region(uri: str, arn: str) -> None:
    app = App(context=cdk_context())
    stack, role = _stack(app, "Partition")  # environment-agnostic: no region check

    assert ContainerImage.from_uri(uri).bind(stack, role) == uri
    assert _pulled(Template.from_stack(stack)) == [arn]


@pytest.mark.parametrize(
    "region",
    ["eu-west-1", "zz-newpartition-east-1"],  # commercial, and a partition no table knows
)
def test_an_image_outside_the_known_partitions_takes_the_stacks(region: str) -> None:
    # GIVEN an environment-agnostic stack and an image whose region names no other partition
    app = App(context=cdk_context())
    stack, role = _stack(app, "Partition")
    uri = f"123456789012.dkr.ecr.{region}.amazonaws.com/llm:v2"
    # WHEN its pull is granted
    assert ContainerImage.from_uri(uri).bind(stack, role) == uri
    # THEN the ARN is in the stack's partition (the image's, as SageMaker pulls from its own
    # region), not an assumed "aws"
    (arn,) = _pulled(Template.from_stack(stack))
    assert arn == {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                f":ecr:{region}:123456789012:repository/llm",
            ],
        ]
    }


def test_digest_uri_has_no_tag() -> None:
    image = ContainerImage.from_uri(
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/org/llm@" + DIGEST
    )

    assert (image.repository_name, image.tag) == ("org/llm", None)


@pytest.mark.parametrize(
    "uri",
    [
        "ghcr.io/org/llm:1.0",
        "docker.io/vllm/vllm-openai:v0.11.0",
        "quay.io/org/llm:1.0",
        "nvcr.io/nvidia/tritonserver:24.05-py3",
        "public.ecr.aws/deep-learning-containers/vllm:0.11-gpu",
        "registry.example.com:5000/llm@" + DIGEST,
    ],
)
def test_an_image_outside_ecr_fails_naming_ecr_and_the_copy(uri: str) -> None:
    # SageMaker pulls a model's image from ECR, or from another registry only through the
    # model's VPC (RepositoryAccessMode=Vpc), which the library does not render
    with pytest.raises(ImageError) as caught:
        ContainerImage.from_uri(uri)
    message = str(caught.value)
    assert f"{uri!r} is on " in message and "which SageMaker does not pull from" in message
    assert "RepositoryAccessMode=Vpc" in message and "docker push" in message
    assert "ContainerImage.from_ecr_repository" in message


def test_ecr_uri_in_another_region_than_the_stack_fails() -> None:
    app = App(context=cdk_context())
    stack, role = _stack(app, "Elsewhere", "us-east-1")

    with pytest.raises(ImageError, match=r"'eu-west-1'.*'us-east-1'"):
        ContainerImage.from_uri(ECR_URI).bind(stack, role)


def test_token_uri_is_passed_through_unvalidated() -> None:
    app = App(context=cdk_context())
    stack, role = _stack(app, "Token")
    token = iam.Role(stack, "Other", assumed_by=iam.AccountRootPrincipal()).role_arn

    image = ContainerImage.from_uri(token)

    assert (image.repository_name, image.tag) == (None, None)
    assert image.bind(stack, role) == token


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("", "non-empty"),
        ("my-llm:1.0", "registry host"),
        ("huggingface/tgi:1.0", "not a registry host"),
        ("ghcr.io/org/llm", "no tag or digest"),
        ("ghcr.io/Org/LLM:1.0", "lower case"),
        ("ghcr.io/org/llm:1.0 ", "whitespace"),
        ("ghcr.io/org/llm@sha256:xyz", "64 lower-case hex"),
        ("ghcr.io/org/llm:-bad", "not a valid tag"),
        ("ghcr.io/org/" + "x" * 250 + ":1", "SageMaker allows 255"),
    ],
)
def test_bad_uris_fail_at_construction(uri: str, problem: str) -> None:
    with pytest.raises(ImageError, match=re.escape(repr(uri))) as caught:
        ContainerImage.from_uri(uri)

    assert problem in str(caught.value)


# -- from_ecr_repository ------------------------------------------------------------------------


def test_ecr_repository_grants_pull_on_that_repository(
    synth: Synth, templates: dict[str, Template]
) -> None:
    template = templates["Repo"]
    (repo_id,) = template.find_resources("AWS::ECR::Repository")

    assert _pulled(template) == [{"Fn::GetAtt": [repo_id, "Arn"]}]
    assert "latest" in str(synth.repo.resolved)
    assert "@" + DIGEST in str(synth.repo_digest.resolved)


def test_ecr_repository_image_reports_name_and_tag(imported_repository: ecr.IRepository) -> None:
    image = ContainerImage.from_ecr_repository(imported_repository, "v3")

    assert (image.repository_name, image.tag) == ("team/llm", "v3")
    assert ContainerImage.from_ecr_repository(imported_repository, DIGEST).tag is None


# -- validation of dlc() and from_ecr_repository() arguments --------------------------------


@pytest.fixture(scope="module")
def imported_repository() -> ecr.IRepository:
    return ecr.Repository.from_repository_name(Stack(App(), "Imports"), "Repo", "team/llm")


@pytest.mark.parametrize("tag", ["", " 3.3.6", "3.3.6 ", "a b", ".hidden", "x" * 129])
def test_bad_tags_are_rejected(tag: str, imported_repository: ecr.IRepository) -> None:
    with pytest.raises(ImageError, match=re.escape(repr(tag))):
        ContainerImage.dlc(TGI.repository, tag)
    with pytest.raises(ImageError, match=re.escape(repr(tag))):
        ContainerImage.from_ecr_repository(imported_repository, tag)


@pytest.mark.parametrize(
    ("repository", "problem"),
    [
        (f"763104351884.dkr.ecr.us-east-1.amazonaws.com/{TGI.repository}", "from_uri"),
        ("Hugging-Face", "Invalid ECR repository name"),
        ("", "non-empty"),
    ],
)
def test_bad_dlc_repositories_are_rejected(repository: str, problem: str) -> None:
    with pytest.raises(ImageError, match=re.escape(repr(repository))) as caught:
        ContainerImage.dlc(repository, "1.0")

    assert problem in str(caught.value)


def test_unknown_family_lists_the_known_ones() -> None:
    with pytest.raises(ImageError, match=r"got 'tensorrt'.*tgi, tgi-neuronx, lmi, lmi-trtllm"):
        ContainerImage.dlc_default("tensorrt")


@pytest.mark.parametrize(
    ("family", "repository", "tag"),
    [
        ("tgi", "huggingface-pytorch-tgi-inference", "2.7.0-tgi3.3.6-gpu-py311-cu124-ubuntu22.04"),
        (
            "tgi-neuronx",
            "huggingface-pytorch-tgi-inference",
            "2.7.0-optimum3.3.6-neuronx-py310-ubuntu22.04",
        ),
        ("lmi", "djl-inference", "0.38.0-lmi29.0.0-cu130"),
        ("lmi-trtllm", "djl-inference", "0.33.0-tensorrtllm0.21.0-cu128"),
        ("vllm", "vllm", "0.30.0-gpu-py312-cu130-ubuntu24.04-sagemaker"),
        ("sglang", "sglang", "0.5.20-gpu-py312-cu130-ubuntu24.04-sagemaker"),
    ],
)
def test_default_images_per_family(family: str, repository: str, tag: str) -> None:
    image = ContainerImage.dlc_default(family)

    assert (image.repository_name, image.tag) == (repository, tag)
    spec = dlc_family(family)
    assert spec.regions is None or spec.regions <= set(dlc_regions())


def test_agnostic_stack_asserts_a_mapped_region_before_creating_anything(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    ContainerImage.dlc(
        "huggingface-pytorch-tgi-inference", "2.7.0-tgi3.3.6-gpu-py311-cu124-ubuntu22.04"
    ).bind(stack, role)
    rules = Template.from_stack(stack).to_json()["Rules"]
    (rule,) = (r for name, r in rules.items() if name.startswith("ConstructsLlmDlcRegistryRegion"))
    (assertion,) = rule["Assertions"]
    regions, region = assertion["Assert"]["Fn::Contains"]
    assert region == {"Ref": "AWS::Region"}
    assert "us-east-1" in regions and "cn-north-1" in regions
    assert "ContainerImage.from_uri" in assertion["AssertDescription"]


def test_concrete_region_needs_no_rule(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack(region="eu-west-1")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    ContainerImage.dlc(
        "huggingface-pytorch-tgi-inference", "2.7.0-tgi3.3.6-gpu-py311-cu124-ubuntu22.04"
    ).bind(stack, role)
    rules = Template.from_stack(stack).to_json().get("Rules", {})
    assert not any(name.startswith("ConstructsLlmDlcRegistryRegion") for name in rules)


@pytest.mark.parametrize(
    ("family", "region", "listed"),
    [
        ("vllm", "me-west-1", True),
        ("sglang", "me-west-1", True),
        ("lmi", "me-west-1", False),
        ("vllm", "cn-north-1", False),
        ("sglang", "us-gov-west-1", False),
        ("lmi", "cn-north-1", True),
    ],
)
def test_every_family_knows_its_regions(family: str, region: str, listed: bool) -> None:
    """vLLM and SGLang images are listed in fewer regions than the registries; each family
    fails at synth where the SageMaker SDK does not list it (me-west-1 is mapped since
    sagemaker-core 2.27)."""
    assert region in dlc_regions()
    app = App(context=cdk_context())
    if listed:
        _bind(app, "Region", ContainerImage.dlc_default(family), region)
        return
    with pytest.raises(ImageError, match=f"does not list {family} images .* in {region}"):
        _bind(app, "Region", ContainerImage.dlc_default(family), region)


def _region_rules(stack: Stack) -> dict[str, list[str]]:
    rules = Template.from_stack(stack).to_json().get("Rules", {})
    return {
        name: rule["Assertions"][0]["Assert"]["Fn::Contains"][0]
        for name, rule in rules.items()
        if name.startswith("ConstructsLlmDlcRegistryRegion")
    }


def test_an_agnostic_stack_admits_only_regions_where_every_image_exists(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an environment-agnostic stack with a TGI, a vLLM and an LMI image
    stack = new_stack()
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    for family in ("tgi", "vllm", "lmi"):
        ContainerImage.dlc_default(family).bind(stack, role)
    # THEN besides the registry rule, each family listed in fewer regions has a rule of its own
    rules = _region_rules(stack)
    assert set(rules) == {
        "ConstructsLlmDlcRegistryRegion",
        "ConstructsLlmDlcRegistryRegionVllm",
        "ConstructsLlmDlcRegistryRegionLmi",
    }
    # AND together they admit only the regions where every image is listed
    admitted = set.intersection(*(set(regions) for regions in rules.values()))
    vllm, lmi = dlc_family("vllm").regions, dlc_family("lmi").regions
    assert vllm is not None and lmi is not None
    assert admitted == set(dlc_regions()) & vllm & lmi
    assert "us-east-1" in admitted
    assert not {"cn-north-1", "us-gov-west-1", "me-west-1"} & admitted
