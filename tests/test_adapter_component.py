"""InferenceComponent.add_adapter: a LoRA adapter component on its base component's copies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Template

from constructs_llm import (
    AdapterComponent,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmModel,
    ModelSource,
    StreamFormat,
)
from tests.matrix.builders import G5_4GPU, LLAMA3


@pytest.fixture(scope="module")
def adapted(new_stack: Callable[..., Stack]) -> tuple[AdapterComponent, Template]:
    # GIVEN a Llama 3 component on LMI with adapters on, and an adapter in a KMS-encrypted bucket
    stack = new_stack()
    key = kms.Key(stack, "AdapterKey")
    bucket = s3.Bucket.from_bucket_attributes(
        stack, "Adapters", bucket_name="my-adapters", encryption_key=key
    )
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(LLAMA3, needs_token=False),
        engine=Engine.lmi(),
        instance_type=G5_4GPU,
        max_total_tokens=4096,
        env={"OPTION_ENABLE_LORA": "true"},
    )
    shared = InferenceComponentEndpoint(stack, "Shared", instance_type=G5_4GPU)
    base = InferenceComponent(
        stack, "Chat", endpoint=shared, model=model, accelerators=1, min_memory_mib=16 * 1024
    )
    adapter = base.add_adapter(
        "sql-expert",
        source=ModelSource.s3_archive(bucket, "lora/sql.tar.gz"),
        inference_component_name="sql-expert-adapter",
    )
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    adapter.grant_invoke(caller)
    return adapter, Template.from_stack(stack)


def test_the_adapter_is_a_component_on_its_base_with_no_compute(
    adapted: tuple[AdapterComponent, Template],
) -> None:
    adapter, template = adapted
    template.has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {
            "InferenceComponentName": "sql-expert-adapter",
            "Specification": {
                "BaseInferenceComponentName": adapter.base.inference_component_name,
                "Container": {"ArtifactUrl": "s3://my-adapters/lora/sql.tar.gz"},
            },
        },
    )
    # AND it sits on its base's endpoint, with no compute of its own
    components = template.find_resources("AWS::SageMaker::InferenceComponent")
    by_name = {
        json.dumps(c["Properties"]["InferenceComponentName"]): c for c in components.values()
    }
    spec = by_name['"sql-expert-adapter"']["Properties"]
    base = next(c for n, c in by_name.items() if n != '"sql-expert-adapter"')["Properties"]
    assert spec["EndpointName"] == base["EndpointName"]
    assert "ComputeResourceRequirements" not in spec["Specification"]


def test_clients_reach_it_by_its_name_in_its_base_s_formats(
    adapted: tuple[AdapterComponent, Template],
) -> None:
    adapter, _ = adapted
    assert adapter.served_model_name == "sql-expert"
    assert adapter.stream_format is StreamFormat.LMI_JSONLINES
    assert adapter.variant_names == ()
    metric = adapter.metric_invocations()
    assert Stack.of(adapter).resolve(metric.dimensions) == {
        "InferenceComponentName": "sql-expert-adapter"
    }


def _statements(template: Template, role: iam.IRole) -> list[dict[str, Any]]:
    logical_id = Stack.of(role).resolve(role.node.default_child.logical_id)  # type: ignore[union-attr]
    return [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": logical_id} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_only_the_archive_is_readable_and_its_key_decrypts(
    adapted: tuple[AdapterComponent, Template],
) -> None:
    adapter, template = adapted
    for role in (adapter.base.endpoint.role, adapter.model.role):
        statements = _statements(template, role)
        reads = [s for s in statements if "s3:" in json.dumps(s["Action"])]
        assert [(s["Action"], json.dumps(s["Resource"])) for s in reads] == [
            (
                "s3:GetObject",
                json.dumps(
                    {
                        "Fn::Join": [
                            "",
                            [
                                "arn:",
                                {"Ref": "AWS::Partition"},
                                ":s3:::my-adapters/lora/sql.tar.gz",
                            ],
                        ]
                    }
                ),
            )
        ]
        assert any(s["Action"] == "kms:Decrypt" for s in statements)


def test_grant_invoke_names_the_endpoint_and_the_adapter(
    adapted: tuple[AdapterComponent, Template],
) -> None:
    adapter, template = adapted
    caller = Stack.of(adapter).node.find_child("Caller")
    (invoke,) = [s for s in _statements(template, caller) if "sagemaker:" in json.dumps(s)]  # type: ignore[arg-type]
    stack = Stack.of(adapter)
    assert sorted(map(json.dumps, invoke["Resource"])) == sorted(
        json.dumps(stack.resolve(arn))
        for arn in (adapter.base.endpoint.endpoint_arn, adapter.inference_component_arn)
    )
