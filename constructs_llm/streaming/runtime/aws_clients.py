"""boto3 clients of the runtime, each on its own session with explicit timeouts and botocore's
``standard`` retry mode. Stdlib + boto3 only: this file ships in the Lambda asset.

boto3 and botocore are imported on first use: building a client is what costs, and a runtime
without API keys never builds the Secrets Manager one.

Lambda sets the region itself; a runtime started elsewhere without one gets
:class:`RegionMissingError` naming the variable to set, instead of botocore's ``NoRegionError``.
"""

from __future__ import annotations

from typing import Any


class RegionMissingError(Exception):
    """boto3 found no AWS region for a client."""


def new_client(
    service: str,
    *,
    connect_timeout: float,
    read_timeout: float,
    max_attempts: int,
    **config: Any,
) -> Any:
    """A fresh boto3 client of ``service``; ``max_attempts`` counts the first call, and
    ``config`` holds further ``botocore.config.Config`` settings."""
    import boto3  # type: ignore[import-untyped]  # deferred: keeps imports cheap
    from botocore.config import Config  # type: ignore[import-untyped]
    from botocore.exceptions import NoRegionError  # type: ignore[import-untyped]

    settings = Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        **config,
    )
    try:
        return boto3.session.Session().client(service, config=settings)
    except NoRegionError:
        raise RegionMissingError(
            f"no AWS region for the {service} client: set AWS_DEFAULT_REGION (e.g. export "
            "AWS_DEFAULT_REGION=us-east-1; boto3 does not read AWS_REGION), or a region in the "
            "AWS profile; Lambda sets it itself"
        ) from None
