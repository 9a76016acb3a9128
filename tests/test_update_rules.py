"""The update rules (constructs_llm/updates/rules.py) against their sources: the CloudFormation
column against the registry schemas cfn-lint 1.58.0 ships (createOnlyProperties, us-east-1), the
botocore shapes the SageMaker column cites against botocore 1.44.5, and every property a user
can set on the hosting resources covered by a row."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import botocore.session
import pytest

from constructs_llm.updates.rules import (
    COMPONENT,
    CONFIG,
    ENDPOINT,
    MODEL,
    POLICY,
    RULES,
    TARGET,
    CfnAction,
    SageMakerAction,
    UpdateRule,
    replaced_by,
    rule,
    rule_for,
)

TYPES = (ENDPOINT, CONFIG, MODEL, COMPONENT, TARGET, POLICY)


@cache
def _schema(kind: str) -> dict[str, Any]:
    # cfn-lint's schemas load when a test reads them, not when the suite collects this module
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER  # type: ignore[import-untyped]

    found: dict[str, Any] = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", kind).schema
    return found


def _listed(kind: str, key: str) -> set[str]:
    return {p.removeprefix("/properties/") for p in _schema(kind).get(key, [])}


@pytest.mark.parametrize("row", RULES, ids=[r.id for r in RULES])
def test_each_row_s_cloudformation_column_is_its_schema_s(row: UpdateRule) -> None:
    create_only = _listed(row.resource, "createOnlyProperties")
    assert set(row.properties) <= set(_schema(row.resource)["properties"]), row.id
    replaced = [p for p in row.properties if p in create_only]
    if row.cloudformation is CfnAction.REPLACE:
        assert replaced == list(row.properties), (row.id, "not create-only", create_only)
    else:
        assert replaced == [], (row.id, "create-only", replaced)


@pytest.mark.parametrize("kind", TYPES)
def test_every_property_a_template_can_set_has_its_row(kind: str) -> None:
    settable = set(_schema(kind)["properties"]) - _listed(kind, "readOnlyProperties")
    assert {p for p in settable if rule_for(kind, p) is None} == set()
    # AND the rows replace exactly what the schema makes create-only
    assert {p for p in settable if replaced_by(kind, p)} == _listed(kind, "createOnlyProperties")


#: botocore shape names a citation gives ("botocore <service> <Shape>...").
_SHAPE = re.compile(r"\b([A-Z][A-Za-z]+(?:Input|Request)|InferenceComponentDeploymentConfig)\b")


@pytest.mark.parametrize(
    "row", [r for r in RULES if r.citation.startswith("botocore")], ids=lambda r: r.id
)
def test_the_botocore_shapes_a_row_cites_exist(row: UpdateRule) -> None:
    service = row.citation.split()[1].rstrip(":")
    model = botocore.session.get_session().get_service_model(service)
    shapes = _SHAPE.findall(row.citation)
    for name in shapes:
        assert name in model.shape_names, (row.id, name)
    members = re.search(r"members: ([A-Za-z, ]+)\)", row.citation)
    if members:
        (shape,) = shapes[:1]
        assert set(members.group(1).split(", ")) == set(model.shape_for(shape).members)
    missing = re.search(r"no (\w+) operation exists", row.citation)
    if missing:
        assert missing.group(1) not in model.operation_names
    assert shapes or missing, row.id


def test_no_call_moves_or_renames_a_component() -> None:
    """What ``component-move`` rests on: UpdateInferenceComponent finds the component by its
    name and takes neither an endpoint nor a variant, while CreateInferenceComponent does."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    update = set(model.operation_model("UpdateInferenceComponent").input_shape.members)
    create = set(model.operation_model("CreateInferenceComponent").input_shape.members)
    assert {"EndpointName", "VariantName"} <= create
    assert not {"EndpointName", "VariantName"} & update
    assert set(rule("component-move").properties) == {
        "EndpointName",
        "EndpointArn",
        "VariantName",
        "InferenceComponentName",
    }


def test_the_refusals_cite_what_shows_them() -> None:
    refusals = {r.id: r for r in RULES if r.sagemaker is SageMakerAction.REFUSED}
    assert set(refusals) == {"async-toggle", "autoscaled-variant", "component-move"}
    assert "PR #3124" in refusals["async-toggle"].citation
    assert "cannot be removed from this endpoint" in refusals["async-toggle"].why
    assert "unverified" not in refusals["async-toggle"].citation  # the direction it shows...
    assert "not documented" in refusals["async-toggle"].why  # ...and the one it does not
    assert refusals["autoscaled-variant"].citation.endswith("endpoint-scaling-update.html")
    assert not refusals["component-move"].verified  # inferred from the API's shape


def test_ids_are_unique_and_each_row_says_why() -> None:
    assert len({r.id for r in RULES}) == len(RULES)
    assert all(r.why and r.citation and r.change for r in RULES)
