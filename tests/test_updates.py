"""Updates that cannot break: the quota an update needs beside the fleet in service, and the
order CloudFormation applies an instance-type change in, read from the template's
dependencies (``DependsOn``, ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``) before and after.

CloudFormation creates and updates resources in dependency order, creates a replacement
before it deletes what it replaces, and deletes resources that left the template only in the
cleanup after every create and update; SageMaker refuses an UpdateEndpoint that changes the
instance type of, or removes, a variant registered with Application Auto Scaling (see
docs/endpoints-and-components.md, "How updates deploy")."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import botocore.session
import pytest
from aws_cdk import Acknowledgment, App, Duration, Stack, Validations
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    Autoscaling,
    Deployment,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    StreamingInvoker,
    Variant,
)
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hosting.names import fleet_key
from constructs_llm.notes import notes_of
from constructs_llm.operations.deployment import update_surge
from tests.conftest import cdk_context
from tests.matrix.builders import G5, G5_4GPU, app_of, component, endpoint, model

BAKE = Duration.minutes(5)
SCALING = Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8)
ENDPOINT = "AWS::SageMaker::Endpoint"
CONFIG = "AWS::SageMaker::EndpointConfig"
TARGET = "AWS::ApplicationAutoScaling::ScalableTarget"
POLICY = "AWS::ApplicationAutoScaling::ScalingPolicy"
COMPONENT = "AWS::SageMaker::InferenceComponent"


def _quotas(construct: object) -> list[str]:
    return [n for n in notes_of(construct) if n.startswith("Service Quotas")]  # type: ignore[arg-type]


# -- the quota an update needs ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deployment", "surge"),
    [
        (None, 6),  # SageMaker's default: blue/green, all at once
        (Deployment.canary(percent=10, bake=BAKE), 6),
        (Deployment.linear(step_percent=20, bake=BAKE), 6),
        (Deployment.all_at_once(bake=BAKE), 6),
        (Deployment.rolling(batch_percent=25, bake=BAKE), 2),  # 25 % of 6, rounded up
        (Deployment.rolling(batch_percent=5, bake=BAKE), 1),  # at least one instance
        (Deployment.rolling(batch_percent=50, bake=BAKE), 3),
    ],
)
def test_an_update_runs_a_second_fleet_or_one_rolling_batch_beside_the_first(
    deployment: Deployment | None, surge: int
) -> None:
    assert update_surge(deployment, 6).instances == surge


def test_a_blue_green_endpoint_needs_the_quota_for_two_fleets_at_its_maximum(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an endpoint that may scale to 4 instances, updated blue/green (the default)
    scaled = endpoint(
        new_stack(),
        instance_count=2,
        autoscaling=Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
    )
    # THEN its quota note counts the new fleet beside the old, both at the maximum
    assert _quotas(scaled) == [
        f"Service Quotas: '{G5} for endpoint usage' must allow at least 8 instance(s) in the "
        "target region (new accounts often have 0): 4 in service at most, and 4 more while a "
        "blue/green update runs the new fleet beside the old"
    ]


def test_a_rolling_endpoint_needs_only_one_batch_beside_its_fleet(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN the same endpoint, updated in rolling batches of 25 %
    rolled = endpoint(
        new_stack(),
        instance_count=2,
        autoscaling=Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
        deployment=Deployment.rolling(batch_percent=25, bake=BAKE),
    )
    # THEN a batch of one instance (25 % of 4) comes up beside the four
    assert _quotas(rolled) == [
        f"Service Quotas: '{G5} for endpoint usage' must allow at least 5 instance(s) in the "
        "target region (new accounts often have 0): 4 in service at most, and 1 more while a "
        "rolling update runs a batch (25 % of the fleet) beside them"
    ]


def test_variants_on_one_instance_type_add_up_both_fleets(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN two variants on ml.g5.2xlarge (3 and up to 2 instances) and one on ml.g5.12xlarge
    stack = new_stack()
    a = model(stack, id="A", bound=False)
    b = model(stack, id="B", bound=False)
    ab = LlmEndpoint(
        stack,
        "Endpoint",
        variants=[
            Variant(model=a, instance_count=3),
            Variant(
                model=b,
                autoscaling=Autoscaling(max_capacity=2, target_concurrent_requests=8),
            ),
            Variant(model=b, instance_type=G5_4GPU, name="big"),
        ],
    )
    # THEN UpdateEndpoint replaces every variant's fleet: each type counts its variants twice
    assert _quotas(ab) == [
        f"Service Quotas: '{G5} for endpoint usage' must allow at least 10 instance(s) in the "
        "target region (new accounts often have 0): 5 in service at most, and 5 more while a "
        "blue/green update runs the new fleet beside the old",
        f"Service Quotas: '{G5_4GPU} for endpoint usage' must allow at least 2 instance(s) in "
        "the target region (new accounts often have 0): 1 in service at most, and 1 more while "
        "a blue/green update runs the new fleet beside the old",
    ]


def test_a_component_endpoint_needs_a_second_fleet_for_an_update_of_its_config(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN components on an endpoint of at most 3 instances
    stack = new_stack()
    chat: InferenceComponent = component(stack, endpoint_props={"max_instances": 3}, accelerators=1)
    app_of(stack).synth()
    # THEN its quota counts a new fleet of max_instances beside the old one
    assert _quotas(chat.endpoint) == [
        f"Service Quotas: '{G5_4GPU} for endpoint usage' must allow at least 6 instance(s) in "
        "the target region (new accounts often have 0): 3 in service at most, and 3 more while "
        "an update of the endpoint's config runs a new fleet beside the old"
    ]


# -- the template's dependency graph --------------------------------------------------------------


def _references(node: Any) -> Iterator[str]:
    """The logical ids ``node`` names by ``Ref``, ``Fn::GetAtt`` or ``Fn::Sub``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                yield value
            elif key == "Fn::GetAtt":
                yield value[0] if isinstance(value, list) else str(value).split(".")[0]
            elif key == "Fn::Sub":
                text = value[0] if isinstance(value, list) else value
                yield from (m.split(".")[0] for m in re.findall(r"\$\{([^!}][^}]*)\}", text))
                if isinstance(value, list):
                    yield from _references(value[1])
            else:
                yield from _references(value)
    elif isinstance(node, list):
        for item in node:
            yield from _references(item)


class Graph:
    """A synthesized template's resources, by logical id, and what each waits for."""

    def __init__(self, template: Template) -> None:
        self.resources: dict[str, Any] = template.to_json()["Resources"]
        self.edges: dict[str, set[str]] = {}
        for logical_id, resource in self.resources.items():
            depends = resource.get("DependsOn", [])
            named = set(_references(resource.get("Properties", {})))
            named |= {depends} if isinstance(depends, str) else set(depends)
            self.edges[logical_id] = named & set(self.resources)

    def one(self, kind: str) -> str:
        (logical_id,) = self.of(kind)
        return logical_id

    def of(self, kind: str) -> list[str]:
        return [k for k, v in self.resources.items() if v["Type"] == kind]

    def props(self, logical_id: str) -> dict[str, Any]:
        props: dict[str, Any] = self.resources[logical_id]["Properties"]
        return props

    def waits_for(self, later: str, earlier: str) -> bool:
        """Whether CloudFormation creates or updates ``earlier`` before ``later`` (a path of
        dependencies leads from ``later`` to ``earlier``)."""
        seen: set[str] = set()
        todo = [later]
        while todo:
            for named in self.edges[todo.pop()] - seen:
                if named == earlier:
                    return True
                seen.add(named)
                todo.append(named)
        return False

    def variant_names(self) -> list[str]:
        variants = self.props(self.one(CONFIG))["ProductionVariants"]
        return [v["VariantName"] for v in variants]


def _scaled(
    new_stack: Callable[..., Stack], instance_type: str, autoscaling: Autoscaling | None
) -> tuple[Stack, Graph]:
    stack = new_stack()
    endpoint(stack, instance_type=instance_type, instance_count=2, autoscaling=autoscaling)
    return stack, Graph(Template.from_stack(stack))


def _fleet_warnings(stack: Stack) -> list[str]:
    """The ids of the stack's ``*-fleet:`` warnings."""
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    ids = [re.search(r"\[ack: ([^\]]+)\]$", str(w.entry.data)) for w in found]
    return [m.group(1) for m in ids if m and "-fleet:" in m.group(1)]


# -- an instance-type change on an autoscaled endpoint ---------------------------------------------


def test_one_deploy_would_update_the_endpoint_before_the_old_scalable_target_goes(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an autoscaled endpoint on ml.g5.2xlarge, then the same on ml.g6.2xlarge
    _, before = _scaled(new_stack, "ml.g5.2xlarge", SCALING)
    _, after = _scaled(new_stack, "ml.g6.2xlarge", SCALING)
    # THEN no logical id changes: the Endpoint is updated in place (UpdateEndpoint), and the
    # scalable target keeps its id while its create-only ResourceId changes (a replacement)
    assert set(before.resources) == set(after.resources)
    endpoint_id, target_id = after.one(ENDPOINT), after.one(TARGET)
    assert (before.one(ENDPOINT), before.one(TARGET)) == (endpoint_id, target_id)
    assert "variant/g5-2xlarge" in str(before.props(target_id)["ResourceId"])
    assert "variant/g6-2xlarge" in str(after.props(target_id)["ResourceId"])
    # AND the new config drops the variant the old target is registered on
    assert before.variant_names() == ["g5-2xlarge"]
    assert after.variant_names() == ["g6-2xlarge"]
    # AND the target names the endpoint by GetAtt, so CloudFormation updates the endpoint first
    # and creates the replacement target after it; nothing makes the endpoint wait for a target,
    # and the old one is deleted only in the cleanup after the update: UpdateEndpoint runs while
    # g5-2xlarge is still registered, which SageMaker refuses
    assert after.waits_for(target_id, endpoint_id)
    assert after.waits_for(endpoint_id, after.one(CONFIG))
    assert not after.waits_for(endpoint_id, target_id)
    assert after.waits_for(after.one(POLICY), target_id)


def test_two_deploys_remove_the_old_target_before_the_variant_changes(
    new_stack: Callable[..., Stack],
) -> None:
    _, deployed = _scaled(new_stack, "ml.g5.2xlarge", SCALING)
    # GIVEN first a deploy without autoscaling, on the same instance type
    first_stack, first = _scaled(new_stack, "ml.g5.2xlarge", None)
    # THEN its endpoint update keeps the registered variant as it is (same name and type:
    # allowed), and the target and its policy leave the template: CloudFormation deletes them
    # (DeregisterScalableTarget) in that deploy's cleanup
    assert first.variant_names() == deployed.variant_names() == ["g5-2xlarge"]
    config = first.props(first.one(CONFIG))["ProductionVariants"][0]
    assert config["InstanceType"] == "ml.g5.2xlarge"
    assert first.of(TARGET) == first.of(POLICY) == []
    assert first.one(ENDPOINT) == deployed.one(ENDPOINT)
    assert _fleet_warnings(first_stack) == []
    # GIVEN then the new instance type with autoscaling
    _, second = _scaled(new_stack, "ml.g6.2xlarge", SCALING)
    # THEN the endpoint update renames a variant nothing is registered on any more, and the new
    # target is created after it, on the new variant
    assert second.variant_names() == ["g6-2xlarge"]
    assert second.waits_for(second.one(TARGET), second.one(ENDPOINT))


def test_each_autoscaled_variant_warns_under_an_id_naming_its_fleet(
    new_stack: Callable[..., Stack],
) -> None:
    before, _ = _scaled(new_stack, "ml.g5.2xlarge", SCALING)
    after, _ = _scaled(new_stack, "ml.g6.2xlarge", SCALING)
    fixed, _ = _scaled(new_stack, "ml.g5.2xlarge", None)
    assert _fleet_warnings(before) == ["constructs-llm:autoscaled-fleet:g5-2xlarge"]
    assert _fleet_warnings(after) == ["constructs-llm:autoscaled-fleet:g6-2xlarge"]
    assert _fleet_warnings(fixed) == []  # nothing registered, nothing to deregister
    Annotations.from_stack(before).has_warning(
        "/Test/Endpoint",
        Match.string_like_regexp(
            r"Test/Endpoint variant g5-2xlarge scales on ml\.g5\.2xlarge .*SageMaker refuses an "
            r"endpoint update that changes the instance type of, or removes, a variant "
            r"registered for autoscaling .*endpoint-scaling-update\.html.*two deploys: first "
            r"with autoscaling=None .*acknowledge "
            r"Annotation::constructs-llm:autoscaled-fleet:g5-2xlarge"
        ),
    )


def _strict_synth(build: Callable[[Stack], object], acknowledged: str | None) -> str | None:
    """Synthesizes ``build`` with warnings as errors (the examples' strict mode); the error,
    or None."""
    context = {
        **cdk_context(annotations_in_report=True),
        "@aws-cdk/core:strictCfnValidateErrors": True,
    }
    app = App(outdir=tempfile.mkdtemp(), context=context)
    stack = Stack(app, "Test")
    build(stack)
    Validations.of(stack).acknowledge(
        Acknowledgment(id="Annotation::constructs-llm:gated-model-no-token", reason="test")
    )
    if acknowledged:
        Validations.of(stack).acknowledge(Acknowledgment(id=acknowledged, reason="deployed"))
    try:
        app.synth()
    except Exception as error:  # jsii raises the CDK's validation error as a RuntimeError
        return str(error)
    return None


def test_an_acknowledged_fleet_does_not_cover_a_new_instance_type() -> None:
    """The acknowledgment is the state the user gives: it names the fleet deployed, so after
    an instance-type change the new fleet's warning is unacknowledged, and a strict synth
    stops before any deploy."""

    def on(instance_type: str) -> Callable[[Stack], object]:
        return lambda stack: endpoint(
            stack, instance_type=instance_type, instance_count=2, autoscaling=SCALING
        )

    old = "Annotation::constructs-llm:autoscaled-fleet:g5-2xlarge"
    assert _strict_synth(on("ml.g5.2xlarge"), old) is None
    failed = _strict_synth(on("ml.g6.2xlarge"), old)
    assert failed is not None and "constructs-llm:autoscaled-fleet:g6-2xlarge" in failed
    assert _strict_synth(on("ml.g6.2xlarge"), old.replace("g5", "g6")) is None


@pytest.mark.parametrize(
    ("name", "types", "key"),
    [
        ("g5-12xlarge", ["ml.g5.12xlarge"], "g5-12xlarge"),  # LlmEndpoint(model=...)
        ("Llama-g5-12xlarge", ["ml.g5.12xlarge"], "Llama-g5-12xlarge"),  # Variant(model=...)
        ("blue", ["ml.g5.12xlarge"], "blue:g5-12xlarge"),  # Variant(name="blue")
        ("pools", ["ml.g6e.2xlarge", "ml.g5.4xlarge"], "pools:g6e-2xlarge+g5-4xlarge"),
    ],
)
def test_the_fleet_key_changes_whenever_the_instance_types_do(
    name: str, types: list[str], key: str
) -> None:
    assert fleet_key(name, [InstanceType(t) for t in types]) == key


def test_a_named_variant_and_pools_warn_with_their_instance_types(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    blue = model(stack, id="Blue", bound=False)
    LlmEndpoint(stack, "Endpoint", variants=[Variant(model=blue, name="blue", autoscaling=SCALING)])
    pooled = new_stack()
    LlmEndpoint(
        pooled,
        "Endpoint",
        model=model(pooled, instance_type=None, bound=False),
        instance_type=["ml.g6e.2xlarge", "ml.g5.4xlarge"],
        autoscaling=SCALING,
    )
    assert _fleet_warnings(stack) == ["constructs-llm:autoscaled-fleet:blue:g5-2xlarge"]
    assert _fleet_warnings(pooled) == [
        "constructs-llm:autoscaled-fleet:pools:g6e-2xlarge+g5-4xlarge"
    ]


def test_a_guarded_autoscaled_endpoint_says_its_hardware_change_follows_a_deploy_without_scaling(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    endpoint(
        stack,
        instance_count=2,
        autoscaling=Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
        deployment=Deployment.canary(percent=25, bake=BAKE),
    )
    Annotations.from_stack(stack).has_warning(
        "/Test/Endpoint",
        Match.string_like_regexp(
            r"guards updates on ml\.g5\.2xlarge.*shifts all traffic to the new fleet at once.*; "
            r"with autoscaling, that deploy must follow one with autoscaling=None "
            r"\(constructs-llm:autoscaled-fleet\) \[ack"
        ),
    )


# -- an instance-type change on an inference-component endpoint ------------------------------------


def _shared(
    stack: Stack, instance_type: str, *, ids: tuple[str, str] = ("Shared", "Chat")
) -> InferenceComponent:
    served = model(stack, instance_type=instance_type, bound=False)
    shared = InferenceComponentEndpoint(stack, ids[0], instance_type=instance_type)
    chat = InferenceComponent(
        stack, ids[1], endpoint=shared, model=served, accelerators=1, min_memory_mib=16 * 1024
    )
    StreamingInvoker(stack, "Stream", target=chat)
    return chat


def test_components_name_the_variant_an_instance_type_change_renames(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN components on ml.g5.12xlarge, then the same on ml.g6.12xlarge
    stacks = [new_stack(), new_stack()]
    _shared(stacks[0], G5_4GPU)
    _shared(stacks[1], "ml.g6.12xlarge")
    before, after = (Graph(Template.from_stack(s)) for s in stacks)
    # THEN the endpoint and the component keep their logical ids, the endpoint's variant is
    # renamed, and the component, updated in place after the endpoint, names the new variant
    component_id, endpoint_id = after.one(COMPONENT), after.one(ENDPOINT)
    assert (before.one(COMPONENT), before.one(ENDPOINT)) == (component_id, endpoint_id)
    assert before.variant_names() == ["g5-12xlarge"] and after.variant_names() == ["g6-12xlarge"]
    assert before.props(component_id)["VariantName"] == "g5-12xlarge"
    assert after.props(component_id)["VariantName"] == "g6-12xlarge"
    assert after.waits_for(component_id, endpoint_id)
    # AND no API call can do that: a component's variant is set when it is created, and
    # UpdateInferenceComponent takes neither a variant nor an endpoint
    sagemaker = botocore.session.get_session().get_service_model("sagemaker")
    create = sagemaker.operation_model("CreateInferenceComponent").input_shape.members
    update = sagemaker.operation_model("UpdateInferenceComponent").input_shape.members
    assert {"VariantName", "EndpointName"} <= set(create)
    assert not {"VariantName", "EndpointName"} & set(update)
    # AND the synth warns under an id naming the fleet, which the change renames
    assert _fleet_warnings(stacks[0]) == ["constructs-llm:component-fleet:g5-12xlarge"]
    assert _fleet_warnings(stacks[1]) == ["constructs-llm:component-fleet:g6-12xlarge"]


def test_the_safe_path_is_a_new_endpoint_with_new_components(
    new_stack: Callable[..., Stack],
) -> None:
    stacks = [new_stack(), new_stack()]
    _shared(stacks[0], G5_4GPU)
    # GIVEN the new hardware under new construct ids, as the warning says
    _shared(stacks[1], "ml.g6.12xlarge", ids=("SharedG6", "ChatG6"))
    before, after = (Graph(Template.from_stack(s)) for s in stacks)
    # THEN the endpoint, its config and the component are new resources: CloudFormation
    # creates them and updates the invoker to name the new component...
    for kind in (ENDPOINT, CONFIG, COMPONENT):
        assert not set(before.of(kind)) & set(after.of(kind)), kind
    (function,) = (k for k in after.of("AWS::Lambda::Function") if k.startswith("Stream"))
    assert function in before.resources
    assert after.waits_for(function, after.one(COMPONENT))
    # ...and, in the cleanup, deletes the old ones in the old template's reverse order: the
    # component (which named the old endpoint) before the endpoint
    assert before.waits_for(before.one(COMPONENT), before.one(ENDPOINT))
    assert Annotations.from_stack(stacks[1]).find_warning(
        "/Test/SharedG6", Match.string_like_regexp("new construct ids")
    )


def test_an_endpoint_without_components_does_not_warn(new_stack: Callable[..., Stack]) -> None:
    stack = new_stack()
    InferenceComponentEndpoint(stack, "Shared", instance_type=G5_4GPU)
    assert _fleet_warnings(stack) == []
