"""What an invoker needs from the thing it calls: an endpoint or an inference component."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from aws_cdk import aws_iam as iam

from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat

if TYPE_CHECKING:
    from constructs_llm.model import LlmModel

__all__ = ["InvocationTarget", "ServesModel"]


@runtime_checkable
class InvocationTarget(Protocol):
    """Implemented by ``LlmEndpoint``, ``InferenceComponent`` and imported endpoints
    (``LlmEndpoint.from_endpoint_name``)."""

    @property
    def endpoint_name(self) -> str: ...

    @property
    def inference_component_name(self) -> str | None: ...

    @property
    def stream_format(self) -> StreamFormat: ...

    @property
    def request_format(self) -> RequestFormat: ...

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant: ...


class ServesModel:
    """The parts of ``InvocationTarget`` that come from the served ``LlmModel``."""

    model: LlmModel

    @property
    def stream_format(self) -> StreamFormat:
        return self.model.stream_format

    @property
    def request_format(self) -> RequestFormat:
        return self.model.request_format

    @property
    def served_model_name(self) -> str:
        """The name the invoker reports to OpenAI clients: the Hub id, else the model's id."""
        return self.model.source.model_id or self.model.node.id
