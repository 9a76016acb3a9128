"""Bad gateways: invokers of several models, LoRA adapters, endpoint variants and served model
names."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import Duration, Environment, Fn, Stack
from aws_cdk import aws_certificatemanager as acm
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3

from constructs_llm import (
    AsyncInference,
    Engine,
    InferenceComponent,
    LlmEndpoint,
    ModelSource,
    RequestFormat,
    StreamingInvoker,
    Variant,
)
from constructs_llm.errors import ConfigurationError, ScalingError
from tests.matrix.builders import (
    EBS_ONLY,
    G5,
    G5_4GPU,
    app_of,
    bucket,
    component,
    custom,
    endpoint,
    ic_endpoint,
    invoker,
    model,
    scaling,
)

LORA_ENV = {"SM_VLLM_ENABLE_LORA": "true", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"}
ARCHIVE = "adapters/support-bot.tar.gz"


def lora_component(s: Stack, **model_props: Any) -> InferenceComponent:
    """A Llama-3-8B component on the vLLM DLC, adapters on unless ``env`` says otherwise."""
    model_props.setdefault("env", LORA_ENV)
    model_props.setdefault("engine", Engine.vllm())
    return component(s, accelerators=1, model_props={"max_total_tokens": 8192, **model_props})


def adapter(s: Stack, name: str = "support-bot", **model_props: Any) -> object:
    base = lora_component(s, **model_props)
    return base.add_adapter(name, source=ModelSource.s3_archive(bucket(s), ARCHIVE))


def two_components(s: Stack, **second: Any) -> list[InferenceComponent]:
    shared = ic_endpoint(s)
    served = model(s, instance_type=G5_4GPU, bound=False)
    return [
        InferenceComponent(
            s, "Chat", endpoint=shared, model=served, accelerators=1, min_memory_mib=1024
        ),
        InferenceComponent(
            s, "Chat2", endpoint=shared, model=served, accelerators=1, min_memory_mib=1024, **second
        ),
    ]


def _in_another_stack(s: Stack) -> object:
    other = Stack(app_of(s), "Models")
    return StreamingInvoker(s, "Stream", targets=[endpoint(other)])


def _component_in_another_stack(s: Stack) -> object:
    return StreamingInvoker(s, "Stream", target=component(Stack(app_of(s), "Models")))


def _too_many_for_lambda_env(s: Stack) -> object:
    imported = [
        LlmEndpoint.from_endpoint_name(s, f"Ep{i}", f"endpoint-{i:02d}-" + "x" * 50)
        for i in range(20)
    ]
    return StreamingInvoker(s, "Stream", targets=imported)


#: An ACM certificate as CloudFront takes it (us-east-1).
CERTIFICATE_ARN = (
    "arn:aws:acm:us-east-1:123456789012:certificate/1234abcd-12ab-34cd-56ef-1234567890ab"
)


def distribution(s: Stack, certificate_arn: str | None = CERTIFICATE_ARN, **props: Any) -> object:
    """A public IAM invoker's distribution with an imported certificate (none for ``None``)."""
    if certificate_arn is not None:
        props["certificate"] = acm.Certificate.from_certificate_arn(s, "Cert", certificate_arn)
    return invoker(s).add_distribution(public=True, **props)


def _certificate_requested_in_frankfurt(s: Stack) -> object:
    stack = Stack(app_of(s), "Frankfurt", env=Environment(region="eu-central-1"))
    requested = acm.Certificate(stack, "Cert", domain_name="llm.example.com")
    return invoker(s).add_distribution(
        public=True, certificate=requested, domain_names=["llm.example.com"]
    )


def variants(s: Stack, *specs: Variant, **props: Any) -> LlmEndpoint:
    return LlmEndpoint(s, "AB", variants=list(specs), **props)


def two_models(s: Stack) -> tuple[Any, Any]:
    return model(s, id="A", bound=False), model(s, id="B", bound=False)


def batch_api(s: Stack, **props: Any) -> object:
    """An invoker's Batch API with ``props``."""
    return invoker(s).add_batch_api(**props)


def async_endpoint(
    s: Stack, id: str = "Overnight", *, stack: Stack | None = None, **model_props: Any
) -> LlmEndpoint:
    """An asynchronous endpoint of a model of its own (the invoker's by default)."""
    where = stack or s
    served = model(where, id=f"{id}Model", bound=False, **model_props)
    answers = s3.Bucket.from_bucket_name(where, f"{id}Answers", "answers")
    return LlmEndpoint(where, id, model=served, async_inference=AsyncInference(output=answers))


def _batch_api_twice(s: Stack) -> object:
    front = invoker(s)
    front.add_batch_api()
    return front.add_batch_api()


BAD_GATEWAY = [
    pytest.param(
        lambda s: invoker(
            s,
            adapter_layer=lambda_.LayerVersion.from_layer_version_arn(
                s, "Layer", "arn:aws:lambda:us-east-1:753240598075:layer:LambdaAdapterLayerX86:28"
            ),
        ),
        ConfigurationError,
        r"adapter_layer '.*LambdaAdapterLayerX86:28' is the Lambda Web Adapter built for x86_64, "
        r"but the function is arm64 \(the default\); pass "
        r"architecture=lambda_\.Architecture\.X86_64",
        "adapter_layer",
        id="invoker-adapter-layer-of-another-architecture",
    ),
    # StreamingInvoker.add_batch_api(...)
    pytest.param(
        lambda s: batch_api(s, max_concurrency=0),
        ConfigurationError,
        r"max_concurrency must be an integer >= 1, got 0",
        "max_concurrency",
        id="batch-concurrency-zero",
    ),
    pytest.param(
        lambda s: batch_api(s, max_concurrency=20_000),
        ConfigurationError,
        r"max_concurrency must be at most 10,000 \(a distributed map's most child executions",
        "max_concurrency",
        id="batch-concurrency-above-the-map",
    ),
    pytest.param(
        lambda s: batch_api(s, retention=Duration.hours(2)),
        ConfigurationError,
        r"retention must be between 1 day and 10 years, got 7200 s; S3 expires objects",
        "retention",
        id="batch-retention-under-a-day",
    ),
    pytest.param(
        lambda s: batch_api(s, completion_window=Duration.minutes(10)),
        ConfigurationError,
        r"completion_window must be between 1 hour and 1 year, got 600 s",
        "completion_window",
        id="batch-window-under-an-hour",
    ),
    pytest.param(
        lambda s: batch_api(s, completion_window=24),
        ConfigurationError,
        r"completion_window must be a Duration, got 24",
        "completion_window",
        id="batch-window-not-a-duration",
    ),
    pytest.param(
        lambda s: batch_api(s, bucket="my-bucket"),
        ConfigurationError,
        r"bucket must be an s3.IBucket, got 'my-bucket'",
        "bucket",
        id="batch-bucket-as-a-name",
    ),
    pytest.param(
        lambda s: batch_api(
            s, bucket=bucket(s), access_logs=s3.Bucket.from_bucket_name(s, "Logs", "logs")
        ),
        ConfigurationError,
        r"access_logs applies to the bucket add_batch_api makes",
        "access_logs",
        id="batch-access-logs-with-own-bucket",
    ),
    pytest.param(
        lambda s: batch_api(
            s, async_targets=[LlmEndpoint(s, "Live", model=model(s, id="LiveModel", bound=False))]
        ),
        ConfigurationError,
        r"async_targets\[0\] must be an LlmEndpoint with async_inference=AsyncInference\(\.\.\.\), "
        r"got LlmEndpoint .*; give real-time targets to the StreamingInvoker itself",
        "async_targets",
        id="batch-async-target-real-time",
    ),
    pytest.param(
        lambda s: batch_api(s, async_targets=async_endpoint(s)),
        ConfigurationError,
        r"async_targets must be a list of asynchronous LlmEndpoints, got LlmEndpoint "
        r"'Test/Overnight'",
        "async_targets",
        id="batch-async-targets-not-a-list",
    ),
    pytest.param(
        lambda s: batch_api(s, async_targets=[async_endpoint(s)]),
        ConfigurationError,
        r"async_targets\[0\] .*Overnight.* serves the model name .*, as .*Endpoint.* does; "
        r"pass served_model_name=\.\.\. to one of them",
        "async_targets",
        id="batch-async-target-name-taken",
    ),
    pytest.param(
        lambda s: batch_api(
            s,
            async_targets=[
                async_endpoint(
                    s,
                    engine=Engine.tei(),
                    source=ModelSource.hugging_face("BAAI/bge-large-en-v1.5"),
                )
            ],
        ),
        ConfigurationError,
        r"async_targets\[0\] .* serves an embedding model; asynchronous targets serve "
        r"/v1/chat/completions batches only",
        "async_targets",
        id="batch-async-target-embedding",
    ),
    pytest.param(
        lambda s: batch_api(
            s, async_targets=[async_endpoint(s, stack=Stack(s.node.scope, "Other"))]
        ),
        ConfigurationError,
        r"async_targets\[0\] .* is in stack 'Other', the invoker in '.*'; put them in one stack",
        "async_targets",
        id="batch-async-target-other-stack",
    ),
    pytest.param(
        _batch_api_twice,
        ConfigurationError,
        r"already has a Batch API; call add_batch_api\(\) once",
        "add_batch_api",
        id="batch-api-twice",
    ),
    # StreamingInvoker.add_distribution(certificate=..., domain_names=...)
    pytest.param(
        lambda s: distribution(s),
        ConfigurationError,
        r"certificate=\.\.\. needs domain_names=\[\.\.\.\], the names it covers",
        "certificate",
        id="distribution-certificate-without-domain-names",
    ),
    pytest.param(
        lambda s: distribution(s, None, domain_names=["llm.example.com"]),
        ConfigurationError,
        r"domain_names=\.\.\. need certificate=\.\.\. \(an ACM certificate in us-east-1",
        "certificate",
        id="distribution-domain-names-without-certificate",
    ),
    pytest.param(
        lambda s: distribution(
            s, CERTIFICATE_ARN.replace("us-east-1", "eu-west-1"), domain_names=["llm.example.com"]
        ),
        ConfigurationError,
        r"CloudFront takes ACM certificates from us-east-1 only, but its ARN "
        r"'arn:aws:acm:eu-west-1:.*' is in 'eu-west-1'; request the certificate in us-east-1",
        "certificate",
        id="distribution-certificate-outside-us-east-1",
    ),
    pytest.param(
        _certificate_requested_in_frankfurt,
        ConfigurationError,
        r"CloudFront takes ACM certificates from us-east-1 only, but it is requested in a "
        r"stack in 'eu-central-1'",
        "certificate",
        id="distribution-certificate-requested-in-another-region",
    ),
    pytest.param(
        lambda s: distribution(s, domain_names=["https://llm.example.com/v1"]),
        ConfigurationError,
        r"domain_names\[0\] must be a DNS name .* got 'https://llm.example.com/v1'; did you "
        r"mean 'llm.example.com'\?",
        "domain_names[0]",
        id="distribution-domain-name-with-a-scheme",
    ),
    pytest.param(
        lambda s: distribution(s, domain_names=[7]),
        ConfigurationError,
        r"domain_names\[0\] must be a DNS name .* got int 7",
        "domain_names[0]",
        id="distribution-domain-name-not-a-string",
    ),
    pytest.param(
        lambda s: distribution(s, domain_names=["llm.example.com", "llm.example.com"]),
        ConfigurationError,
        r"domain_names lists 'llm.example.com' more than once",
        "domain_names",
        id="distribution-domain-name-twice",
    ),
    # StreamingInvoker(max_request_bytes=...)
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", target=endpoint(s), max_request_bytes=8_000_000),
        ConfigurationError,
        r"max_request_bytes must be between 1,024 and 6,291,456 \(the function URL's 6 MB "
        r"request payload limit.*got 8,000,000",
        "max_request_bytes",
        id="invoker-max-request-bytes-above-the-function-url-limit",
    ),
    # StreamingInvoker(reasoning_field=...)
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", target=endpoint(s), reasoning_field="thinking"),
        ConfigurationError,
        r"reasoning_field must be one of ReasoningField.REASONING \('reasoning'\), "
        r"ReasoningField.REASONING_CONTENT \('reasoning_content'\), ReasoningField.BOTH "
        r"\('both'\), got 'thinking'; .*ReasoningField.REASONING_CONTENT for clients that read "
        r"only the older name",
        "reasoning_field",
        id="invoker-reasoning-field-unknown",
    ),
    # StreamingInvoker(capacity_wait=...)
    pytest.param(
        lambda s: StreamingInvoker(
            s,
            "Stream",
            target=endpoint(s),
            capacity_wait=300,  # type: ignore[arg-type]
        ),
        ConfigurationError,
        r"capacity_wait must be a Duration, got 300; use Duration.minutes",
        "capacity_wait",
        id="invoker-capacity-wait-not-a-duration",
    ),
    pytest.param(
        lambda s: StreamingInvoker(
            s,
            "Stream",
            target=endpoint(s),
            timeout=Duration.minutes(5),
            capacity_wait=Duration.minutes(5),
        ),
        ConfigurationError,
        r"capacity_wait must be between 1 s and the timeout less 30 s \(270 s\), got 300 s; a "
        r"request held while its inference component wakes must still have time to be "
        r"answered within the function's timeout; lower capacity_wait= or raise timeout=",
        "capacity_wait",
        id="invoker-capacity-wait-not-shorter-than-the-timeout",
    ),
    # StreamingInvoker(targets=[...])
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", targets=[]),
        ConfigurationError,
        r"targets must hold at least one endpoint or component, got \[\]",
        "targets",
        id="invoker-targets-empty",
    ),
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", targets=two_components(s)),
        ConfigurationError,
        r"targets serve the model name 'meta-llama/Meta-Llama-3-8B-Instruct' 2 times "
        r"\(InferenceComponent 'Test/Chat', InferenceComponent 'Test/Chat2'\); pass "
        r"served_model_name=\.\.\.",
        "served_model_name",
        id="invoker-targets-repeat-a-model-name",
    ),
    pytest.param(
        _in_another_stack,
        ConfigurationError,
        r"targets\[0\] LlmEndpoint 'Models/Endpoint' is in stack 'Models', the invoker in "
        r"'Test'; import it into this stack with LlmEndpoint\.from_endpoint_attributes",
        "targets",
        id="invoker-targets-in-another-stack",
    ),
    pytest.param(
        _component_in_another_stack,
        ConfigurationError,
        r"InferenceComponent 'Models/Chat' is in stack 'Models', the invoker in 'Test'; move "
        r"the invoker to the component's stack$",
        "targets",
        id="invoker-targets-component-in-another-stack",
    ),
    pytest.param(
        lambda s: LlmEndpoint.from_endpoint_attributes(
            s,
            "Legacy",
            endpoint_name="legacy-endpoint",
            request_format=RequestFormat.GENERATE,
            tool_calls=True,
        ),
        ConfigurationError,
        r"tool_calls=True needs the messages request format: the generate request format has no tool calling",
        "tool_calls",
        id="invoker-imported-tools-with-the-generate-format",
    ),
    pytest.param(
        lambda s: LlmEndpoint.from_endpoint_attributes(
            s,
            "Legacy",
            endpoint_name="legacy-endpoint",
            engine="vllm",  # type: ignore[arg-type]
        ),
        ConfigurationError,
        r"engine must be an Engine, got str 'vllm'; use Engine\.tgi\(\)",
        "engine",
        id="invoker-imported-engine-a-string",
    ),
    pytest.param(
        lambda s: LlmEndpoint.from_endpoint_attributes(
            s, "Legacy", endpoint_name="legacy-endpoint", served_model_name="my model"
        ),
        ConfigurationError,
        r"served_model_name must be 1-256 printable characters without spaces.*'my model'",
        "served_model_name",
        id="invoker-imported-served-name-with-a-space",
    ),
    pytest.param(
        lambda s: LlmEndpoint.from_endpoint_name(s, "Legacy", Fn.import_value("LlmEndpointName")),
        ConfigurationError,
        r"endpoint_name is not known at synth .* pass served_model_name=",
        "served_model_name",
        id="invoker-imported-token-name-without-a-served-name",
    ),
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", target=(e := endpoint(s)), targets=[e]),
        ConfigurationError,
        r"pass target=\.\.\. for one model or targets=\[\.\.\.\] for several, not both",
        "targets",
        id="invoker-target-and-targets",
    ),
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", targets=endpoint(s)),  # type: ignore[arg-type]
        ConfigurationError,
        r"targets must be a list of endpoints or components, got LlmEndpoint 'Test/Endpoint'",
        "targets",
        id="invoker-targets-not-a-list",
    ),
    pytest.param(
        lambda s: StreamingInvoker(s, "Stream", targets=[endpoint(s), "my-endpoint"]),  # type: ignore[list-item]
        ConfigurationError,
        r"targets\[1\] must be an LlmEndpoint, an InferenceComponent or an adapter, got str "
        r"'my-endpoint'",
        "targets[1]",
        id="invoker-targets-hold-a-name",
    ),
    pytest.param(
        _too_many_for_lambda_env,
        ConfigurationError,
        r"environment would take up to [\d,]+ bytes with 20 targets, above Lambda's "
        r"4,096-byte limit.*split the targets over two invokers",
        "targets",
        id="invoker-targets-over-lambda-environment-limit",
    ),
    pytest.param(
        lambda s: component(s, accelerators=1, served_model_name="my model"),
        ConfigurationError,
        r"served_model_name must be 1-256 printable characters without spaces.*got 'my model'",
        "served_model_name",
        id="ic-served-model-name-with-a-space",
    ),
    # LoRA adapters
    pytest.param(
        lambda s: adapter(s, engine=Engine.tgi(), env={}),
        ConfigurationError,
        r"add_adapter\('support-bot'\): engine 'tgi' of LlmModel 'Test/Model' serves no "
        r"SageMaker adapter components; serve the base model with Engine\.lmi\(backend='vllm'\) "
        r"or Engine\.vllm\(\)",
        "base",
        id="adapter-on-an-engine-without-adapters",
    ),
    pytest.param(
        lambda s: adapter(s, env={}),
        ConfigurationError,
        r"LlmModel 'Test/Model' \(vllm\) does not turn adapters on; add env=\{'SM_VLLM_ENABLE_LORA':"
        r" 'true', 'VLLM_ALLOW_RUNTIME_LORA_UPDATING': 'true'\}",
        "base",
        id="adapter-lora-off-on-vllm",
    ),
    pytest.param(
        lambda s: adapter(s, engine=Engine.lmi(), env={}),
        ConfigurationError,
        r"\(lmi-vllm\) does not turn adapters on; add env=\{'OPTION_ENABLE_LORA': 'true'\}",
        "base",
        id="adapter-lora-off-on-lmi",
    ),
    pytest.param(
        lambda s: lora_component(s).add_adapter(
            "support-bot", source=ModelSource.s3(bucket(s), "adapters/support-bot/")
        ),
        ConfigurationError,
        r"source must be the adapter's \.tar\.gz in S3, got an S3 prefix: SageMaker's ArtifactUrl "
        r"must point to a single gzip compressed tar archive.*ModelSource\.s3_archive",
        "source",
        id="adapter-from-an-s3-prefix",
    ),
    pytest.param(
        lambda s: lora_component(s).add_adapter(
            "support-bot", source=ModelSource.hugging_face("acme/support-bot-lora")
        ),
        ConfigurationError,
        r"source must be the adapter's \.tar\.gz in S3, got a Hugging Face Hub model",
        "source",
        id="adapter-from-the-hub",
    ),
    pytest.param(
        lambda s: adapter(s, name="support bot"),
        ConfigurationError,
        r"the adapter name must be 1-63 letters, digits.*got 'support bot'",
        "name",
        id="adapter-name-with-a-space",
    ),
    pytest.param(
        lambda s: [
            (base := lora_component(s), weights := bucket(s)),
            *(
                base.add_adapter("support-bot", source=ModelSource.s3_archive(weights, key))
                for key in ("1/a.tar.gz", "2/a.tar.gz")
            ),
        ],
        ConfigurationError,
        r"the component already has an adapter named 'support-bot'",
        "name",
        id="adapter-name-twice",
    ),
    # LlmEndpoint(variants=[...], shadow=...)
    pytest.param(
        lambda s: LlmEndpoint(
            s,
            "AB",
            model=(m := model(s, bound=False)),
            autoscaling=scaling(max_capacity=2),
            variants=[Variant(model=m)],
        ),
        ConfigurationError,
        r"(?s)has 2 problems:.*model= applies to one variant; with variants=\[\.\.\.\] give it "
        r"to each Variant.*autoscaling= applies to one variant",
        "model",
        id="variants-with-model-and-autoscaling",
    ),
    pytest.param(
        lambda s: variants(s),
        ConfigurationError,
        r"variants must hold at least one Variant\(\.\.\.\), got \[\]",
        "variants",
        id="variants-empty",
    ),
    pytest.param(
        lambda s: variants(
            s, *(Variant(model=model(s, id=f"M{i}", bound=False)) for i in range(11))
        ),
        ConfigurationError,
        r"variants holds 11 production variants; SageMaker allows at most 10",
        "variants",
        id="variants-over-ten",
    ),
    pytest.param(
        lambda s: variants(
            s,
            *(Variant(model=m) for m in two_models(s)),
            shadow=Variant(model=model(s, id="C", bound=False)),
        ),
        ConfigurationError,
        r"shadow= needs exactly one production variant \(SageMaker allows one production and "
        r"one shadow variant when a shadow is used\), got 2",
        "shadow",
        id="variants-shadow-with-two-production-variants",
    ),
    pytest.param(
        lambda s: LlmEndpoint(s, "AB", shadow=Variant(model=model(s, bound=False))),
        ConfigurationError,
        r"shadow= needs variants=\[Variant\(\.\.\.\)\] with the one production variant",
        "shadow",
        id="variants-shadow-without-variants",
    ),
    pytest.param(
        lambda s: variants(s, Variant(model=(m := model(s, bound=False))), Variant(model=m)),
        ConfigurationError,
        r"the variant name 'Model-g5-2xlarge' is used 2 times.*pass Variant\(name=\.\.\.\)",
        "name",
        id="variants-with-one-name",
    ),
    pytest.param(
        lambda s: variants(s, *(Variant(model=m, weight=-1) for m in two_models(s))),
        ConfigurationError,
        r"variants\[0\]: weight must be a number >= 0 \(its share of the traffic\), got -1",
        "weight",
        id="variants-negative-weight",
    ),
    pytest.param(
        lambda s: variants(s, *(Variant(model=m, weight=0) for m in two_models(s))),
        ConfigurationError,
        r"every production variant has weight 0: give at least one weight > 0",
        "weight",
        id="variants-all-weights-zero",
    ),
    pytest.param(
        lambda s: variants(
            s,
            Variant(model=model(s, id="Chat", bound=False)),
            Variant(
                model=model(
                    s, id="Raw", engine=custom("nvidia", request_format="generate"), bound=False
                )
            ),
        ),
        ConfigurationError,
        r"the variants take different request bodies \(Chat-g5-2xlarge \(tgi\) takes messages, "
        r"Raw-g5-2xlarge \(custom\) takes generate\)",
        "variants",
        id="variants-different-request-bodies",
    ),
    pytest.param(
        lambda s: variants(s, model(s, bound=False)),  # type: ignore[arg-type]
        ConfigurationError,
        r"variants\[0\] must be a Variant\(model=\.\.\., \.\.\.\), got LlmModel 'Test/Model'",
        "variants[0]",
        id="variants-hold-a-model",
    ),
    pytest.param(
        lambda s: variants(
            s,
            Variant(
                model=model(s, bound=False), autoscaling=scaling(min_capacity=0, max_capacity=2)
            ),
        ),
        ScalingError,
        r"variants\[0\]: autoscaling min_capacity=0: a real-time endpoint variant cannot scale",
        "autoscaling",
        id="variants-scale-to-zero",
    ),
    pytest.param(
        lambda s: variants(
            s,
            Variant(model=(m := model(s, bound=False)), name="ebs", instance_type=EBS_ONLY),
            Variant(model=m, name="nvme", instance_type=G5),
            kms_key=kms.Key(s, "Key"),
        ),
        ConfigurationError,
        r"variants\[1\]: kms_key cannot be used with ml\.g5\.2xlarge: it has local NVMe",
        "kms_key",
        id="variants-kms-key-with-an-nvme-variant",
    ),
    pytest.param(
        lambda s: variants(s, Variant(model=model(s, bound=False), name="a_b")),
        ConfigurationError,
        r"variants\[0\]: name must match .* got 'a_b'",
        "name",
        id="variants-name-with-an-underscore",
    ),
    pytest.param(
        lambda s: variants(
            s, Variant(model=model(s, instance_type=None, bound=False)), served_model_name=""
        ),
        ConfigurationError,
        r"(?s)variants\[0\]: instance_type is required: model 'Test/Model' has no default "
        r"instance type; pass Variant\(instance_type=\.\.\.\).*served_model_name must be 1-256",
        "instance_type",
        id="variants-instance-type-required-and-empty-served-name",
    ),
]
