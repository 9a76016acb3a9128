"""The Lambda Web Adapter layer of a StreamingInvoker: its published ARN per region, the
function architecture it needs, and the rule that stops an environment-agnostic stack
outside the commercial partition early.
"""

from __future__ import annotations

from aws_cdk import Aws, Fn, Stack, Token
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from constructs_llm import catalogs
from constructs_llm.problems import fail
from constructs_llm.stack_rules import assert_before_deploy

__all__ = ["adapter_for", "adapter_layer_arn", "adapter_layer_problem"]


def adapter_for(
    invoker: Construct,
    *,
    layer: lambda_.ILayerVersion | None,
    architecture: lambda_.Architecture | None,
) -> tuple[lambda_.Architecture, lambda_.ILayerVersion]:
    """The function's architecture and adapter layer: the given layer (arm64 unless told),
    else the published layer for the stack's region and the architecture it is built for."""
    if layer is not None:
        return architecture or lambda_.Architecture.ARM_64, layer
    stack = Stack.of(invoker)  # without a layer, no architecture is given (checked)
    arn, arch = adapter_layer_arn(stack.region)
    if Token.is_unresolved(stack.region):
        _commercial_partition_rule(stack)
    architecture = lambda_.Architecture.ARM_64 if arch == "arm64" else lambda_.Architecture.X86_64
    return architecture, lambda_.LayerVersion.from_layer_version_arn(invoker, "Adapter", arn)


def adapter_layer_arn(region: str) -> tuple[str, str]:
    """The Lambda Web Adapter layer ARN and its architecture for ``region`` (may be a token)."""
    data = catalogs.lwa_layers()
    version = data.version
    commercial = data.commercial
    if Token.is_unresolved(region):
        name = commercial.layers["arm64"]
        arn = f"arn:aws:lambda:{region}:{commercial.account}:layer:{name}:{version}"
        return arn, "arm64"
    china = data.china.accounts.get(region)
    if china is not None:
        name = data.china.layers["x86_64"]
        return f"arn:aws-cn:lambda:{region}:{china}:layer:{name}:{version}", "x86_64"
    problem = adapter_layer_problem(region)
    if problem:
        fail("", problem)
    name = commercial.layers["arm64"]
    return f"arn:aws:lambda:{region}:{commercial.account}:layer:{name}:{version}", "arm64"


def adapter_layer_problem(region: str) -> str | None:
    """Why no published layer serves ``region`` (a partition the adapter is not published
    in), or None."""
    prefixes = catalogs.lwa_layers().unsupported_partition_prefixes
    if Token.is_unresolved(region) or not any(region.startswith(p) for p in prefixes):
        return None
    return (
        f"no published Lambda Web Adapter layer is known for region {region!r}; publish the "
        "adapter in that partition and pass adapter_layer=LayerVersion."
        "from_layer_version_arn(...) (an arm64 build)"
    )


def _commercial_partition_rule(stack: Stack) -> None:
    """An environment-agnostic stack uses the commercial layer ARN; outside the commercial
    partition the deploy stops in seconds, before any resource is created, saying why."""
    assert_before_deploy(
        stack,
        "ConstructsLlmAdapterPartition",
        Fn.condition_equals(Aws.PARTITION, "aws"),
        "StreamingInvoker: this environment-agnostic stack uses the Lambda Web Adapter layer "
        "of the commercial partition; give the stack a concrete region (China gets its x86_64 "
        "layer) or pass adapter_layer=...",
    )
