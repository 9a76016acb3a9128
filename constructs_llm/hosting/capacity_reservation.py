r"""Capacity reservations: a production variant whose instances launch only into a SageMaker
training plan reserved for an endpoint (the variant's ``CapacityReservationConfig``).

The ARN is a training plan's, ``arn:<partition>:sagemaker:<region>:<account>:training-plan/
<name>``: "specify the ``MlReservationArn`` parameter with the desired training plan resource
ARN in the ``CapacityReservationConfig``" (SageMaker guide, "Deploy an inference endpoint
using the API, AWS CLI", use-training-plan-for-inference-endpoints-using-api-cli-sdk; botocore
``TrainingPlanArn``: ``arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:training-plan/.*``,
50-2048 characters, within ``MlReservationArn``'s 20-258). The plan is created with the target
resource "endpoint".

SageMaker accepts one preference, ``capacity-reservations-only``: "SageMaker AI launches
instances only into an ML capacity reservation. If no capacity is available, the instances
fail to launch" (botocore ``ProductionVariantCapacityReservationConfig``). So with a plan the
variant never falls back to on-demand capacity: size ``instance_count`` and any autoscaling
maximum within the plan; and when the plan's window ends, "the endpoint stops serving traffic
and invocations fail with a capacity error" until it is given a new plan or on-demand capacity
(SageMaker guide, "Using training plans for SageMaker inference endpoints",
training-plan-utilization-for-inference-endpoints). The guide also requires the variant's
instance type to match the plan's, and allows one plan per endpoint. By default nothing is
rendered and SageMaker launches on-demand instances.
"""

from __future__ import annotations

import re

from aws_cdk import Token
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.problems import Problem
from constructs_llm.values import describe

#: The one preference SageMaker accepts (botocore ``CapacityReservationPreference``).
_RESERVATIONS_ONLY = "capacity-reservations-only"
_ARN = re.compile(
    r"arn:aws[a-z\-]*:sagemaker:(?P<region>[a-z0-9\-]*):[0-9]{12}:(?P<type>[a-z0-9\-]{1,14})/.+"
)
_PLAN = "training-plan"
_EXAMPLE = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p4-for-inference-endpoint"
_MAX_ARN = 258  # MlReservationArn
_MIN_PLAN_ARN = 50  # TrainingPlanArn


def capacity_reservation_problem(capacity_reservation: object) -> Problem | None:
    """What is wrong with ``capacity_reservation`` (a training plan's ARN), if anything."""
    value = capacity_reservation
    if value is None or (isinstance(value, str) and Token.is_unresolved(value)):
        return None
    fix = (
        f"pass the ARN of a training plan created for an endpoint, such as {_EXAMPLE!r} "
        "(aws sagemaker describe-training-plan --training-plan-name ... --query TrainingPlanArn)"
    )
    prop = "capacity_reservation"
    if not isinstance(value, str):
        wrong = f"capacity_reservation must be an ARN string, got {describe(value)};"
        return Problem.of(prop, value, wrong, fix)
    match = _ARN.fullmatch(value)
    if match is None or len(value) > _MAX_ARN:
        wrong = f"capacity_reservation must be a training plan's ARN, got {value!r};"
        return Problem.of(prop, value, wrong, fix)
    if match["type"] != _PLAN:
        return Problem.of(
            prop,
            value,
            f"capacity_reservation must be a training plan's ARN (…:{_PLAN}/<name>), got a "
            f"{match['type']!r} ARN {value!r}; SageMaker endpoints reserve capacity through "
            f"training plans:",
            fix,
        )
    if len(value) < _MIN_PLAN_ARN:
        return Problem.of(
            prop,
            value,
            f"capacity_reservation {value!r} is {len(value)} characters, shorter than the "
            f"{_MIN_PLAN_ARN} of any training plan ARN (botocore TrainingPlanArn);",
            fix,
        )
    return None


def capacity_reservation_config(
    capacity_reservation: str | None,
) -> sagemaker.CfnEndpointConfig.CapacityReservationConfigProperty | None:
    """The variant's ``CapacityReservationConfig``: launch only into the reservation."""
    if capacity_reservation is None:
        return None
    return sagemaker.CfnEndpointConfig.CapacityReservationConfigProperty(
        capacity_reservation_preference=_RESERVATIONS_ONLY,
        ml_reservation_arn=capacity_reservation,
    )
