"""Example stacks, one per seed scenario. ``EXAMPLES`` maps a short name to what builds it:
a stack class, or (``fleet``) a function that builds several stacks of one app;
``stack_ids(name)`` gives the stacks each builds."""

from __future__ import annotations

from collections.abc import Callable

from stacks.capacity import CapacityStack
from stacks.falcon40b_lmi import Falcon40bLmiStack
from stacks.fleet import TEAMS, fleet
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

EXAMPLES: dict[str, Callable[..., object]] = {
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
    "fleet": fleet,
}


def stack_id(name: str) -> str:
    """The stack id (or, for ``fleet``, the prefix of the ids) of the example ``name``."""
    return "".join(part.capitalize() for part in name.split("-"))


def stack_ids(name: str) -> list[str]:
    """The ids of the stacks the example ``name`` builds, in the order it builds them."""
    if name == "fleet":
        return [f"{stack_id(name)}{team}" for team in TEAMS]
    return [stack_id(name)]
