"""An API-key invoker behind a CloudFront distribution with an imported us-east-1 certificate
and two domain names, synthesized in an app that runs cdk-nag as a validation plugin (as the
repository's app.py does): an unacknowledged finding fails the synth. The certificate tests
read its template, and the examples' cfn-lint and checkov runs scan it."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Stack, Validations
from aws_cdk import aws_certificatemanager as acm

from constructs_llm import InvokerAuth, StreamingInvoker
from tests.matrix.bad_gateway import CERTIFICATE_ARN
from tests.matrix.builders import app_of
from tests.matrix.builders import endpoint as llama3_endpoint

__all__ = ["CERTIFICATE_ARN", "DOMAIN_NAMES", "synthesize_certificate_distribution"]

DOMAIN_NAMES = ["*.llm.example.com", "llm.example.com"]


def synthesize_certificate_distribution(stack: Stack) -> tuple[StreamingInvoker, Path]:
    """Builds the invoker and its distribution in ``stack`` (fresh, in an app of its own),
    synthesizes the app with cdk-nag, and returns the invoker and the stack's template file."""
    from aws_cdk import aws_secretsmanager as secretsmanager
    from cdk_nag import AwsSolutionsChecks

    secret = secretsmanager.Secret.from_secret_name_v2(stack, "Keys", "llm/api-keys")
    invoker = StreamingInvoker(
        stack,
        "Keyed",
        target=llama3_endpoint(stack),
        auth=InvokerAuth.api_keys(secret),
        max_concurrency=5,
    )
    certificate = acm.Certificate.from_certificate_arn(stack, "Cert", CERTIFICATE_ARN)
    invoker.add_distribution(certificate=certificate, domain_names=DOMAIN_NAMES)
    app = app_of(stack)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    assembly = app.synth()
    return invoker, Path(assembly.directory) / f"{stack.artifact_id}.template.json"
