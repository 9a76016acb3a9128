"""The invoker's timeout against the time a full-length answer takes: a warning naming the
tokens, the decode rate on the target's slowest hardware and the seconds needed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match

from constructs_llm import (
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
)

LLAMA31 = "meta-llama/Llama-3.1-8B-Instruct"  # 8.0B, 131,072-token context
QWEN = "Qwen/Qwen2.5-7B-Instruct"
ACK = "[ack: constructs-llm:invoker-timeout-decode]"


def _model(stack: Stack, hub_id: str = LLAMA31, **props: Any) -> LlmModel:
    return LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(hub_id, needs_token=False),
        engine=Engine.vllm(),
        **props,
    )


def _warnings(stack: Stack) -> list[str]:
    found = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("invoker-timeout-decode")
    )
    return [str(w.entry.data) for w in found]


def test_a_timeout_shorter_than_a_full_length_answer_warns_with_the_numbers_and_fixes(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN Llama-3.1-8B allowed 8,192 tokens on one A10G, behind the default 5-minute timeout
    stack = new_stack()
    endpoint = LlmEndpoint(
        stack,
        "Endpoint",
        model=_model(stack, instance_type="ml.g5.2xlarge", max_total_tokens=8192),
    )
    StreamingInvoker(stack, "Stream", target=endpoint)

    # THEN the invoker warns: the tokens, the rate and how it is estimated, the seconds needed
    # against the seconds the stream may read, and the fixes
    (warning,) = _warnings(stack)
    assert warning.startswith(
        "LlmEndpoint 'Test/Endpoint': a full-length answer may outlast the invoker's timeout: "
        "max_total_tokens=8,192 at about 22 tokens/s (one stream decoding 16.1 GB of bf16 "
        "weights per token on 1 \u00d7 NVIDIA A10G (ml.g5.2xlarge) at 600 GB/s each, 60% of "
        "peak) takes about 366 s, but the stream may read for 290 s"
    )
    assert "raise timeout (Duration.minutes(7)), lower max_total_tokens" in warning
    assert "async inference (AsyncInference)" in warning
    assert "If clients cap max_tokens at about 6,499 or less, acknowledge" in warning
    assert warning.endswith(ACK)
    Annotations.from_stack(stack).has_warning(
        "/Test/Stream", Match.string_like_regexp("full-length answer")
    )


@pytest.mark.parametrize(
    ("timeout", "max_total_tokens", "warns"),
    [
        (Duration.minutes(5), 8192, True),  # 346 s
        (Duration.minutes(6), 8192, False),  # the suggested timeout suffices
        (Duration.minutes(5), 4096, False),  # 173 s
        (Duration.minutes(5), None, False),  # no limit stated: the invoker cannot tell
        (Duration.minutes(2), 4096, True),
    ],
)
def test_only_a_stated_limit_beyond_the_timeout_warns(
    new_stack: Callable[..., Stack],
    timeout: Duration,
    max_total_tokens: int | None,
    warns: bool,
) -> None:
    # Qwen2.5-7B (15.2 GB in bf16) on one A10G: about 24 tokens/s
    stack = new_stack()
    model = _model(stack, QWEN, instance_type="ml.g5.2xlarge", max_total_tokens=max_total_tokens)
    endpoint = LlmEndpoint(stack, "Endpoint", model=model)
    StreamingInvoker(stack, "Stream", target=endpoint, timeout=timeout)
    assert bool(_warnings(stack)) is warns


def test_the_slowest_instance_pool_is_the_one_named(new_stack: Callable[..., Stack]) -> None:
    # GIVEN pools of L40S (34 tokens/s: 240 s) and L4 (12 tokens/s: 693 s) for Qwen2.5-7B
    stack = new_stack()
    endpoint = LlmEndpoint(
        stack,
        "Endpoint",
        model=_model(stack, QWEN, max_total_tokens=8192),
        instance_type=["ml.g6e.2xlarge", "ml.g6.2xlarge"],
    )
    StreamingInvoker(stack, "Stream", target=endpoint)
    (warning,) = _warnings(stack)
    assert "on 1 \u00d7 NVIDIA L4 (ml.g6.2xlarge) at 300 GB/s" in warning
    assert "takes about 693 s" in warning


def test_when_even_15_minutes_is_too_short_the_warning_says_so(
    new_stack: Callable[..., Stack],
) -> None:
    # 65,536 tokens on four L4s: about 1,466 s
    stack = new_stack()
    endpoint = LlmEndpoint(
        stack,
        "Endpoint",
        model=_model(stack, instance_type="ml.g6.12xlarge", max_total_tokens=65536),
    )
    StreamingInvoker(stack, "Stream", target=endpoint, timeout=Duration.minutes(15))
    (warning,) = _warnings(stack)
    assert "on 4 \u00d7 NVIDIA L4 (ml.g6.12xlarge)" in warning
    assert re.search(r"takes about 1,46\d s, but the stream may read for 890 s", warning)
    assert "the 15-minute maximum timeout is too short too, lower max_total_tokens" in warning


def test_a_component_is_judged_on_the_devices_of_one_copy(new_stack: Callable[..., Stack]) -> None:
    # GIVEN one A10G per copy on a four-GPU instance: the copy decodes at one GPU's rate
    stack = new_stack()
    shared = InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")
    lora = {"SM_VLLM_ENABLE_LORA": "true", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"}
    model = _model(stack, instance_type="ml.g5.12xlarge", max_total_tokens=8192, env=lora)
    chat = InferenceComponent(
        stack, "Chat", endpoint=shared, model=model, accelerators=1, min_memory_mib=24 * 1024
    )
    adapters = s3.Bucket.from_bucket_name(stack, "Adapters", "adapters")
    adapter = chat.add_adapter(
        "support-bot", source=ModelSource.s3_archive(adapters, "support-bot.tar.gz")
    )
    StreamingInvoker(stack, "Stream", targets=[chat, adapter])
    warnings = _warnings(stack)
    assert [w.split(":")[0] for w in warnings] == [
        "InferenceComponent 'Test/Chat'",
        "AdapterComponent 'Test/Chat/support-bot'",
    ]
    assert all("on 1 \u00d7 NVIDIA A10G (ml.g5.12xlarge)" in w for w in warnings)


def test_an_endpoint_deployed_elsewhere_is_not_estimated(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    imported = LlmEndpoint.from_endpoint_name(stack, "Legacy", "legacy-endpoint")
    StreamingInvoker(stack, "Stream", target=imported, timeout=Duration.seconds(30))
    assert _warnings(stack) == []
