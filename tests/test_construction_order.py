"""The template, and the error of a bad configuration, do not depend on the order the user
creates constructs in.

Each scenario is an example app cut to what may come in either order, built in two orders of
its steps (each step after what it needs): the two templates are byte-identical (normalized as
the committed fixtures are), and the same app with one bad value fails with the same error
text in both orders. The scenarios: the components of a shared endpoint created before or after
each other (shared-endpoint), an adapter before or after the second component (model-gateway),
a chat and an embedding component swapped under one invoker (rag), one model on its own
endpoint and as a component with an adapter, an invoker and a dashboard, and an endpoint whose
path sorts after its model's (each model renders its own SageMaker Models, whichever host comes
first), the on-call topic and the alarms before or after the model and the
dashboard (production), two invokers before or after each other (front-doors), and two
endpoints whose alarms e-mail the same addresses through one topic, swapped (their
subscriptions take ids from the addresses, never a count).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template

from constructs_llm import (
    Alarms,
    Autoscaling,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    InvokerAuth,
    LlmDashboard,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Routing,
    StreamingInvoker,
)
from constructs_llm.errors import ConstructsLlmError
from tests.conftest import cdk_context
from tests.support.synth_errors import synthesize
from tests.support.templates import normalized

#: A step builds some constructs of the app (``made`` holds what earlier steps built); ``bad``
#: asks for the scenario's bad value.
Step = Callable[[Stack, dict[str, Any], bool], None]

G5_12 = "ml.g5.12xlarge"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
QWEN = "Qwen/Qwen2.5-7B-Instruct"
LORA = {"SM_VLLM_ENABLE_LORA": "true", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"}


@dataclass(frozen=True)
class Scenario:
    """An app's steps, in one order and another (each a permutation of the steps)."""

    steps: dict[str, Step]
    #: Two orders of the steps' names (each separated by spaces).
    orders: tuple[str, str]
    #: What the bad configuration's error says (a fragment), so that each scenario's bad value
    #: is the one meant.
    error: str

    def build(self, order: str, *, bad: bool = False) -> Stack:
        names = order.split()
        assert sorted(names) == sorted(self.steps)
        stack = Stack(App(context=cdk_context()), "Order")
        made: dict[str, Any] = {}
        for name in names:
            self.steps[name](stack, made, bad)
        return stack


def _token(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["token"] = secretsmanager.Secret.from_secret_name_v2(stack, "HfToken", "hf/token")


def _hub_model(
    key: str, id: str, model_id: str, engine: Callable[[], Engine], **props: Any
) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        gated = model_id.startswith("meta-llama/")  # its weights need the token
        source = ModelSource.hugging_face(model_id, token=made["token"] if gated else None)
        made[key] = LlmModel(stack, id, source=source, engine=engine(), **props)

    return build


def _shared_endpoint(**props: Any) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        made["endpoint"] = InferenceComponentEndpoint(
            stack, "Endpoint", instance_type=G5_12, **props
        )

    return build


def _component(key: str, id: str, model: str, memory_mib: int = 32 * 1024, **props: Any) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        made[key] = InferenceComponent(
            stack,
            id,
            endpoint=made["endpoint"],
            model=made[model],
            accelerators=1,
            min_memory_mib=memory_mib,
            **props,
        )

    return build


# -- shared-endpoint: two components, each created before the other ---------------------------


def _shared_copies(key: str, id: str, model: str, scaling: Autoscaling) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        # bad: three copies each fit one 4-GPU instance alone, not together
        _component(key, id, model, copies=3 if bad else 1, autoscaling=scaling)(stack, made, bad)

    return build


def _shared_fleet(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    _shared_endpoint(min_instances=0, max_instances=1 if bad else 2)(stack, made, bad)


SHARED_ENDPOINT = Scenario(
    steps={
        "token": _token,
        "endpoint": _shared_fleet,
        "chat-model": _hub_model(
            "chat-model", "ChatModel", LLAMA, Engine.tgi, max_total_tokens=8192
        ),
        "chat": _shared_copies(
            "chat",
            "Chat",
            "chat-model",
            Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=4),
        ),
        "qwen-model": _hub_model(
            "qwen-model", "QwenModel", QWEN, Engine.tgi, max_total_tokens=8192
        ),
        "qwen": _shared_copies(
            "qwen",
            "Qwen",
            "qwen-model",
            Autoscaling(min_capacity=0, max_capacity=3, target_invocations_per_instance=1),
        ),
    },
    orders=(
        "token endpoint chat-model chat qwen-model qwen",
        "qwen-model token chat-model endpoint qwen chat",
    ),
    error="the initial copies of its components (Chat (3 x ",
)


# -- model-gateway: an adapter before or after the second component ---------------------------


def _gateway_qwen_model(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    # bad: Qwen's weights from S3, whose Model is network-isolated, beside a Hub model
    source = (
        ModelSource.s3(
            s3.Bucket.from_bucket_name(stack, "Weights", "weights"), "qwen/", model_id=QWEN
        )
        if bad
        else ModelSource.hugging_face(QWEN)
    )
    made["qwen-model"] = LlmModel(
        stack, "QwenModel", source=source, engine=Engine.lmi(), max_total_tokens=8192
    )


def _adapter(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    adapters = s3.Bucket.from_bucket_name(stack, "Adapters", "llm-adapters")
    made["adapter"] = made["llama"].add_adapter(
        "support-bot", source=ModelSource.s3_archive(adapters, "support-bot.tar.gz")
    )


def _invoker(*targets: str, **props: Any) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        made["invoker"] = StreamingInvoker(
            stack, "Gateway", targets=[made[t] for t in targets], **props
        )

    return build


MODEL_GATEWAY = Scenario(
    steps={
        "token": _token,
        "endpoint": _shared_endpoint(max_instances=2),
        "llama-model": _hub_model(
            "llama-model", "LlamaModel", LLAMA, Engine.vllm, max_total_tokens=8192, env=LORA
        ),
        "llama": _component("llama", "Llama", "llama-model", served_model_name="llama"),
        "qwen-model": _gateway_qwen_model,
        "qwen": _component("qwen", "Qwen", "qwen-model", served_model_name="qwen"),
        "adapter": _adapter,
        "invoker": _invoker("llama", "qwen", "adapter", timeout=Duration.minutes(10)),
    },
    orders=(
        "token endpoint llama-model llama qwen-model qwen adapter invoker",
        "qwen-model endpoint qwen token llama-model llama adapter invoker",
    ),
    error="components 'Order/Llama' (network_isolation=False) and 'Order/Qwen' (True)",
)


# -- rag: the chat and embedding components swapped under one invoker ------------------------


def _rag_chat_model(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    # bad: KV-aware routing (below) with chat on LMI and embeddings on TEI, neither the vLLM DLC
    engine = Engine.lmi() if bad else Engine.vllm()
    made["chat-model"] = LlmModel(
        stack,
        "ChatModel",
        source=ModelSource.hugging_face(QWEN),
        engine=engine,
        max_total_tokens=8192,
    )


def _rag_endpoint(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    routing = Routing.kv_aware() if bad else None
    _shared_endpoint(max_instances=2, routing=routing)(stack, made, bad)


def _api_keys(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["keys"] = secretsmanager.Secret.from_secret_name_v2(stack, "ApiKeys", "rag/api-keys")


def _rag_invoker(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    auth = InvokerAuth.api_keys(made["keys"])
    _invoker("chat", "embedder", auth=auth, timeout=Duration.minutes(10))(stack, made, bad)


RAG = Scenario(
    steps={
        "endpoint": _rag_endpoint,
        "chat-model": _rag_chat_model,
        "chat": _component("chat", "Chat", "chat-model", served_model_name="chat"),
        "embedding-model": _hub_model(
            "embedding-model", "EmbeddingModel", "BAAI/bge-large-en-v1.5", Engine.tei
        ),
        "embedder": _component(
            "embedder", "Embedder", "embedding-model", 4 * 1024, served_model_name="embed"
        ),
        "keys": _api_keys,
        "invoker": _rag_invoker,
    },
    orders=(
        "endpoint chat-model chat embedding-model embedder keys invoker",
        "keys embedding-model endpoint embedder chat-model chat invoker",
    ),
    error="model 'Order/ChatModel' runs Engine.lmi(), model 'Order/EmbeddingModel' runs Engine.tei()",
)


# -- one model on two hosts: its own endpoint and a component with an adapter ----------------


def _buckets(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["weights"] = s3.Bucket.from_bucket_name(stack, "Weights", "my-weights")
    made["other"] = s3.Bucket.from_bucket_name(stack, "OtherWeights", "other-weights")
    made["key"] = kms.Key(stack, "VolumeKey", enable_key_rotation=True)


def _s3_model(key: str, id: str, bucket: str, prefix: str, model_id: str, **props: Any) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        source = ModelSource.s3(made[bucket], prefix, model_id=model_id)
        made[key] = LlmModel(
            stack, id, source=source, engine=Engine.vllm(), max_total_tokens=8192, **props
        )

    return build


def _own_endpoint(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["own"] = LlmEndpoint(
        stack,
        "Own",
        model=made["llama"],
        instance_type="ml.g5.2xlarge",
        served_model_name="llama-small",
        # bad: the shared endpoint takes the same physical name (a named endpoint is not
        # autoscaled here: its fleet change would need a new name)
        autoscaling=None
        if bad
        else Autoscaling(min_capacity=1, max_capacity=2, target_concurrent_requests=8),
        endpoint_name="llama" if bad else None,
    )


def _zeta(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["zeta"] = LlmEndpoint(
        stack, "Zeta", model=made["qwen"], instance_type="ml.g5.2xlarge", alarms=False
    )


def _key_shared(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["endpoint"] = InferenceComponentEndpoint(
        stack,
        "Shared",
        instance_type="ml.p3.8xlarge",
        max_instances=2,
        kms_key=made["key"],
        endpoint_name="llama" if bad else None,
    )


def _two_gpu(key: str, id: str, model: str) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        made[key] = InferenceComponent(
            stack,
            id,
            endpoint=made["endpoint"],
            model=made[model],
            accelerators=2,
            min_memory_mib=24 * 1024,
        )

    return build


def _chat_adapter(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["adapter"] = made["chat"].add_adapter(
        "support-bot", source=ModelSource.s3_archive(made["other"], "adapters/support.tar.gz")
    )


def _hosts_dashboard(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    LlmDashboard(
        stack,
        "Dashboard",
        endpoints=[made["own"]],
        components=[made["chat"], made["coder"]],
        invokers=[made["invoker"]],
    )


TWO_HOSTS = Scenario(
    steps={
        "buckets": _buckets,
        "llama": _s3_model("llama", "Llama", "weights", "llama-3.1-8b/", LLAMA, env=LORA),
        "qwen": _s3_model("qwen", "Qwen", "other", "qwen2.5-7b/", QWEN),
        "own": _own_endpoint,
        "zeta": _zeta,
        "shared": _key_shared,
        "chat": _two_gpu("chat", "Chat", "llama"),
        "coder": _two_gpu("coder", "Coder", "qwen"),
        "adapter": _chat_adapter,
        "invoker": _invoker("own", "chat", "coder"),
        "dashboard": _hosts_dashboard,
    },
    orders=(
        "buckets llama qwen own shared chat coder adapter invoker dashboard zeta",
        "buckets shared qwen zeta coder llama chat adapter own invoker dashboard",
    ),
    error="endpoint_name 'llama' is also the name of 'Order/Own'",
)


# -- production: the on-call topic and the alarms, before or after the model ------------------


def _oncall(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    # bad: the topic encrypted with SNS's managed key, which CloudWatch cannot use
    key = (
        kms.Alias.from_alias_name(stack, "OncallKey", "alias/aws/sns")
        if bad
        else kms.Key(stack, "OncallKey", enable_key_rotation=True)
    )
    made["oncall"] = sns.Topic(stack, "Oncall", master_key=key, enforce_ssl=True)


def _production_endpoint(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["own"] = LlmEndpoint(
        stack,
        "Endpoint",
        model=made["model"],
        instance_type=G5_12,
        alarms=Alarms(model_latency=Duration.seconds(60), topic=made["oncall"]),
    )


def _slow_first_token(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    alarm = cloudwatch.Alarm(
        stack,
        "SlowFirstToken",
        metric=made["invoker"].metric_time_to_first_token(),
        threshold=5000,
        evaluation_periods=5,
    )
    alarm.add_alarm_action(actions.SnsAction(made["oncall"]))


def _endpoint_dashboard(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    LlmDashboard(stack, "Dashboard", endpoints=[made["own"]], invokers=[made["invoker"]])


PRODUCTION = Scenario(
    steps={
        "token": _token,
        "oncall": _oncall,
        "model": _hub_model("model", "Model", LLAMA, Engine.vllm, max_total_tokens=4096),
        "endpoint": _production_endpoint,
        "invoker": _invoker("own"),
        "slow-first-token": _slow_first_token,
        "dashboard": _endpoint_dashboard,
    },
    orders=(
        "token oncall model endpoint invoker slow-first-token dashboard",
        "token model oncall endpoint invoker dashboard slow-first-token",
    ),
    error="is encrypted with the AWS managed key alias/aws/sns",
)


# -- front-doors: two invokers over one endpoint, each created before the other ---------------


def _keyed_door(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    auth = InvokerAuth.api_keys(made["keys"])
    # bad: no concurrency reserved at all
    concurrency = 0 if bad else 20
    made["Keys"] = StreamingInvoker(
        stack, "Keys", target=made["own"], auth=auth, max_concurrency=concurrency
    )


def _signed_door(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["Signed"] = StreamingInvoker(stack, "Signed", target=made["own"])


def _phi3_endpoint(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    made["own"] = LlmEndpoint(stack, "Endpoint", model=made["model"])


FRONT_DOORS = Scenario(
    steps={
        "model": _hub_model(
            "model",
            "Model",
            "microsoft/Phi-3-mini-4k-instruct",
            Engine.tgi,
            instance_type="ml.g5.2xlarge",
            max_total_tokens=4096,
        ),
        "endpoint": _phi3_endpoint,
        "keys": _api_keys,
        "keyed": _keyed_door,
        "signed": _signed_door,
    },
    orders=(
        "model endpoint keys keyed signed",
        "keys model endpoint signed keyed",
    ),
    error="max_concurrency",
)


# -- e-mail: two endpoints whose alarms e-mail the same addresses through one topic -----------


def _topic(stack: Stack, made: dict[str, Any], bad: bool) -> None:
    key = kms.Key(stack, "OncallKey", enable_key_rotation=True)
    made["oncall"] = sns.Topic(stack, "Oncall", master_key=key, enforce_ssl=True)


def _alarmed(id: str, emails: list[str]) -> Step:
    def build(stack: Stack, made: dict[str, Any], bad: bool) -> None:
        LlmEndpoint(
            stack,
            id,
            model=made["model"],
            instance_type="ml.g5.2xlarge",
            alarms=Alarms(topic=made["oncall"], email=emails),
            # bad: both take the same physical name
            endpoint_name="chat" if bad else None,
        )

    return build


EMAIL = Scenario(
    steps={
        "oncall": _topic,
        "model": _hub_model("model", "Model", QWEN, Engine.vllm, max_total_tokens=4096),
        "chat": _alarmed("Chat", ["oncall@example.com", "ml@example.com"]),
        "batch": _alarmed("Batch", ["ml@example.com", "batch@example.com"]),
    },
    orders=(
        "oncall model chat batch",
        "model oncall batch chat",
    ),
    error="endpoint_name 'chat' is also the name of 'Order/Batch'",
)


SCENARIOS = {
    "shared-endpoint": SHARED_ENDPOINT,
    "model-gateway": MODEL_GATEWAY,
    "rag": RAG,
    "two-hosts": TWO_HOSTS,
    "production": PRODUCTION,
    "front-doors": FRONT_DOORS,
    "e-mail": EMAIL,
}


@functools.cache
def _templates(name: str) -> tuple[str, ...]:
    """The scenario's template in each of its two orders (each synthesized once)."""
    scenario = SCENARIOS[name]
    return tuple(
        normalized(dict(Template.from_stack(scenario.build(order)).to_json()))
        for order in scenario.orders
    )


def _error(scenario: Scenario, order: str) -> str:
    """The error of the scenario's bad configuration built in ``order``."""
    with pytest.raises(ConstructsLlmError) as raised:
        synthesize(scenario.build(order, bad=True))
    return str(raised.value)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_template_does_not_depend_on_construction_order(name: str) -> None:
    first, second = _templates(name)
    assert first == second


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_error_does_not_depend_on_construction_order(name: str) -> None:
    scenario = SCENARIOS[name]
    first, second = (_error(scenario, order) for order in scenario.orders)
    assert scenario.error in first
    assert first == second


def test_the_shared_role_reads_both_buckets_and_the_adapter() -> None:
    # the case that used to differ: the shared endpoint's role reads each component's weights
    # (its default policy, and the WeightsPrefix policies of the models, attached to it)
    template = json.loads(_templates("two-hosts")[0])
    (role,) = [
        k
        for k, v in template["Resources"].items()
        if k.startswith("SharedRole") and v["Type"] == "AWS::IAM::Role"
    ]
    statements = json.dumps(
        [
            resource["Properties"]["PolicyDocument"]["Statement"]
            for resource in template["Resources"].values()
            if resource["Type"] == "AWS::IAM::Policy"
            and {"Ref": role} in resource["Properties"]["Roles"]
        ]
    )
    for read in ("my-weights/llama-3.1-8b/*", "other-weights/qwen2.5-7b/*", "support.tar.gz"):
        assert read in statements


def test_each_model_renders_the_models_of_its_placements_in_its_own_scope() -> None:
    # THEN every SageMaker Model is its model's, one per placement served, whether its hosts'
    # paths sort before the model's (Chat, Coder) or after it (Own, Shared, Zeta)
    template = json.loads(_templates("two-hosts")[0])
    models = {  # the logical id without its hash: the Model's path under the stack
        logical_id[:-8]: logical_id
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::SageMaker::Model"
    }
    assert sorted(models) == [
        "LlamaG52xlarge",
        "LlamaP38xlarge2Devices",
        "QwenG52xlarge",
        "QwenP38xlarge2Devices",
    ]
    # AND each host names its model's Model for its placement
    named = {
        logical_id: resource["Properties"]["ProductionVariants"][0]["ModelName"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::SageMaker::EndpointConfig"
        and "ModelName" in resource["Properties"]["ProductionVariants"][0]
    }
    assert sorted(named.values(), key=json.dumps) == [
        {"Fn::GetAtt": [models["LlamaG52xlarge"], "ModelName"]},
        {"Fn::GetAtt": [models["QwenG52xlarge"], "ModelName"]},
    ]
