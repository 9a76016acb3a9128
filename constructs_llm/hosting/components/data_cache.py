"""Model data caching: an endpoint that caches a component's model artifacts and container
image on each instance it provisions for it (the component's ``DataCacheConfig``).

"With caching enabled, the endpoint caches this data in each instance that it provisions for
the inference component. That way, the inference component deploys faster during the auto
scaling process. If caching isn't enabled, the inference component takes longer to deploy
because of the time it spends downloading the data" (botocore
``InferenceComponentDataCacheConfig``). The gain is in scaling out: a new copy starts without
downloading the image and, for weights SageMaker downloads (S3 sources), the weights; a Hub
model still downloads its weights from the container at start-up. The cache takes room on the
instance's storage.

By default nothing is rendered, so SageMaker's default (no caching) applies and existing
stacks do not change; ``data_cache=True`` is worth it for a component that autoscales, most
of all one that scales to zero and back.
"""

from __future__ import annotations

from aws_cdk import aws_sagemaker as sagemaker

from constructs_llm.problems import Problem
from constructs_llm.values import describe


def data_cache_problem(data_cache: object) -> Problem | None:
    """``data_cache`` must be True, False or None."""
    if data_cache is None or isinstance(data_cache, bool):
        return None
    hint = (
        f"; pass the bool {data_cache.strip().capitalize()}, not a string"
        if isinstance(data_cache, str) and data_cache.strip().lower() in ("true", "false")
        else ""
    )
    return Problem.of(
        "data_cache",
        data_cache,
        f"data_cache must be True, False or None, got {describe(data_cache)}{hint}",
    )


def data_cache_config(
    data_cache: bool | None,
) -> sagemaker.CfnInferenceComponent.InferenceComponentDataCacheConfigProperty | None:
    """``EnableCaching`` as asked; None (SageMaker's default) when not asked."""
    if data_cache is None:
        return None
    return sagemaker.CfnInferenceComponent.InferenceComponentDataCacheConfigProperty(
        enable_caching=data_cache
    )
