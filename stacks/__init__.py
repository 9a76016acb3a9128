"""Example stacks, one per seed scenario. ``EXAMPLES`` maps a short name to each stack."""

from __future__ import annotations

from aws_cdk import Stack

from stacks.capacity import CapacityStack
from stacks.falcon40b_lmi import Falcon40bLmiStack
from stacks.front_doors import FrontDoorsStack
from stacks.llama2_tgi import Llama2TgiStack
from stacks.llama3_components import Llama3ComponentsStack
from stacks.mistral_inf2 import MistralInf2Stack
from stacks.mixtral_trtllm import MixtralTrtLlmStack
from stacks.model_gateway import ModelGatewayStack
from stacks.native_openai import NativeOpenAiStack
from stacks.openai_batch import OpenAiBatchStack
from stacks.overnight_batch import OvernightBatchStack
from stacks.phi3_lmi import Phi3LmiStack
from stacks.production import ProductionStack
from stacks.rag import RagStack
from stacks.shared_endpoint import SharedEndpointStack

EXAMPLES: dict[str, type[Stack]] = {
    "phi3-lmi": Phi3LmiStack,
    "mixtral-trtllm": MixtralTrtLlmStack,
    "falcon40b-lmi": Falcon40bLmiStack,
    "llama2-tgi": Llama2TgiStack,
    "mistral-inf2": MistralInf2Stack,
    "llama3-components": Llama3ComponentsStack,
    "shared-endpoint": SharedEndpointStack,
    "front-doors": FrontDoorsStack,
    "model-gateway": ModelGatewayStack,
    "production": ProductionStack,
    "native-openai": NativeOpenAiStack,
    "capacity": CapacityStack,
    "overnight-batch": OvernightBatchStack,
    "rag": RagStack,
    "openai-batch": OpenAiBatchStack,
}
