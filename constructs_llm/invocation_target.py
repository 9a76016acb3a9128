"""What an invoker needs from the thing it calls: an endpoint or an inference component."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from aws_cdk import aws_iam as iam

from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat


@runtime_checkable
class InvocationTarget(Protocol):
    """Implemented by ``LlmEndpoint`` and ``InferenceComponent``."""

    @property
    def endpoint_name(self) -> str: ...

    @property
    def inference_component_name(self) -> str | None: ...

    @property
    def stream_format(self) -> StreamFormat: ...

    @property
    def request_format(self) -> RequestFormat: ...

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant: ...
