"""The engine signals: the Prometheus metrics an engine serves for what saturates it (its KV
cache and its queue) and for what users feel (time to first token, inter-token latency), as the
engine names them. SageMaker's detailed observability scrapes them into CloudWatch
(``hosting/metrics_config.py``); ``operations/engine_signals.py`` queries them.

- vLLM (vllm-project/vllm ``vllm/v1/metrics/loggers.py``): ``vllm:kv_cache_usage_perc`` (a
  fraction, 0 to 1; ``vllm:gpu_cache_usage_perc`` before vLLM 0.9, still written beside it in
  0.10), ``vllm:num_requests_waiting``, ``vllm:num_requests_running``,
  ``vllm:time_to_first_token_seconds`` and ``vllm:inter_token_latency_seconds``
  (``vllm:time_per_output_token_seconds`` before), the last two histograms in seconds.
- SGLang (sgl-project/sglang ``python/sglang/srt/metrics/collector.py`` @ 00ae9c1):
  ``sglang:token_usage`` (the KV pool in use, a fraction), ``sglang:num_queue_reqs``,
  ``sglang:num_running_reqs``, ``sglang:time_to_first_token_seconds`` and
  ``sglang:inter_token_latency_seconds``. SGLang serves them only with ``--enable-metrics``
  (``Engine.sglang()`` sets it).

The other engines have none here: detailed observability names vLLM and SGLang (guide
"Detailed observability for SageMaker AI inference endpoints"); whether SageMaker scrapes
TGI's or LMI's metrics is not documented.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineSignals:
    """An engine's metric names for each signal (older names after the current one).

    :param engine: the engine's name, for descriptions (``vLLM``).
    :param kv_cache: the KV cache in use, a fraction from 0 to 1 (gauge).
    :param waiting: requests waiting for a batch slot (gauge).
    :param running: requests in the running batch (gauge).
    :param time_to_first_token: time to the first token (histogram, seconds).
    :param inter_token_latency: time between two tokens (histogram, seconds).
    """

    engine: str
    kv_cache: tuple[str, ...]
    waiting: tuple[str, ...]
    running: tuple[str, ...]
    time_to_first_token: tuple[str, ...]
    inter_token_latency: tuple[str, ...]


VLLM_SIGNALS = EngineSignals(
    engine="vLLM",
    kv_cache=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    waiting=("vllm:num_requests_waiting",),
    running=("vllm:num_requests_running",),
    time_to_first_token=("vllm:time_to_first_token_seconds",),
    inter_token_latency=(
        "vllm:inter_token_latency_seconds",
        "vllm:time_per_output_token_seconds",
    ),
)

SGLANG_SIGNALS = EngineSignals(
    engine="SGLang",
    kv_cache=("sglang:token_usage",),
    waiting=("sglang:num_queue_reqs",),
    running=("sglang:num_running_reqs",),
    time_to_first_token=("sglang:time_to_first_token_seconds",),
    inter_token_latency=("sglang:inter_token_latency_seconds",),
)
