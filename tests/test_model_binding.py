"""One model, many placements: each distinct placement gets its own SageMaker Model, with env,
memory plan and warnings derived for it, under a construct id of the placement's own."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Annotations, Match, Template

from constructs_llm import (
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    Placement,
)
from constructs_llm.errors import ConfigurationError
from constructs_llm.notes import notes_of

LLAMA3 = "meta-llama/Meta-Llama-3-8B-Instruct"
MISTRAL = "mistralai/Mistral-7B-Instruct-v0.2"


def _llama(stack: Stack, **props: Any) -> LlmModel:
    return LlmModel(
        stack,
        "Model",
        source=ModelSource.hugging_face(LLAMA3, needs_token=False),
        engine=Engine.tgi(),
        max_input_tokens=2048,
        max_total_tokens=4096,
        **props,
    )


def _models(stack: Stack) -> dict[str, Any]:
    """SageMaker Models by logical id, as the template holds them."""
    return dict(Template.from_stack(stack).find_resources("AWS::SageMaker::Model"))


def _gpus(resource: dict[str, Any]) -> str:
    return str(resource["Properties"]["PrimaryContainer"]["Environment"]["SM_NUM_GPUS"])


# -- the value ----------------------------------------------------------------------------------


def test_all_devices_given_explicitly_is_the_whole_instance() -> None:
    whole = Placement("ml.g5.12xlarge")
    assert Placement("ml.g5.12xlarge", accelerators=4) == whole
    assert hash(Placement("ml.g5.12xlarge", accelerators=4)) == hash(whole)
    assert Placement("ml.g5.12xlarge", accelerators=1) != whole
    assert (whole.accelerators, whole.devices, whole.whole_instance) == (None, 4, True)


def test_ids_and_descriptions_come_from_the_placement_alone() -> None:
    assert Placement("ml.g5.12xlarge").construct_id == "G5-12xlarge"
    assert Placement("ml.g5.12xlarge", 1).construct_id == "G5-12xlarge-1Device"
    assert Placement("ml.inf2.24xlarge", 3).construct_id == "Inf2-24xlarge-3Devices"
    assert Placement("ml.g5.12xlarge", 1).describe() == (
        "the 1 accelerator(s) each copy gets on ml.g5.12xlarge"
    )
    assert repr(Placement("ml.g5.12xlarge", 1)) == "Placement('ml.g5.12xlarge', accelerators=1)"


# -- endpoints ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_endpoints(new_stack: Callable[..., Stack]) -> tuple[Stack, LlmModel, list[LlmEndpoint]]:
    # GIVEN one model with no default placement
    stack = new_stack()
    model = _llama(stack)
    # WHEN it is served on a one-GPU and a four-GPU instance type (and a second endpoint on
    # the first, which must share its Model)
    endpoints = [
        LlmEndpoint(stack, name, model=model, instance_type=instance)
        for name, instance in (
            ("Small", "ml.g5.2xlarge"),
            ("Big", "ml.g5.12xlarge"),
            ("SmallToo", "ml.g5.2xlarge"),
        )
    ]
    return stack, model, endpoints


def test_one_model_on_two_instance_types_is_two_models_sized_for_each(
    two_endpoints: tuple[Stack, LlmModel, list[LlmEndpoint]],
) -> None:
    stack, _, (small, big, small_too) = two_endpoints
    models = _models(stack)
    # THEN there are exactly two Models: SM_NUM_GPUS 1 and 4
    bindings = {e.node.id: e.variants[0].binding for e in (small, big, small_too)}
    by_id = {
        stack.get_logical_id(b.resource): name
        for name, b in bindings.items()
        if b and name != "SmallToo"
    }
    assert set(models) == set(by_id)
    assert {_gpus(models[i]): by_id[i] for i in models} == {"1": "Small", "4": "Big"}
    assert bindings["SmallToo"] is bindings["Small"]
    # AND each endpoint's variant names its own Model
    for config in (
        Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values()
    ):
        (variant,) = config["Properties"]["ProductionVariants"]
        model_id = variant["ModelName"]["Fn::GetAtt"][0]
        assert (
            variant["InstanceType"]
            == {"1": "ml.g5.2xlarge", "4": "ml.g5.12xlarge"}[_gpus(models[model_id])]
        )


def test_each_endpoint_reports_its_own_memory_plan(
    two_endpoints: tuple[Stack, LlmModel, list[LlmEndpoint]],
) -> None:
    stack, _, _ = two_endpoints
    small, big = (notes_of(stack.node.find_child(name)) for name in ("Small", "Big"))
    assert any(re.match(r"Memory plan: .* on 1 x 21\.7 GiB", note) for note in small)
    assert any(re.match(r"Memory plan: .* on 4 x 21\.7 GiB", note) for note in big)


def test_construct_ids_do_not_depend_on_the_order_of_bindings(
    new_stack: Callable[..., Stack],
) -> None:
    def ids(order: list[Placement]) -> dict[Placement, str]:
        # each placement served by a construct of its own, created in ``order``
        stack = new_stack()
        model = _llama(stack, instance_type="ml.g5.2xlarge")
        for index, placement in enumerate(order):
            name, instance = f"Host{placement.construct_id}", placement.instance_type.name
            if placement.whole_instance:
                LlmEndpoint(stack, name, model=model, instance_type=instance, alarms=False)
                continue
            shared = InferenceComponentEndpoint(stack, f"Shared{index}", instance_type=instance)
            InferenceComponent(
                stack,
                name,
                endpoint=shared,
                model=model,
                accelerators=placement.accelerators,
                min_memory_mib=16 * 1024,
                alarms=False,
            )
        Template.from_stack(stack)
        return {p: stack.get_logical_id(model.bind(p).resource) for p in order}

    placements = [
        Placement("ml.g5.12xlarge", accelerators=1),
        Placement("ml.g5.12xlarge"),
        Placement("ml.g5.2xlarge"),
    ]
    forward, backward = ids(placements), ids(placements[::-1])
    assert forward == backward
    # the default placement keeps the id of the model's Model before placements existed
    assert re.fullmatch(r"Model[0-9A-F]{8}", forward[Placement("ml.g5.2xlarge")])
    assert forward[placements[0]].startswith("ModelG512xlarge1Device")


# -- inference components -----------------------------------------------------------------------


def test_one_model_in_two_component_sizes_is_two_models(new_stack: Callable[..., Stack]) -> None:
    # GIVEN one model and one four-GPU endpoint
    stack = new_stack()
    model = _llama(stack, instance_type="ml.g5.12xlarge")
    endpoint = InferenceComponentEndpoint(
        stack, "Shared", instance_type="ml.g5.12xlarge", max_instances=2
    )
    # WHEN the model serves as 1-GPU copies and as 2-GPU copies
    one, two = (
        InferenceComponent(
            stack, name, endpoint=endpoint, model=model, accelerators=n, min_memory_mib=16 * 1024
        )
        for name, n in (("OneGpu", 1), ("TwoGpus", 2))
    )
    # THEN each component names a Model sized for its copy, and no whole-instance Model exists
    models = _models(stack)
    assert {_gpus(m) for m in models.values()} == {"1", "2"}
    for component, gpus in ((one, "1"), (two, "2")):
        model_id = stack.get_logical_id(component.binding.resource)
        assert _gpus(models[model_id]) == gpus
        Template.from_stack(stack).has_resource_properties(
            "AWS::SageMaker::InferenceComponent",
            {
                "Specification": Match.object_like(
                    {"ModelName": {"Fn::GetAtt": [model_id, "ModelName"]}}
                )
            },
        )


def test_a_neuron_copy_gets_its_own_plan_and_engine_warnings(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN Mistral-7B on TGI NeuronX for ml.inf2.24xlarge (6 chips, 12 NeuronCores)
    stack = new_stack()
    model = LlmModel(
        stack,
        "Mistral",
        source=ModelSource.hugging_face(MISTRAL, needs_token=False),
        engine=Engine.tgi_neuronx(),
        instance_type="ml.inf2.24xlarge",
        max_input_tokens=2048,
        max_total_tokens=4096,
    )
    endpoint = InferenceComponentEndpoint(stack, "Shared", instance_type="ml.inf2.24xlarge")
    # WHEN a component gives each copy 3 chips
    component = InferenceComponent(
        stack, "Chat", endpoint=endpoint, model=model, accelerators=3, min_memory_mib=32 * 1024
    )
    # THEN the copy's Model runs on 6 cores
    (resource,) = _models(stack).values()
    assert resource["Properties"]["PrimaryContainer"]["Environment"]["HF_NUM_CORES"] == "6"
    # AND the warnings are the copy's: 6 cores is not a listed Inferentia2 degree, and the
    # plan is made for 3 devices, not the whole instance's 6
    path = f"/{component.binding.resource.node.path}"
    warnings = [
        str(w.entry.data)
        for w in Annotations.from_stack(stack).find_warning("*", Match.any_value())
    ]
    assert any(w.startswith("HF_NUM_CORES=6 on ml.inf2.24xlarge") for w in warnings), warnings
    assert any("has 8 KV heads for 3 devices" in w for w in warnings), warnings
    assert not [w for w in warnings if "for 6 devices" in w or "HF_NUM_CORES=12" in w]
    Annotations.from_stack(stack).has_warning(
        path, Match.string_like_regexp(r"HF_NUM_CORES=6 .*verify the model compiles for 6 cores")
    )
    assert any(re.match(r"Memory plan per copy: .* on 3 x", n) for n in notes_of(component))


def test_bind_takes_a_placement_and_names_the_fix(new_stack: Callable[..., Stack]) -> None:
    model = _llama(new_stack(), instance_type="ml.g5.2xlarge")
    with pytest.raises(
        ConfigurationError,
        match=r"bind\(\) takes a Placement, got 'ml\.g5\.2xlarge'; use Placement\(",
    ):
        model.bind("ml.g5.2xlarge")  # type: ignore[arg-type]
    assert model.bind(Placement("ml.g5.2xlarge")) is model.bind()


def test_model_name_is_the_default_placement_s_model_once_bound(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack()
    model = _llama(stack, instance_type="ml.g5.2xlarge")
    LlmEndpoint(stack, "Endpoint", model=model, alarms=False)
    assert model.node.try_find_child("Resource") is None  # rendered when the app synthesizes
    (logical_id,) = _models(stack)
    binding = model.bind()
    assert logical_id == stack.get_logical_id(binding.resource)
    assert stack.resolve(binding.model_name) == {"Fn::GetAtt": [logical_id, "ModelName"]}


# -- the model renders its Models ---------------------------------------------------------------


def test_a_host_that_fails_its_checks_records_no_placement(
    new_stack: Callable[..., Stack],
) -> None:
    # GIVEN a component whose model binds to its copy, but whose copies overflow the fleet
    stack = new_stack()
    model = _llama(stack, instance_type="ml.g5.2xlarge")
    endpoint = InferenceComponentEndpoint(stack, "Shared", instance_type="ml.g5.12xlarge")
    with pytest.raises(ConfigurationError, match=r"copies=5 copies need 2 instances"):
        InferenceComponent(
            stack,
            "Chat",
            endpoint=endpoint,
            model=model,
            accelerators=1,
            copies=5,
            min_memory_mib=16 * 1024,
        )
    # THEN the model has not recorded the placement: no Model will be rendered for it, and its
    # binding says that nothing serves it (a recorded one would say when it is rendered)
    with pytest.raises(ConfigurationError, match=r"no endpoint or component serves it on"):
        _ = model.bind(Placement("ml.g5.12xlarge", accelerators=1)).model_name
