"""A distribution with a certificate of its own: its domain names, SNI and TLSv1.2_2021, the
findings of the default certificate gone (cdk-nag in the app; cfn-lint and checkov scan the
same stack in tests/test_examples.py, in one run with every template the suite scans), and the
region rule of a certificate requested in an environment-agnostic stack."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_certificatemanager as acm
from aws_cdk.assertions import Template

from constructs_llm import StreamingInvoker
from tests.matrix.builders import endpoint as llama3_endpoint
from tests.support.certificate_distribution import (
    CERTIFICATE_ARN,
    DOMAIN_NAMES,
    synthesize_certificate_distribution,
)

pytestmark = pytest.mark.slow(seconds=12)


@pytest.fixture(scope="module")
def synthesized(new_stack: Callable[..., Stack]) -> tuple[StreamingInvoker, Path]:
    """An API-key invoker behind a distribution with an imported us-east-1 certificate, in an
    app that runs cdk-nag as a validation plugin: an unacknowledged finding fails the synth."""
    return synthesize_certificate_distribution(new_stack())


def _distribution(path: Path) -> dict[str, Any]:
    template = Template.from_json(json.loads(path.read_text()))
    (distribution,) = template.find_resources("AWS::CloudFront::Distribution").values()
    return dict(distribution)


def test_the_names_take_the_certificate_with_tls_1_2_and_sni(
    synthesized: tuple[StreamingInvoker, Path],
) -> None:
    invoker, path = synthesized
    config = _distribution(path)["Properties"]["DistributionConfig"]
    assert config["Aliases"] == DOMAIN_NAMES == ["*.llm.example.com", "llm.example.com"]
    assert config["ViewerCertificate"] == {
        "AcmCertificateArn": CERTIFICATE_ARN,
        "MinimumProtocolVersion": "TLSv1.2_2021",
        "SslSupportMethod": "sni-only",
    }
    # clients are given the first name that is not a wildcard
    assert invoker.distribution_url == "https://llm.example.com/"


def test_the_default_certificate_s_waivers_are_gone(
    synthesized: tuple[StreamingInvoker, Path],
) -> None:
    metadata = json.dumps(_distribution(path=synthesized[1]).get("Metadata", {}))
    assert "CKV_AWS_174" not in metadata
    assert "AwsSolutions-CFR4" not in metadata
    assert "CKV_AWS_86" in metadata  # the other waivers stay


def test_without_a_certificate_the_reason_names_the_option(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    invoker = StreamingInvoker(stack, "Signed", target=llama3_endpoint(stack))
    invoker.add_distribution(public=True)
    (distribution,) = (
        Template.from_stack(stack).find_resources("AWS::CloudFront::Distribution").values()
    )
    assert "ViewerCertificate" not in distribution["Properties"]["DistributionConfig"]
    skips = {s["id"]: s["comment"] for s in distribution["Metadata"]["checkov"]["skip"]}
    assert "certificate=... (ACM, us-east-1) and domain_names=..." in skips["CKV_AWS_174"]
    assert "allows TLSv1" in skips["CKV_AWS_174"]
    assert invoker.distribution_url is not None
    assert "cloudfront" not in invoker.distribution_url  # the distribution's own (token) name


def test_a_certificate_requested_in_an_agnostic_stack_asserts_us_east_1(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    certificate = acm.Certificate(stack, "Cert", domain_name="llm.example.com")
    StreamingInvoker(stack, "Signed", target=llama3_endpoint(stack)).add_distribution(
        public=True, certificate=certificate, domain_names=["llm.example.com"]
    )
    rules = Template.from_stack(stack).to_json()["Rules"]
    (assertion,) = rules["ConstructsLlmCertificateRegion"]["Assertions"]
    assert assertion["Assert"] == {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-east-1"]}
    assert "us-east-1 only" in assertion["AssertDescription"]


def test_a_certificate_requested_in_us_east_1_needs_no_rule(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(region="us-east-1")
    certificate = acm.Certificate(stack, "Cert", domain_name="llm.example.com")
    StreamingInvoker(stack, "Signed", target=llama3_endpoint(stack)).add_distribution(
        public=True, certificate=certificate, domain_names=["llm.example.com"]
    )
    assert "ConstructsLlmCertificateRegion" not in Template.from_stack(stack).to_json().get(
        "Rules", {}
    )
