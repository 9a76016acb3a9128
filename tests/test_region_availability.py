"""Region availability: the packaged table of where CloudFormation has each feature the library
renders (cfn-lint's per-region registry schemas), a synth error naming the region, the feature
and the nearest regions that have it in a stack with a concrete region, and one rule per
feature in an environment-agnostic stack, which fails the change set before anything is
created; and the PromQL alarms' default, on only where CloudWatch's page lists the region."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack

from constructs_llm import (
    Alarms,
    Engine,
    InferenceComponent,
    InferenceComponentEndpoint,
    LlmEndpoint,
    LlmModel,
    ModelSource,
    StreamingInvoker,
    catalogs,
    region_availability,
)
from constructs_llm.errors import ConfigurationError, RegionError
from constructs_llm.operations.promql_regions import (
    RULE_ID as PROMQL_RULE,
)
from constructs_llm.operations.promql_regions import (
    promql_alarms_on,
    promql_region_problem,
)
from constructs_llm.region_availability import (
    RULE_PREFIX,
    assert_available,
    availability_problems,
    nearest_regions,
    rule_id,
)
from scripts.refresh_catalogs import _has_property

COMPONENT = "AWS::SageMaker::InferenceComponent"
URL = "AWS::Lambda::Url"
POOLS = "AWS::SageMaker::EndpointConfig.ProductionVariants.InstancePools"


def _holds(condition: dict[str, Any], region: str) -> bool:
    """A rule's condition (``Fn::Not``, ``Fn::Contains``, ``Fn::Equals`` over ``AWS::Region``)
    evaluated as CloudFormation does for a deploy to ``region``."""
    if "Fn::Not" in condition:
        return not _holds(condition["Fn::Not"][0], region)
    (function, (first, second)) = next(iter(condition.items()))
    value = region if second == {"Ref": "AWS::Region"} else second
    if function == "Fn::Contains":
        return value in first
    raise AssertionError(f"unexpected rule function {function}")


def _rule(template: dict[str, Any], name: str) -> tuple[dict[str, Any], str]:
    (assertion,) = template["Rules"][name]["Assertions"]
    return assertion["Assert"], assertion["AssertDescription"]


FIXTURES = Path(__file__).parent / "fixtures" / "templates"


def _fixture(name: str) -> dict[str, Any]:
    """A committed example template (a test proves they equal a fresh synth)."""
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.template.json").read_text())
    return loaded


# -- the table -------------------------------------------------------------------------------


def test_the_table_names_the_regions_cloudformation_lacks_each_type_in() -> None:
    """The facts of the pinned cfn-lint (1.58.0, schemas of 2026-10-20): inference components
    are missing in 21 regions, function URLs in 14 (its E3006 with --regions ALL_REGIONS)."""
    table = catalogs.regions()
    component, url = table.features[COMPONENT], table.features[URL]
    assert len(component.lacking) == 21 and len(url.lacking) == 14
    assert {"us-west-1", "eu-west-3", "cn-north-1", "us-gov-west-1"} <= set(component.lacking)
    assert "us-east-1" in component.regions and "us-east-1" not in component.lacking
    assert set(component.regions) | set(component.lacking) == set(table.regions)
    assert table.schema_date.startswith("2026-10-20") and table.cfn_lint == "1.58.0"
    for name, row in table.features.items():  # a citation per row: the schema file
        assert "cfnlint/data/schemas/resources/" in row.source, name
        assert row.resource_type == name.split(".")[0]


def test_a_property_is_found_through_arrays_and_references() -> None:
    schema = {
        "properties": {"Variants": {"type": "array", "items": {"$ref": "#/definitions/V"}}},
        "definitions": {"V": {"properties": {"Routing": {"type": "object"}}}},
    }
    assert _has_property(schema, "Variants.Routing")
    assert not _has_property(schema, "Variants.Pools")
    assert not _has_property(schema, "Routing")


# -- a concrete region: one error naming the region, the feature and the fix -----------------


def test_a_region_without_the_type_is_refused_naming_region_feature_and_nearest() -> None:
    (problem,) = availability_problems("us-west-1", [COMPONENT, "AWS::SageMaker::Endpoint"])
    assert problem.kind is RegionError
    assert (problem.property, problem.value) == (COMPONENT, "us-west-1")
    assert problem.fix.endswith("nearest first: us-west-2, us-east-1, us-east-2")
    assert "'us-west-1'" in str(problem) and COMPONENT in str(problem)
    assert str(problem).endswith("nearest first: us-west-2, us-east-1, us-east-2")


@pytest.mark.parametrize("region", ["us-east-1", "me-south-1"])
def test_a_region_with_the_type_or_unknown_to_the_schemas_is_not_refused(region: str) -> None:
    assert availability_problems(region, [COMPONENT, URL]) == []


def test_a_partition_without_the_type_says_so_instead_of_naming_another() -> None:
    (problem,) = availability_problems("cn-north-1", [COMPONENT])
    assert "No region of the aws-cn partition has it" in str(problem)
    assert nearest_regions("cn-north-1", catalogs.regions().features[COMPONENT].regions) == []
    assert nearest_regions("eu-west-3", ["us-east-1", "eu-central-1", "eu-west-1"]) == [
        "eu-west-1",
        "eu-central-1",
        "us-east-1",
    ]


def _model(stack: Stack) -> LlmModel:
    source = ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct")
    return LlmModel(stack, "Model", source=source, engine=Engine.vllm(), max_total_tokens=8192)


def test_an_inference_component_in_a_region_without_them_fails_at_synth(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack("us-west-1")
    hosts = InferenceComponentEndpoint(stack, "Hosts", instance_type="ml.g5.2xlarge")
    with pytest.raises(RegionError) as raised:
        InferenceComponent(
            stack, "Chat", endpoint=hosts, model=_model(stack), min_memory_mib=20000, accelerators=1
        )
    assert str(raised.value).startswith("InferenceComponent 'Test/Chat': inference components")
    assert "in region 'us-west-1'" in str(raised.value)


def test_an_invoker_in_a_region_without_function_urls_fails_at_synth(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack("ca-west-1")
    endpoint = LlmEndpoint(stack, "Endpoint", model=_model(stack), instance_type="ml.g5.2xlarge")
    with pytest.raises(ConfigurationError) as raised:
        StreamingInvoker(stack, "Api", target=endpoint)
    assert f"Lambda function URLs ({URL}) cannot be created in region 'ca-west-1'" in str(
        raised.value
    )
    assert "nearest first: ca-central-1" in str(raised.value)


# -- an environment-agnostic stack: one rule per feature, before anything is created ---------


def _set(value: Any, path: str) -> bool:
    """Whether the property ``path`` (``A.B``, through lists as the schemas go through arrays)
    is set in ``value``, a resource's ``Properties``."""
    if isinstance(value, list):
        return any(_set(item, path) for item in value)
    head, _, rest = path.partition(".")
    if not isinstance(value, dict) or head not in value:
        return False
    return not rest or _set(value[head], rest)


def _rendered(template: dict[str, Any]) -> list[str]:
    """The catalog's features a template renders: each resource type among its resources, and
    each property path set on a resource of its type."""
    resources = template["Resources"].values()
    return [
        name
        for name, row in catalogs.regions().features.items()
        if any(
            r["Type"] == row.resource_type
            and (row.property is None or _set(r.get("Properties", {}), row.property))
            for r in resources
        )
    ]


def _region_rules(template: dict[str, Any]) -> dict[str, tuple[dict[str, Any], str]]:
    """The template's availability rules (the PromQL rule, of CloudWatch's page, apart)."""
    return {
        name: _rule(template, name)
        for name in template.get("Rules", {})
        if name.startswith(RULE_PREFIX) and name != PROMQL_RULE
    }


COMES_WITH = {"AWS::CloudFront::CachePolicy": "AWS::CloudFront::Distribution"}
"""A type rendered only alongside another (add_distribution's cache policy), whose rule says
what the schemas say of it: the library asks no rule of its own for it."""


def _said_by(feature: str, table: catalogs.RegionCatalog) -> tuple[str, ...]:
    """The regions another rule refuses for ``feature``: its type's, for a property; that of
    the type it comes with, for one in ``COMES_WITH``."""
    row = table.features[feature]
    if row.property is not None:
        return table.features[row.resource_type].lacking
    if feature in COMES_WITH:
        said = table.features[COMES_WITH[feature]].lacking
        assert set(row.lacking) <= set(said), f"{feature} now lacks more than what it comes with"
        return said
    return ()


EXAMPLES = sorted(p.name.removesuffix(".template.json") for p in FIXTURES.glob("*.template.json"))


@pytest.mark.parametrize("fixture", EXAMPLES)
def test_the_example_s_rules_refuse_exactly_the_regions_lacking_what_it_renders(
    fixture: str,
) -> None:
    """What each example renders decides its rules: a region lacking any feature of it is
    refused, every other region the schemas cover is admitted, and each rule is a rendered
    feature's, naming that feature and the regions it refuses."""
    template, table = _fixture(fixture), catalogs.regions()
    rendered, rules = _rendered(template), _region_rules(template)
    lacking = {region for name in rendered for region in table.features[name].lacking}
    for region in table.regions:
        refusing = [name for name, (condition, _) in rules.items() if not _holds(condition, region)]
        assert bool(refusing) == (region in lacking), (region, refusing)
    for feature in rendered:
        unsaid = set(table.features[feature].lacking) - set(_said_by(feature, table))
        assert not unsaid or rule_id(feature) in rules, (feature, sorted(unsaid))
    for name, (condition, description) in rules.items():
        (feature,) = [f for f in rendered if rule_id(f) == name]
        refused = [r for r in table.regions if not _holds(condition, r)]
        assert refused and set(refused) <= set(table.features[feature].lacking), name
        assert table.features[feature].resource_type in description
        assert all(region in description for region in refused), name


def test_the_examples_render_each_feature_a_region_lacks() -> None:
    """The derivation above sees what the examples render: between them, every type the
    library renders that some region lacks (a rule each)."""
    rendered = {name for fixture in EXAMPLES for name in _rendered(_fixture(fixture))}
    rules = {name for fixture in EXAMPLES for name in _region_rules(_fixture(fixture))}
    assert {COMPONENT, URL, "AWS::SageMaker::Endpoint", "AWS::CloudFront::Distribution"} <= rendered
    assert {rule_id(COMPONENT), rule_id(URL), rule_id("AWS::CloudFront::Distribution")} <= rules


@pytest.mark.parametrize(
    ("fixture", "rule", "refused", "admitted"),
    [
        ("SharedEndpoint", COMPONENT, "eu-west-3", "eu-west-1"),
        ("Llama3Components", COMPONENT, "us-gov-west-1", "us-west-2"),
        ("Production", URL, "il-central-1", "eu-central-1"),
        ("FrontDoors", "AWS::CloudFront::Distribution", "us-gov-west-1", "cn-north-1"),
        ("Falcon40bLmi", "AWS::SageMaker::Endpoint", "me-central-1", "me-south-1"),
    ],
)
def test_the_example_s_rule_refuses_a_region_without_the_feature(
    fixture: str, rule: str, refused: str, admitted: str
) -> None:
    """Spot checks of the schemas' facts, one per feature kind; the rows are features each
    example renders (the test above derives them all)."""
    template = _fixture(fixture)
    assert rule in _rendered(template)
    condition, description = _rule(template, rule_id(rule))
    assert not _holds(condition, refused)
    assert _holds(condition, admitted)
    assert rule in description and refused in description


def test_a_stack_gets_rules_only_for_features_it_uses() -> None:
    """No component, no component rule; no invoker, no URL rule; a feature every region has
    (alarms, autoscaling) no rule at all."""
    rules = set(_fixture("Falcon40bLmi")["Rules"])
    assert rule_id(COMPONENT) not in rules and rule_id(URL) not in rules
    assert rule_id("AWS::SageMaker::Endpoint") in rules
    assert not any("Alarm" in r or "Scalable" in r for r in rules)
    assert rule_id(COMPONENT) in _fixture("SharedEndpoint")["Rules"]


def _rules_of(names: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The rules ``assert_available`` asks of an environment-agnostic stack, resolved as they
    are rendered (the examples' templates show them rendered; a synth here costs seconds)."""
    stack, found = Stack(), {}

    def record(_: Stack, rule: str, condition: object, description: str) -> None:
        found[rule] = {
            "Assertions": [{"Assert": stack.resolve(condition), "AssertDescription": description}]
        }

    monkeypatch.setattr(region_availability, "assert_before_deploy", record)
    assert_available(stack, names)
    return found


def test_a_property_rule_only_where_it_lacks_more_than_its_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = catalogs.regions()
    config = table.features["AWS::SageMaker::EndpointConfig"]
    pools = table.features[POOLS]
    assert pools.lacking == config.lacking  # the schemas of 1.58.0: no rule of its own

    assert _rules_of([POOLS], monkeypatch) == {}

    fewer = dataclasses.replace(
        pools,
        regions=tuple(r for r in pools.regions if r != "eu-west-3"),
        lacking=(*pools.lacking, "eu-west-3"),
    )
    patched = dataclasses.replace(table, features={**table.features, POOLS: fewer})
    monkeypatch.setattr(catalogs, "regions", lambda: patched)
    condition, _ = _rule({"Rules": _rules_of([POOLS], monkeypatch)}, rule_id(POOLS))
    assert not _holds(condition, "eu-west-3") and _holds(condition, "eu-west-1")
    assert _holds(condition, config.lacking[0])  # the type's own rule says that one
    (problem,) = availability_problems("eu-west-3", [POOLS])
    assert "ProductionVariants.InstancePools of AWS::SageMaker::EndpointConfig" in str(problem)


# -- PromQL alarms: on where CloudWatch's page lists the region ------------------------------


def test_promql_alarms_default_to_on_only_in_a_listed_concrete_region() -> None:
    listed = catalogs.regions().promql_alarms.regions
    assert "us-east-1" in listed and "il-central-1" not in listed
    agnostic = Stack().region  # a token
    assert promql_alarms_on("us-east-1", None) is True
    assert promql_alarms_on("il-central-1", None) is False
    assert promql_alarms_on(agnostic, None) is False
    assert promql_alarms_on(agnostic, True) is True
    assert promql_alarms_on("us-east-1", False) is False


def test_the_examples_without_the_choice_have_no_promql_alarm_nor_rule() -> None:
    for name in ("Rag", "NativeOpenai", "ModelGateway", "OvernightBatch"):
        template = _fixture(name)
        kinds = [r for r in template["Resources"].values() if r["Type"] == "AWS::CloudWatch::Alarm"]
        assert kinds and not [r for r in kinds if "EvaluationCriteria" in r["Properties"]], name
        assert PROMQL_RULE not in template["Rules"], name


@pytest.mark.parametrize("fixture", ["Production", "Capacity"])
def test_promql_alarms_asked_for_get_a_rule_on_the_page_s_regions(fixture: str) -> None:
    template = _fixture(fixture)
    alarms = [
        r for r in template["Resources"].values() if "EvaluationCriteria" in r.get("Properties", {})
    ]
    assert len(alarms) == 2
    condition, description = _rule(template, PROMQL_RULE)
    assert _holds(condition, "eu-west-3") and not _holds(condition, "il-central-1")
    assert "CloudWatch-PromQL.html#CloudWatch-PromQL-Regions" in description


def test_promql_alarms_asked_for_in_an_unlisted_region_fail_naming_the_nearest() -> None:
    problem = promql_region_problem("il-central-1", Alarms(promql_alarms=True))
    assert problem is not None and problem.kind is RegionError
    assert "region 'il-central-1'" in str(problem)
    assert "nearest first: eu-central-1" in str(problem)
    assert promql_region_problem("eu-west-3", Alarms(promql_alarms=True)) is None


def test_a_threshold_set_where_the_default_leaves_promql_off_is_refused_not_dropped() -> None:
    agnostic = Stack().region
    problem = promql_region_problem(agnostic, Alarms(kv_cache_percent=80))
    assert problem is not None and "kv_cache_percent=80" in str(problem)
    assert "promql_alarms=True" in str(problem)
    assert promql_region_problem(agnostic, Alarms()) is None  # the default: off, documented
    assert promql_region_problem(agnostic, Alarms(kv_cache_percent=80, promql_alarms=False)) is None
    assert promql_region_problem("us-east-1", Alarms(kv_cache_percent=80)) is None


def test_an_endpoint_asking_for_promql_alarms_in_an_unlisted_region_fails_at_synth(
    new_stack: Callable[..., Stack],
) -> None:
    stack = new_stack("il-central-1")
    with pytest.raises(RegionError, match=r"promql_alarms=True: .* region 'il-central-1'"):
        LlmEndpoint(
            stack,
            "Endpoint",
            model=_model(stack),
            instance_type="ml.g5.2xlarge",
            alarms=Alarms(promql_alarms=True),
        )


def test_promql_alarms_takes_a_bool_or_none() -> None:
    with pytest.raises(ConfigurationError, match=r"promql_alarms must be True, False or None"):
        Alarms(promql_alarms="yes")  # type: ignore[arg-type]


def test_a_target_without_engine_alarms_gets_one_complaint_not_two(
    new_stack: Callable[..., Stack],
) -> None:
    """TGI publishes no signals: the engine check names that, and the PromQL region check,
    which speaks only for targets that could have engine alarms, adds nothing."""
    stack = new_stack()
    source = ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct")
    model = LlmModel(stack, "Model", source=source, engine=Engine.tgi(), max_total_tokens=8192)
    with pytest.raises(ConfigurationError) as raised:
        LlmEndpoint(
            stack,
            "Endpoint",
            model=model,
            instance_type="ml.g5.2xlarge",
            alarms=Alarms(requests_waiting=4),
        )
    (problem,) = raised.value.problems
    assert "asks for an alarm on the engine's own metrics" in str(problem)
