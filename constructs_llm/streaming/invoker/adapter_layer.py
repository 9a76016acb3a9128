"""The Lambda Web Adapter layer of a StreamingInvoker: who publishes it for a region, its ARN
in the stack's partition, the function architecture it needs, and the rule that stops an
environment-agnostic stack outside the commercial partition early.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import ArnFormat, Aws, Fn, Stack, Token
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from constructs_llm import catalogs
from constructs_llm.problems import Problem, fail
from constructs_llm.stack_rules import assert_before_deploy


@dataclass(frozen=True, kw_only=True)
class PublishedLayer:
    """The adapter layer AWS publishes for a region: its account, name, version and the
    architecture it is built for."""

    account: str
    name: str
    version: int
    architecture: str


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
    arn, arch = _adapter_layer_arn(stack)
    if Token.is_unresolved(stack.region):
        _commercial_partition_rule(stack)
    architecture = lambda_.Architecture.ARM_64 if arch == "arm64" else lambda_.Architecture.X86_64
    return architecture, lambda_.LayerVersion.from_layer_version_arn(invoker, "Adapter", arn)


def _adapter_layer_arn(stack: Stack) -> tuple[str, str]:
    """The Lambda Web Adapter layer ARN for ``stack`` and its architecture. The ARN names the
    partition as ``AWS::Partition`` and, in an environment-agnostic stack, the region as
    ``AWS::Region``."""
    published = _published_layer(stack.region)
    arn = stack.format_arn(
        service="lambda",
        account=published.account,
        resource="layer",
        resource_name=f"{published.name}:{published.version}",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
    return arn, published.architecture


def _published_layer(region: str) -> PublishedLayer:
    """The published layer for ``region`` (a token: the commercial partition's); a region of a
    partition it is not published in fails, naming the override."""
    data = catalogs.lwa_layers()
    china = None if Token.is_unresolved(region) else data.china.accounts.get(region)
    if china is not None:
        return PublishedLayer(
            account=china,
            name=data.china.layers["x86_64"],
            version=data.version,
            architecture="x86_64",
        )
    problem = adapter_layer_problem(region)
    if problem:
        fail("", problem)
    return PublishedLayer(
        account=data.commercial.account,
        name=data.commercial.layers["arm64"],
        version=data.version,
        architecture="arm64",
    )


def adapter_layer_problem(region: str) -> Problem | None:
    """Why no published layer serves ``region`` (a partition the adapter is not published
    in), or None."""
    prefixes = catalogs.lwa_layers().unsupported_partition_prefixes
    if Token.is_unresolved(region) or not any(region.startswith(p) for p in prefixes):
        return None
    return Problem.of(
        "adapter_layer",
        None,
        f"no published Lambda Web Adapter layer is known for region {region!r}; publish the "
        "adapter in that partition and pass adapter_layer=LayerVersion."
        "from_layer_version_arn(...) (an arm64 build)",
    )


def _commercial_partition_rule(stack: Stack) -> None:
    """An environment-agnostic stack uses the commercial partition's publisher account; in
    another partition the deploy stops in seconds, before any resource is created, saying why."""
    assert_before_deploy(
        stack,
        "ConstructsLlmAdapterPartition",
        Fn.condition_equals(Aws.PARTITION, "aws"),
        "StreamingInvoker: this environment-agnostic stack uses the Lambda Web Adapter layer "
        "of the commercial partition; give the stack a concrete region (China gets its x86_64 "
        "layer) or pass adapter_layer=...",
    )


def layer_architecture_problem(layer: object, architecture: object) -> Problem | None:
    """A published adapter layer given for another architecture than the function's: Lambda
    runs the layer's ``bootstrap`` binary, which a function of the other architecture cannot
    execute, so every invocation fails at start ("exec format error"). The function is arm64
    unless ``architecture`` says otherwise (:func:`adapter_for`)."""
    arn = getattr(layer, "layer_version_arn", None)
    if not isinstance(arn, str) or Token.is_unresolved(arn):
        return None
    names = {**catalogs.lwa_layers().commercial.layers, **catalogs.lwa_layers().china.layers}
    built_for = next((arch for arch, name in names.items() if f":layer:{name}:" in arn), None)
    function = architecture if isinstance(architecture, lambda_.Architecture) else None
    runs = (function or lambda_.Architecture.ARM_64).name
    if built_for is None or built_for == runs:
        return None
    wanted = "ARM_64" if built_for == "arm64" else "X86_64"
    return Problem.of(
        "adapter_layer",
        layer,
        f"adapter_layer {arn!r} is the Lambda Web Adapter built for {built_for}, but the function "
        f"is {runs}{'' if function else ' (the default)'};",
        f"pass architecture=lambda_.Architecture.{wanted}, or the layer built for {runs}",
    )
