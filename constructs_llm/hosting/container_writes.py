"""Where the containers of an endpoint write through their execution roles: the CloudWatch Logs
groups and metric namespaces SageMaker uses for them, which each host grants its roles when it
renders (``model/execution_role.py`` makes the grant).

- Logs. SageMaker writes an endpoint's container output to ``/aws/sagemaker/Endpoints/<name>``,
  one stream per variant and instance ("Log groups and streams that Amazon SageMaker AI sends
  to Amazon CloudWatch Logs", https://docs.aws.amazon.com/sagemaker/latest/dg/logging-cloudwatch.html).
  An inference component's container writes to ``/aws/sagemaker/InferenceComponents/<component
  name>`` (not in that table; the group SageMaker creates for components, as
  ``docs/operate.md`` reads them). Which role writes a component's logs, the endpoint's or the
  model's, is not documented: both get the endpoint's group and the component's.
- The endpoint's name is known here only when it is given (``endpoint_name=``, or the name a
  guarded rollout derives): CloudFormation generates it otherwise, when it creates the
  endpoint, and naming it through ``Fn::GetAtt`` would close a cycle (role policy -> endpoint
  -> endpoint config -> model -> role policy, as the model waits for the policy so that its
  first start-up can already log). Such an endpoint's roles keep the endpoint prefix,
  ``/aws/sagemaker/Endpoints/*``. A component's name is always known (given or derived).
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
from constructs_llm.model.execution_role import ContainerWrites
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
