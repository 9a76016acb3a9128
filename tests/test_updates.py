"""Updates that cannot break: the quota an update needs beside the fleet in service, and the
order CloudFormation applies an instance-type change in, read from the template's
dependencies (``DependsOn``, ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``) before and after.

CloudFormation creates and updates resources in dependency order, creates a replacement
before it deletes what it replaces, and deletes resources that left the template only in the
cleanup after every create and update; SageMaker refuses an UpdateEndpoint that changes the
instance type of, or removes, a variant registered with Application Auto Scaling (see
docs/endpoints-and-components.md, "How updates deploy"). An autoscaled endpoint takes that
change as a new endpoint (``FleetChange.NEW_ENDPOINT``, what ``cdk.json`` chooses for the
tests as for new apps) or in two deploys (``FleetChange.TWO_DEPLOYS``, the default without the
context flag); ``tests/test_operate.py`` runs the real ``cdk diff`` on the first."""

from __future__ import annotations

import fnmatch
import re
import tempfile
from collections.abc import Callable
from typing import Any

import botocore.session
import pytest
from aws_cdk import Acknowledgment, App, Duration, Stack, Validations
from aws_cdk.assertions import Annotations, Match, Template
from constructs import Construct

from constructs_llm import (
    Autoscaling,
    Deployment,
    FleetChange,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    StreamingInvoker,
    Variant,
)
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hosting.fleet_change import CONTEXT_KEY
from constructs_llm.hosting.names import SAGEMAKER_NAME, fleet_key
from constructs_llm.notes import notes_of
from constructs_llm.operations.deployment import update_surge
from tests.conftest import cdk_context
from tests.matrix.builders import G5, G5_4GPU, app_of, component, endpoint, model
from tests.support.template_graph import CONFIG, ENDPOINT, POLICY, TARGET, Graph

BAKE = Duration.minutes(5)
SCALING = Autoscaling(min_capacity=1, max_capacity=4, target_concurrent_requests=8)
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


#: The app context without the flag's choice: FleetChange.TWO_DEPLOYS by default.
TWO_DEPLOYS = {CONTEXT_KEY: False}


def _scaled(
    new_stack: Callable[..., Stack],
    instance_type: str,
    autoscaling: Autoscaling | None,
    *,
    new_endpoint: bool = False,
    **props: Any,
) -> tuple[Stack, Graph]:
    stack = new_stack(**{CONTEXT_KEY: new_endpoint})
    endpoint(stack, instance_type=instance_type, instance_count=2, autoscaling=autoscaling, **props)
    return stack, Graph(Template.from_stack(stack))


def _fleet_warnings(stack: Stack) -> list[str]:
    """The ids of the stack's ``*-fleet:`` warnings."""
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    ids = [re.search(r"\[ack: ([^\]]+)\]$", str(w.entry.data)) for w in found]
    return [m.group(1) for m in ids if m and "-fleet:" in m.group(1)]


# -- an instance-type change on an autoscaled endpoint, in two deploys ----------------------------


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
        **TWO_DEPLOYS,
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
    stack = new_stack(**TWO_DEPLOYS)
    blue = model(stack, id="Blue", bound=False)
    LlmEndpoint(stack, "Endpoint", variants=[Variant(model=blue, name="blue", autoscaling=SCALING)])
    pooled = new_stack(**TWO_DEPLOYS)
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
    # AND the pools warning says a pool change is untried in place
    Annotations.from_stack(pooled).has_warning(
        "/Test/Endpoint",
        Match.string_like_regexp("try adding, dropping or reordering pools on a staging endpoint"),
    )


def test_a_guarded_autoscaled_endpoint_says_its_hardware_change_follows_a_deploy_without_scaling(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack(**TWO_DEPLOYS)
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


# -- an instance-type change on an autoscaled endpoint, as a new endpoint -------------------------


def _endpoint_name(graph: Graph) -> str:
    name: str = graph.props(graph.one(ENDPOINT))["EndpointName"]
    return name


def test_a_new_fleet_is_a_new_endpoint_under_the_same_logical_ids(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN an autoscaled endpoint named after its fleet, on ml.g5.2xlarge, then ml.g6.2xlarge
    _, before = _scaled(new_stack, "ml.g5.2xlarge", SCALING, new_endpoint=True)
    _, after = _scaled(new_stack, "ml.g6.2xlarge", SCALING, new_endpoint=True)
    # THEN every logical id stays, and the Endpoint's name, its one create-only property, follows
    # the fleet: CloudFormation replaces the Endpoint instead of updating it (UpdateEndpoint,
    # which SageMaker would refuse, never runs)
    assert set(before.resources) == set(after.resources)
    assert _endpoint_name(before) == "Test-Endpoint-0FBD4E12-g5-2xlarge"
    assert _endpoint_name(after) == "Test-Endpoint-0FBD4E12-g6-2xlarge"
    # AND the order: the new config, then the new endpoint, then the scalable target that
    # registers its variant (it names the endpoint by GetAtt), then its policy; the cleanup
    # deletes the old ones in the reverse order, the target before its endpoint
    endpoint_id, target_id = after.one(ENDPOINT), after.one(TARGET)
    assert after.waits_for(endpoint_id, after.one(CONFIG))
    assert after.props(target_id)["ResourceId"] == {
        "Fn::Join": [
            "",
            ["endpoint/", {"Fn::GetAtt": [endpoint_id, "EndpointName"]}, "/variant/g6-2xlarge"],
        ]
    }
    assert after.waits_for(after.one(POLICY), target_id)
    assert not after.waits_for(endpoint_id, target_id)


def test_a_change_that_keeps_the_fleet_keeps_the_endpoint(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a new env on the same fleet
    _, before = _scaled(new_stack, "ml.g5.2xlarge", SCALING, new_endpoint=True)
    changed = {"env": {"MAX_BATCH_PREFILL_TOKENS": "2048"}}
    stack = new_stack(**{CONTEXT_KEY: True})
    endpoint(stack, instance_count=2, autoscaling=SCALING, model_props=changed)
    after = Graph(Template.from_stack(stack))
    # THEN the name stays: CloudFormation updates the Endpoint in place (a blue/green update of
    # the same variant, which SageMaker allows with autoscaling)
    assert _endpoint_name(after) == _endpoint_name(before)
    assert after.variant_names() == before.variant_names()
    assert after.props(after.one(TARGET)) == before.props(before.one(TARGET))


def test_a_new_endpoint_has_no_fleet_warning_on_its_first_synth(
    new_stack: Callable[..., Stack],
) -> None:
    stack, _ = _scaled(new_stack, "ml.g5.2xlarge", SCALING, new_endpoint=True)
    assert _fleet_warnings(stack) == []
    # AND pools of one capacity have nothing left to warn about either
    pooled = new_stack(**{CONTEXT_KEY: True})
    LlmEndpoint(
        pooled,
        "Endpoint",
        model=model(pooled, instance_type=None, bound=False),
        instance_type=["ml.g5.4xlarge", "ml.g6.4xlarge"],
        autoscaling=SCALING,
    )
    found = Annotations.from_stack(pooled).find_warning("*", Match.any_value())
    assert not [w for w in found if "pools-autoscaling" in str(w.entry.data)]
    assert _fleet_warnings(pooled) == []


@pytest.mark.parametrize(
    ("types", "suffix"),
    [
        (["ml.g5.2xlarge"], "-g5-2xlarge"),
        # pools: the fleet key (pools:g6e-2xlarge+g5-4xlarge) has characters a name cannot
        # hold, so the first 8 hex digits of its SHA-256 stand for it
        (["ml.g6e.2xlarge", "ml.g5.4xlarge"], "-39caa4d2"),
        (["ml.g5.4xlarge", "ml.g6e.2xlarge"], "-704cc1bb"),  # another order, another fleet
    ],
)
def test_the_name_names_the_fleet_within_sagemaker_s_pattern(
    new_stack: Callable[..., Stack], types: list[str], suffix: str
) -> None:
    stack = new_stack(**{CONTEXT_KEY: True})
    long_path = Construct(stack, "AVeryLongConstructIdThatTakesMostOfTheRoomInTheName" * 2)
    LlmEndpoint(
        long_path,
        "Endpoint",
        model=model(stack, instance_type=None, bound=False),
        instance_type=types if len(types) > 1 else types[0],
        autoscaling=SCALING,
    )
    name = _endpoint_name(Graph(Template.from_stack(stack)))
    assert name.endswith(suffix) and len(name) <= 63
    assert SAGEMAKER_NAME.match(name)


def _fleet_endpoint(stack: Stack, path: str, instance_type: str | list[str]) -> Graph:
    scope = Construct(stack, path) if path else stack
    LlmEndpoint(
        scope,
        "Endpoint",
        model=model(stack, instance_type=None, bound=False),
        instance_type=instance_type,
        autoscaling=SCALING,
    )
    return Graph(Template.from_stack(stack))


def _logged_groups(graph: Graph) -> list[str]:
    """The log-group patterns the execution role may write, after ``log-group:``."""
    groups = []
    for policy in graph.of("AWS::IAM::Policy"):
        for statement in graph.props(policy)["PolicyDocument"]["Statement"]:
            if "logs:PutLogEvents" not in statement["Action"]:
                continue
            for arn in statement["Resource"]:
                tail = str(arn["Fn::Join"][1][-1]).split(":log-group:", 1)[1]
                groups += [tail] if ":log-stream:" not in tail else []
    return groups


@pytest.mark.parametrize("path", ["", "AVeryLongConstructIdThatTakesMostOfTheRoomInTheName" * 2])
def test_the_endpoint_a_new_fleet_replaces_keeps_writing_its_logs(
    new_stack: Callable[..., Stack], path: str
) -> None:
    # GIVEN an endpoint named after its fleet, deployed on one instance type, then on pools
    # (whose hashed fleet makes a suffix of another length), then on a long-named type
    fleets: list[str | list[str]] = [
        "ml.g5.2xlarge",
        ["ml.g6e.2xlarge", "ml.g5.4xlarge"],
        "ml.g6e.12xlarge",
    ]
    graphs = [_fleet_endpoint(new_stack(**{CONTEXT_KEY: True}), path, f) for f in fleets]
    names = [f"/aws/sagemaker/Endpoints/{_endpoint_name(g)}" for g in graphs]
    assert len(set(names)) == len(fleets)
    # THEN each deploy's role may write every fleet's group: during the cut-over the old
    # endpoint's containers still log, until CloudFormation deletes it in the cleanup
    for graph in graphs:
        (pattern,) = _logged_groups(graph)
        assert pattern.endswith("*") and pattern != "/aws/sagemaker/Endpoints/*"
        assert all(fnmatch.fnmatchcase(name, pattern) for name in names), (pattern, names)
    # AND no group of an endpoint elsewhere in the stack
    other = _fleet_endpoint(new_stack(**{CONTEXT_KEY: True}), "Other", "ml.g5.2xlarge")
    other_group = f"/aws/sagemaker/Endpoints/{_endpoint_name(other)}"
    assert not fnmatch.fnmatchcase(other_group, _logged_groups(graphs[0])[0])


def test_an_endpoint_that_keeps_its_name_writes_its_one_group(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN two deploys (no name follows the fleet) and a given name
    stack = new_stack(**{CONTEXT_KEY: False})
    LlmEndpoint(
        stack,
        "Endpoint",
        model=model(stack, instance_type=None, bound=False),
        instance_type="ml.g5.2xlarge",
        autoscaling=SCALING,
        endpoint_name="chat",
    )
    # THEN the role writes that one group
    assert _logged_groups(Graph(Template.from_stack(stack))) == ["/aws/sagemaker/Endpoints/chat"]


def test_without_autoscaling_the_endpoint_keeps_a_generated_name(
    new_stack: Callable[..., Stack],
) -> None:
    _, graph = _scaled(new_stack, "ml.g5.2xlarge", None, new_endpoint=True)
    assert "EndpointName" not in graph.props(graph.one(ENDPOINT))


def test_the_app_context_chooses_the_default_and_fleet_change_overrides_it() -> None:
    def name(flag: object, **props: Any) -> str | None:
        # cdk.json's context, with the flag as given (None: an app without it, upgraded from
        # an earlier version of the library)
        context = {k: v for k, v in cdk_context().items() if k != CONTEXT_KEY}
        stack = Stack(
            App(context={**context, CONTEXT_KEY: flag} if flag is not None else context), "Test"
        )
        endpoint(stack, autoscaling=SCALING, **props)
        graph = Graph(Template.from_stack(stack))
        found: str | None = graph.props(graph.one(ENDPOINT)).get("EndpointName")
        return found

    assert name(None) is None  # no flag: two deploys, the name CloudFormation generates
    assert name("true") == "Test-Endpoint-0FBD4E12-g5-2xlarge"  # cdk synth -c key=true
    assert name(True, fleet_change=FleetChange.TWO_DEPLOYS) is None
    assert name(False, fleet_change=FleetChange.NEW_ENDPOINT) is not None


def test_a_guarded_autoscaled_endpoint_named_after_its_fleet_says_a_type_change_replaces_it(
    new_stack: Callable[..., Stack],
) -> None:
    stack, graph = _scaled(
        new_stack,
        "ml.g5.2xlarge",
        Autoscaling(min_capacity=2, max_capacity=4, target_concurrent_requests=8),
        new_endpoint=True,
        deployment=Deployment.canary(percent=25, bake=BAKE),
    )
    # THEN the guarded endpoint's name is the fleet's (its rollback alarms name it as it is)
    assert _endpoint_name(graph).endswith("-g5-2xlarge")
    Annotations.from_stack(stack).has_warning(
        "/Test/Endpoint",
        Match.string_like_regexp(
            r"guards updates on ml\.g5\.2xlarge.*with autoscaling and FleetChange\.NEW_ENDPOINT, "
            r"that deploy replaces the endpoint"
        ),
    )
    assert _fleet_warnings(stack) == []


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
