"""Capacity reservations: a production variant whose instances launch only into an ML capacity
reservation you hold (the variant's ``CapacityReservationConfig``).

SageMaker accepts one preference, ``capacity-reservations-only``: "SageMaker AI launches
instances only into an ML capacity reservation. If no capacity is available, the instances
fail to launch", and ``MlReservationArn`` names the reservation (botocore
``ProductionVariantCapacityReservationConfig``; the ARN is 20-258 characters matching
``arn:aws[a-z-]*:sagemaker:<region>:<account>:<type>/<id>``, botocore ``MlReservationArn``
and the CloudFormation schema of ``AWS::SageMaker::EndpointConfig``). So with a reservation the
variant never falls back to on-demand capacity: size ``instance_count`` and any autoscaling
maximum within the reservation. By default nothing is rendered and SageMaker launches
on-demand instances.
"""

from __future__ import annotations

import re

from aws_cdk import Token
from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.values import describe

__all__ = ["RESERVATIONS_ONLY", "capacity_reservation_config", "capacity_reservation_problem"]

#: The one preference SageMaker accepts (botocore ``CapacityReservationPreference``).
RESERVATIONS_ONLY = "capacity-reservations-only"
_ARN = re.compile(r"arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:[a-z0-9\-]{1,14}/.+")
_EXAMPLE = "arn:aws:sagemaker:us-east-1:123456789012:ml-reservation/my-reservation"


def capacity_reservation_problem(capacity_reservation: object) -> str | None:
    """What is wrong with ``capacity_reservation`` (the reservation's ARN), if anything."""
    value = capacity_reservation
    if value is None or (isinstance(value, str) and Token.is_unresolved(value)):
        return None
    fix = f"pass the ML capacity reservation's ARN, such as {_EXAMPLE!r}"
    if not isinstance(value, str):
        return f"capacity_reservation must be an ARN string, got {describe(value)}; {fix}"
    if not (20 <= len(value) <= 258 and _ARN.fullmatch(value)):
        return f"capacity_reservation must be an ML capacity reservation ARN, got {value!r}; {fix}"
    return None


def capacity_reservation_config(
    capacity_reservation: str | None,
) -> sagemaker.CfnEndpointConfig.CapacityReservationConfigProperty | None:
    """The variant's ``CapacityReservationConfig``: launch only into the reservation."""
    if capacity_reservation is None:
        return None
    return sagemaker.CfnEndpointConfig.CapacityReservationConfigProperty(
        capacity_reservation_preference=RESERVATIONS_ONLY,
        ml_reservation_arn=capacity_reservation,
    )
