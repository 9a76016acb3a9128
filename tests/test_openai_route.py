"""SageMaker's own OpenAI route: the base URL OpenAI clients use, the grant their callers need,
and the synth-time check that the engine answers Chat Completions on that route."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    ContainerImage,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    RequestFormat,
    StreamFormat,
    Variant,
)
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.errors import ConfigurationError
from constructs_llm.hosting.openai_route import openai_route_support
from tests.conftest import cdk_context

QWEN = "Qwen/Qwen2.5-7B-Instruct"
IMAGE = ContainerImage.from_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/mine:1")


def _endpoint(stack: Stack, engine: Engine, id: str = "Endpoint", **props: Any) -> LlmEndpoint:
    model = LlmModel(
        stack,
        f"{id}Model",
        source=ModelSource.hugging_face(QWEN),
        engine=engine,
        instance_type="ml.g5.2xlarge",
    )
    return LlmEndpoint(stack, id, model=model, **props)


def _component(stack: Stack, engine: Engine | None = None) -> InferenceComponent:
    shared = InferenceComponentEndpoint(
        stack, "Shared", instance_type="ml.g5.12xlarge", min_instances=1, max_instances=1
    )
    model = LlmModel(
        stack, "ChatModel", source=ModelSource.hugging_face(QWEN), engine=engine or Engine.vllm()
    )
    return InferenceComponent(
        stack,
        "Chat",
        endpoint=shared,
        model=model,
        accelerators=1,
        min_memory_mib=16 * 1024,
        inference_component_name="chat-qwen",
    )


BEARER = "sagemaker:CallWithBearerToken"
#: As AWS's guide grants it ("Invoke endpoints with OpenAI-compatible APIs", IAM permissions):
#: on "*", with no condition.
_TOKEN = {"Action": BEARER, "Effect": "Allow", "Resource": "*"}


def _caller(stack: Stack) -> iam.Role:
    return iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())


def _statements(stack: Stack, role: iam.Role) -> list[dict[str, Any]]:
    role_id = stack.get_logical_id(role.node.default_child)  # type: ignore[arg-type]
    policies = Template.from_stack(stack).find_resources("AWS::IAM::Policy")
    found: list[dict[str, Any]] = []
    for policy in policies.values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def _url(stack: Stack, value: str) -> Any:
    return stack.resolve(value)


# -- the base URL -----------------------------------------------------------------------------


def test_endpoint_base_url_names_the_runtime_host_of_the_partition_and_the_endpoint(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint = _endpoint(stack, Engine.vllm())
    endpoint_id = stack.get_logical_id(endpoint.resource)
    assert _url(stack, endpoint.openai_base_url) == {
        "Fn::Join": [
            "",
            [
                "https://runtime.sagemaker.",
                {"Ref": "AWS::Region"},
                ".",
                {"Ref": "AWS::URLSuffix"},
                "/endpoints/",
                {"Fn::GetAtt": [endpoint_id, "EndpointName"]},
                "/openai/v1",
            ],
        ]
    }


def test_a_stack_with_a_region_gets_that_region_in_the_url(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(region="eu-west-1")
    existing = LlmEndpoint.from_endpoint_attributes(
        stack, "Existing", endpoint_name="chat-qwen", engine=Engine.vllm()
    )
    assert _url(stack, existing.openai_base_url) == {
        "Fn::Join": [
            "",
            [
                "https://runtime.sagemaker.eu-west-1.",
                {"Ref": "AWS::URLSuffix"},
                "/endpoints/chat-qwen/openai/v1",
            ],
        ]
    }


def test_component_base_url_selects_the_component_by_path(
    new_stack: Callable[..., Stack],
) -> None:
    # AWS's sample: .../endpoints/<endpoint>/inference-components/<component>/openai/v1
    stack = new_stack()
    chat = _component(stack)
    endpoint_id = stack.get_logical_id(chat.endpoint.resource)
    joined = _url(stack, chat.openai_base_url)["Fn::Join"][1]
    assert joined[-2:] == [
        {"Fn::GetAtt": [endpoint_id, "EndpointName"]},
        "/inference-components/chat-qwen/openai/v1",
    ]
    assert joined[0] == "https://runtime.sagemaker."


# -- the grant --------------------------------------------------------------------------------


def test_grant_openai_allows_invoke_on_this_endpoint_and_bearer_tokens(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint = _endpoint(stack, Engine.vllm())
    caller = _caller(stack)
    endpoint.grant_openai(caller)
    assert sorted(_statements(stack, caller), key=lambda s: s["Action"]) == [
        _TOKEN,
        {
            "Action": "sagemaker:InvokeEndpoint",
            "Effect": "Allow",
            "Resource": {"Ref": stack.get_logical_id(endpoint.resource)},
        },
    ]


def test_the_bearer_token_statement_has_no_condition_and_a_policy_of_its_own(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a stack with its account (CallWithBearerToken takes no resource, AWS's guide)
    stack = new_stack(region="us-east-1")
    caller = _caller(stack)
    # WHEN a caller is granted the route
    endpoint = _endpoint(stack, Engine.vllm())
    endpoint.grant_openai(caller)
    # THEN the token action carries no condition the guide does not document (a key absent
    # from the request context, such as aws:ResourceAccount, would deny every call)
    (token,) = [s for s in _statements(stack, caller) if s["Action"] == BEARER]
    assert "Condition" not in token
    # and it sits alone in a policy of the endpoint's, attached to the caller's role
    policy = endpoint.node.find_child("BearerTokenCalls")
    document = stack.resolve(policy.document.to_json())  # type: ignore[attr-defined]
    assert document["Statement"] == [_TOKEN]
    role_id = stack.get_logical_id(caller.node.default_child)  # type: ignore[arg-type]
    resource = Template.from_stack(stack).to_json()["Resources"]
    policy_id = stack.get_logical_id(policy.node.default_child)  # type: ignore[arg-type]
    assert resource[policy_id]["Properties"]["Roles"] == [{"Ref": role_id}]


def test_grant_openai_on_a_component_names_its_endpoint_and_the_component(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    chat = _component(stack)
    caller = _caller(stack)
    chat.grant_openai(caller)
    token, invoke = sorted(_statements(stack, caller), key=lambda s: s["Action"])
    assert invoke["Action"] == "sagemaker:InvokeEndpoint"
    assert sorted(map(str, invoke["Resource"])) == sorted(
        map(
            str,
            [
                {"Ref": stack.get_logical_id(chat.endpoint.resource)},
                {"Fn::GetAtt": [stack.get_logical_id(chat.resource), "InferenceComponentArn"]},
            ],
        )
    )
    assert token == _TOKEN


def test_grant_openai_on_an_imported_endpoint_uses_its_arn(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    existing = LlmEndpoint.from_endpoint_attributes(
        stack, "Existing", endpoint_name="Chat-Qwen", engine=Engine.sglang()
    )
    caller = _caller(stack)
    existing.grant_openai(caller)
    (invoke,) = [s for s in _statements(stack, caller) if s["Action"] != BEARER]
    assert invoke["Resource"]["Fn::Join"][1][-1] == ":endpoint/chat-qwen"


def _nag_app(tmp_path: Path) -> tuple[App, Stack]:
    from cdk_nag import AwsSolutionsChecks

    app = App(outdir=str(tmp_path), context=cdk_context())
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, Stack(app, "Nag")


def test_the_bearer_token_wildcard_is_acknowledged_for_cdk_nag(tmp_path: Path) -> None:
    # GIVEN an app that runs cdk-nag (as app.py does) and a caller granted the route
    app, stack = _nag_app(tmp_path)
    _endpoint(stack, Engine.vllm()).grant_openai(_caller(stack))
    # THEN the synth passes: the Resource::* finding carries its reason
    app.synth()


def test_a_wildcard_the_callers_owner_adds_is_still_flagged(tmp_path: Path) -> None:
    # GIVEN a caller granted the route, whose owner then adds a wildcard of their own
    app, stack = _nag_app(tmp_path)
    caller = _caller(stack)
    _endpoint(stack, Engine.vllm()).grant_openai(caller)
    caller.add_to_policy(
        iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=["*"])
    )
    # THEN cdk-nag flags it on the caller's own policy: the route's acknowledgment sits on the
    # route's policy alone, not on the caller
    with pytest.raises(RuntimeError, match=r"Caller/DefaultPolicy/Resource[\s\S]*IAM5"):
        app.synth()


def test_the_same_statement_without_the_acknowledgment_fails_cdk_nag(tmp_path: Path) -> None:
    # The control: cdk-nag does flag the wildcard, so the test above proves the acknowledgment.
    app, stack = _nag_app(tmp_path)
    _endpoint(stack, Engine.vllm())
    _caller(stack).add_to_policy(
        iam.PolicyStatement(actions=["sagemaker:CallWithBearerToken"], resources=["*"])
    )
    with pytest.raises(RuntimeError, match=r"AwsSolutions-IAM5"):
        app.synth()


# -- the engine check -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "served"),
    [
        (Engine.vllm(), True),
        (Engine.sglang(), True),
        (Engine.tgi(), None),
        (Engine.tgi_neuronx(), None),
        (Engine.lmi(), False),
        (Engine.lmi("trtllm"), False),
        (Engine.tei(), False),
        (Engine.custom(image=IMAGE, stream_format=StreamFormat.OPENAI), None),
        (Engine.custom(image=IMAGE, stream_format=StreamFormat.AUTO), None),
        (Engine.custom(image=IMAGE, stream_format="openai", request_format="generate"), False),
    ],
    ids=lambda value: repr(value) if isinstance(value, bool | None) else value.name,
)
def test_which_engines_answer_on_the_route(engine: Engine, served: bool | None) -> None:
    # AWS's guide: the container must implement /v1/chat/completions and stream SSE; it lists
    # the vLLM and SGLang DLCs and custom containers that implement the OpenAI paths
    support = openai_route_support(engine.request_format, engine.chat_completions_path)
    assert support.served is served
    assert (support.message is None) is (served is True)
    if served is not True and engine.request_format is not RequestFormat.EMBED:
        assert "/v1/chat/completions" in (support.message or "")  # the path the route calls


def test_a_vllm_endpoint_gets_no_warning(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    endpoint = _endpoint(stack, Engine.vllm())
    endpoint.grant_openai(_caller(stack))
    warnings = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    assert [w for w in warnings if "OpenAI route" in str(w.entry.data)] == []


def test_lmi_fails_naming_the_contract_and_the_doors_that_work(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an LMI endpoint: DJL Serving answers /v1/chat/completions, streaming JSON lines
    stack = new_stack()
    endpoint = _endpoint(stack, Engine.lmi())
    # WHEN the route is asked for, THEN it fails, naming the contract and the fixes
    for use in (lambda: endpoint.openai_base_url, lambda: endpoint.grant_openai(_caller(stack))):
        with pytest.raises(ConfigurationError) as error:
            use()
        message = str(error.value)
        assert "LlmEndpoint '" in message and "server-sent events" in message
        assert "JSON lines" in message and "does not list it" in message
        assert "Engine.vllm()" in message and "StreamingInvoker" in message


def test_tgi_warns_that_aws_does_not_list_it(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a TGI endpoint: its router implements the path, but AWS's guide does not list TGI
    stack = new_stack()
    endpoint = _endpoint(stack, Engine.tgi())
    endpoint.grant_openai(_caller(stack))
    assert endpoint.openai_base_url  # a second use adds no second warning
    annotations = Annotations.from_stack(stack)
    warnings = annotations.find_warning("/Test/Endpoint", Match.string_like_regexp("OpenAI route"))
    assert len(warnings) == 1
    message = str(warnings[0].entry.data)
    assert "[ack: constructs-llm:openai-route-unlisted]" in message
    assert "POST /v1/chat/completions" in message and "lists the vLLM and SGLang DLCs" in message
    assert "staging endpoint" in message


def test_a_custom_image_warns_that_its_contract_is_not_known(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an image of the user's that streams OpenAI chunks on /invocations
    stack = new_stack()
    endpoint = _endpoint(stack, Engine.custom(image=IMAGE, stream_format=StreamFormat.OPENAI))
    endpoint.grant_openai(_caller(stack))
    # THEN the route, which calls /v1/chat/completions instead, is a warning to verify
    Annotations.from_stack(stack).has_warning(
        "/Test/Endpoint",
        Match.string_like_regexp(
            r"POST /v1/chat/completions.*acknowledge.*constructs-llm:openai-route-unknown"
        ),
    )


def test_variants_of_several_engines_get_the_least_served(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN variants on vLLM and TGI: a request may reach either
    stack = new_stack()
    vllm, tgi = (
        LlmModel(stack, id, source=ModelSource.hugging_face(QWEN), engine=engine)
        for id, engine in (("Vllm", Engine.vllm()), ("Tgi", Engine.tgi()))
    )
    both = LlmEndpoint(
        stack,
        "Both",
        variants=[
            Variant(model=vllm, instance_type="ml.g5.2xlarge"),
            Variant(model=tgi, instance_type="ml.g5.2xlarge"),
        ],
    )
    assert both.chat_completions_path is ChatCompletionsPath.UNLISTED


def test_an_imported_endpoint_without_its_engine_warns_that_it_is_not_known(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    existing = LlmEndpoint.from_endpoint_name(stack, "Existing", "chat-qwen")
    existing.grant_openai(_caller(stack))
    Annotations.from_stack(stack).has_warning(
        "/Test/Existing", Match.string_like_regexp("constructs-llm:openai-route-unknown")
    )


def test_a_generate_only_container_fails_naming_the_fix(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    engine = Engine.custom(image=IMAGE, stream_format="tgi", request_format="generate")
    endpoint = _endpoint(stack, engine)
    with pytest.raises(ConfigurationError, match=r"LlmEndpoint '.*Endpoint'.*generate") as error:
        endpoint.grant_openai(_caller(stack))
    assert "StreamingInvoker" in str(error.value) and "Engine.vllm()" in str(error.value)
    with pytest.raises(ConfigurationError, match="RequestFormat.GENERATE"):
        _ = endpoint.openai_base_url


def test_a_component_is_checked_with_its_own_engine(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    chat = _component(stack, Engine.tgi())
    assert chat.openai_base_url
    chat.grant_openai(_caller(stack))
    Annotations.from_stack(stack).has_warning(
        "/Test/Chat", Match.string_like_regexp("constructs-llm:openai-route-unlisted")
    )
    assert chat.request_format is RequestFormat.MESSAGES


def test_reading_the_base_url_adds_nothing(new_stack: Callable[..., Stack]) -> None:
    # GIVEN a TGI endpoint, which the route serves unverified by AWS
    stack = new_stack()
    endpoint = _endpoint(stack, Engine.tgi())
    # WHEN only its base URL is read (a getter)
    assert endpoint.openai_base_url
    # THEN no warning is added: grant_openai, which every caller of the route needs, warns
    warnings = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    assert [w for w in warnings if "OpenAI route" in str(w.entry.data)] == []


def test_the_route_of_an_asynchronous_endpoint_fails_naming_both_features(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an asynchronous vLLM endpoint (vLLM answers on the route when real-time)
    from aws_cdk import aws_s3 as s3

    from constructs_llm import AsyncInference

    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "Jobs", "jobs")
    endpoint = _endpoint(
        stack, Engine.vllm(), async_inference=AsyncInference(output=bucket), alarms=False
    )
    # WHEN the route is asked for, THEN both features, the fix and the AWS pages are named
    both = (
        r"openai_base_url and grant_openai\(\) with async_inference=AsyncInference\(...\): "
        r".*real-time endpoints.*grant_invoke_async\(\).*"
        r"async-inference.html.*realtime-endpoints-openai-compatible.html"
    )
    with pytest.raises(ConfigurationError, match=both):
        _ = endpoint.openai_base_url
    with pytest.raises(ConfigurationError, match=both):
        endpoint.grant_openai(_caller(stack))


def test_every_host_of_the_route_builds_its_own() -> None:
    """``OffersOpenAiRoute`` reads the route a host builds in ``_openai_route``; a host that
    inherits the base's hook instead would raise only when a user asks for the URL."""
    from constructs_llm import ImportedEndpoint
    from constructs_llm.hosting.openai_route import OffersOpenAiRoute

    hosts = set(OffersOpenAiRoute.__subclasses__())
    assert hosts == {LlmEndpoint, InferenceComponent, ImportedEndpoint}
    assert [h.__name__ for h in hosts if "_openai_route" not in vars(h)] == []
