"""The network of an endpoint hosting inference components: network isolation and the VPC,
which SageMaker applies to the whole endpoint, taken from its components' models.

Where AWS applies them: ``CreateInferenceComponent``'s specification has no VPC and no
isolation (botocore 1.44.5, ``InferenceComponentSpecification``: instance type, model,
container, start-up, compute, base component, data cache, scheduling), while
``CreateEndpointConfig`` takes ``VpcConfig`` and ``EnableNetworkIsolation`` ("Sets whether all
model containers deployed to the endpoint are isolated"), as ``AWS::SageMaker::EndpointConfig``
does. The SageMaker Python SDK sets both on the endpoint config of an inference-component
endpoint (aws/sagemaker-python-sdk, ``src/sagemaker/session.py``,
``endpoint_from_production_variants``: no ``ModelName`` in the variants, so
``ExecutionRoleArn``, with ``VpcConfig`` and ``EnableNetworkIsolation`` passed to
``create_endpoint_config``). So every component's model must agree on them, and the endpoint
renders them on its config; each Model keeps its own (what a real-time endpoint reads).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import Stack
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.problems import Problem

if TYPE_CHECKING:
    from constructs_llm.model.llm_model import LlmModel

_OTHER_SUBNETS = "in other subnets or security groups"


@dataclass(frozen=True)
class EndpointNetwork:
    """What a model asks of the endpoint's network.

    :param isolated: its containers make no network calls (``network_isolation``).
    :param vpc_config: its VPC config (subnets and security groups). @default no VPC
    """

    isolated: bool
    vpc_config: sagemaker.CfnModel.VpcConfigProperty | None = None

    @staticmethod
    def of(model: LlmModel) -> EndpointNetwork:
        network = model.network
        return EndpointNetwork(
            isolated=bool(model.network_isolation),
            vpc_config=network.vpc_config if network is not None else None,
        )

    def config_vpc(self) -> sagemaker.CfnEndpointConfig.VpcConfigProperty | None:
        """The endpoint config's ``VpcConfig``, the model's own."""
        vpc = self.vpc_config
        if vpc is None:
            return None
        return sagemaker.CfnEndpointConfig.VpcConfigProperty(
            security_group_ids=vpc.security_group_ids, subnets=vpc.subnets
        )

    def vpc_key(self, stack: Stack) -> str | None:
        """The VPC config as the template renders it, to compare two models' (None: no VPC)."""
        vpc = self.vpc_config
        if vpc is None:
            return None
        resolved = [stack.resolve(vpc.subnets), stack.resolve(vpc.security_group_ids)]
        return json.dumps(resolved, sort_keys=True)

    def describe_vpc(self) -> str:
        """How a message names where the model runs."""
        return "in a VPC" if self.vpc_config is not None else "in no VPC"


def network_disagreement(first: tuple[str, LlmModel], other: tuple[str, LlmModel]) -> list[Problem]:
    """What ``other`` (a component's path and model) disagrees on with ``first`` (the
    endpoint's first component by path, with which every other must agree)."""
    (first_path, first_model), (path, model) = first, other
    theirs, ours = EndpointNetwork.of(first_model), EndpointNetwork.of(model)
    problems: list[Problem] = []
    if theirs.isolated != ours.isolated:
        problems.append(
            _disagree(
                f"'{first_path}' (network_isolation={theirs.isolated})",
                f"'{path}' ({ours.isolated})",
                "network isolation",
            )
        )
    stack = Stack.of(model)
    if theirs.vpc_key(stack) != ours.vpc_key(stack):
        same_vpc = theirs.vpc_config is not None and ours.vpc_config is not None
        problems.append(
            _disagree(
                f"'{first_path}' ({theirs.describe_vpc()})",
                f"'{path}' ({_OTHER_SUBNETS if same_vpc else ours.describe_vpc()})",
                "the VPC (subnets and security groups: pass the same vpc, vpc_subnets and "
                "security_groups to both models)",
            )
        )
    return problems


def _disagree(first: str, added: str, what: str) -> Problem:
    return Problem.of(
        "model",
        None,
        f"components {first} and {added} must agree on {what}: SageMaker applies network "
        "isolation and the VPC to the whole endpoint (CreateEndpointConfig "
        "EnableNetworkIsolation: 'all model containers deployed to the endpoint'; the inference "
        "component takes neither);",
        "put them on separate endpoints, or give their models the same setting",
    )
