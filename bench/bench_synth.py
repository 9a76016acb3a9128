"""Import cost and synth time, measured side by side in one run.

1. Import cost, each in a fresh interpreter with cached bytecode (wall time): ``import
   constructs_llm`` and ``from constructs_llm import LlmModel, LlmEndpoint`` against ``import
   aws_cdk.aws_sagemaker``, run in turns; the median over the turns of each ratio (never the
   best turn). Goals: 1.1x for the bare import, 1.25x for the core constructs: the package
   loads nothing a user does not ask for (a model and an endpoint need only the core,
   sagemaker and iam modules; ec2, kms, sns, cloudwatch and applicationautoscaling load when a
   VPC, key, alarm topic, metric or autoscaling is used) and makes no jsii call at import.
   ``parse_stream`` must not load ``aws_cdk`` at all (checked, not timed).
2. Synth time of one app holding 1, 10 and 40 endpoints (model + endpoint each), in this
   process after a warm-up. Goal: linear, at most 0.2 s per added endpoint.
3. Against plain L1 (a ``CfnModel``, ``CfnEndpointConfig`` and ``CfnEndpoint`` per endpoint,
   the same app shape): one app of 20 ``LlmEndpoint``s (with their default alarms) and one of
   20 L1 endpoints, built and synthesized in turns; the median over the pairs of the time
   ratio, per endpoint and per CloudFormation resource. Goals: at most 4x L1 per endpoint and
   1.5x per resource. Then two floors, each against L1 in turns: the same resources as
   ``CfnResource``s (the least any library emitting this template costs), and with the objects
   the library's API hands back built as their types (the least this API costs).
4. Inference components: an app of 3 stacks, each an ``InferenceComponentEndpoint``
   (ml.g5.12xlarge, 0-5 instances) hosting N ``InferenceComponent``s (each its own
   ``LlmModel`` from S3 on vLLM, one GPU, scale to zero), with 10 and 20 components per
   endpoint in turns. Goal: linear, a component costing no more at 20 per endpoint than at 10
   (within 15 %: no work per component that grows with the components already there).
5. Many models: the ``fleet`` example (four stacks of 15 inference components each, the app
   of ``stacks/fleet.py``) against the same shape in plain L1 (per stack a
   ``CfnEndpointConfig`` and ``CfnEndpoint``, per model a ``CfnModel`` and
   ``CfnInferenceComponent``), built and synthesized in turns; the median over the pairs of
   the seconds, of the time ratio per model and per CloudFormation resource, and the resources
   each model brings. Goals: the 60-model app in at most 10 s on this machine's quiet runs
   (wall), and at most 4x L1 per resource.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

IMPORT_RUNS = 7
IMPORT_GOAL = 1.1
CORE_IMPORT_GOAL = 1.25
PER_ENDPOINT_GOAL_S = 0.2
SIZES = (1, 10, 40)  # 40 endpoints of 11 resources: within one stack's 500
L1_ENDPOINTS = 20
L1_PAIRS = 5
PER_ENDPOINT_GOAL = 4.0
PER_RESOURCE_GOAL = 1.5
COMPONENT_STACKS = 3
COMPONENT_SIZES = (10, 20)
COMPONENT_PAIRS = 3
COMPONENT_GROWTH_GOAL = 1.15
FLEET_PAIRS = 3
FLEET_GOAL_S = 10.0
FLEET_PER_RESOURCE_GOAL = 4.0

_ENV = dict(os.environ)  # bench/__main__.py sets the jsii banner switches


def _import_once(statement: str) -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_ENV, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def _import_times(*statements: str) -> tuple[list[float], list[float]]:
    """The median time of each statement, and the median ratio of each to the first, measured
    in turns (``IMPORT_RUNS`` of them, after one warm-up turn that writes the bytecode) so
    machine load hits all alike."""
    for statement in statements:
        _import_once(statement)
    times: list[list[float]] = [[] for _ in statements]
    for _ in range(IMPORT_RUNS):
        for i, statement in enumerate(statements):
            times[i].append(_import_once(statement))
    ratios = [
        statistics.median(t / b for t, b in zip(each, times[0], strict=True)) for each in times
    ]
    return [statistics.median(each) for each in times], ratios


def _cdk_modules(statement: str) -> list[str]:
    code = (
        f"import sys; {statement}; print(' '.join(sorted(m[8:] for m in sys.modules "
        "if m.startswith('aws_cdk.aws_') and m.count('.') == 1)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_ENV)
    return out.stdout.split()


def _parser_loads_cdk() -> bool:
    code = (
        "import sys; from constructs_llm.streaming import parse_stream; "
        "print(any(m == 'aws_cdk' or m.startswith('aws_cdk.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def _synth_seconds(endpoints: int) -> float:
    from aws_cdk import App

    started = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):  # the note lines each synthesis prints
        app = _llm_app(endpoints)
        assert isinstance(app, App)
        app.synth()
    return time.perf_counter() - started


def _l1_app(endpoints: int) -> object:
    """The same app shape in plain L1: a Model, an EndpointConfig and an Endpoint each."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_sagemaker as sagemaker

    app = App()
    stack = Stack(app, "Bench")
    for i in range(endpoints):
        model = sagemaker.CfnModel(
            stack,
            f"Model{i}",
            execution_role_arn="arn:aws:iam::123456789012:role/sagemaker",
            primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                image="763104351884.dkr.ecr.us-east-1.amazonaws.com/tgi:latest"
            ),
        )
        config = sagemaker.CfnEndpointConfig(
            stack,
            f"Config{i}",
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name="AllTraffic",
                    model_name=model.attr_model_name,
                    initial_instance_count=1,
                    instance_type="ml.g5.2xlarge",
                )
            ],
        )
        sagemaker.CfnEndpoint(
            stack, f"Endpoint{i}", endpoint_config_name=config.attr_endpoint_config_name
        )
    return app


def _llm_app(endpoints: int) -> object:
    from aws_cdk import App, Stack

    from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource

    app = App()
    stack = Stack(app, "Bench")
    for i in range(endpoints):
        model = LlmModel(
            stack,
            f"Model{i}",
            source=ModelSource.hugging_face(
                "meta-llama/Meta-Llama-3-8B-Instruct", needs_token=False
            ),
            engine=Engine.tgi(),
            instance_type="ml.g5.2xlarge",
        )
        LlmEndpoint(stack, f"Endpoint{i}", model=model)
    return app


@functools.cache
def _one_endpoint_template() -> dict[str, Any]:
    """The template of a one-endpoint ``_llm_app`` (the library's own output)."""
    with contextlib.redirect_stderr(io.StringIO()):
        assembly = _llm_app(1).synth()  # type: ignore[attr-defined]
    template: dict[str, Any] = assembly.stacks[0].template
    return template


def _same_template_app(endpoints: int) -> object:
    """The library app's template written in plain L1, the least a construct library can do
    to emit it: per endpoint, each resource of ``_llm_app``'s endpoint as a ``CfnResource``
    under the stack with the library's own type, properties, dependencies and metadata
    (its logical ID as its construct id, which keeps it), and the stack's mapping once."""
    from aws_cdk import App, CfnMapping, CfnResource, Stack

    template = _one_endpoint_template()
    text = json.dumps(template["Resources"])
    app = App()
    stack = Stack(app, "Bench")
    for name, mapping in template.get("Mappings", {}).items():
        CfnMapping(stack, name, mapping=mapping)
    for i in range(endpoints):
        # The one endpoint's ids end in "0" (``Model0``, ``Endpoint0``): endpoint i's in i.
        resources = json.loads(
            text.replace("Model0", f"Model{i}").replace("Endpoint0", f"Endpoint{i}")
        )
        for logical_id, resource in resources.items():
            if resource["Type"] == "AWS::CDK::Metadata":
                continue
            made = CfnResource(
                stack, logical_id, type=resource["Type"], properties=resource.get("Properties")
            )
            if "DependsOn" in resource:
                made.add_override("DependsOn", resource["DependsOn"])
            for key, value in resource.get("Metadata", {}).items():
                made.add_metadata(key, value)
    return app


def _public_types_app(endpoints: int) -> object:
    """The same resources, with each object the library's API hands back built as that type
    and everything else as in ``_same_template_app``: the execution role an ``iam.Role`` (with
    its image pull granted through it, as any grant), the Model, endpoint config and endpoint
    typed L1s (``model.resource``, ``endpoint.config``, ``endpoint.resource``), the four alarms
    ``cloudwatch.Alarm``s over ``cloudwatch.Metric``s (``endpoint.alarms``); the library's two
    policies of its own as ``CfnResource``s."""
    from aws_cdk import App, CfnMapping, CfnResource, Duration, Stack
    from aws_cdk import aws_cloudwatch as cloudwatch
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_sagemaker as sagemaker

    template = _one_endpoint_template()
    resources = template["Resources"]
    policies = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::IAM::Policy" and "DefaultPolicy" not in r["Properties"]["PolicyName"]
    ]
    alarms = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    model = next(r for r in resources.values() if r["Type"] == "AWS::SageMaker::Model")
    variant = next(
        r["Properties"]["ProductionVariants"][0]
        for r in resources.values()
        if r["Type"] == "AWS::SageMaker::EndpointConfig"
    )
    app = App()
    stack = Stack(app, "Bench")
    for name, mapping in template.get("Mappings", {}).items():
        CfnMapping(stack, name, mapping=mapping)
    principal = iam.ServicePrincipal("sagemaker.amazonaws.com")
    for i in range(endpoints):
        role = iam.Role(stack, f"Model{i}Role", assumed_by=principal, description="Execution role")
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["ecr:BatchGetImage"],
                resources=["arn:aws:ecr:us-east-1:763104351884:repository/tgi"],
            )
        )
        own = [
            CfnResource(stack, f"Model{i}Policy{k}", type="AWS::IAM::Policy", properties=p)
            for k, p in enumerate(policies)
        ]
        resource = sagemaker.CfnModel(
            stack,
            f"Model{i}",
            execution_role_arn=role.role_arn,
            primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                image="763104351884.dkr.ecr.us-east-1.amazonaws.com/tgi:latest",
                environment=model["Properties"]["PrimaryContainer"]["Environment"],
            ),
        )
        resource.node.add_dependency(*own)
        resource.add_metadata("checkov", model["Metadata"]["checkov"])
        config = sagemaker.CfnEndpointConfig(
            stack,
            f"Endpoint{i}Config",
            metrics_config=sagemaker.CfnEndpointConfig.MetricsConfigProperty(
                enable_detailed_observability=True
            ),
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=variant["VariantName"],
                    model_name=resource.attr_model_name,
                    initial_instance_count=1,
                    initial_variant_weight=1,
                    instance_type=variant["InstanceType"],
                    container_startup_health_check_timeout_in_seconds=900,
                    model_data_download_timeout_in_seconds=900,
                    routing_config=sagemaker.CfnEndpointConfig.RoutingConfigProperty(
                        routing_strategy="LEAST_OUTSTANDING_REQUESTS"
                    ),
                )
            ],
        )
        config.add_metadata("checkov", {"skip": []})
        endpoint = sagemaker.CfnEndpoint(
            stack, f"Endpoint{i}", endpoint_config_name=config.attr_endpoint_config_name
        )
        name = endpoint.attr_endpoint_name
        for k, alarm in enumerate(alarms):
            metric = cloudwatch.Metric(
                namespace=alarm["Namespace"],
                metric_name=alarm["MetricName"],
                dimensions_map={"EndpointName": name, "VariantName": variant["VariantName"]},
                statistic=alarm["Statistic"],
                period=Duration.seconds(alarm["Period"]),
            )
            cloudwatch.Alarm(
                stack,
                f"Endpoint{i}Alarm{k}",
                metric=metric,
                threshold=alarm["Threshold"],
                evaluation_periods=alarm["EvaluationPeriods"],
                datapoints_to_alarm=alarm["DatapointsToAlarm"],
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
                alarm_description=alarm["AlarmDescription"],
            )
    return app


def _components_app(components: int) -> object:
    from aws_cdk import App, Stack
    from aws_cdk import aws_s3 as s3

    from constructs_llm import (
        Autoscaling,
        Engine,
        InferenceComponent,
        InferenceComponentEndpoint,
        LlmModel,
        ModelSource,
    )

    app = App()
    for s in range(COMPONENT_STACKS):
        stack = Stack(app, f"Components{s}")
        bucket = s3.Bucket.from_bucket_name(stack, "Weights", "bench-weights")
        endpoint = InferenceComponentEndpoint(
            stack, "Shared", instance_type="ml.g5.12xlarge", min_instances=0, max_instances=5
        )
        for c in range(components):
            model = LlmModel(
                stack,
                f"Model{c}",
                source=ModelSource.s3(
                    bucket, f"llama-{c}/", model_id="meta-llama/Llama-3.1-8B-Instruct"
                ),
                engine=Engine.vllm(),
                max_total_tokens=8192,
            )
            InferenceComponent(
                stack,
                f"Component{c}",
                endpoint=endpoint,
                model=model,
                accelerators=1,
                min_memory_mib=16 * 1024,
                autoscaling=Autoscaling(
                    min_capacity=0, max_capacity=2, target_concurrent_requests=4
                ),
            )
    return app


def _built_and_synthesized(make: Callable[[int], object], size: int) -> tuple[float, int]:
    """Seconds from an empty app to its cloud assembly, and its CloudFormation resources
    (CDK's own metadata resource aside)."""
    started = time.perf_counter()
    app = make(size)
    assembly = app.synth()  # type: ignore[attr-defined]
    seconds = time.perf_counter() - started
    resources = sum(
        1
        for stack in assembly.stacks
        for r in stack.template.get("Resources", {}).values()
        if r["Type"] != "AWS::CDK::Metadata"
    )
    return seconds, resources


def _quietly(make: Callable[[int], object], size: int) -> tuple[float, int]:
    """As ``_built_and_synthesized``, with the note lines each synthesis prints dropped."""
    with contextlib.redirect_stderr(io.StringIO()):
        return _built_and_synthesized(make, size)


def _jsii_requests(make: Callable[[int], object], size: int) -> int:
    """The requests jsii sends to its Node.js process to build and synthesize the app (each a
    round trip; a callback's answer counts as one), counted by a wrapper on its process
    provider."""
    from jsii._kernel.providers import process

    sent = 0
    send = process._NodeProcess.send

    def counting(self: object, request: object, response_type: object) -> object:
        nonlocal sent
        sent += 1
        return send(self, request, response_type)  # type: ignore[arg-type]

    process._NodeProcess.send = counting  # type: ignore[method-assign,assignment]
    try:
        _quietly(make, size)
    finally:
        process._NodeProcess.send = send  # type: ignore[method-assign]
    return sent


@dataclass(frozen=True)
class _Pairs:
    """An app in plain L1 and the library's app of the same shape, each built and synthesized
    in turns: their times, the ratio of each pair (whole app and per resource), and the
    resources of each."""

    l1_times: list[float]
    times: list[float]
    ratios: list[float]
    per_resource: list[float]
    l1_resources: int
    resources: int


def _in_turns(
    l1_app: Callable[[int], object], app: Callable[[int], object], size: int, pairs: int
) -> _Pairs:
    _quietly(l1_app, min(size, 1))  # warm-ups: each app's modules load on first use
    _quietly(app, min(size, 1))
    measured = _Pairs([], [], [], [], 0, 0)
    for _ in range(pairs):  # in turns, so machine load hits both alike
        l1, l1_resources = _quietly(l1_app, size)
        llm, resources = _quietly(app, size)
        measured = replace(measured, l1_resources=l1_resources, resources=resources)
        measured.l1_times.append(l1)
        measured.times.append(llm)
        measured.ratios.append(llm / l1)
        measured.per_resource.append((llm / resources) / (l1 / l1_resources))
    return measured


def _against_l1() -> None:
    n = L1_ENDPOINTS
    pairs = _in_turns(_l1_app, _llm_app, n, L1_PAIRS)
    endpoint_ratio = statistics.median(pairs.ratios)
    resource_ratio = statistics.median(pairs.per_resource)
    l1_times, llm_times = pairs.l1_times, pairs.times
    counts = (pairs.l1_resources, pairs.resources)
    requests = (_jsii_requests(_l1_app, n) / n, _jsii_requests(_llm_app, n) / n)
    print(
        f"{n} LlmEndpoints vs {n} L1 endpoints, build + synth: "
        f"{statistics.median(llm_times) / n * 1000:.0f} ms vs "
        f"{statistics.median(l1_times) / n * 1000:.0f} ms per endpoint; "
        f"{counts[1] // n} vs {counts[0] // n} resources each (median of {L1_PAIRS} pairs); "
        f"{requests[1]:.0f} vs {requests[0]:.0f} jsii requests each"
    )
    print(
        f"  per endpoint: {endpoint_ratio:.2f}x L1 (goal <= {PER_ENDPOINT_GOAL}x) "
        f"{_verdict(endpoint_ratio <= PER_ENDPOINT_GOAL)}"
    )
    print(
        f"  per resource: {resource_ratio:.2f}x L1 (goal <= {PER_RESOURCE_GOAL}x) "
        f"{_verdict(resource_ratio <= PER_RESOURCE_GOAL)}"
    )
    # The floors, each against L1 in turns of its own: the same resources in plain L1, then
    # with the objects the library's API hands back built as their types.
    for what, make in (
        ("in plain L1 (a CfnResource each, the library's properties)", _same_template_app),
        (
            "with the API's types (role and alarms L2, SageMaker typed L1, the rest CfnResource)",
            _public_types_app,
        ),
    ):
        floor = _in_turns(_l1_app, make, n, L1_PAIRS)
        floor_ratio = statistics.median(floor.ratios)
        print(
            f"  the same {floor.resources // n} resources {what}: "
            f"{statistics.median(floor.times) / n * 1000:.0f} ms per endpoint "
            f"({_jsii_requests(make, n) / n:.0f} jsii requests), {floor_ratio:.2f}x L1 per "
            f"endpoint, {statistics.median(floor.per_resource):.2f}x per resource; the library "
            f"{endpoint_ratio / floor_ratio:.2f}x that"
        )


def _components() -> None:
    small, large = COMPONENT_SIZES
    growth: list[float] = []
    times: dict[int, list[float]] = {small: [], large: []}
    _quietly(_components_app, 1)  # warm-up
    for _ in range(COMPONENT_PAIRS):
        fewer, _ = _quietly(_components_app, small)
        more, _ = _quietly(_components_app, large)
        times[small].append(fewer)
        times[large].append(more)
        growth.append((more / large) / (fewer / small))
    ratio = statistics.median(growth)
    each = {size: statistics.median(t) / (COMPONENT_STACKS * size) for size, t in times.items()}
    print(
        f"{COMPONENT_STACKS} stacks x {small} / {large} inference components, build + synth: "
        f"{statistics.median(times[small]):.1f} s / {statistics.median(times[large]):.1f} s, "
        f"{each[small] * 1000:.0f} / {each[large] * 1000:.0f} ms per component "
        f"(median of {COMPONENT_PAIRS} pairs)"
    )
    print(
        f"  a component at {large} per endpoint costs {ratio:.2f}x one at {small} "
        f"(goal <= {COMPONENT_GROWTH_GOAL}x: linear) {_verdict(ratio <= COMPONENT_GROWTH_GOAL)}"
    )


def _fleet_app(_: int) -> object:
    from aws_cdk import App

    from stacks.fleet import fleet

    app = App()
    fleet(app, "Fleet")
    return app


def _fleet_l1_app(_: int) -> object:
    """The fleet's shape in plain L1: an endpoint config and endpoint per stack, a Model and an
    inference component per model."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_sagemaker as sagemaker

    from stacks.fleet import MODELS_PER_TEAM, TEAMS

    app = App()
    for team in TEAMS:
        stack = Stack(app, f"Fleet{team}")
        config = sagemaker.CfnEndpointConfig(
            stack,
            "Config",
            execution_role_arn="arn:aws:iam::123456789012:role/sagemaker",
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name="AllTraffic",
                    initial_instance_count=1,
                    instance_type="ml.g5.12xlarge",
                    managed_instance_scaling=sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
                        status="ENABLED", min_instance_count=0, max_instance_count=8
                    ),
                )
            ],
        )
        endpoint = sagemaker.CfnEndpoint(
            stack, "Endpoint", endpoint_config_name=config.attr_endpoint_config_name
        )
        for index in range(MODELS_PER_TEAM):
            model = sagemaker.CfnModel(
                stack,
                f"Model{index}",
                execution_role_arn="arn:aws:iam::123456789012:role/sagemaker",
                primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                    image="763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:latest",
                    model_data_url=f"s3://{team.lower()}-llm-weights/{index}/",
                ),
            )
            sagemaker.CfnInferenceComponent(
                stack,
                f"Component{index}",
                endpoint_name=endpoint.attr_endpoint_name,
                variant_name="AllTraffic",
                specification=sagemaker.CfnInferenceComponent.InferenceComponentSpecificationProperty(
                    model_name=model.attr_model_name,
                    compute_resource_requirements=sagemaker.CfnInferenceComponent.InferenceComponentComputeResourceRequirementsProperty(
                        number_of_accelerator_devices_required=1, min_memory_required_in_mb=16384
                    ),
                ),
                runtime_config=sagemaker.CfnInferenceComponent.InferenceComponentRuntimeConfigProperty(
                    copy_count=1
                ),
            )
    return app


def _fleet() -> None:
    from stacks.fleet import MODELS_PER_TEAM, TEAMS

    models = len(TEAMS) * MODELS_PER_TEAM
    pairs = _in_turns(_fleet_l1_app, _fleet_app, 0, FLEET_PAIRS)
    l1_times, per_model = pairs.l1_times, pairs.ratios
    counts = (pairs.l1_resources, pairs.resources)
    seconds = statistics.median(pairs.times)
    ratio = statistics.median(pairs.per_resource)
    print(
        f"fleet example: {models} models in {len(TEAMS)} stacks, build + synth: {seconds:.1f} s "
        f"vs {statistics.median(l1_times):.1f} s in plain L1 (median of {FLEET_PAIRS} pairs); "
        f"{counts[1] / models:.1f} vs {counts[0] / models:.1f} resources per model"
    )
    print(
        f"  per model: {statistics.median(per_model):.2f}x L1; the app: {seconds:.1f} s "
        f"(goal <= {FLEET_GOAL_S:.0f} s) {_verdict(seconds <= FLEET_GOAL_S)}"
    )
    print(
        f"  per resource: {ratio:.2f}x L1 (goal <= {FLEET_PER_RESOURCE_GOAL}x) "
        f"{_verdict(ratio <= FLEET_PER_RESOURCE_GOAL)}"
    )


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    core = "from constructs_llm import LlmModel, LlmEndpoint"
    (base, lazy, full), (_, lazy_ratio, full_ratio) = _import_times(
        "import aws_cdk.aws_sagemaker", "import constructs_llm", core
    )
    print(
        f"import aws_cdk.aws_sagemaker                       {base * 1000:8.0f} ms (baseline; "
        f"medians of {IMPORT_RUNS} turns)"
    )
    ratio = lazy_ratio
    print(
        f"import constructs_llm                              {lazy * 1000:8.0f} ms  {ratio:.2f}x "
        f"(goal <= {IMPORT_GOAL}x) {_verdict(ratio <= IMPORT_GOAL)}"
    )
    ratio = full_ratio
    print(
        f"{core}  {full * 1000:8.0f} ms  {ratio:.2f}x "
        f"(goal <= {CORE_IMPORT_GOAL}x) {_verdict(ratio <= CORE_IMPORT_GOAL)}; "
        f"aws_cdk modules loaded: {', '.join(_cdk_modules(core))}"
    )
    loads = _parser_loads_cdk()
    print(f"parse_stream loads aws_cdk: {loads} {_verdict(not loads)}")

    _synth_seconds(1)  # warm-up: jsii kernel start and first module loads
    times = {n: statistics.median(_synth_seconds(n) for _ in range(3)) for n in SIZES}
    for n, seconds in times.items():
        print(f"synth {n:3d} endpoint(s): {seconds:6.2f} s")
    per_endpoint = (times[SIZES[-1]] - times[SIZES[0]]) / (SIZES[-1] - SIZES[0])
    mid = times[SIZES[0]] + per_endpoint * (SIZES[1] - SIZES[0])
    linearity = times[SIZES[1]] / mid
    print(
        f"per added endpoint: {per_endpoint:.3f} s (goal <= {PER_ENDPOINT_GOAL_S} s) "
        f"{_verdict(per_endpoint <= PER_ENDPOINT_GOAL_S)}; 10-endpoint time is {linearity:.2f}x "
        "the straight line through 1 and 40"
    )
    _against_l1()
    _components()
    _fleet()


if __name__ == "__main__":
    main()
