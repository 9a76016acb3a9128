"""Batch limits of paged engines, side by side on the example models' own KV caches.

For every example model served by vLLM (the vLLM DLC, or LMI with vLLM) whose batch limit the
library sets, the same saturated stream of chat requests runs through a simulation of the
engine's scheduler under each limit:

- **full-length cap**: at most the full-length (``max_total_tokens``) sequences the memory plan
  fits: what the library gave LMI with vLLM before (8 for Phi-3-mini on ml.g5.4xlarge);
- **TGI reservation**: TGI's admission, which reserves a request's prompt plus up to 1,024
  reply tokens when the client sends no ``max_tokens`` (``router/src/validation.rs``,
  ``DEFAULT_GENERATION_LENGTH``, and ``backends/v3/src/queue.rs`` in
  huggingface/text-generation-inference): what the production example ran before it moved
  to vLLM;
- **vLLM's cap**: the sequence cap ``vllm serve`` picks (256 on these GPUs), below which vLLM
  admits by free KV blocks: what the library gives now (read from the model's env);
- **typical-length cap**: the typical chat requests the plan fits (its note's figure), for
  comparison.

Requests: prompt and reply lengths drawn from a histogram of Azure's 2023 LLM inference trace
(conversation; ``bench/data/azure_llm_conversation_2023.json``, with its source), prompts cut
to the model's ``max_input_tokens`` and replies to its ``max_total_tokens``. There are always
more waiting than the engine takes, so the figures are at saturation.

The scheduler, after vLLM's (``Scheduler.schedule``, ``vllm/v1/core/sched/scheduler.py``):
16-token KV blocks; each step first advances the running requests (one decode token, or the
next prefill chunk), allocating blocks as they grow and preempting the newest running request
when none are free (its blocks return to the free queue tail-first, still holding their
tokens, so a request resumed before they are reused skips recomputing them: vLLM's prefix
caching); then, if nothing was preempted, admits waiting requests while the cap allows and the
free blocks hold their next chunk. A step takes at most 2,048 tokens (vLLM's default
``max_num_batched_tokens`` for these GPUs). TGI's admission instead takes the reservation up
front and never preempts.

Step time, a roofline in units of one read of a device's weights: ``max(1 + KV read / weights,
tokens computed / 200)``. A decode step is memory-bound: it reads the weights once plus the KV
of every scheduled request's context. Computing 200 tokens costs about one weight read:
NVIDIA's A10 datasheet gives 125 TFLOPS (FP16 tensor) at 600 GB/s, its A100 40GB datasheet
312 TFLOPS at 1,555 GB/s, ~200 FLOPs per byte, and a token costs 2 FLOPs per 2-byte weight.
Prefill and the recomputing of preempted requests are charged that way. The constant is the
least certain input, so the ratios are also printed for 100 and 400.

Reported per policy: requests running (mean over steps), preemptions per 1,000 finished
requests, and decode throughput (reply tokens per unit of time) relative to the library's
setting before. Goal: the library's setting now is no slower than before on every model
whose setting changed.
"""

from __future__ import annotations

import json
import math
import random
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "azure_llm_conversation_2023.json"
SEED = 20_231_116
BLOCK = 16  # tokens per KV block (vLLM's default block size on GPUs)
STEP_TOKENS = 2048  # vLLM's default max_num_batched_tokens for these GPUs
RIDGE_TOKENS = 200  # tokens whose compute costs one read of the weights
TGI_CHUNK = 1024  # reply tokens TGI reserves when a request sets no max_new_tokens
WARM_UP = 300  # finished requests before measuring
MEASURED = 1500  # finished requests measured
GOAL = 1.0  # now / before, on every changed model
#: Examples whose engine this change replaced: the production example served the same model
#: with Engine.tgi() before.
ENGINE_BEFORE = {"Production": "TGI reservation"}


# -- the request lengths --------------------------------------------------------------------


@dataclass(frozen=True)
class Distribution:
    """The published request-length histogram: cells of (prompt, reply) bounds and counts."""

    cells: tuple[tuple[int, int, int, int], ...]
    weights: tuple[int, ...]
    median_total: int
    source: str

    @classmethod
    def load(cls, path: Path = DATA) -> Distribution:
        data = json.loads(path.read_text())
        cells = tuple((c[0], c[1], c[2], c[3]) for c in data["cells"])
        weights = tuple(int(c[4]) for c in data["cells"])
        if sum(weights) != data["requests"]:
            raise SystemExit(
                f"{path}: the cells count {sum(weights)} requests, not {data['requests']}"
            )
        return cls(cells, weights, int(data["median"]["total"]), str(data["_source"]))

    def draw(self, rng: random.Random) -> tuple[int, int]:
        low_p, high_p, low_r, high_r = rng.choices(self.cells, self.weights)[0]
        return rng.randrange(low_p, high_p), rng.randrange(low_r, high_r)


# -- the scheduler ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """What the simulation needs of one model copy (from its memory plan and token limits)."""

    label: str
    kv_tokens: int  # tokens of KV cache the plan fits
    kv_per_weights: float  # KV bytes per token per device / weight bytes per device
    max_total: int
    max_input: int


@dataclass(frozen=True)
class Policy:
    name: str
    cap: int  # most requests running at once
    reserve: bool = False  # TGI: reserve prompt + reply up front, never preempt


@dataclass(frozen=True)
class Result:
    running: float
    preemptions_per_1k: float
    throughput: float  # reply tokens per unit of time (one read of a device's weights)


@dataclass(eq=False)
class _Request:
    prompt: int
    reply: int
    reserve: int
    done: int = 0  # reply tokens generated
    computed: int = 0  # tokens whose KV is in the cache
    blocks: list[int] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)  # blocks left behind when preempted
    valid: int = 0  # leading cached blocks still holding this request's tokens

    @property
    def tokens(self) -> int:
        return self.prompt + self.done


class _Cache:
    """KV blocks with vLLM's free queue: least recently freed first, contents kept until the
    block is reused."""

    def __init__(self, blocks: int) -> None:
        self.queue: deque[int] = deque(range(blocks))
        self.in_use = [False] * blocks
        self.owner: list[tuple[_Request, int] | None] = [None] * blocks
        self.free = blocks

    def allocate(self, count: int) -> list[int]:
        taken: list[int] = []
        while len(taken) < count:
            block = self.queue.popleft()
            if self.in_use[block]:
                continue  # taken back by its request (a prefix-cache hit)
            owner = self.owner[block]
            if owner is not None:  # its tokens are gone: the owner's cached prefix ends here
                request, index = owner
                request.valid = min(request.valid, index)
                self.owner[block] = None
            self.in_use[block] = True
            taken.append(block)
        self.free -= count
        return taken

    def release(self, request: _Request, *, keep: bool) -> None:
        full = request.computed // BLOCK if keep else 0
        for index in range(len(request.blocks) - 1, -1, -1):  # tail first: evicted first
            block = request.blocks[index]
            self.in_use[block] = False
            self.owner[block] = (request, index) if index < full else None
            self.queue.append(block)
        self.free += len(request.blocks)
        request.cached, request.valid = (request.blocks, full) if keep else ([], 0)
        request.blocks = []

    def reuse(self, request: _Request, hits: int) -> list[int]:
        blocks = request.cached[:hits]
        for block in blocks:
            self.in_use[block] = True
            self.owner[block] = None
        self.free -= hits
        request.cached, request.valid = [], 0
        return blocks


def simulate(model: Model, policy: Policy, dist: Distribution, ridge: float) -> Result:
    rng = random.Random(SEED)
    cache = _Cache(model.kv_tokens // BLOCK)

    def arrival() -> _Request:
        prompt, reply = dist.draw(rng)
        prompt = min(prompt, model.max_input)
        reply = max(1, min(reply, model.max_total - prompt))
        reserve = math.ceil((prompt + min(model.max_total - prompt, TGI_CHUNK)) / BLOCK)
        return _Request(prompt, reply, reserve)

    waiting: deque[_Request] = deque()
    running: list[_Request] = []
    finished = preempted = 0
    time = tokens_out = occupancy = 0.0
    steps = 0
    start: tuple[int, int] | None = None
    while start is None or finished - start[0] < MEASURED:
        while len(waiting) < min(policy.cap, 4096) + 8:
            waiting.append(arrival())
        budget, computed, kv_read = STEP_TOKENS, 0, 0
        scheduled: list[tuple[_Request, int]] = []
        preempted_now = False
        index = 0
        while index < len(running) and budget > 0:  # the running requests first
            request = running[index]
            count = min(request.tokens - request.computed, budget)
            if not policy.reserve:
                need = math.ceil((request.computed + count) / BLOCK) - len(request.blocks)
                while need > cache.free:  # preempt the newest running request
                    victim = running.pop()
                    cache.release(victim, keep=True)
                    victim.computed = 0
                    waiting.appendleft(victim)
                    preempted += 1
                    preempted_now = True
                    if victim is request:
                        break
                if request not in running:
                    break
                if need > 0:
                    request.blocks += cache.allocate(need)
            scheduled.append((request, count))
            budget -= count
            computed += count
            kv_read += request.computed
            index += 1
        while not preempted_now and waiting and budget > 0 and len(running) < policy.cap:
            request = waiting[0]
            if policy.reserve:
                if request.reserve > cache.free:
                    break
                request.blocks = cache.allocate(request.reserve)
                count = min(request.tokens, budget)
            else:
                hits = min(request.valid, (request.tokens - 1) // BLOCK) if request.cached else 0
                count = min(request.tokens - hits * BLOCK, budget)
                need = math.ceil((hits * BLOCK + count) / BLOCK) - hits
                if need > cache.free - hits:
                    break
                request.blocks = cache.reuse(request, hits) + cache.allocate(need)
                request.computed = hits * BLOCK
            waiting.popleft()
            running.append(request)
            scheduled.append((request, count))
            budget -= count
            computed += count
            kv_read += request.computed
        step = max(1 + kv_read * model.kv_per_weights, computed / ridge)
        for request, count in scheduled:
            request.computed += count
            if request.computed < request.tokens:
                continue  # a prefill chunk
            request.done += 1
            tokens_out += start is not None
            if request.done >= request.reply:
                running.remove(request)
                cache.release(request, keep=False)
                finished += 1
        if start is not None:
            time += step
            occupancy += len(running)
            steps += 1
        elif finished >= WARM_UP:
            start = (finished, preempted)
    return Result(
        running=occupancy / steps,
        preemptions_per_1k=1000 * (preempted - start[1]) / (finished - start[0]),
        throughput=tokens_out / time,
    )


# -- the example models ---------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    model: Model
    policies: tuple[Policy, ...]
    before: str
    now: str


def examples() -> tuple[list[Example], list[str]]:
    """The example models whose batch limit changed (LMI with vLLM and no limit of the
    stack's own; an example moved from TGI to vLLM), and the labels of the others."""
    from aws_cdk import App

    from constructs_llm import InferenceComponent, LlmEndpoint, LlmModel
    from constructs_llm.engines._support import vllm_default_max_num_seqs
    from constructs_llm.engines.dlc import VllmEngine
    from constructs_llm.engines.lmi import LmiEngine
    from constructs_llm.model.llm_model import ModelBinding
    from stacks import EXAMPLES

    app = App()
    for name, stack_class in EXAMPLES.items():
        stack_class(app, "".join(part.capitalize() for part in name.split("-")))
    bindings: list[tuple[str, ModelBinding]] = []
    for node in app.node.find_all():
        if isinstance(node, LlmEndpoint):
            bindings += [(node.node.path, v.binding) for v in node.variants]
        elif isinstance(node, InferenceComponent):
            bindings.append((node.node.path, node.binding))
    found: list[Example] = []
    unchanged: list[str] = []
    for path, binding in bindings:
        llm = binding.model
        assert isinstance(llm, LlmModel)
        engine, plan, limit = llm.engine, binding.plan, llm.max_total_tokens
        stack = path.split("/", 1)[0]
        lmi_vllm = isinstance(engine, LmiEngine) and engine.backend == "vllm"
        own_limit = isinstance(engine, LmiEngine) and engine.max_rolling_batch_size is not None
        changed = (lmi_vllm and not own_limit) or (
            isinstance(engine, VllmEngine) and stack in ENGINE_BEFORE
        )
        if not changed or plan is None or limit is None:
            unchanged.append(f"{path} ({llm.engine.name})")
            continue
        env = binding.environment
        now = int(
            env.get("OPTION_MAX_ROLLING_BATCH_SIZE")
            or env.get("SM_VLLM_MAX_NUM_SEQS")
            or vllm_default_max_num_seqs(binding.placement.instance_type)
        )
        full = min(256, plan.max_concurrent_sequences)
        policies = (
            Policy(f"full-length cap {full}", full),
            Policy("TGI reservation", 1 << 30, reserve=True),
            Policy(f"vLLM's cap {now}", now),
            Policy(
                f"typical-length cap {min(now, plan.typical_concurrent_sequences)}",
                min(now, plan.typical_concurrent_sequences),
            ),
        )
        before = ENGINE_BEFORE.get(stack) or policies[0].name
        weights = plan.weights_gib / plan.devices * (1024**3)
        model = Model(
            label=f"{path}: {plan.model} on {plan.devices} GPU(s) of {plan.instance}",
            kv_tokens=plan.max_batch_total_tokens,
            kv_per_weights=plan.kv_bytes_per_token_per_device / weights,
            max_total=limit,
            max_input=llm.max_input_tokens or limit - 1,
        )
        found.append(Example(model, policies, before=before, now=policies[2].name))
    return found, unchanged


def _ratio(results: dict[str, Result], example: Example) -> float:
    return results[example.now].throughput / results[example.before].throughput


def main() -> None:
    dist = Distribution.load()
    print(
        f"requests: Azure LLM inference trace 2023, conversation (median prompt + reply "
        f"{dist.median_total:,} tokens), {MEASURED} measured after {WARM_UP}, at saturation"
    )
    found, unchanged = examples()
    verdicts: list[bool] = []
    for example in found:
        m = example.model
        print(f"{m.label}: {m.kv_tokens:,} KV tokens, max_total_tokens {m.max_total:,}")
        results = {p.name: simulate(m, p, dist, RIDGE_TOKENS) for p in example.policies}
        base = results[example.before].throughput
        for policy in example.policies:
            r = results[policy.name]
            mark = " (before)" if policy.name == example.before else ""
            mark += " (now)" if policy.name == example.now else ""
            print(
                f"  {policy.name + mark:<34} running {r.running:6.1f}  preemptions "
                f"{r.preemptions_per_1k:5.0f}/1k  decode throughput {r.throughput / base:5.2f}x"
            )
        ratio = _ratio(results, example)
        spread = []
        for ridge in (RIDGE_TOKENS / 2, RIDGE_TOKENS * 2):
            policies = {p.name: p for p in example.policies}
            pair = {
                name: simulate(m, policies[name], dist, ridge)
                for name in {example.before, example.now}
            }
            spread.append(_ratio(pair, example))
        verdicts.append(ratio >= GOAL)
        print(
            f"  now vs before: {ratio:.2f}x ({spread[0]:.2f}x to {spread[1]:.2f}x with "
            f"{RIDGE_TOKENS // 2} to {RIDGE_TOKENS * 2} tokens per weight read) "
            f"(goal >= {GOAL:.1f}x) {'PASS' if ratio >= GOAL else 'MISS'}"
        )
    print(f"unchanged (TGI, static batches, a limit the stack sets): {', '.join(unchanged)}")
    print(f"every changed model no slower: {'PASS' if all(verdicts) else 'MISS'}")


if __name__ == "__main__":
    main()
