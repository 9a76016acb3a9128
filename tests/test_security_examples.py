"""The examples of docs/security.md, run as written in a stack: an endpoint's log group with
the caller's retention, key and removal policy; weights staged in S3 served with network
isolation, no token and no token warning."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from aws_cdk import Stack
from aws_cdk.assertions import Template

from constructs_llm import Engine, LlmModel, ModelSource
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "security.md"


def _block(heading: str) -> str:
    section = PAGE.read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, heading
    return match.group(1)


def _run(stack: Stack, code: str, **names: Any) -> None:
    exec(compile(code, str(PAGE), "exec"), {"self": stack, **names})


def test_the_log_group_example_keeps_three_months_encrypted_and_retained(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
        engine=Engine.vllm(),
        instance_type="ml.g5.2xlarge",
    )
    _run(stack, _block("Endpoint log groups"), model=model)
    resources = Template.from_stack(stack).to_json()["Resources"]
    ((group_id, group),) = [
        (k, v) for k, v in resources.items() if v["Type"] == "AWS::Logs::LogGroup"
    ]
    assert group["Properties"]["LogGroupName"] == "/aws/sagemaker/Endpoints/chat"
    assert group["Properties"]["RetentionInDays"] == 90
    assert "KmsKeyId" in group["Properties"] and group["DeletionPolicy"] == "Retain"
    (endpoint,) = [v for v in resources.values() if v["Type"] == "AWS::SageMaker::Endpoint"]
    assert group_id in endpoint["DependsOn"]


def test_the_s3_example_isolates_the_container_with_no_token(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    _run(stack, _block("Hugging Face tokens and weights staged in S3"))
    template = Template.from_stack(stack).to_json()
    (model,) = [v for v in template["Resources"].values() if v["Type"] == "AWS::SageMaker::Model"]
    assert model["Properties"]["EnableNetworkIsolation"] is True
    environment = model["Properties"]["PrimaryContainer"]["Environment"]
    assert not {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} & set(environment)
    # no token warning anywhere in the stack
    warnings = [
        str(entry.data)
        for construct in stack.node.find_all()
        for entry in construct.node.metadata
        if entry.type == "aws:cdk:warning"
    ]
    assert not [w for w in warnings if "hf-token-in-model-env" in w]
    # the role reads that prefix only
    statements = json.dumps(
        [
            p["Properties"]["PolicyDocument"]["Statement"]
            for p in template["Resources"].values()
            if p["Type"] == "AWS::IAM::Policy"
        ]
    )
    assert ":s3:::my-model-weights/llama3/*" in statements
    assert '"s3:prefix": ["llama3/*"]' in statements or '"s3:prefix": "llama3/*"' in statements
    page = " ".join(PAGE.read_text().split())
    assert "The Model then has `EnableNetworkIsolation: true`, no `HF_TOKEN`" in page
