"""Bad models: engines on the wrong hardware, parallelism, env, token limits and memory fit,
network, and props of the wrong kind."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3

from constructs_llm import (
    Engine,
    ModelSource,
)
from constructs_llm.errors import (
    ConfigurationError,
    InstanceTypeError,
    SizingError,
)
from tests.matrix.builders import (
    BGE,
    G5_4GPU,
    INF2,
    LLAMA3,
    LLAMA31,
    MISTRAL,
    PHI3_MINI,
    QWEN3,
    QWEN25_AWQ,
    T4,
    TOKEN,
    TRN1,
    V100_4GPU,
    app_of,
    bucket,
    custom,
    in_region,
    model,
    vpc,
)

BAD_MODELS = [
    pytest.param(
        lambda s: model(s, instance_type="ml.g5.45xlarge"),
        InstanceTypeError,
        r"got 'ml\.g5\.45xlarge'.*Sizes of ml\.g5: xlarge, 2xlarge, .*48xlarge.*allow_unknown_size=True",
        "instance_type",
        id="model-seed-typo-g5-45xlarge",
    ),
    pytest.param(
        lambda s: model(s, instance_type="ml.gg5.2xlarge"),
        InstanceTypeError,
        r"Unknown instance family ml\.gg5: got 'ml\.gg5\.2xlarge'\. Did you mean 'ml\.g5\.2xlarge'.*"
        r"InstanceType\('ml\.gg5\.2xlarge', allow_unknown_family=True\)",
        "instance_type",
        id="model-instance-type-unknown-family-typo",
    ),
    # Engines on the wrong hardware
    pytest.param(
        lambda s: model(s, instance_type=INF2, engine=Engine.tgi()),
        ConfigurationError,
        r"Engine\.tgi\(\) serves NVIDIA GPUs but ml\.inf2\.xlarge has AWS Neuron.*Engine\.tgi_neuronx\(\)",
        "engine",
        id="engine-tgi-on-neuron",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.tgi_neuronx()),
        ConfigurationError,
        r"Engine\.tgi_neuronx\(\) serves AWS Neuron.* but ml\.g5\.2xlarge has NVIDIA GPUs",
        "engine",
        id="engine-tgi-neuronx-on-gpu",
    ),
    pytest.param(
        lambda s: model(s, instance_type=INF2, engine=Engine.lmi()),
        ConfigurationError,
        r"Engine\.lmi\(\) serves NVIDIA GPUs but ml\.inf2\.xlarge",
        "engine",
        id="engine-lmi-on-neuron",
    ),
    pytest.param(
        lambda s: model(s, instance_type="ml.m5.xlarge", engine=Engine.vllm()),
        ConfigurationError,
        r"Engine\.vllm\(\) serves NVIDIA GPUs but ml\.m5\.xlarge has no accelerator",
        "engine",
        id="engine-vllm-on-cpu",
    ),
    pytest.param(
        lambda s: model(s, instance_type=TRN1, engine=Engine.sglang()),
        ConfigurationError,
        r"Engine\.sglang\(\) serves NVIDIA GPUs but ml\.trn1\.32xlarge",
        "engine",
        id="engine-sglang-on-neuron",
    ),
    pytest.param(
        lambda s: model(s, engine=custom(accelerator="neuron")),
        ConfigurationError,
        r"Engine\.custom\(\) serves AWS Neuron.* but ml\.g5\.2xlarge",
        "engine",
        id="engine-custom-neuron-on-gpu",
    ),
    pytest.param(
        lambda s: model(s, instance_type="ml.inf1.xlarge", engine=Engine.tgi_neuronx()),
        ConfigurationError,
        r"ml\.inf1\.xlarge is Inferentia1.*ml\.inf2",
        "instance_type",
        id="engine-tgi-neuronx-on-inferentia1",
    ),
    # Parallelism beyond the hardware, or that the engine cannot use
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.tgi(num_shard=8)),
        ConfigurationError,
        r"num_shard\)=8 exceeds the 4 GPU\(s\) of ml\.g5\.12xlarge; use .* <= 4",
        "Engine.tgi(num_shard)",
        id="engine-tgi-num-shard-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.lmi(tensor_parallel_degree=8)),
        ConfigurationError,
        r"tensor_parallel_degree\)=8 exceeds the 4 GPU\(s\) of ml\.g5\.12xlarge",
        "Engine.lmi(tensor_parallel_degree)",
        id="engine-lmi-tensor-parallel-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.vllm(tensor_parallel_size=8)),
        ConfigurationError,
        r"tensor_parallel_size\)=8 exceeds the 4 GPU\(s\)",
        "Engine.vllm(tensor_parallel_size)",
        id="engine-vllm-tensor-parallel-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.sglang(tp_size=8)),
        ConfigurationError,
        r"tp_size\)=8 exceeds the 4 GPU\(s\)",
        "Engine.sglang(tp_size)",
        id="engine-sglang-tp-size-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, env={"SM_NUM_GPUS": "8"}),
        ConfigurationError,
        r"env SM_NUM_GPUS=8 exceeds the 4 GPUs of ml\.g5\.12xlarge; use at most 4",
        "env['SM_NUM_GPUS']",
        id="model-env-gpu-count-above-gpus",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, engine=Engine.lmi(tensor_parallel_degree=3)),
        SizingError,
        r"tensor parallel degree 3 does not split .*heads.*use a degree among \[1, 2, 4\]",
        "engine",
        id="engine-lmi-tensor-parallel-does-not-split-heads",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=INF2,
            engine=Engine.tgi_neuronx(num_cores=4),
        ),
        ConfigurationError,
        r"num_cores=4\) exceeds the 2 NeuronCores of ml\.inf2\.xlarge; use num_cores <= 2",
        "num_cores",
        id="engine-tgi-neuronx-cores-above-instance",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=TRN1,
            engine=Engine.tgi_neuronx(num_cores=4),
        ),
        ConfigurationError,
        r"num_cores=4\) is not a topology .* ml\.trn1\.32xlarge \(1, 2, 8, 16 or a multiple of 32",
        "Engine.tgi_neuronx(num_cores=4)",
        id="engine-tgi-neuronx-trn1-4-cores",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=TRN1,
            engine=Engine.tgi_neuronx(),
            env={"HF_NUM_CORES": "4"},
        ),
        ConfigurationError,
        r"HF_NUM_CORES=4 is not a topology .* ml\.trn1\.32xlarge",
        "env HF_NUM_CORES=4",
        id="model-env-neuron-cores-trn1-4",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=INF2,
            engine=Engine.tgi_neuronx(),
            env={"HF_NUM_CORES": "4"},
        ),
        ConfigurationError,
        r"env HF_NUM_CORES=4 exceeds the 2 NeuronCores of ml\.inf2\.xlarge",
        "env['HF_NUM_CORES']",
        id="model-env-neuron-cores-above-instance",
    ),
    # Engine arguments against the engine's own limits
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(), env={"SM_VLLM_MAX_LORA_RANK": "24"}),
        ConfigurationError,
        r"env SM_VLLM_MAX_LORA_RANK='24' is a LoRA rank vLLM does not accept.*"
        r"1, 8, 16, 32, 64, 128, 256, 320, 512.*use 32, the next rank",
        "env['SM_VLLM_MAX_LORA_RANK']",
        id="model-env-vllm-lora-rank-not-accepted",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"OPTION_MAX_LORA_RANK": "1024"}),
        ConfigurationError,
        r"env OPTION_MAX_LORA_RANK='1024' is a LoRA rank vLLM does not accept.*use one of them",
        "env['OPTION_MAX_LORA_RANK']",
        id="model-env-lmi-lora-rank-above-vllm",
    ),
    pytest.param(
        lambda s: model(
            s,
            instance_type=G5_4GPU,
            engine=Engine.vllm(),
            env={"SM_VLLM_PIPELINE_PARALLEL_SIZE": "2"},
        ),
        ConfigurationError,
        r"SM_VLLM_TENSOR_PARALLEL_SIZE=4 x SM_VLLM_PIPELINE_PARALLEL_SIZE=2 needs 8 GPUs, but "
        r"there are 4 of ml\.g5\.12xlarge.*tensor parallel degree to 2",
        "env['SM_VLLM_TENSOR_PARALLEL_SIZE']",
        id="model-env-vllm-tensor-times-pipeline-above-gpus",
    ),
    pytest.param(
        lambda s: model(
            s,
            instance_type=G5_4GPU,
            engine=Engine.lmi(tensor_parallel_degree=2),
            env={"OPTION_PIPELINE_PARALLEL_DEGREE": "4"},
        ),
        ConfigurationError,
        r"OPTION_TENSOR_PARALLEL_DEGREE=2 x OPTION_PIPELINE_PARALLEL_DEGREE=4 needs 8 GPUs",
        "env['OPTION_TENSOR_PARALLEL_DEGREE']",
        id="model-env-lmi-tensor-times-pipeline-above-gpus",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(LLAMA31, needs_token=False),
            engine=Engine.vllm(tool_call_parser="hermes"),
            max_total_tokens=8192,
        ),
        ConfigurationError,
        r"tool_call_parser='hermes' does not fit the model family 'llama-3\.1', whose output "
        r"the 'llama3_json' parser reads.*use tool_call_parser='llama3_json'",
        "tool_call_parser",
        id="model-tool-parser-of-another-family",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(LLAMA31, needs_token=False),
            engine=Engine.vllm(reasoning_parser="deepseek_r1"),
            max_total_tokens=8192,
        ),
        ConfigurationError,
        r"reasoning_parser='deepseek_r1' does not fit the model family 'llama-3\.1', which has "
        r"no reasoning parser format.*drop reasoning_parser",
        "reasoning_parser",
        id="model-reasoning-parser-on-a-model-without-thinking",
    ),
    # Environment
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(), env={"--max-model-len": "4096"}),
        ConfigurationError,
        r"env key '--max-model-len' is a command-line flag.*refuses it.*"
        r"the engine reads it as env 'SM_VLLM_MAX_MODEL_LEN'",
        "env['--max-model-len']",
        id="model-env-vllm-flag-as-key",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"enable-prefix-caching": "true"}),
        ConfigurationError,
        r"env key 'enable-prefix-caching' is a command-line flag.*"
        r"'OPTION_ENABLE_PREFIX_CACHING'",
        "env['enable-prefix-caching']",
        id="model-env-lmi-flag-as-key",
    ),
    pytest.param(
        lambda s: model(s, env={"2FAST": "1"}),
        ConfigurationError,
        r"env key '2FAST' is refused by SageMaker's CreateModel.*\[a-zA-Z_\]\[a-zA-Z0-9_\]\*"
        r".*e\.g\. '_2FAST'",
        "env['2FAST']",
        id="model-env-key-starts-with-a-digit",
    ),
    pytest.param(
        lambda s: model(s, env={"MY.SETTING": "x"}),
        ConfigurationError,
        r"env key 'MY\.SETTING' is refused by SageMaker's CreateModel.*e\.g\. 'MY_SETTING'",
        "env['MY.SETTING']",
        id="model-env-key-with-a-dot",
    ),
    pytest.param(
        lambda s: model(s, env={"CHAT_TEMPLATE": "x" * 1025}),
        ConfigurationError,
        r"value of env 'CHAT_TEMPLATE' is 1,025 characters, above the 1,024",
        "env['CHAT_TEMPLATE']",
        id="model-env-value-above-1024",
    ),
    pytest.param(
        lambda s: model(s, env={f"EXTRA_{i}": "1" for i in range(100)}),
        ConfigurationError,
        r"the container env holds 1\d\d entries with the engine's own, above the 100",
        "env",
        id="model-env-more-than-100-entries",
    ),
    pytest.param(
        lambda s: model(s, env={f"LONG_{i}": "x" * 1000 for i in range(40)}),
        ConfigurationError,
        r"add up to [\d,]+ characters with the engine's own, above the 32,768 \(32 KB\)",
        "env",
        id="model-env-above-32-kb",
    ),
    pytest.param(
        lambda s: model(s, env={"HF_TOKEN": TOKEN}),
        ConfigurationError,
        r"env HF_TOKEN holds 'hf_Ab…'.*Secrets Manager.*token=secret",
        "env['HF_TOKEN']",
        id="model-env-literal-hf-token",
    ),
    pytest.param(
        lambda s: model(s, env={"MY_SETTING": f"--token {TOKEN}"}),
        ConfigurationError,
        r"env MY_SETTING holds a value that looks like a Hugging Face token",
        "env['MY_SETTING']",
        id="model-env-hf-token-under-another-name",
    ),
    pytest.param(
        lambda s: model(s, env={"HF_MODEL_ID": MISTRAL}),
        ConfigurationError,
        r"env HF_MODEL_ID='mistralai/Mistral-7B-Instruct-v0\.2' contradicts the model source 'meta-llama/Meta-Llama-3-8B-Instruct'.*ModelSource\.hugging_face",
        "env['HF_MODEL_ID']",
        id="model-env-contradicts-model-source",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(), env={"SM_VLLM_MODEL": "/opt/ml/other"}),
        ConfigurationError,
        r"env SM_VLLM_MODEL='/opt/ml/other' contradicts the model source",
        "env['SM_VLLM_MODEL']",
        id="model-env-vllm-contradicts-model-source",
    ),
    pytest.param(
        lambda s: model(s, max_total_tokens=4096, env={"MAX_TOTAL_TOKENS": "8192"}),
        ConfigurationError,
        r"env MAX_TOTAL_TOKENS='8192' contradicts max_total_tokens=4096.*set max_total_tokens=8192 on the model",
        "env['MAX_TOTAL_TOKENS']",
        id="model-env-contradicts-token-limit",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"OPTION_ROLLING_BATCH": "lmi-dist"}),
        ConfigurationError,
        r"env OPTION_ROLLING_BATCH='lmi-dist'.*removed",
        "env['OPTION_ROLLING_BATCH']",
        id="model-env-lmi-removed-backend",
    ),
    pytest.param(
        lambda s: model(s, env={"CONTAINER_HEALTH_CHECK_TIMEOUT": "1800"}),
        ConfigurationError,
        r"env CONTAINER_HEALTH_CHECK_TIMEOUT looks like a SageMaker startup timeout.*health_check_timeout=Duration",
        "env['CONTAINER_HEALTH_CHECK_TIMEOUT']",
        id="model-env-timeout-instead-of-prop",
    ),
    # Tool calling: asked for where it cannot be served, or env that contradicts it
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(tool_calls=True)),
        ConfigurationError,
        r"Engine\.vllm\(tool_calls=True\) cannot be served: no tool-call parser is known for the model family 'llama-3'.*tool_call_parser=",
        "tool_calls",
        id="engine-vllm-tools-without-a-parser",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.s3(bucket(s), "weights/"),
            engine=Engine.sglang(tool_calls=True),
        ),
        ConfigurationError,
        r"Engine\.sglang\(tool_calls=True\) cannot be served: no tool-call parser is known for this model \(not in the packaged table\)",
        "tool_calls",
        id="engine-sglang-tools-for-an-unknown-model",
    ),
    pytest.param(
        lambda s: model(
            s, engine=Engine.tgi(tool_calls=True), env={"DISABLE_GRAMMAR_SUPPORT": "true"}
        ),
        ConfigurationError,
        r"Engine\.tgi\(tool_calls=True\) cannot be served: env DISABLE_GRAMMAR_SUPPORT='true' turns off TGI's grammar",
        "tool_calls",
        id="engine-tgi-tools-with-grammar-off",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(LLAMA31),
            engine=Engine.vllm(),
            env={"SM_VLLM_TOOL_CALL_PARSER": "hermes"},
        ),
        ConfigurationError,
        r"env SM_VLLM_TOOL_CALL_PARSER='hermes' contradicts the engine's tool calling \(it sets SM_VLLM_TOOL_CALL_PARSER='llama3_json'\).*tool_call_parser=",
        "env['SM_VLLM_TOOL_CALL_PARSER']",
        id="model-env-vllm-tool-parser-contradicts",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"OPTION_ENABLE_AUTO_TOOL_CHOICE": "true"}),
        ConfigurationError,
        r"env OPTION_ENABLE_AUTO_TOOL_CHOICE='true' contradicts the engine's tool calling \(it leaves OPTION_ENABLE_AUTO_TOOL_CHOICE unset\)",
        "env['OPTION_ENABLE_AUTO_TOOL_CHOICE']",
        id="model-env-lmi-tools-on-behind-the-invoker",
    ),
    # Reasoning parsing: asked for where no parser is known, or env that contradicts it
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(reasoning=True)),
        ConfigurationError,
        r"Engine\.vllm\(reasoning=True\) cannot be served: no reasoning parser is known for the model family 'llama-3'.*reasoning_parser=",
        "reasoning",
        id="engine-vllm-reasoning-without-a-parser",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.s3(bucket(s), "weights/"),
            engine=Engine.lmi(reasoning=True),
        ),
        ConfigurationError,
        r"Engine\.lmi\(reasoning=True\) cannot be served: no reasoning parser is known for this model \(not in the packaged table\)",
        "reasoning",
        id="engine-lmi-reasoning-for-an-unknown-model",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(QWEN3),
            engine=Engine.vllm(),
            env={"SM_VLLM_REASONING_PARSER": "deepseek_r1"},
        ),
        ConfigurationError,
        r"env SM_VLLM_REASONING_PARSER='deepseek_r1' contradicts the engine's reasoning parsing \(it sets SM_VLLM_REASONING_PARSER='qwen3'\).*reasoning= and reasoning_parser=",
        "env['SM_VLLM_REASONING_PARSER']",
        id="model-env-vllm-reasoning-parser-contradicts",
    ),
    # Embedding models on vLLM and SGLang
    pytest.param(
        lambda s: model(
            s, source=ModelSource.hugging_face(BGE), engine=Engine.vllm(embedding=False)
        ),
        ConfigurationError,
        r"BAAI/bge-large-en-v1\.5 is an embedding model, but Engine\.vllm\(\) serves chat models.*without embedding=False",
        "engine",
        id="engine-vllm-embedding-model-served-as-chat",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(embedding=True)),
        ConfigurationError,
        r"Meta-Llama-3-8B-Instruct is a chat model, but Engine\.vllm\(\) serves embedding models.*without embedding=True",
        "engine",
        id="engine-vllm-chat-model-served-as-embeddings",
    ),
    pytest.param(
        lambda s: model(s, source=ModelSource.hugging_face(BGE), engine=Engine.sglang()),
        ConfigurationError,
        r"BAAI/bge-large-en-v1\.5 is an embedding model, but Engine\.sglang\(\) serves chat models; serve it with Engine\.tei\(\) or Engine\.vllm\(\)",
        "engine",
        id="engine-sglang-embedding-model",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.sglang(), env={"SM_SGLANG_IS_EMBEDDING": "true"}),
        ConfigurationError,
        r"env SM_SGLANG_IS_EMBEDDING='true' changes the request/stream contract",
        "env['SM_SGLANG_IS_EMBEDDING']",
        id="model-env-sglang-is-embedding",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(BGE),
            engine=Engine.vllm(),
            env={"SM_VLLM_RUNNER": "generate"},
        ),
        ConfigurationError,
        r"env SM_VLLM_RUNNER='generate' contradicts the engine's model kind \(chat or embedding\) \(it sets SM_VLLM_RUNNER='pooling'\).*embedding=",
        "env['SM_VLLM_RUNNER']",
        id="model-env-vllm-runner-contradicts-embedding",
    ),
    pytest.param(
        lambda s: model(s, env={"MAX_BATCH_SIZE": 8}),
        ConfigurationError,
        r"env\['MAX_BATCH_SIZE'\] must map a string to a string, got int 8; write it as '8'",
        "env['MAX_BATCH_SIZE']",
        id="model-env-value-not-a-string",
    ),
    # Token limits and memory fit
    pytest.param(
        lambda s: model(s, max_input_tokens=4096, max_total_tokens=4096),
        ConfigurationError,
        r"max_input_tokens \(4096\) must be less than max_total_tokens \(4096\)",
        "max_input_tokens",
        id="model-max-input-not-below-max-total",
    ),
    pytest.param(
        lambda s: model(s, max_input_tokens=0),
        ConfigurationError,
        r"max_input_tokens must be an integer >= 1, got 0",
        "max_input_tokens",
        id="model-max-input-tokens-zero",
    ),
    pytest.param(
        lambda s: model(s, max_total_tokens=16384),
        SizingError,
        r"max_total_tokens 16,384 exceeds the 8,192-token context of meta-llama/Meta-Llama-3-8B-Instruct; set max_total_tokens <= 8,192",
        "max_total_tokens",
        id="model-max-total-above-model-context",
    ),
    pytest.param(
        lambda s: model(
            s, source=ModelSource.hugging_face("tiiuae/falcon-40b"), engine=Engine.lmi()
        ),
        SizingError,
        r"tiiuae/falcon-40b weights need 77\.9 GiB .*ml\.g5\.2xlarge.*more accelerator memory",
        "instance_type",
        id="model-falcon-40b-on-g5-2xlarge",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("meta-llama/Meta-Llama-3-70B-Instruct"),
            instance_type=G5_4GPU,
        ),
        SizingError,
        r"Meta-Llama-3-70B-Instruct weights need 131\.\d GiB .*4 x 21\.\d GiB \(ml\.g5\.12xlarge\)",
        "instance_type",
        id="model-llama-3-70b-on-g5-12xlarge",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("microsoft/Phi-3-mini-128k-instruct"),
            instance_type="ml.g4dn.xlarge",
            max_total_tokens=131072,
        ),
        SizingError,
        r"KV cache left on 1 x 14\.5 GiB \(ml\.g4dn\.xlarge\) holds [\d,]+ tokens .* less than one 131,072-token sequence; lower max_total_tokens to <= [\d,]+",
        "max_total_tokens",
        id="model-kv-cache-below-one-sequence",
    ),
    # Network
    pytest.param(
        lambda s: model(s, network_isolation=True),
        ConfigurationError,
        r"network_isolation=True blocks the download of Hub model 'meta-llama/Meta-Llama-3-8B-Instruct'.*ModelSource\.s3",
        "network_isolation",
        id="model-hub-with-network-isolation",
    ),
    pytest.param(
        lambda s: model(
            s,
            vpc=vpc(s, ec2.SubnetType.PRIVATE_ISOLATED),
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
        ),
        ConfigurationError,
        r"Hub model 'meta-llama/Meta-Llama-3-8B-Instruct' cannot download from isolated subnets",
        "vpc_subnets",
        id="model-hub-in-isolated-subnets",
    ),
    pytest.param(
        lambda s: model(s, vpc=vpc(s, ec2.SubnetType.PRIVATE_ISOLATED)),
        ConfigurationError,
        r"Hub model 'meta-llama/Meta-Llama-3-8B-Instruct'.*no subnets with egress",
        "vpc_subnets",
        id="model-hub-in-vpc-without-egress",
    ),
    pytest.param(
        lambda s: model(
            s,
            vpc=vpc(s, ec2.SubnetType.PUBLIC),
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC),
        ),
        ConfigurationError,
        r"Hub model 'meta-llama/Meta-Llama-3-8B-Instruct' cannot download from public subnets",
        "vpc_subnets",
        id="model-hub-in-public-subnets",
    ),
    pytest.param(
        lambda s: model(
            s,
            vpc=(network := vpc(s, ec2.SubnetType.PUBLIC, ec2.SubnetType.PRIVATE_WITH_EGRESS)),
            security_groups=[ec2.SecurityGroup(s, "Closed", vpc=network, allow_all_outbound=False)],
        ),
        ConfigurationError,
        r"Hub model 'meta-llama/Meta-Llama-3-8B-Instruct' downloads through security groups "
        r"'Test/Closed', which allow no outbound traffic.*allow_all_outbound=True or add an "
        r"egress rule for HTTPS \(port 443\)",
        "security_groups",
        id="model-hub-behind-security-groups-without-egress",
    ),
    pytest.param(
        lambda s: model(
            in_region(s, "us-east-1"),
            source=ModelSource.s3(
                s3.Bucket.from_bucket_attributes(
                    Stack.of(app_of(s).node.find_child("Test")),
                    "Weights",
                    bucket_name="weights-eu",
                    region="eu-west-1",
                ),
                "llama3-8b/",
                model_id=LLAMA3,
            ),
        ),
        ConfigurationError,
        r"the weights' bucket 'weights-eu' is in eu-west-1, but the model deploys to us-east-1.*"
        r"copy the weights to a bucket in us-east-1",
        "bucket",
        id="model-s3-weights-in-another-region",
    ),
    pytest.param(
        lambda s: model(s, vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC)),
        ConfigurationError,
        r"vpc_subnets was given without vpc",
        "vpc_subnets",
        id="model-subnets-without-vpc",
    ),
    # Props of the wrong kind
    pytest.param(
        lambda s: model(s, source=LLAMA3),  # type: ignore[arg-type]
        ConfigurationError,
        r"source must be a ModelSource, got str 'meta-llama/Meta-Llama-3-8B-Instruct'; use ModelSource\.hugging_face\('meta-llama/Meta-Llama-3-8B-Instruct'\)",
        "source",
        id="model-source-is-a-model-id-string",
    ),
    pytest.param(
        lambda s: model(s, engine="tgi"),  # type: ignore[arg-type]
        ConfigurationError,
        r"engine must be an Engine, got str 'tgi'; use Engine\.tgi\(\)",
        "engine",
        id="model-engine-is-a-string",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.vllm),  # type: ignore[arg-type]
        ConfigurationError,
        r"engine must be an Engine, got the factory Engine\.vllm itself, not called: call it, "
        r"Engine\.vllm\(\)",
        "engine",
        id="model-engine-factory-not-called",
    ),
    pytest.param(
        lambda s: model(s, source=ModelSource.hugging_face),  # type: ignore[arg-type]
        ConfigurationError,
        r"source must be a ModelSource, got the factory ModelSource\.hugging_face itself, not "
        r"called: call it, ModelSource\.hugging_face\(\)",
        "source",
        id="model-source-factory-not-called",
    ),
    # Engine checks on the model's hardware
    pytest.param(
        lambda s: model(s, instance_type="ml.trn1.2xlarge", engine=Engine.lmi()),
        ConfigurationError,
        r"Engine\.lmi\(\) serves NVIDIA.*ml\.trn1\.2xlarge.*use Engine\.tgi_neuronx\(\)",
        "engine",
        id="engine-lmi-on-trainium-names-the-neuron-engine",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.vllm(tensor_parallel_size=2)),
        ConfigurationError,
        r"tensor_parallel_size\)=2 exceeds the 1 GPU\(s\) of ml\.g5\.2xlarge",
        "Engine.vllm(tensor_parallel_size)",
        id="engine-vllm-tensor-parallel-above-one-gpu",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, env={"SM_NUM_GPUS": "all"}),
        ConfigurationError,
        r"env SM_NUM_GPUS='all' must be a positive integer",
        "env['SM_NUM_GPUS']",
        id="model-env-gpu-count-not-a-number",
    ),
    pytest.param(
        lambda s: model(s, instance_type=G5_4GPU, env={"SM_NUM_GPUS": "²"}),
        ConfigurationError,
        r"env SM_NUM_GPUS='²' must be a positive integer",
        "env['SM_NUM_GPUS']",
        id="model-env-gpu-count-superscript-digit",
    ),
    pytest.param(
        lambda s: model(
            s, instance_type=G5_4GPU, engine=Engine.lmi(), env={"TENSOR_PARALLEL_DEGREE": "2"}
        ),
        ConfigurationError,
        r"TENSOR_PARALLEL_DEGREE='2' is read by the container as OPTION_TENSOR_PARALLEL_DEGREE, which the engine sets to '4'",
        "env['TENSOR_PARALLEL_DEGREE']",
        id="model-env-alias-loses-to-the-derived-key",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type=TRN1,
            engine=Engine.tgi_neuronx(num_cores=24),
        ),
        ConfigurationError,
        r"num_cores=24\) is not a topology.*1, 2, 8, 16 or a multiple of 32",
        "Engine.tgi_neuronx(num_cores=24)",
        id="engine-tgi-neuronx-trn1-24-cores",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(MISTRAL),
            instance_type="ml.inf2.48xlarge",
            engine=Engine.tgi_neuronx(),
            env={"HF_NUM_CORES": "32"},
        ),
        ConfigurationError,
        r"env HF_NUM_CORES=32 exceeds the 24 NeuronCores of ml\.inf2\.48xlarge",
        "env['HF_NUM_CORES']",
        id="model-env-neuron-cores-above-inf2-48xlarge",
    ),
    pytest.param(
        lambda s: model(
            s,
            engine=Engine.tgi(max_batch_prefill_tokens=1024),
            max_input_tokens=2048,
            max_total_tokens=4096,
        ),
        ConfigurationError,
        r"MAX_BATCH_PREFILL_TOKENS=1024 is below MAX_INPUT_TOKENS=2048.*raise max_batch_prefill_tokens to at least 2048",
        "env['MAX_BATCH_PREFILL_TOKENS']",
        id="engine-tgi-prefill-below-max-input",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.tgi(max_batch_total_tokens=2048), max_total_tokens=4096),
        ConfigurationError,
        r"MAX_BATCH_TOTAL_TOKENS=2048 is below MAX_TOTAL_TOKENS=4096",
        "env['MAX_BATCH_TOTAL_TOKENS']",
        id="engine-tgi-batch-total-below-max-total",
    ),
    pytest.param(
        lambda s: model(s, max_input_tokens=2048, env={"MAX_INPUT_LENGTH": "1024"}),
        ConfigurationError,
        r"env MAX_INPUT_LENGTH='1024' is TGI's legacy name for MAX_INPUT_TOKENS",
        "env['MAX_INPUT_LENGTH']",
        id="model-env-tgi-legacy-input-length",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"OPTION_MAX_MODEL_LEN": "8192"}),
        ConfigurationError,
        r"env OPTION_MAX_MODEL_LEN='8192' bypasses max_total_tokens of the model",
        "env['OPTION_MAX_MODEL_LEN']",
        id="model-env-lmi-bypasses-max-total",
    ),
    pytest.param(
        lambda s: model(
            s,
            instance_type=G5_4GPU,
            engine=Engine.lmi(max_rolling_batch_size=64, max_rolling_batch_prefill_tokens=32),
        ),
        ConfigurationError,
        r"OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS=32 is below OPTION_MAX_ROLLING_BATCH_SIZE=64",
        "env['OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS']",
        id="engine-lmi-prefill-below-batch-size",
    ),
    pytest.param(
        lambda s: model(s, source=ModelSource.hugging_face(LLAMA31), engine=Engine.vllm()),
        ConfigurationError,
        r"vLLM sizes for the full 131,072-token context.*holds about 29,129 tokens.*max_total_tokens <= 29,129",
        "max_total_tokens",
        id="engine-vllm-full-context-does-not-fit",
    ),
    pytest.param(
        lambda s: model(s, source=ModelSource.hugging_face(LLAMA31), engine=Engine.lmi()),
        ConfigurationError,
        r"vLLM sizes for the full 131,072-token context",
        "max_total_tokens",
        id="engine-lmi-full-context-does-not-fit",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(LLAMA3, revision="main"),
            env={"HF_MODEL_REVISION": "dev"},
        ),
        ConfigurationError,
        r"env HF_MODEL_REVISION='dev' contradicts the source revision 'main'",
        "env['HF_MODEL_REVISION']",
        id="model-env-contradicts-revision",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"OPTION_ENTRYPOINT": "my.handler"}),
        ConfigurationError,
        r"env OPTION_ENTRYPOINT='my\.handler' changes the request/stream contract.*Engine\.custom",
        "env['OPTION_ENTRYPOINT']",
        id="model-env-lmi-changes-the-entrypoint",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"OPTION_OUTPUT_FORMATTER": "sse"}),
        ConfigurationError,
        r"env OPTION_OUTPUT_FORMATTER='sse' changes the request/stream contract",
        "env['OPTION_OUTPUT_FORMATTER']",
        id="model-env-lmi-changes-the-output-format",
    ),
    pytest.param(
        lambda s: model(s, engine=Engine.lmi(), env={"ModelDataDownloadTimeoutInSeconds": "1800"}),
        ConfigurationError,
        r"env ModelDataDownloadTimeoutInSeconds looks like a SageMaker startup timeout.*download_timeout",
        "env['ModelDataDownloadTimeoutInSeconds']",
        id="model-env-download-timeout-instead-of-prop",
    ),
    # Several problems of one model, named together
    pytest.param(
        lambda s: model(
            s, max_input_tokens=0, network_isolation=True, instance_type="ml.g5.45xlarge"
        ),
        ConfigurationError,  # an instance type's and others: their nearest common type
        r"(?s)LlmModel 'Test/Model' has 3 problems:.*Sizes of ml\.g5.*max_input_tokens must be an integer >= 1, got 0.*network_isolation=True blocks",
        "instance_type",
        id="model-several-problems-named-together",
    ),
    # A precision the GPU cannot run (compute capability from the hardware catalog)
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(PHI3_MINI),
            instance_type=T4,
            engine=Engine.vllm(dtype="bf16"),
        ),
        ConfigurationError,
        r"SM_VLLM_DTYPE=bfloat16 asks for bf16, which needs a GPU of CUDA compute capability "
        r"8\.0 or above, but ml\.g4dn\.xlarge has NVIDIA T4 GPUs \(compute capability 7\.5\); "
        r"use fp16 \(Engine\.vllm\(dtype='fp16'\)\)",
        "env['SM_VLLM_DTYPE']",
        id="engine-vllm-bf16-on-a-t4",
    ),
    pytest.param(
        lambda s: model(s, instance_type=V100_4GPU, env={"DTYPE": "bfloat16"}),
        ConfigurationError,
        r"DTYPE=bfloat16 asks for bf16.*ml\.p3\.8xlarge has NVIDIA V100 GPUs \(compute "
        r"capability 7\.0\); use fp16 \(Engine\.tgi\(dtype='fp16'\)\)",
        "env['DTYPE']",
        id="model-env-bf16-on-a-v100",
    ),
    pytest.param(
        lambda s: model(s, instance_type=V100_4GPU, engine=Engine.vllm(quantization="fp8")),
        ConfigurationError,
        r"SM_VLLM_QUANTIZATION=fp8 asks for FP8, which Engine\.vllm\(\) runs from compute "
        r"capability 7\.5 \(weight-only below 8\.9\), but ml\.p3\.8xlarge has NVIDIA V100 GPUs",
        "env['SM_VLLM_QUANTIZATION']",
        id="engine-vllm-fp8-on-a-v100",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(PHI3_MINI),
            instance_type=T4,
            engine=Engine.tgi(quantize="fp8"),
        ),
        ConfigurationError,
        r"HF_MODEL_QUANTIZE=fp8 asks for FP8, which Engine\.tgi\(\) runs from compute "
        r"capability 8\.0 .* ml\.g4dn\.xlarge has NVIDIA T4 GPUs",
        "env['HF_MODEL_QUANTIZE']",
        id="engine-tgi-fp8-on-a-t4",
    ),
    # A model served with the wrong kind of engine, known from its id
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face("sentence-transformers/all-MiniLM-L6-v2"),
            engine=Engine.vllm(),
        ),
        ConfigurationError,
        r"sentence-transformers/all-MiniLM-L6-v2 is a Sentence Transformers model \(every model "
        r"of the sentence-transformers organization is an embedding model\), but Engine\.vllm\(\) "
        r"serves chat models; serve it with Engine\.tei\(\)",
        "engine",
        id="hub-sentence-transformers-on-a-chat-engine",
    ),
    # A quantization the checkpoint does not have (the model table's quantized checkpoints)
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(LLAMA31, needs_token=False),
            engine=Engine.vllm(quantization="awq"),
            max_total_tokens=8192,
        ),
        ConfigurationError,
        r"Engine\.vllm\(quantization='awq'\) loads a checkpoint quantized with awq, but "
        r"meta-llama/Llama-3\.1-8B-Instruct is not one: the model table lists its weights "
        r"unquantized, in bf16; drop it, or serve a checkpoint quantized with awq, such as "
        r"'hugging-quants/Meta-Llama-3\.1-8B-Instruct-AWQ-INT4'",
        "Engine.vllm(quantization='awq')",
        id="engine-vllm-awq-on-an-unquantized-checkpoint",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(QWEN25_AWQ),
            engine=Engine.vllm(quantization="gptq"),
            max_total_tokens=8192,
        ),
        ConfigurationError,
        r"Engine\.vllm\(quantization='gptq'\) contradicts the checkpoint of "
        r"Qwen/Qwen2\.5-7B-Instruct-AWQ, which is quantized with awq.*or ask for 'awq'",
        "Engine.vllm(quantization='gptq')",
        id="engine-vllm-quantization-contradicts-the-checkpoint",
    ),
    pytest.param(
        lambda s: model(
            s,
            source=ModelSource.hugging_face(QWEN25_AWQ),
            env={"HF_MODEL_QUANTIZE": "bitsandbytes"},
        ),
        ConfigurationError,
        r"env HF_MODEL_QUANTIZE='bitsandbytes' contradicts the checkpoint of "
        r"Qwen/Qwen2\.5-7B-Instruct-AWQ, which is quantized with awq",
        "env HF_MODEL_QUANTIZE='bitsandbytes'",
        id="model-env-quantize-contradicts-the-checkpoint",
    ),
]
