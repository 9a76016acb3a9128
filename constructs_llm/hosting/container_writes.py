"""Where the containers of an endpoint write through their execution roles: the CloudWatch Logs
groups and metric namespaces SageMaker uses for them, which each host grants its roles when it
renders (``execution_role.py`` makes the grant).

- Logs. SageMaker writes an endpoint's container output to ``/aws/sagemaker/Endpoints/<name>``,
  one stream per variant and instance ("Log groups and streams that Amazon SageMaker AI sends
  to Amazon CloudWatch Logs", https://docs.aws.amazon.com/sagemaker/latest/dg/logging-cloudwatch.html).
  An inference component's container writes to ``/aws/sagemaker/InferenceComponents/<component
  name>`` (not in that table; the group SageMaker creates for components, as
  ``docs/operate.md`` reads them). Which role writes a component's logs, the endpoint's or the
  model's, is not documented: both get the endpoint's group and the component's.
- The endpoint's name is known at synth only when it is given (``endpoint_name=``, or the
  name a guarded rollout derives): CloudFormation generates it otherwise, when it creates the
  endpoint. The roles of its models cannot name it through ``Fn::GetAtt``: the Model waits for
  its role's policies (so that the containers' first start-up, during the endpoint's creation,
  can already log, which is when a failed health check needs its logs), and the Endpoint waits
  for its config and Model, so a policy naming the Endpoint would close a cycle (role policy ->
  endpoint -> endpoint config -> model -> role policy); a policy the Model did not wait for
  would reach the role only after the endpoint is in service, too late for the start-up logs.
  The same holds for an endpoint hosting components and its own role (its config waits for
  it). Those roles keep the endpoint prefix, ``/aws/sagemaker/Endpoints/*``, acknowledged on
  their ``ContainerWrites`` policy with that reason; ``endpoint_name=`` scopes them.
- The role of a component's model is different: the component, not the endpoint, waits for
  its Model, so that role names the endpoint's group through ``Fn::GetAtt`` even when the name
  is generated (unless the model shares the endpoint's own role). A component's name is always
  known (given or derived).
- An endpoint named after its fleet (``FleetChange.NEW_ENDPOINT``, ``hosting/fleet_change.py``)
  is replaced by a new fleet: CloudFormation creates the new endpoint, updates the role's
  policy, and deletes the old endpoint only in the cleanup, so the old one's containers keep
  serving, and logging, meanwhile. The old name is the previous deploy's, which a synth cannot
  know; its roles get every group of the endpoint's path-derived prefix,
  ``/aws/sagemaker/Endpoints/<prefix>*`` (``fleet_endpoint_prefix``): the names this endpoint
  takes whatever its fleet, and no other endpoint's unless its path shares that prefix.
- Metrics. SageMaker publishes instance metrics in ``/aws/sagemaker/Endpoints`` and per-copy
  metrics in ``/aws/sagemaker/InferenceComponents`` ("Amazon SageMaker AI metrics in Amazon
  CloudWatch", monitoring-cloudwatch); invocation metrics, which the rollback alarms watch, are
  in ``AWS/SageMaker``, where no caller may put data. A real-time endpoint's roles get the
  first namespace; the roles of an endpoint hosting components get both (which role
  publishes copy metrics is not documented).
"""

from __future__ import annotations

from collections.abc import Iterable

from constructs_llm.compliance import FLEET_ENDPOINT_LOG_GROUPS
from constructs_llm.execution_role import ContainerWrites
from constructs_llm.operations.metrics import COPY_NAMESPACE, INSTANCE_NAMESPACE

#: The prefix of every endpoint's log group.
_ENDPOINT_LOG_GROUPS = "/aws/sagemaker/Endpoints"
#: The prefix of every inference component's log group.
_COMPONENT_LOG_GROUPS = "/aws/sagemaker/InferenceComponents"


def endpoint_writes(
    endpoint_name: str | None, *, fleet_prefix: str | None = None
) -> ContainerWrites:
    """What the models of a real-time endpoint write: its log group (the prefix when its name
    is generated; every group of ``fleet_prefix`` when the name follows its fleet) and the
    instance namespace."""
    if fleet_prefix is not None:
        return ContainerWrites(
            log_groups=(f"{_ENDPOINT_LOG_GROUPS}/{fleet_prefix}*",),
            namespaces=(INSTANCE_NAMESPACE,),
            wildcard_reason=FLEET_ENDPOINT_LOG_GROUPS,
        )
    return ContainerWrites(
        log_groups=(_endpoint_group(endpoint_name),), namespaces=(INSTANCE_NAMESPACE,)
    )


def component_endpoint_writes(
    endpoint_name: str | None, component_names: Iterable[str] = ()
) -> ContainerWrites:
    """What an endpoint hosting inference components writes, and the models of the components
    named: the endpoint's log group and each component's, in both namespaces."""
    groups = [f"{_COMPONENT_LOG_GROUPS}/{name}" for name in component_names]
    return ContainerWrites(
        log_groups=(_endpoint_group(endpoint_name), *groups),
        namespaces=(INSTANCE_NAMESPACE, COPY_NAMESPACE),
    )


def _endpoint_group(endpoint_name: str | None) -> str:
    return f"{_ENDPOINT_LOG_GROUPS}/{endpoint_name if endpoint_name is not None else '*'}"
