"""The environment a StreamingInvoker's function gets: the Lambda Web Adapter's settings, the
runtime's targets (``targets.py``), the upstream read timeout it derives from the function
timeout, the metrics namespace, the heartbeat and the wait for a component's capacity.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration
from constructs import Construct

from constructs_llm.contract import (
    DEFAULT_MAX_REQUEST_BYTES,
    NAMESPACE,
    Env,
    ReasoningField,
)
from constructs_llm.hosting.target import InvocationTarget
from constructs_llm.streaming.invoker.targets import routes_environment

_PORT = "8080"
MAX_TIMEOUT_S = 900
"""Lambda stops a function after 15 minutes."""
READ_TIMEOUT_MARGIN_S = 10
"""Stream reads give up a little before the function itself would be stopped."""
CAPACITY_WAIT_MARGIN_S = 30
"""What a request held for capacity keeps of the function's timeout for its answer."""


def invoker_environment(
    scope: Construct,
    targets: Sequence[InvocationTarget],
    *,
    timeout: Duration,
    heartbeat: Duration | None,
    max_request_bytes: int | None = None,
    reasoning_field: ReasoningField | str | None = None,
    capacity_wait: Duration | None = None,
) -> dict[str, str]:
    """The function's environment, in the order the template lists it; ``MAX_BODY_BYTES``
    and ``REASONING_FIELD`` only when they differ from the runtime's defaults."""
    routes = routes_environment(scope, targets)
    component = routes.pop(Env.INFERENCE_COMPONENT_NAME, None)
    env = {
        "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
        "AWS_LWA_INVOKE_MODE": "response_stream",
        "AWS_LWA_PORT": _PORT,
        "AWS_LWA_READINESS_CHECK_PATH": "/health",
        Env.PORT: _PORT,
        **routes,
        Env.UPSTREAM_READ_TIMEOUT: str(int(timeout.to_seconds()) - READ_TIMEOUT_MARGIN_S),
        Env.METRICS_NAMESPACE: NAMESPACE,
    }
    if component is not None:  # listed last in the template, after the other target names
        env[Env.INFERENCE_COMPONENT_NAME] = component
    if heartbeat is not None:
        env[Env.HEARTBEAT_SECONDS] = str(int(heartbeat.to_seconds()))
    if capacity_wait is not None:
        env[Env.CAPACITY_WAIT_SECONDS] = str(int(capacity_wait.to_seconds()))
    if max_request_bytes is not None and max_request_bytes != DEFAULT_MAX_REQUEST_BYTES:
        env[Env.MAX_BODY_BYTES] = str(max_request_bytes)
    field = ReasoningField(reasoning_field or ReasoningField.REASONING)
    if field is not ReasoningField.REASONING:
        env[Env.REASONING_FIELD] = field.value
    return env
