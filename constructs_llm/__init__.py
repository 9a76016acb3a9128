"""AWS CDK constructs for large language models on Amazon SageMaker.

The public API is what this package exports (``__all__``) and, for the stream parser and the
client helpers, what ``constructs_llm.streaming`` exports. Every other module is internal and
may change between releases: import from these two.

Names are loaded on first use (PEP 562), so ``import constructs_llm`` stays cheap and
the streaming parser never pulls in ``aws_cdk``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_llm.lazy_exports import lazy_exports

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "ConstructsLlmError": "constructs_llm.errors",
    "ConfigurationError": "constructs_llm.errors",
    "InstanceType": "constructs_llm.hardware.instance_type",
    "ContainerImage": "constructs_llm.images.container_image",
    "Engine": "constructs_llm.engines.engine",
    "RequestFormat": "constructs_llm.contract",
    "ModelKind": "constructs_llm.contract",
    "ReasoningField": "constructs_llm.contract",
    "StreamFormat": "constructs_llm.contract",
    "ModelSource": "constructs_llm.model.source",
    "ModelArchitecture": "constructs_llm.sizing.memory",
    "MemoryPlan": "constructs_llm.sizing.memory",
    "InstanceFit": "constructs_llm.sizing.instance_fit",
    "fit_instances": "constructs_llm.sizing.instance_fit",
    "LlmModel": "constructs_llm.model.llm_model",
    "Placement": "constructs_llm.hardware.placement",
    "ModelBinding": "constructs_llm.model.llm_model",
    "LlmEndpoint": "constructs_llm.hosting.endpoint",
    "ImportedEndpoint": "constructs_llm.hosting.imported_endpoint",
    "IEndpoint": "constructs_llm.hosting.target",
    "InvocationTarget": "constructs_llm.hosting.target",
    "EmbeddingTraits": "constructs_llm.hosting.target",
    "TargetFacts": "constructs_llm.hosting.target",
    "DashboardTarget": "constructs_llm.dashboards.dashboard",
    "Autoscaling": "constructs_llm.operations.autoscaling",
    "InferenceComponentEndpoint": "constructs_llm.hosting.components.endpoint",
    "InferenceComponent": "constructs_llm.hosting.components.inference_component",
    "AdapterComponent": "constructs_llm.hosting.components.adapter",
    "CopyPlacement": "constructs_llm.hosting.components.copy_placement",
    "Variant": "constructs_llm.hosting.variant",
    "FleetChange": "constructs_llm.hosting.fleet_change",
    "Routing": "constructs_llm.hosting.routing",
    "AsyncInference": "constructs_llm.hosting.async_inference",
    "S3Prefix": "constructs_llm.hosting.async_inference",
    "EndpointVariant": "constructs_llm.hosting.endpoint_variant",
    "ToolCalling": "constructs_llm.engines.tools",
    "ParserChoice": "constructs_llm.engines.parsers",
    "StreamingInvoker": "constructs_llm.streaming.invoker.streaming_invoker",
    "InvokerAuth": "constructs_llm.streaming.invoker.auth",
    "Cors": "constructs_llm.streaming.invoker.cors",
    "Deployment": "constructs_llm.operations.deployment",
    "Alarms": "constructs_llm.operations.alarms",
    "EndpointLogs": "constructs_llm.hosting.endpoint_logs",
    "LlmAlarms": "constructs_llm.operations.alarms",
    "ScheduledCapacity": "constructs_llm.operations.schedule",
    "LlmDashboard": "constructs_llm.dashboards.dashboard",
    "dashboard_url": "constructs_llm.dashboards.console_url",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # names for type checkers and IDEs; loaded lazily above
    from constructs_llm.contract import ModelKind as ModelKind
    from constructs_llm.contract import ReasoningField as ReasoningField
    from constructs_llm.contract import RequestFormat as RequestFormat
    from constructs_llm.contract import StreamFormat as StreamFormat
    from constructs_llm.dashboards.console_url import dashboard_url as dashboard_url
    from constructs_llm.dashboards.dashboard import DashboardTarget as DashboardTarget
    from constructs_llm.dashboards.dashboard import LlmDashboard as LlmDashboard
    from constructs_llm.engines.engine import Engine as Engine
    from constructs_llm.engines.parsers import ParserChoice as ParserChoice
    from constructs_llm.engines.tools import ToolCalling as ToolCalling
    from constructs_llm.errors import ConfigurationError as ConfigurationError
    from constructs_llm.errors import ConstructsLlmError as ConstructsLlmError
    from constructs_llm.hardware.instance_type import InstanceType as InstanceType
    from constructs_llm.hardware.placement import Placement as Placement
    from constructs_llm.hosting.async_inference import AsyncInference as AsyncInference
    from constructs_llm.hosting.async_inference import S3Prefix as S3Prefix
    from constructs_llm.hosting.components.adapter import AdapterComponent as AdapterComponent
    from constructs_llm.hosting.components.copy_placement import CopyPlacement as CopyPlacement
    from constructs_llm.hosting.components.endpoint import (
        InferenceComponentEndpoint as InferenceComponentEndpoint,
    )
    from constructs_llm.hosting.components.inference_component import (
        InferenceComponent as InferenceComponent,
    )
    from constructs_llm.hosting.endpoint import LlmEndpoint as LlmEndpoint
    from constructs_llm.hosting.endpoint_logs import EndpointLogs as EndpointLogs
    from constructs_llm.hosting.endpoint_variant import EndpointVariant as EndpointVariant
    from constructs_llm.hosting.fleet_change import FleetChange as FleetChange
    from constructs_llm.hosting.imported_endpoint import ImportedEndpoint as ImportedEndpoint
    from constructs_llm.hosting.routing import Routing as Routing
    from constructs_llm.hosting.target import EmbeddingTraits as EmbeddingTraits
    from constructs_llm.hosting.target import IEndpoint as IEndpoint
    from constructs_llm.hosting.target import InvocationTarget as InvocationTarget
    from constructs_llm.hosting.target import TargetFacts as TargetFacts
    from constructs_llm.hosting.variant import Variant as Variant
    from constructs_llm.images.container_image import ContainerImage as ContainerImage
    from constructs_llm.model.llm_model import LlmModel as LlmModel
    from constructs_llm.model.llm_model import ModelBinding as ModelBinding
    from constructs_llm.model.source import ModelSource as ModelSource
    from constructs_llm.operations.alarms import Alarms as Alarms
    from constructs_llm.operations.alarms import LlmAlarms as LlmAlarms
    from constructs_llm.operations.autoscaling import Autoscaling as Autoscaling
    from constructs_llm.operations.deployment import Deployment as Deployment
    from constructs_llm.operations.schedule import ScheduledCapacity as ScheduledCapacity
    from constructs_llm.sizing.instance_fit import InstanceFit as InstanceFit
    from constructs_llm.sizing.instance_fit import fit_instances as fit_instances
    from constructs_llm.sizing.memory import MemoryPlan as MemoryPlan
    from constructs_llm.sizing.memory import ModelArchitecture as ModelArchitecture
    from constructs_llm.streaming.invoker.auth import InvokerAuth as InvokerAuth
    from constructs_llm.streaming.invoker.cors import Cors as Cors
    from constructs_llm.streaming.invoker.streaming_invoker import (
        StreamingInvoker as StreamingInvoker,
    )
