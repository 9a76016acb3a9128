"""Vision: image parts reach the engine (chat's ``image_url``, Responses' ``input_image``), a
phone photo fits the default request size, a model the model table knows as text-only gets a
400 saying so, and ``StreamingInvoker(max_request_bytes=...)`` sets the runtime's limit."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Any

import openai
import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from openai.types.chat import ChatCompletionMessageParam

from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource, StreamingInvoker
from constructs_llm.contract import DEFAULT_MAX_REQUEST_BYTES, EngineName
from tests.matrix.builders import G5
from tests.streaming.conftest import MODEL, SOCKET_TIMEOUT, Runtime, StartRuntime
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario

#: A 3 MB vision request: a photo of about 2.2 MB as a JPEG data URL.
PHOTO = "data:image/jpeg;base64," + base64.b64encode(os.urandom(2_250_000)).decode()


def sdk(runtime: Runtime) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=runtime.url + "/v1", api_key="unused", timeout=SOCKET_TIMEOUT, max_retries=0
    )


def ask(url: str) -> list[ChatCompletionMessageParam]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in the picture?"},
                {"type": "image_url", "image_url": {"url": url, "detail": "high"}},
            ],
        }
    ]


def test_a_3_mb_vision_request_reaches_the_engine_whole(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(engine=EngineName.VLLM)
    fake.enqueue(Scenario(parts=engine_streams.openai(["A cat."])))
    completion = sdk(runtime).chat.completions.create(model=MODEL, messages=ask(PHOTO))
    assert completion.choices[0].message.content == "A cat."
    assert len(fake.requests[0].body) > 3_000_000
    part = fake.requests[0].json()["messages"][0]["content"][1]
    assert part == {"type": "image_url", "image_url": {"url": PHOTO, "detail": "high"}}
    assert runtime.settings.max_body_bytes == DEFAULT_MAX_REQUEST_BYTES


def test_responses_input_images_become_chat_image_parts(
    start_runtime: StartRuntime, fake: FakeSageMaker
) -> None:
    runtime = start_runtime(engine=EngineName.VLLM)
    fake.enqueue(Scenario(parts=engine_streams.openai(["A cat."])))
    response = sdk(runtime).responses.create(
        model=MODEL,
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is in the picture?"},
                    {"type": "input_image", "image_url": PHOTO, "detail": "low"},
                ],
            }
        ],
    )
    assert response.output_text == "A cat."
    content = fake.requests[0].json()["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "What is in the picture?"},
        {"type": "image_url", "image_url": {"url": PHOTO, "detail": "low"}},
    ]


def test_a_stored_file_cannot_be_read(start_runtime: StartRuntime, fake: FakeSageMaker) -> None:
    runtime = start_runtime()
    with pytest.raises(openai.BadRequestError) as refused:
        sdk(runtime).responses.create(
            model=MODEL,
            input=[
                {
                    "role": "user",
                    "content": [{"type": "input_image", "file_id": "file-1", "detail": "auto"}],
                }
            ],
        )
    assert "stored with OpenAI" in refused.value.message
    assert fake.requests == []


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_text_only_model_refuses_images_saying_so(
    start_runtime: StartRuntime, fake: FakeSageMaker, api: str
) -> None:
    runtime = start_runtime(vision=False)
    with pytest.raises(openai.BadRequestError) as refused:
        if api == "chat":
            sdk(runtime).chat.completions.create(model=MODEL, messages=ask(PHOTO[:100]))
        else:
            sdk(runtime).responses.create(
                model=MODEL,
                input=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "input_image",
                                "image_url": "https://x/y.png",
                                "detail": "auto",
                            }
                        ],
                    }
                ],
            )
    assert "this model takes no images" in refused.value.message
    assert fake.requests == []


def test_a_body_over_the_limit_gets_413(start_runtime: StartRuntime) -> None:
    runtime = start_runtime(max_body_bytes=1_000_000)
    with pytest.raises(openai.APIStatusError) as refused:
        sdk(runtime).chat.completions.create(model=MODEL, messages=ask(PHOTO))
    assert refused.value.status_code == 413


# -- the construct -------------------------------------------------------------------------


def _invoker(stack: Stack, hub_id: str, **props: Any) -> dict[str, Any]:
    model = LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(hub_id, needs_token=False),
        engine=Engine.vllm(),
        instance_type="ml.g5.12xlarge" if "27b" in hub_id else G5,
        max_total_tokens=8192,
    )
    StreamingInvoker(stack, "Stream", target=LlmEndpoint(stack, "Endpoint", model=model), **props)
    (function,) = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return variables


def test_the_invoker_says_which_models_take_no_images(new_stack: Callable[..., Stack]) -> None:
    # a text-only model the table knows; a vision model; a model the table does not know
    assert _invoker(new_stack(), "Qwen/Qwen2.5-7B-Instruct")["VISION"] == "off"
    assert "VISION" not in _invoker(new_stack(), "google/gemma-3-4b-it")
    assert "VISION" not in _invoker(new_stack(), "acme/private-model-7b")


def test_max_request_bytes_reaches_the_runtime_only_when_it_is_not_the_default(
    new_stack: Callable[..., Stack],
) -> None:
    env = _invoker(new_stack(), "Qwen/Qwen2.5-7B-Instruct", max_request_bytes=6_000_000)
    assert env["MAX_BODY_BYTES"] == "6000000"
    assert "MAX_BODY_BYTES" not in _invoker(new_stack(), "Qwen/Qwen2.5-7B-Instruct")
