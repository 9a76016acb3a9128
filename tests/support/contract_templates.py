"""Every template the contract walks read: the committed example templates (a test proves
they equal a fresh synth of the examples) and one combinations stack for what no example
has: weights from S3, a prefix on one endpoint and a model.tar.gz on another, in a bucket
encrypted with a KMS key of the stack's own, plus a volume key on an EBS-only instance type.
The examples already hold the rest (FrontDoors: API keys behind CloudFront, signed and
public URLs; OvernightBatch: async; SharedEndpoint: a component scaling to zero;
MistralInf2: a volume key; ModelGateway and Rag: routes to components).

The combinations stack is synthesized once per process, in memory (no CLI), on first use,
by the model walk's tests alone: it holds models, their weights and keys, and nothing the
other walks walk (a test in ``tests/contract/test_model_access.py`` says so).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from tests.support.templates import FIXTURES

__all__ = ["COMBINATIONS", "SIGNED_DISTRIBUTION", "every_template", "example_templates"]

COMBINATIONS = "Combinations"
#: An IAM invoker behind CloudFront, made public on purpose (``add_distribution(public=True)``):
#: no example has one, since the library refuses it without that choice.
SIGNED_DISTRIBUTION = "SignedDistribution"


@functools.cache
def example_templates() -> dict[str, dict[str, Any]]:
    return {
        path.name.removesuffix(".template.json"): json.loads(path.read_text())
        for path in sorted(FIXTURES.glob("*.template.json"))
    }


@functools.cache
def _combinations() -> dict[str, Any]:
    from aws_cdk import App, Stack
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_s3 as s3

    from constructs_llm import (
        Engine,
        LlmEndpoint,
        LlmModel,
        ModelSource,
    )
    from tests.conftest import cdk_context

    app = App(context=cdk_context())
    stack = Stack(app, COMBINATIONS)
    weights = s3.Bucket(
        stack,
        "Weights",
        encryption=s3.BucketEncryption.KMS,
        encryption_key=kms.Key(stack, "WeightsKey", enable_key_rotation=True),
        enforce_ssl=True,
    )
    llama3 = "meta-llama/Meta-Llama-3-8B-Instruct"
    prefix_model = LlmModel(
        stack,
        "PrefixModel",
        source=ModelSource.s3(weights, "llama3/", model_id=llama3),
        engine=Engine.vllm(),
        instance_type="ml.p3.8xlarge",  # no local NVMe: a volume key is allowed
        max_total_tokens=4096,
    )
    LlmEndpoint(
        stack,
        "Endpoint",
        model=prefix_model,
        kms_key=kms.Key(stack, "VolumeKey", enable_key_rotation=True),
        alarms=False,
    )
    archive_model = LlmModel(
        stack,
        "ArchiveModel",
        source=ModelSource.s3_archive(
            weights, "qwen2.5-7b/model.tar.gz", model_id="Qwen/Qwen2.5-7B-Instruct"
        ),
        engine=Engine.vllm(),
        instance_type="ml.g5.2xlarge",
        max_total_tokens=4096,
    )
    LlmEndpoint(stack, "Archive", model=archive_model, alarms=False)
    assembly = app.synth()
    template: dict[str, Any] = json.loads(
        (Path(assembly.directory) / f"{stack.artifact_id}.template.json").read_text()
    )
    return template


@functools.cache
def signed_distribution() -> dict[str, Any]:
    """The template of :data:`SIGNED_DISTRIBUTION`, synthesized once per process, in memory."""
    from aws_cdk import App, Stack

    from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, StreamingInvoker
    from tests.conftest import cdk_context

    app = App(context=cdk_context())
    stack = Stack(app, SIGNED_DISTRIBUTION)
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("microsoft/Phi-3-mini-4k-instruct"),
        engine=Engine.vllm(),
        instance_type="ml.g5.2xlarge",
    )
    endpoint = LlmEndpoint(stack, "Endpoint", model=model, alarms=False)
    StreamingInvoker(stack, "Signed", target=endpoint).add_distribution(public=True)
    assembly = app.synth()
    template: dict[str, Any] = json.loads(
        (Path(assembly.directory) / f"{stack.artifact_id}.template.json").read_text()
    )
    return template


def every_template() -> dict[str, dict[str, Any]]:
    """Name -> template, the examples' and the combinations stack's."""
    return {**example_templates(), COMBINATIONS: _combinations()}
