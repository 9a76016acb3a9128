"""AWS CDK constructs for large language models on Amazon SageMaker.

Names are loaded on first use (PEP 562), so ``import constructs_llm`` stays cheap and
the streaming parser never pulls in ``aws_cdk``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "ConstructsLlmError": "constructs_llm.errors",
    "ConfigurationError": "constructs_llm.errors",
    "InstanceType": "constructs_llm.instance_type",
    "ContainerImage": "constructs_llm.container_image",
    "Engine": "constructs_llm.engine",
    "RequestFormat": "constructs_llm.streaming.runtime.events",
    "StreamFormat": "constructs_llm.streaming.runtime.events",
    "ModelSource": "constructs_llm.model_source",
    "ModelArchitecture": "constructs_llm.sizing",
    "MemoryPlan": "constructs_llm.sizing",
    "LlmModel": "constructs_llm.model",
    "Placement": "constructs_llm.placement",
    "ModelBinding": "constructs_llm.model_binding",
    "LlmEndpoint": "constructs_llm.endpoint",
    "ImportedEndpoint": "constructs_llm.imported_endpoint",
    "Autoscaling": "constructs_llm.scaling",
    "InferenceComponentEndpoint": "constructs_llm.inference_component_endpoint",
    "InferenceComponent": "constructs_llm.inference_component",
    "AdapterComponent": "constructs_llm.adapter_component",
    "Variant": "constructs_llm.variant",
    "EndpointVariant": "constructs_llm.variant",
    "ToolCalling": "constructs_llm.engines.tools",
    "StreamingInvoker": "constructs_llm.streaming.infrastructure",
    "InvokerAuth": "constructs_llm.streaming.invoker_auth",
    "Deployment": "constructs_llm.deployment",
    "Alarms": "constructs_llm.alarms",
    "LlmAlarms": "constructs_llm.alarms",
    "ScheduledCapacity": "constructs_llm.schedule",
    "LlmDashboard": "constructs_llm.dashboard",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'constructs_llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # names for type checkers and IDEs; loaded lazily above
    from constructs_llm.adapter_component import AdapterComponent as AdapterComponent
    from constructs_llm.alarms import Alarms as Alarms
    from constructs_llm.alarms import LlmAlarms as LlmAlarms
    from constructs_llm.container_image import ContainerImage as ContainerImage
    from constructs_llm.dashboard import LlmDashboard as LlmDashboard
    from constructs_llm.deployment import Deployment as Deployment
    from constructs_llm.endpoint import LlmEndpoint as LlmEndpoint
    from constructs_llm.engine import Engine as Engine
    from constructs_llm.engines.tools import ToolCalling as ToolCalling
    from constructs_llm.errors import ConfigurationError as ConfigurationError
    from constructs_llm.errors import ConstructsLlmError as ConstructsLlmError
    from constructs_llm.imported_endpoint import ImportedEndpoint as ImportedEndpoint
    from constructs_llm.inference_component import InferenceComponent as InferenceComponent
    from constructs_llm.inference_component_endpoint import (
        InferenceComponentEndpoint as InferenceComponentEndpoint,
    )
    from constructs_llm.instance_type import InstanceType as InstanceType
    from constructs_llm.model import LlmModel as LlmModel
    from constructs_llm.model_binding import ModelBinding as ModelBinding
    from constructs_llm.model_source import ModelSource as ModelSource
    from constructs_llm.placement import Placement as Placement
    from constructs_llm.scaling import Autoscaling as Autoscaling
    from constructs_llm.schedule import ScheduledCapacity as ScheduledCapacity
    from constructs_llm.sizing import MemoryPlan as MemoryPlan
    from constructs_llm.sizing import ModelArchitecture as ModelArchitecture
    from constructs_llm.streaming.infrastructure import StreamingInvoker as StreamingInvoker
    from constructs_llm.streaming.invoker_auth import InvokerAuth as InvokerAuth
    from constructs_llm.streaming.runtime.events import RequestFormat as RequestFormat
    from constructs_llm.streaming.runtime.events import StreamFormat as StreamFormat
    from constructs_llm.variant import EndpointVariant as EndpointVariant
    from constructs_llm.variant import Variant as Variant
