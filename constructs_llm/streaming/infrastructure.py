"""StreamingInvoker: a Lambda function URL that streams an LLM's tokens as OpenAI chunks."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import (
    ArnFormat,
    Aws,
    CfnResource,
    CfnRule,
    CfnRuleAssertion,
    Duration,
    Fn,
    RemovalPolicy,
    Stack,
    Token,
)
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct, IConstruct

from constructs_llm import catalogs
from constructs_llm._validation import Problems, describe, duration_problem
from constructs_llm.errors import ConfigurationError
from constructs_llm.invocation_target import InvocationTarget

_RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"
_PORT = "8080"
_MAX_TIMEOUT_S = 900
# Stream reads give up a little before the function itself would be stopped.
_READ_TIMEOUT_MARGIN_S = 10
# checkov checks that do not apply to a synchronous, URL-invoked streaming function.
_CHECKOV_SKIPS = [
    {
        "id": "CKV_AWS_115",
        "comment": "Reserved concurrency is left to the account: reserving any by default fails "
        "deploys in accounts whose unreserved concurrency is at the minimum.",
    },
    {
        "id": "CKV_AWS_116",
        "comment": "Invoked synchronously through its function URL; a dead-letter queue only "
        "applies to asynchronous invocations.",
    },
    {
        "id": "CKV_AWS_117",
        "comment": "Needs only the SageMaker Runtime API; pass vpc=... to run it in a VPC.",
    },
    {
        "id": "CKV_AWS_173",
        "comment": "The environment holds names and settings only (no secrets).",
    },
]


_LOG_KEY_SKIP = {
    "id": "CKV_AWS_158",
    "comment": "CloudWatch Logs encrypts every log group at rest; these logs hold request "
    "metadata only. Pass log_encryption_key=... for a customer-managed key.",
}


class StreamingInvoker(Construct):
    """A streaming, OpenAI-compatible front door to an ``LlmEndpoint`` or ``InferenceComponent``.

    A Python Lambda (stdlib + boto3, no bundling) behind the Lambda Web Adapter layer, with a
    function URL in ``RESPONSE_STREAM`` mode and ``AWS_IAM`` auth. ``POST
    /v1/chat/completions`` works for every engine; tokens are flushed as they arrive.

    :param target: the endpoint or inference component to call.
    :param timeout: longest request, generation included. @default 5 minutes (max 15)
    :param memory_size: MiB. @default 512
    :param architecture: the function's architecture, which must match ``adapter_layer``.
        @default arm64, or what the published layer for the region needs
    :param adapter_layer: the Lambda Web Adapter layer. @default the published layer for the
        stack's region (arm64 in commercial regions, x86_64 in China)
    :param log_retention: @default one month
    :param heartbeat: while the first token is awaited, send an SSE comment this often, so a
        proxy in front (CloudFront waits 30 s by default) does not drop the request. Once a
        beat was sent, a failure before the first token arrives as an error event in the
        stream instead of an HTTP status. @default no heartbeat
    :param log_encryption_key: customer key for the log group. @default CloudWatch Logs'
        own encryption (logs hold request metadata only, never prompts or completions)
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        target: InvocationTarget,
        timeout: Duration | None = None,
        memory_size: int = 512,
        adapter_layer: lambda_.ILayerVersion | None = None,
        architecture: lambda_.Architecture | None = None,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        log_encryption_key: kms.IKey | None = None,
        heartbeat: Duration | None = None,
    ) -> None:
        super().__init__(scope, id)
        timeout = timeout or Duration.minutes(5)
        _check(self, target, timeout, memory_size, heartbeat)
        self._heartbeat = heartbeat
        self.target = target
        architecture, layer = self._adapter(adapter_layer, architecture)
        log_group = logs.LogGroup(
            self,
            "Logs",
            retention=log_retention,
            encryption_key=log_encryption_key,
            removal_policy=RemovalPolicy.DESTROY,
        )
        if log_encryption_key is None:
            _skip_checkov(log_group.node.default_child, _LOG_KEY_SKIP)
        else:
            _allow_logs_to_use(log_encryption_key, Stack.of(self))
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Streaming invoker of an LLM endpoint (constructs_llm)",
        )
        log_group.grant_write(self.role)
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=lambda_.Runtime.PYTHON_3_14,
            architecture=architecture,
            code=_runtime_code(),
            handler="runtime/run.sh",
            layers=[layer],
            timeout=timeout,
            memory_size=memory_size,
            role=self.role,
            log_group=log_group,
            retry_attempts=0,
            environment=self._environment(target, timeout),
        )
        _skip_checkov(self.function.node.default_child, *_CHECKOV_SKIPS)
        target.grant_invoke(self.role)
        _depend_on_policy_only(self.function, self.role)
        self.function_url = self.function.add_function_url(
            auth_type=lambda_.FunctionUrlAuthType.AWS_IAM,
            invoke_mode=lambda_.InvokeMode.RESPONSE_STREAM,
        )

    @property
    def url(self) -> str:
        """The function URL; append ``v1`` for an OpenAI client's ``base_url``."""
        return self.function_url.url

    def grant_invoke_url(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` call the URL (``InvokeFunctionUrl`` and, via the URL only,
        ``InvokeFunction``, as function URLs require since October 2025)."""
        return self.function.grant_invoke_url(grantee)

    def _environment(self, target: InvocationTarget, timeout: Duration) -> dict[str, str]:
        env = {
            "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
            "AWS_LWA_INVOKE_MODE": "response_stream",
            "AWS_LWA_PORT": _PORT,
            "AWS_LWA_READINESS_CHECK_PATH": "/health",
            "PORT": _PORT,
            "ENDPOINT_NAME": target.endpoint_name,
            "STREAM_FORMAT": target.stream_format.value,
            "REQUEST_FORMAT": target.request_format.value,
            "MODEL_NAME": getattr(target, "served_model_name", "model"),
            "UPSTREAM_READ_TIMEOUT": str(_read_timeout(timeout)),
        }
        if target.inference_component_name is not None:
            env["INFERENCE_COMPONENT_NAME"] = target.inference_component_name
        if self._heartbeat is not None:
            env["HEARTBEAT_SECONDS"] = str(int(self._heartbeat.to_seconds()))
        return env

    def _adapter(
        self, layer: lambda_.ILayerVersion | None, architecture: lambda_.Architecture | None
    ) -> tuple[lambda_.Architecture, lambda_.ILayerVersion]:
        if layer is not None:
            return architecture or lambda_.Architecture.ARM_64, layer
        if architecture is not None:
            raise ConfigurationError(
                f"StreamingInvoker '{self.node.path}': architecture={architecture.name} needs "
                "adapter_layer=... built for it; without one the published layer for the "
                "region decides the architecture"
            )
        stack = Stack.of(self)
        arn, arch = adapter_layer_arn(stack.region)
        if Token.is_unresolved(stack.region):
            _commercial_partition_rule(stack)
        architecture = (
            lambda_.Architecture.ARM_64 if arch == "arm64" else lambda_.Architecture.X86_64
        )
        return architecture, lambda_.LayerVersion.from_layer_version_arn(self, "Adapter", arn)


def _allow_logs_to_use(key: kms.IKey, stack: Stack) -> None:
    """CloudWatch Logs encrypts with the key only if the key policy lets it (an imported key's
    policy cannot be changed here: it must already allow this)."""
    key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal(f"logs.{stack.region}.{stack.url_suffix}")],
            actions=[
                "kms:Encrypt",
                "kms:Decrypt",
                "kms:ReEncryptFrom",
                "kms:ReEncryptTo",
                "kms:GenerateDataKey",
                "kms:GenerateDataKeyWithoutPlaintext",
                "kms:DescribeKey",
            ],
            resources=["*"],  # in a key policy, "*" means this key
            conditions={
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": stack.format_arn(
                        service="logs",
                        resource="log-group",
                        resource_name="*",
                        arn_format=ArnFormat.COLON_RESOURCE_NAME,
                    )
                }
            },
        )
    )


def _commercial_partition_rule(stack: Stack) -> None:
    """An environment-agnostic stack uses the commercial layer ARN; outside the commercial
    partition the deploy stops in seconds, before any resource is created, saying why."""
    rule_id = "ConstructsLlmAdapterPartition"
    if stack.node.try_find_child(rule_id) is not None:
        return
    CfnRule(
        stack,
        rule_id,
        assertions=[
            CfnRuleAssertion(
                assert_=Fn.condition_equals(Aws.PARTITION, "aws"),
                assert_description=(
                    "StreamingInvoker: this environment-agnostic stack uses the Lambda Web "
                    "Adapter layer of the commercial partition; give the stack a concrete region "
                    "(China gets its x86_64 layer) or pass adapter_layer=..."
                ),
            )
        ],
    )


def _depend_on_policy_only(function: lambda_.Function, role: iam.Role) -> None:
    """The Function's GetAtt on the role already orders it after the role; CDK's extra
    DependsOn on the role is a cfn-lint W3005. Keep only the policy edge."""
    policy = role.node.find_child("DefaultPolicy").node.default_child
    cfn = function.node.default_child
    if isinstance(policy, CfnResource) and isinstance(cfn, CfnResource):
        cfn.add_override("DependsOn", [policy.logical_id])


def _skip_checkov(resource: IConstruct | None, *skips: dict[str, str]) -> None:
    """Records checkov skips, each with its reason, in the resource's metadata."""
    if isinstance(resource, CfnResource):
        resource.add_metadata("checkov", {"skip": list(skips)})


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
    if any(region.startswith(p) for p in data.unsupported_partition_prefixes):
        raise ConfigurationError(
            f"no published Lambda Web Adapter layer is known for region {region!r}; publish "
            "the adapter in that partition and pass adapter_layer=LayerVersion."
            "from_layer_version_arn(...) (an arm64 build)"
        )
    name = commercial.layers["arm64"]
    return f"arn:aws:lambda:{region}:{commercial.account}:layer:{name}:{version}", "arm64"


def _check(
    invoker: Construct,
    target: object,
    timeout: Duration,
    memory_size: int,
    heartbeat: Duration | None,
) -> None:
    problems = Problems(f"StreamingInvoker '{invoker.node.path}'")
    if not isinstance(target, InvocationTarget):
        problems.add(
            f"target must be an LlmEndpoint or an InferenceComponent, got "
            f"{describe(target)}; create an LlmEndpoint for the model and pass that"
        )
    problems.add(
        duration_problem(
            "timeout",
            timeout,
            minimum_s=_READ_TIMEOUT_MARGIN_S * 3,
            maximum_s=_MAX_TIMEOUT_S,
            bounds=f"{_READ_TIMEOUT_MARGIN_S * 3} s and 15 minutes",
            why="Lambda stops a function after 15 minutes, and the stream needs "
            f"{_READ_TIMEOUT_MARGIN_S} s to end cleanly",
        )
    )
    if heartbeat is not None:
        problems.add(
            duration_problem(
                "heartbeat",
                heartbeat,
                minimum_s=1,
                maximum_s=300,
                bounds="1 and 300 seconds",
                why="CloudFront waits 30 s for an origin by default; beat more often than that",
            )
        )
    if isinstance(memory_size, bool) or not isinstance(memory_size, int):
        problems.add(f"memory_size must be an integer number of MiB, got {memory_size!r}")
    elif not 128 <= memory_size <= 10240:
        problems.add(f"memory_size must be 128-10240 MiB, got {memory_size!r}")
    problems.raise_if_any()


def _read_timeout(timeout: Duration) -> int:
    return int(timeout.to_seconds()) - _READ_TIMEOUT_MARGIN_S


def _runtime_code() -> lambda_.Code:
    """The runtime package alone, as ``runtime/`` at the asset root (no bundling step)."""
    return lambda_.Code.from_asset(
        str(_RUNTIME_DIR.parent),
        exclude=["*", "!runtime", "!runtime/**", "**/__pycache__", "**/*.pyc"],
    )
