"""Where the Batch API keeps its files and batches, and which state machine runs them, read from
the environment ``StreamingInvoker.add_batch_api()`` sets. Stdlib + boto3 only: this file ships
in the Lambda asset.

======================== ============ ==================================================
variable                 default      meaning
======================== ============ ==================================================
BATCH_BUCKET             (unset)      the bucket of files and batches; unset: the Batch
                                      API's paths answer 404 (not enabled)
BATCH_STATE_MACHINE_ARN  (unset)      the state machine whose distributed map runs a batch
BATCH_WINDOW_SECONDS     86400        the completion window (the state machine's timeout)
BATCH_CONCURRENCY        {}           ``{model: n}``: lines of one model in flight at once
                                      (the map's ``MaxConcurrency``); 8 for a model absent
BATCH_ASYNC              {}           ``{model: "s3://bucket/inputs/"}``: the models on
                                      asynchronous endpoints, served in batches only, and
                                      the input folder of each (``queued.py``)
======================== ============ ==================================================

boto3 reads ``AWS_ENDPOINT_URL_S3`` and ``AWS_ENDPOINT_URL_SFN`` (the service ids ``s3`` and
``sfn``), which is how the tests point these clients at a local moto server.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...formats import Env
from ..aws_clients import new_client

#: Lines of one model in flight at once when ``BATCH_CONCURRENCY`` does not name it.
DEFAULT_CONCURRENCY = 8
#: Step Functions' largest ``MaxConcurrency`` for a distributed map ("up to 10,000 parallel
#: child workflow executions", the Step Functions guide's Distributed Map page).
MAX_CONCURRENCY = 10_000
_DAY_S = 86_400
#: boto3's service names whose ``AWS_ENDPOINT_URL_<ID>`` variable differs from them.
_SERVICE_IDS = {"stepfunctions": "sfn"}


@dataclass(frozen=True, kw_only=True)
class BatchConfig:
    """The Batch API's settings.

    :param bucket: the bucket of files and batches.
    :param state_machine_arn: the state machine that runs a batch.
    :param window_seconds: the completion window. @default 24 hours
    :param concurrency: lines of each model in flight at once. @default 8 each
    :param queued: the asynchronous models and their input folders. @default none
    """

    bucket: str
    state_machine_arn: str
    window_seconds: int = _DAY_S
    concurrency: Mapping[str, int] = field(default_factory=dict)
    queued: Mapping[str, str] = field(default_factory=dict)

    def concurrency_for(self, model: str) -> int:
        return int(self.concurrency.get(model, DEFAULT_CONCURRENCY))

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> BatchConfig | None:
        """The settings, or None when the Batch API is not enabled (no ``BATCH_BUCKET``)."""
        bucket = env.get(Env.BATCH_BUCKET, "").strip()
        if not bucket:
            return None
        concurrency = json.loads(env.get(Env.BATCH_CONCURRENCY) or "{}")
        return cls(
            bucket=bucket,
            state_machine_arn=env.get(Env.BATCH_STATE_MACHINE_ARN, "").strip(),
            window_seconds=int(env.get(Env.BATCH_WINDOW_SECONDS) or _DAY_S),
            concurrency={str(k): int(v) for k, v in concurrency.items()},
            queued=async_models(env),
        )


def async_models(env: Mapping[str, str]) -> dict[str, str]:
    """``BATCH_ASYNC``: each asynchronous model's input folder."""
    found = json.loads(env.get(Env.BATCH_ASYNC) or "{}")
    return {str(k): str(v) for k, v in found.items()}


def batch_config() -> BatchConfig | None:
    """The process's Batch API settings, from its environment."""
    return BatchConfig.from_env(os.environ)


def aws_client(service: str) -> Any:
    """One client per service (and endpoint URL override) for the process, made on first use;
    boto3 clients are safe to share between threads once made."""
    override = os.environ.get(f"AWS_ENDPOINT_URL_{_SERVICE_IDS.get(service, service).upper()}", "")
    return _client(service, override)


@functools.cache
def _client(service: str, endpoint_override: str) -> Any:
    return new_client(service, connect_timeout=10.0, read_timeout=60.0, max_attempts=3)
