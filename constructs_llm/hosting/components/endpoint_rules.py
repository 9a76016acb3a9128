"""The checks that span the components of one ``InferenceComponentEndpoint``: rules over the
endpoint's plan and the plans of the components it hosts (``HostingPlan``), run once, when the
endpoint renders at synth, over its components in construct-path order.

A component is checked on its own when it is created (its copies on each pool, its model, its
scaling); what it must share with the other components of its endpoint is checked here, once
every component exists. So a problem names the same construct whatever order the components
were created in: of two components that disagree, the one that sorts first by path is the
reference and the other is named; a fleet too small for their copies names them all.

- ``host AMI``: the endpoint's one variant has one ``InferenceAmiVersion``
  (``ProductionVariant``), which every component's image must run on.
- ``network``: SageMaker applies network isolation and the VPC to the whole endpoint
  (``hosting/components/endpoint_network.py``).
- ``kv-aware routing``: ``Routing.kv_aware()`` needs every component on the vLLM DLC
  (``hosting/routing.py``).
- ``fleet``: the initial copies of every component must fit on ``max_instances`` instances of
  each pool (each may be the one SageMaker provisions): a necessary condition (SageMaker also
  packs per instance). Each component checks that its own copies fit; this catches components
  that only fit alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.hosting.components.endpoint_network import network_disagreement
from constructs_llm.hosting.components.plan import ComponentEndpointPlan, ComponentPlan
from constructs_llm.hosting.routing import kv_aware_problem, runs_vllm_dlc
from constructs_llm.problems import Problem
from constructs_llm.sizing.copy_demand import CopyDemand


@dataclass(frozen=True)
class HostedPlan:
    """A component an endpoint hosts, as the rules read it.

    :param path: its construct path (what a problem names, and the order the rules read).
    :param plan: its plan.
    """

    path: str
    plan: ComponentPlan

    @property
    def name(self) -> str:
        """Its construct id."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class HostingPlan:
    """An endpoint and the components it hosts, in construct-path order.

    :param path: the endpoint's construct path.
    :param endpoint: the endpoint's plan.
    :param components: the components registered with it, sorted by path.
    """

    path: str
    endpoint: ComponentEndpointPlan
    components: tuple[HostedPlan, ...]

    @staticmethod
    def of(
        path: str, endpoint: ComponentEndpointPlan, hosted: dict[str, ComponentPlan]
    ) -> HostingPlan:
        """The plan of the endpoint at ``path`` hosting ``hosted`` (plans by construct path)."""
        components = tuple(HostedPlan(p, hosted[p]) for p in sorted(hosted))
        return HostingPlan(path, endpoint, components)


def hosting_problems(hosting: HostingPlan) -> list[Problem]:
    """What every rule finds over ``hosting``, rule by rule, components in path order."""
    return [problem for rule in RULES.values() for problem in rule(hosting) if problem]


def _ami(component: ComponentPlan) -> str | None:
    """The host AMI a component's images need (the same on every pool: checked by the
    component)."""
    return component.binding.inference_ami_version


def _host_ami(hosting: HostingPlan) -> list[Problem | None]:
    """One host AMI serves every component: CUDA 13 images need the newer driver, and two
    components cannot ask for different AMIs."""
    wanted = [(c.path, ami) for c in hosting.components if (ami := _ami(c.plan)) is not None]
    if not wanted:
        return []
    first_path, first = wanted[0]
    return [
        _host_ami_conflict(path, ami, first_path, first) for path, ami in wanted if ami != first
    ]


def _network(hosting: HostingPlan) -> list[Problem | None]:
    """Network isolation and the VPC serve every component: each agrees with the first."""
    if not hosting.components:
        return []
    first, *others = hosting.components
    reference = (first.path, first.plan.model)
    return [
        problem
        for other in others
        for problem in network_disagreement(reference, (other.path, other.plan.model))
    ]


def _routing(hosting: HostingPlan) -> list[Problem | None]:
    """``Routing.kv_aware()`` needs every component's model on the vLLM DLC."""
    engines: dict[str, str | None] = {}
    for component in hosting.components:
        model = component.plan.model
        image = component.plan.binding.derivation.image
        engine = model.engine.factory_name
        dlc = runs_vllm_dlc(engine, image.repository_name if image else None)
        engines[model.node.path] = None if dlc else f"Engine.{engine}()"
    return [kv_aware_problem(hosting.endpoint.variant.routing, engines)]


def _fleet(hosting: HostingPlan) -> list[Problem | None]:
    """The initial copies of every component fit on ``max_instances`` instances of each pool
    (alone, a component's own checks say whether its copies fit)."""
    components = hosting.components
    if len(components) < 2:
        return []
    reserved = [[demand.times(c.plan.copies) for demand in c.plan.demands] for c in components]
    need = [reduce(CopyDemand.plus, on_pool) for on_pool in zip(*reserved, strict=True)]
    return [
        _fits(hosting, instance, need[index], index)
        for index, instance in enumerate(hosting.endpoint.variant.instance_types)
    ]


def _fits(
    hosting: HostingPlan, instance: InstanceType, need: CopyDemand, pool: int
) -> Problem | None:
    capacity = CopyDemand.capacity_of(instance)
    if capacity is None:
        return None
    fleet = hosting.endpoint.max_instances
    over = [
        f"{wanted:g} {what} (the fleet has {have * fleet:g})"
        for what, wanted, have in (
            ("accelerators", need.accelerators, capacity.accelerators),
            ("vCPUs", need.cpu_cores, capacity.cpu_cores),
            ("MiB of memory", need.memory_mib, capacity.memory_mib),
        )
        if wanted > have * fleet
    ]
    if not over:
        return None
    names = ", ".join(
        f"{c.name} ({c.plan.copies} x {c.plan.demands[pool].describe()})"
        for c in hosting.components
    )
    return _fleet_total_too_small(names, "; ".join(over), fleet, instance.name)


#: The rules by what they check, in the order their problems are listed.
RULES: dict[str, Callable[[HostingPlan], list[Problem | None]]] = {
    "host AMI": _host_ami,
    "network": _network,
    "kv-aware routing": _routing,
    "fleet": _fleet,
}


def _host_ami_conflict(path: str, ami: str, first_path: str, first: str) -> Problem:
    return Problem.of(
        "model",
        ami,
        f"InferenceComponent '{path}' needs host AMI {ami}, but InferenceComponent "
        f"'{first_path}' on the same endpoint needs {first}, and the endpoint's variant has "
        "one host AMI;",
        "put images that need different host AMIs on separate endpoints",
    )


def _fleet_total_too_small(components: str, over: str, fleet: int, instance: str) -> Problem:
    return Problem.of(
        "max_instances",
        fleet,
        f"the initial copies of its components ({components}) need {over} with "
        f"max_instances={fleet} x {instance};",
        "raise max_instances or lower copies",
    )
