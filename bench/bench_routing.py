"""A SIMULATION, not a measurement: how SageMaker's routing strategies (``Routing``) treat agent
sessions that share long system prompts, on instances sized by the library's own memory plan.

Setup, all from the library or stated here:

- **Instances.** ``INSTANCES`` copies of Llama-3.1-8B-Instruct on ml.g6e.2xlarge, each with the
  KV capacity of the library's memory plan (``plan_memory``: its ``max_batch_total_tokens``).
  The KV the running requests do not hold keeps an LRU cache of prefixes, as vLLM's automatic
  prefix caching does (its free blocks keep their tokens until reused, least recently used
  first: ``vllm/v1/core/block_pool.py``).
- **Work.** ``SESSIONS`` agent sessions, each started on one of ``PROMPTS`` system prompts of
  2,000-6,000 tokens; each turn sends the system prompt, the session's history so far and a
  new message, and adds the reply to the history. Turns arrive round by round as a Poisson
  process, at a rate that would keep the fleet ``LOAD`` busy if nothing were cached.
- **Cost.** Prefill is compute-bound: ``RIDGE_TOKENS`` tokens cost one read of the weights
  (the roofline of ``bench_admission.py``: ~200 FLOPs per byte on these GPUs), and one read
  takes the plan's weights over the GPU's memory bandwidth (the instance catalog). Only the
  tokens not in the instance's cache are computed. Each instance prefills one request at a
  time, first come first served; time to first token is the wait plus that prefill.
- **Routing.** ``LEAST_OUTSTANDING_REQUESTS``: the instance with the fewest requests in flight.
  ``PREFIX_AWARE``: the request's prefix (the first ``PrefixLength`` characters, which the
  runtime puts first: the system prompt) and its ``X-Amzn-SageMaker-Prefix-Aware-Id`` (OpenAI's
  ``prompt_cache_key``; here the session) pick one instance by rendezvous hashing; past
  ``ConcurrencyThreshold`` requests in flight there, SageMaker picks another (the least loaded).
  This is a model of the behaviour the SageMaker guide describes, not of its implementation.

Reported: the prefix-cache hit rate (prompt tokens served from cache) and time to first token
(p50, p99) under each strategy, and prefix-aware over least-outstanding as ratios. Each seed is
one pair run on the same arrivals; the figures are the median over ``SEEDS`` pairs. Goal (a
simulation's, to hold the model honest as it changes): prefix-aware routing at least halves the
p50 time to first token.
"""

from __future__ import annotations

import hashlib
import heapq
import random
import statistics
from collections import OrderedDict
from dataclasses import dataclass, field

from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.sizing.memory import ModelArchitecture, plan_memory

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
INSTANCE = "ml.g6e.2xlarge"
MAX_TOTAL_TOKENS = 16_384
INSTANCES = 4
SESSIONS = 64
PROMPTS = 8
TURNS = 12
LOAD = 0.7
RIDGE_TOKENS = 200
CONCURRENCY_THRESHOLD = 8
SEEDS = (1, 2, 3, 4, 5)
GOAL = 0.5  # prefix-aware p50 time to first token / least-outstanding's


@dataclass(frozen=True)
class Turn:
    at: float
    session: int
    prompt: int  # which system prompt
    system_tokens: int
    history_tokens: int  # the session's history before this turn
    new_tokens: int
    reply_tokens: int


@dataclass
class Instance:
    capacity: int
    cache: OrderedDict[tuple[str, int], int] = field(default_factory=OrderedDict)
    free_at: float = 0.0
    in_flight: list[float] = field(default_factory=list)  # finish times

    def outstanding(self, now: float) -> int:
        while self.in_flight and self.in_flight[0] <= now:
            heapq.heappop(self.in_flight)
        return len(self.in_flight)

    def cached(self, turn: Turn) -> int:
        """Cached tokens of the turn's prompt: the system prompt, then the session's history
        (a cache hit is a prefix: the history counts only after the system prompt)."""
        system = self.cache.get(("prompt", turn.prompt), 0)
        if system < turn.system_tokens:
            return 0
        self.cache.move_to_end(("prompt", turn.prompt))
        history = min(self.cache.get(("session", turn.session), 0), turn.history_tokens)
        if history:
            self.cache.move_to_end(("session", turn.session))
        return turn.system_tokens + history

    def keep(self, turn: Turn) -> None:
        self.cache[("prompt", turn.prompt)] = turn.system_tokens
        self.cache.move_to_end(("prompt", turn.prompt))
        grown = turn.history_tokens + turn.new_tokens + turn.reply_tokens
        self.cache[("session", turn.session)] = grown
        self.cache.move_to_end(("session", turn.session))
        while sum(self.cache.values()) > self.capacity:
            self.cache.popitem(last=False)


def workload(seed: int, prefill_s_per_token: float) -> list[Turn]:
    rng = random.Random(seed)
    prompts = [rng.randint(2_000, 6_000) for _ in range(PROMPTS)]
    turns: list[tuple[int, int, int, int, int]] = []
    for session in range(SESSIONS):
        prompt, history = rng.randrange(PROMPTS), 0
        for _ in range(TURNS):
            new, reply = rng.randint(50, 400), rng.randint(100, 500)
            turns.append((session, prompt, history, new, reply))
            history += new + reply
    rng.shuffle(turns)
    # A session's next turn follows its last reply: turns arrive round by round (every
    # session's first turn, then every second one, ...), shuffled within a round.
    turns.sort(key=lambda t: t[2])
    mean_cost = statistics.fmean(
        (prompts[p] + h + n) * prefill_s_per_token for _, p, h, n, _ in turns
    )
    rate = LOAD * INSTANCES / mean_cost
    now, found = 0.0, list[Turn]()
    for session, prompt, history, new, reply in turns:
        now += rng.expovariate(rate)
        found.append(Turn(now, session, prompt, prompts[prompt], history, new, reply))
    return found


def _rendezvous(key: str, count: int) -> list[int]:
    """Instances in the order rendezvous hashing prefers them for ``key``."""
    scores = [hashlib.sha256(f"{key}/{i}".encode()).digest() for i in range(count)]
    return sorted(range(count), key=lambda i: scores[i], reverse=True)


def simulate(
    turns: list[Turn], strategy: str, capacity: int, prefill: float, decode: float
) -> tuple[float, float, float]:
    """Hit rate, p50 and p99 time to first token (s) of ``turns`` under ``strategy``."""
    fleet = [Instance(capacity) for _ in range(INSTANCES)]
    rng = random.Random(7)
    ttfts: list[float] = []
    hit = total = 0
    for turn in turns:
        loads = [inst.outstanding(turn.at) for inst in fleet]
        if strategy == "PREFIX_AWARE":
            order = _rendezvous(f"{turn.prompt}/{turn.session}", INSTANCES)
            chosen = order[0]
            if loads[chosen] >= CONCURRENCY_THRESHOLD:
                chosen = min(range(INSTANCES), key=lambda i: (loads[i], rng.random()))
        else:
            chosen = min(range(INSTANCES), key=lambda i: (loads[i], rng.random()))
        inst = fleet[chosen]
        prompt = turn.system_tokens + turn.history_tokens + turn.new_tokens
        cached = inst.cached(turn)
        start = max(turn.at, inst.free_at)
        inst.free_at = start + (prompt - cached) * prefill
        ttfts.append(inst.free_at - turn.at)
        heapq.heappush(inst.in_flight, inst.free_at + turn.reply_tokens * decode)
        inst.keep(turn)
        hit, total = hit + cached, total + prompt
    ttfts.sort()
    return hit / total, ttfts[len(ttfts) // 2], ttfts[int(len(ttfts) * 0.99)]


def main() -> None:
    arch = ModelArchitecture.lookup(MODEL)
    assert arch is not None
    plan = plan_memory(arch, instance=INSTANCE, max_total_tokens=MAX_TOTAL_TOKENS)
    bandwidth = InstanceType(INSTANCE).memory_bandwidth_gbs
    assert bandwidth
    weight_read_s = plan.weights_gib * 1024**3 / plan.devices / (bandwidth * 1e9)
    prefill, decode = weight_read_s / RIDGE_TOKENS, weight_read_s
    # The KV that running requests do not hold keeps the prefix cache: about half of it.
    capacity = plan.max_batch_total_tokens // 2
    print(
        "SIMULATION (not a measurement): "
        f"{INSTANCES} x {MODEL} on {INSTANCE} ({plan.max_batch_total_tokens:,} KV tokens each "
        f"from the memory plan, {capacity:,} kept as prefix cache), {SESSIONS} sessions on "
        f"{PROMPTS} system prompts, {TURNS} turns each, fleet {LOAD:.0%} busy; prefill "
        f"{1 / prefill:,.0f} tokens/s per instance"
    )
    rows: dict[str, list[tuple[float, float, float]]] = {"LOR": [], "PREFIX_AWARE": []}
    ratios: list[tuple[float, float]] = []
    for seed in SEEDS:
        turns = workload(seed, prefill)
        lor = simulate(turns, "LEAST_OUTSTANDING_REQUESTS", capacity, prefill, decode)
        aware = simulate(turns, "PREFIX_AWARE", capacity, prefill, decode)
        rows["LOR"].append(lor)
        rows["PREFIX_AWARE"].append(aware)
        ratios.append((aware[1] / lor[1], aware[2] / lor[2]))
    for name, results in rows.items():
        hit = statistics.median(r[0] for r in results)
        p50 = statistics.median(r[1] for r in results)
        p99 = statistics.median(r[2] for r in results)
        label = "least outstanding requests" if name == "LOR" else "prefix-aware"
        print(
            f"  {label:<27} prefix-cache hit rate {hit:6.1%}  time to first token "
            f"p50 {p50 * 1000:7.0f} ms  p99 {p99 * 1000:7.0f} ms"
        )
    p50_ratio = statistics.median(r[0] for r in ratios)
    p99_ratio = statistics.median(r[1] for r in ratios)
    print(
        f"  prefix-aware / least outstanding: p50 {p50_ratio:.2f}x, p99 {p99_ratio:.2f}x "
        f"(median of {len(SEEDS)} paired workloads; goal p50 <= {GOAL:.2f}x) "
        f"{'PASS' if p50_ratio <= GOAL else 'MISS'}"
    )


if __name__ == "__main__":
    main()
